import gradlab

DEVICES = gradlab.tower_devices(2)

import functools  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from gradlab.core import distribute  # noqa: E402
from gradlab.studies.distributed.comm_cost import (_reduced_grads_fn, extra_all_reduce_ms,  # noqa: E402
                                                   fit_alpha_beta, measure_all_reduce_ms,
                                                   measure_reduction_schedules, plot_reduction_schedules,
                                                   hierarchical_or_flat, ring_bytes, ring_time)

PER_EXAMPLE = functools.partial(keras.losses.sparse_categorical_crossentropy, from_logits=True)


def test_ring_bytes_and_time_by_hand():
    # R = 2: each replica sends 2 * 1/2 = 1 gradient; R = 4: 2 * 3/4 = 1.5 gradients
    assert ring_bytes(1000, 2) == 1000.0
    assert ring_bytes(1000, 4) == 1500.0
    assert ring_bytes(1000, 1) == 0.0
    # 6 messages of 1 us, then 1.5e9 bytes at 1e9 bytes/s
    assert ring_time(1e9, 4, latency=1e-6, bandwidth=1e9) == pytest.approx(6e-6 + 1.5)


def test_hierarchical_or_flat_by_hand():
    # 2 nodes of 2 GPUs, 4 GB, node link 2 GB/s, network 1 GB/s. Inside: 2 * 1/2 * 4 GB / 2 GB/s = 2,000 ms
    # (2 (R-1)/R = 1 at R = 2); across: 2 GB at 1 GB/s = 2,000 ms; flat: 1.5 * 2 GB / 1 GB/s = 3,000 ms
    h = hierarchical_or_flat(4e9, 2, 2, 2e9, 1e9)
    assert (h["inside_ms"], h["across_ms"], h["hierarchical_ms"], h["flat_ms"]) == pytest.approx((2000, 2000, 4000, 3000))
    assert h["flat_node_ms"] == pytest.approx(1.5 * 4e9 / 2e9 * 1000)  # all a GPU sends, 6 GB, at 2 GB/s
    assert h["steps"] == {"flat": 6, "hierarchical": 4}
    # start-ups, µs -> ms: 2 x 3.4 + 2 x 14 = 34.8; 6 x 14 = 84; NCCL: 4 steps cross a node, 2 stay: 2 x 3.4 + 4 x 14
    assert [h["startups_ms"][k] for k in ("hierarchical", "flat", "flat_nccl")] == pytest.approx([0.0348, 0.084, 0.0628])
    assert h["ms_per_gb"] == pytest.approx({"hierarchical": 1000.0, "flat": 750.0})
    # hierarchical's 250 ms more per GB against its start-ups' head start: (0.084 - 0.0348) ms / 250 ms per GB
    assert h["crossover_mb"]["flat"] == pytest.approx(1000 * 0.0492 / 250)
    assert h["crossover_mb"]["flat_nccl"] == pytest.approx(1000 * 0.028 / 250)


def test_hierarchical_or_flat_on_lesson_14s_problem_3():
    # 8 x 8 H100s, 7B bf16 gradients (14 GB), NVLink 450 GB/s, InfiniBand 50 GB/s: the lesson's printed answer
    h = hierarchical_or_flat(14e9, 8, 8, 450e9, 50e9)
    got = [round(h[k], 2) for k in ("inside_ms", "across_ms", "hierarchical_ms", "flat_ms", "flat_node_ms")]
    assert got == [54.44, 61.25, 115.69, 68.91, 61.25]  # 2*7/8*14e9/450e9, 2*7/8*1.75e9/50e9, ...
    assert h["steps"] == {"flat": 126, "hierarchical": 28}
    assert [round(h["crossover_mb"][k]) for k in ("flat", "flat_nccl")] == [455, 106]


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
    result = measure_reduction_schedules(DEVICES, _tiny, PER_EXAMPLE, x, y, accum_steps=(1, 2, 4), rounds=3)
    assert result["all_reduces"] == {"per_update": [1, 1, 1], "per_micro_batch": [1, 2, 4]}
    assert result["grad_bytes"] == (4 * 3 + 3) * 4 and result["replicas"] == 2
    assert all(t > 0 for t in result["per_update_ms"] + result["per_micro_batch_ms"])
    assert result["rounds"] == 3  # every (schedule, accum_steps): one time (the mean of its A B B A runs) per round
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


