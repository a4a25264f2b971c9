"""call_peaks: each call's allocator peak above what it held, and its time, over rounds."""
import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies.bench.call_peaks import call_peaks


def test_peaks_count_what_a_call_allocates_and_the_rounds_run_in_turn():
    order = []

    def make(n_floats, name):
        def call():
            order.append(name)
            return float(tf.reduce_sum(tf.fill([n_floats], 1.0)))  # n_floats * 4 bytes, then freed
        return call

    peak, ms = call_peaks({"1 MiB": make(2**18, "1 MiB"), "4 MiB": make(2**20, "4 MiB")}, rounds=3,
                          reserve_bytes=2**24)
    assert order == ["1 MiB", "4 MiB"] * 4  # once unmeasured, then 3 rounds, in turn
    assert 1.0 <= peak["1 MiB"] < 4.0 <= peak["4 MiB"] < 8.0, peak
    assert all(t.shape == (3,) and t.dtype == np.float64 and (t > 0).all() for t in ms.values())


def test_the_least_reading_still_counts_the_call():
    call = lambda: float(tf.reduce_sum(tf.fill([2**20], 1.0)))  # 4 MiB, then freed
    least, _ = call_peaks({"4 MiB": call}, rounds=3, reserve_bytes=2**24, statistic="min")
    median, _ = call_peaks({"4 MiB": call}, rounds=3, reserve_bytes=2**24)
    assert 4.0 <= least["4 MiB"] < 8.0 and 4.0 <= median["4 MiB"] < 8.0, (least, median)


def test_rounds_must_be_positive_and_the_statistic_known():
    with pytest.raises(ValueError, match="rounds"):
        call_peaks({"none": lambda: None}, rounds=0)
    with pytest.raises(ValueError, match="statistic"):
        call_peaks({"none": lambda: None}, statistic="mean")
