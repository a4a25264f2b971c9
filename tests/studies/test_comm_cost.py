import gradlab

DEVICES = gradlab.tower_devices(2)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gradlab.studies.comm_cost import (extra_all_reduce_ms, measure_reduction_schedules,  # noqa: E402
                                       plot_reduction_schedules, ring_bytes, ring_time)


def test_ring_bytes_and_time_by_hand():
    # R = 2: each replica sends 2 * 1/2 = 1 gradient; R = 4: 2 * 3/4 = 1.5 gradients
    assert ring_bytes(1000, 2) == 1000.0
    assert ring_bytes(1000, 4) == 1500.0
    assert ring_bytes(1000, 1) == 0.0
    # 6 messages of 1 us, then 1.5e9 bytes at 1e9 bytes/s
    assert ring_time(1e9, 4, latency=1e-6, bandwidth=1e9) == pytest.approx(6e-6 + 1.5)


def test_ring_model_refuses_bad_input():
    with pytest.raises(ValueError, match="nbytes"):
        ring_bytes(-1, 2)
    with pytest.raises(ValueError, match="bandwidth"):
        ring_time(10, 2, latency=0.0, bandwidth=0.0)


def _tiny():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])


def test_measure_counts_one_all_reduce_per_update_or_per_micro_batch_and_plots_both():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 4)).astype("float32"), rng.integers(0, 3, 8)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    result = measure_reduction_schedules(DEVICES, _tiny, loss, x, y, accum_steps=(1, 2, 4), rounds=3)
    assert result["all_reduces"] == {"per_update": [1, 1, 1], "per_micro_batch": [1, 2, 4]}
    assert result["grad_bytes"] == (4 * 3 + 3) * 4 and result["replicas"] == 2
    assert all(t > 0 for t in result["per_update_ms"] + result["per_micro_batch_ms"])
    assert result["rounds"] == 3  # every (schedule, accum_steps) timed once per round
    assert [len(t) for s in ("per_update", "per_micro_batch") for t in result["times_ms"][s]] == [3] * 6
    assert result["per_update_ms"] == [float(np.median(t)) for t in result["times_ms"]["per_update"]]
    for schedule in ("per_update", "per_micro_batch"):  # the median inside its quartiles
        assert all(q25 <= m <= q75 for m, (q25, q75)
                   in zip(result[f"{schedule}_ms"], result[f"{schedule}_iqr_ms"]))
    ax, = plot_reduction_schedules(result).axes
    assert [list(line.get_xdata()) for line in ax.lines] == [[1, 2, 4], [1, 2, 4]]
    assert list(ax.lines[1].get_ydata()) == result["per_micro_batch_ms"]
    bars = ax.containers[1].lines[2][0].get_segments()  # per micro-batch: one bar per accum_steps
    assert [(seg[0][1], seg[1][1]) for seg in bars] == [
        pytest.approx(tuple(q)) for q in result["per_micro_batch_iqr_ms"]]


def test_measure_refuses_a_batch_that_does_not_split():
    x, y = np.zeros((6, 4), "float32"), np.zeros(6, "int64")
    with pytest.raises(ValueError, match="split evenly"):
        measure_reduction_schedules(DEVICES, _tiny, None, x, y, accum_steps=(2,))
    with pytest.raises(ValueError, match="at least 2 devices"):
        measure_reduction_schedules(DEVICES[:1], _tiny, None, x, y)


def test_extra_all_reduce_ms_pairs_the_rounds_by_hand():
    # accum_steps 2: one extra all-reduce; accum_steps 4: three. Round k's estimate is
    # (every[k] - once[k]) / (n - 1): 2, 4, 3 at n = 2 and 1, 2, 3 at n = 4.
    result = {"accum_steps": [1, 2, 4],
              "times_ms": {"per_update": [[5, 5, 5], [10, 10, 10], [10, 11, 12]],
                           "per_micro_batch": [[5, 6, 4], [12, 14, 13], [13, 17, 21]]}}
    extra = extra_all_reduce_ms(result)
    assert extra["per_accum_steps"] == {2: (3.0, 2.5, 3.5), 4: (2.0, 1.5, 2.5)}
    assert extra["estimates"] == 6 and extra["median_ms"] == 2.5  # of 1, 2, 2, 3, 3, 4
    assert extra["iqr_ms"] == (2.0, 3.0) and extra["distinguishable"] is True
    noisy = {"accum_steps": [2], "times_ms": {"per_update": [[10, 10, 10, 10]],
                                              "per_micro_batch": [[8, 9, 11, 12]]}}
    assert extra_all_reduce_ms(noisy)["distinguishable"] is False  # IQR -1.25 to 1.25 holds 0
    with pytest.raises(ValueError, match="accum_steps > 1"):
        extra_all_reduce_ms({"accum_steps": [1], "times_ms": {"per_update": [[1]], "per_micro_batch": [[1]]}})