def test_both_schedules_all_reduce_the_large_batch_gradient_of_a_plain_tape():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(8, 4)).astype("float32"), rng.integers(0, 3, 8)
    with tf.GradientTape() as tape:  # the oracle: one device, the whole batch, Keras's mean loss by hand
        model = _tiny()
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
    want = [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        replicated = _tiny()  # the same seed: the same weights
        replicated(x[:1])
    shards = [dist.experimental_distribute_values_from_function(
        lambda ctx, a=a: tf.constant(a[4 * ctx.replica_id_in_sync_group:][:4])) for a in (x, y)]
    for n in (1, 2):
        for per_micro_batch in (False, True):
            fn = _reduced_grads_fn(replicated, PER_EXAMPLE, n, 8, per_micro_batch)
            got = tf.function(lambda xs, ys, fn=fn: dist.run(fn, args=(xs, ys)))(*shards)
            for replica in range(2):
                assert max(np.abs(dist.experimental_local_results(g)[replica].numpy() - w).max()
                           for g, w in zip(got, want)) < 1e-6, (n, per_micro_batch, replica)
    mean = keras.losses.SparseCategoricalCrossentropy(from_logits=True)  # a mean, halved by Keras here
    with pytest.raises(ValueError, match="one loss per example"):
        measure_reduction_schedules(DEVICES, _tiny, mean, x, y, accum_steps=(1,), rounds=1)


def test_measure_refuses_a_batch_that_does_not_split():
    x, y = np.zeros((6, 4), "float32"), np.zeros(6, "int64")
    with pytest.raises(ValueError, match="split evenly"):
        measure_reduction_schedules(DEVICES, _tiny, None, x, y, accum_steps=(2,))
    with pytest.raises(ValueError, match="at least 2 devices"):
        measure_reduction_schedules(DEVICES[:1], _tiny, None, x, y)


def test_extra_all_reduce_ms_pairs_the_rounds_against_the_n1_null_by_hand():
    # n = 1: identical code, differences 0, 1, -1 -> null median 0, IQR -0.5 to 0.5.
    # n = 2: differences 2, 4, 3 (IQR 2.5 to 3.5, outside the null's): one extra all-reduce each.
    # n = 4: differences 3, 6, 9 (IQR 4.5 to 7.5, outside): per extra all-reduce 1, 2, 3.
    result = {"accum_steps": [1, 2, 4],
              "times_ms": {"per_update": [[5, 5, 5], [10, 10, 10], [10, 11, 12]],
                           "per_micro_batch": [[5, 6, 4], [12, 14, 13], [13, 17, 21]]}}
    extra = extra_all_reduce_ms(result)
    assert extra["null_ms"] == (0.0, -0.5, 0.5)
    assert extra["per_accum_steps"][2] == {"difference_ms": (3.0, 2.5, 3.5),
                                           "per_all_reduce_ms": (3.0, 2.5, 3.5), "distinguishable": True}
    assert extra["per_accum_steps"][4]["difference_ms"] == (6.0, 4.5, 7.5)
    assert extra["per_accum_steps"][4]["per_all_reduce_ms"] == (2.0, 1.5, 2.5)
    assert extra["distinguishable_at"] == [2, 4]
    assert extra["estimates"] == 6 and extra["median_ms"] == 2.5  # of 1, 2, 2, 3, 3, 4
    assert extra["iqr_ms"] == (2.0, 3.0)


def test_extra_all_reduce_ms_is_not_distinguishable_inside_the_n1_noise():
    # the null's differences spread -8 to 8 (IQR -4 to 4); n = 2's 2, 3, 4 (IQR 2.5 to 3.5) sit
    # inside it although they exclude 0
    noisy = {"accum_steps": [1, 2], "times_ms": {"per_update": [[10, 10, 10], [10, 10, 10]],
                                                 "per_micro_batch": [[2, 10, 18], [12, 13, 14]]}}
    extra = extra_all_reduce_ms(noisy)
    assert extra["null_ms"] == (0.0, -4.0, 4.0)
    assert extra["per_accum_steps"][2]["distinguishable"] is False and extra["distinguishable_at"] == []
    assert extra["median_ms"] is None and extra["iqr_ms"] is None and extra["estimates"] == 0
    with pytest.raises(ValueError, match="accum_steps > 1"):
        extra_all_reduce_ms({"accum_steps": [1], "times_ms": {"per_update": [[1]], "per_micro_batch": [[1]]}})
    with pytest.raises(ValueError, match="accum_steps = 1"):
        extra_all_reduce_ms({"accum_steps": [2], "times_ms": {"per_update": [[1]], "per_micro_batch": [[2]]}})


def test_fit_alpha_beta_recovers_a_hand_made_ring_by_hand():
    # R = 4: 6 messages of alpha, 1.5 M bytes at beta; round 0 alpha = 5 us, round 1 alpha = 15 us, beta = 2 GiB/s
    sizes, beta = [2 ** 16, 2 ** 20, 2 ** 23], 2 * 2 ** 30
    times = [[1000 * (6 * alpha + 1.5 * m / beta) for alpha in (5e-6, 15e-6)] for m in sizes]
    fit = fit_alpha_beta(sizes, times, replicas=4)
    assert fit["alpha_us"][0] == pytest.approx(10.0) and fit["alpha_us"][1:] == pytest.approx((7.5, 12.5))
    assert fit["beta_gib_per_s"] == pytest.approx((2.0, 2.0, 2.0))
    assert [a for a, _ in fit["fits"]] == pytest.approx([0.03, 0.09])  # 6 alpha, in ms


def test_fit_alpha_beta_refuses_one_size_or_one_replica():
    with pytest.raises(ValueError, match="distinct sizes"):
        fit_alpha_beta([8, 8], [[1.0], [2.0]], replicas=2)
    with pytest.raises(ValueError, match="R >= 2"):
        fit_alpha_beta([8, 16], [[1.0], [2.0]], replicas=1)


def test_measure_all_reduce_ms_times_every_size_in_every_round():
    result = measure_all_reduce_ms(DEVICES, sizes_bytes=(64, 4096), rounds=3, calls=1)
    assert result["sizes_bytes"] == [64, 4096] and result["replicas"] == 2 and result["rounds"] == 3
    assert [len(t) for t in result["times_ms"]] == [3, 3] and all(t > 0 for row in result["times_ms"] for t in row)
    with pytest.raises(ValueError, match="multiples of 4"):
        measure_all_reduce_ms(DEVICES, sizes_bytes=(64, 6))
