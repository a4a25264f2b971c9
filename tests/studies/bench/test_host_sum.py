"""host_sum_seconds against hand arithmetic: its total is rounds x count x the fetch, and its time a sane rate."""
import time

import numpy as np

from gradlab.studies.bench.host_sum import BYTES_PER_PARAM, host_sum_seconds


def test_total_is_the_hand_sum():
    out = host_sum_seconds(params=1000, count=16, rounds=3, seed=1, details=True)
    fetch = np.random.default_rng(1).standard_normal(1000, dtype=np.float32)
    assert np.array_equal(out.fetch, fetch)
    # 16 x fetch is exact (a power of two); 16f + 16f + 16f rounds as a hand loop in float64 checks
    np.testing.assert_allclose(out.total, 3 * 16 * fetch.astype(np.float64), rtol=1e-6)
    assert out.rounds == 3


def test_seconds_a_parameter_is_a_plausible_memory_rate():
    params = 2 ** 22
    s = host_sum_seconds(params=params, rounds=3)
    assert s > 0 and BYTES_PER_PARAM / s < 2e12  # under 2 TB/s: no machine's one core moves more
    # against a hand timing of one plain copy of the same size: three passes take longer than one copy
    a = np.ones(params, np.float32)
    best = min(_time(lambda: a.copy()) for _ in range(3))
    assert s * params > 0.5 * best


def _time(f):
    start = time.perf_counter()
    f()
    return time.perf_counter() - start
