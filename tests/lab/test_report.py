"""What lesson 17 reads off the lab (`gradlab.lab.report`), against values written by hand.

The groups hold stub runs (tests/lab/lab_stubs.py: accuracies and losses chosen here); Measure
runs on the stub trainer (`stub`) and draws quick plots (`quick_plots`)."""
import dataclasses

import numpy as np
import pytest
from IPython.display import Image

from gradlab.lab import Lab, report
from gradlab.lab.groups import Group
from gradlab.studies.cache import ResultCache
from gradlab.studies.runs import run_config

from lab_stubs import stub_train


def run(seed, accuracy, losses, strategy="fused", n=4, b=5):
    config = run_config.RunConfig(strategy=strategy, accum_steps=n, micro_batch=b, seed=seed, lr=0.1,
                                   updates=len(losses), eval_every=len(losses), sampling="paired")
    r, _ = stub_train(config)
    return dataclasses.replace(r, accuracy=accuracy, losses=np.asarray(losses, float))


def group(*runs):
    g = Group(runs[0].config, "#000000")
    for r in runs:
        g.put(r)
    return g


def test_paired_gaps_subtract_each_seeds_own_reference_in_points():
    reference = group(run(2, 0.930, [1, 1]), run(0, 0.900, [1, 1]), run(1, 0.950, [1, 1]))
    way = group(run(1, 0.951, [1, 1]), run(0, 0.905, [1, 1]), run(2, 0.925, [1, 1]))
    # seed 0: 90.5 - 90.0, seed 1: 95.1 - 95.0, seed 2: 92.5 - 93.0 (the way's seed order: 0, 1, 2)
    np.testing.assert_allclose(report.paired_gaps(way, reference), [0.5, 0.1, -0.5], atol=1e-9)
    assert report.seed_accuracies(way) == pytest.approx([90.5, 95.1, 92.5])
    with pytest.raises(KeyError, match=r"seed\(s\) \[2\]"):
        report.paired_gaps(way, group(run(0, 0.9, [1, 1]), run(1, 0.9, [1, 1])))


def test_window_mean_averages_a_window_of_updates_over_seeds():
    g = group(run(0, 0.9, [4.0, 3.0, 2.0, 1.0]), run(1, 0.9, [8.0, 6.0, 4.0, 0.0]))
    assert report.window_mean(g, 1, 3) == pytest.approx((3 + 2 + 6 + 4) / 4)  # updates 2 and 3
    assert report.window_mean(g, 0, 4) == pytest.approx(28 / 8)
    for start, stop in ((2, 2), (3, 5), (-1, 2)):
        with pytest.raises(ValueError, match="does not fit 4 updates"):
            report.window_mean(g, start, stop)


def test_report_lines_give_each_ways_verdict_and_gaps():
    large = group(run(0, 0.90, [2.0, 1.0], "large_batch", 1, 20), run(1, 0.80, [2.0, 1.5], "large_batch", 1, 20))
    same = group(run(0, 0.90, [2.0, 1.0]), run(1, 0.80, [2.0, 1.5]))
    off = group(run(0, 0.91, [2.2, 1.1], "keras"), run(1, 0.79, [2.2, 1.65], "keras"))  # every loss 10% higher
    exact, keras = report.report_lines([large, same, off], "exact", 4)
    assert exact == ("exact, N = 4, gradlab's way: losses exact: 0 spacings, bit for bit; "
                     "accuracy gap by seed +0.0, +0.0 points")
    # the miss is |a - b| / |b| over every loss: 0.1 |b| / |b|
    assert keras == "exact, N = 4, Keras's way: losses miss 10%; accuracy gap by seed +1.0, -1.0 points"
    bn = report.report_lines([large, same, off], "BatchNorm, statistics per micro-batch", 2)
    assert [line.split(":")[0] for line in bn] == ["BatchNorm, N = 2, statistics per update",
                                                  "BatchNorm, N = 2, statistics per micro-batch"]


def test_measure_report_presses_measure_prints_and_draws(tmp_path, stub, quick_plots, capsys):
    lab = Lab(updates=20, eval_every=10, memory=False, cache=ResultCache(tmp_path / "cache"), redraw_seconds=0)
    lab.set(strategy="fused", accum_steps=2, micro_batch=8, lr=0.1, seeds=2)
    earlier = lab.run()
    other = lab.set(accum_steps=4, micro_batch=4).run()  # another B: not measured below
    lab.set(accum_steps=2, micro_batch=8)
    drawn = []  # what the picture is asked to draw
    picture_of = lab.picture
    lab.picture = lambda **kw: drawn.append(kw) or picture_of(**kw)
    groups, picture = report.measure_report(lab)
    assert [g.config.strategy for g in groups] == ["large_batch", "fused", "keras"]
    assert [g.seeds for g in groups] == [[0, 1]] * 3 and groups[1] is earlier
    assert [(g.config.accum_steps, g.config.micro_batch) for g in groups] == [(1, 16), (2, 8), (2, 8)]
    assert all(g.visible for g in groups) and not other.visible  # its own groups shown, the others hidden
    printed = capsys.readouterr().out.splitlines()
    assert printed == report.report_lines(groups, "exact", 2) and len(printed) == 2
    assert printed[0].startswith("exact, N = 2, gradlab's way: losses exact: 0 spacings")  # the stub: the same losses
    assert isinstance(picture, Image)
    # the picture draws the three groups, the large batch dotted black, gradlab's way dashed red, Keras's purple
    assert drawn == [dict(groups=groups, labels=["large batch (dotted)", "gradlab's way (dashed)", "Keras's way"],
                          dashed=1, dotted=0, colors=["black", "tab:red", "tab:purple"],
                          title="exact: N = 2, b = 8, 2 seeds")]


def test_measure_report_says_why_nothing_ran(tmp_path, stub, quick_plots, monkeypatch):
    lab = Lab(updates=20, eval_every=10, memory=False, cache=ResultCache(tmp_path / "cache"), redraw_seconds=0)
    lab.status.value = "Busy: a run is in progress (Stop ends it)."
    monkeypatch.setattr(lab, "measure", lambda: None)  # what Measure returns when it runs nothing
    with pytest.raises(ValueError, match="Measure ran nothing: Busy"):
        report.measure_report(lab)


def test_compare_picture_needs_a_colour_per_group(tmp_path, quick_plots):
    lab = Lab(updates=20, eval_every=10, memory=False, cache=ResultCache(tmp_path / "cache"), redraw_seconds=0)
    g = group(run(0, 0.9, [2.0, 1.0]))
    with pytest.raises(ValueError, match="4 groups and only 3 colours"):
        report.compare_picture(lab, [g] * 4, ["a"] * 4, "t")


def _bn_model(seed=0):
    import keras
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.BatchNormalization(),
                             keras.layers.Activation("relu"), keras.layers.Dense(2), keras.layers.BatchNormalization()])


def test_training_set_statistics_are_each_batchnorms_inputs_mean_and_variance_by_hand():
    model = _bn_model()
    x = np.random.default_rng(0).normal(size=(50, 4)).astype("float32")
    first, second = report.training_set_statistics(model, x)
    w1, b1 = [np.asarray(v, float) for v in model.layers[0].weights]
    h = x.astype(float) @ w1 + b1  # the first BatchNorm's inputs, by hand
    np.testing.assert_allclose(np.asarray(first.moving_mean), h.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(first.moving_variance), ((h - h.mean(0)) ** 2).mean(0), rtol=1e-5)
    g = (h - h.mean(0)) / np.sqrt(h.var(0) + first.epsilon)  # inference with the statistics just set
    g = np.maximum(g * np.asarray(first.gamma) + np.asarray(first.beta), 0)
    w2, b2 = [np.asarray(v, float) for v in model.layers[3].weights]
    z = g @ w2 + b2  # the second BatchNorm's inputs, by hand
    np.testing.assert_allclose(np.asarray(second.moving_mean), z.mean(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(second.moving_variance), z.var(0), rtol=1e-4, atol=1e-6)


def test_training_set_statistics_match_keras_own_batchnorm_with_momentum_zero():
    import keras
    model, oracle = _bn_model(1), _bn_model(1)
    x = np.random.default_rng(1).normal(size=(40, 4)).astype("float32")
    report.training_set_statistics(model, x)
    norm = oracle.layers[1]
    norm.momentum = 0.0  # Keras's own layer, one training call on all of x: the moving statistics become x's
    norm(oracle.layers[0](x), training=True)
    np.testing.assert_allclose(np.asarray(model.layers[1].moving_mean), np.asarray(norm.moving_mean), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(model.layers[1].moving_variance), np.asarray(norm.moving_variance),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="no BatchNormalization"):
        report.training_set_statistics(keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]), x)


def test_settle_tests_each_seed_as_trained_then_with_the_training_sets_statistics():
    import types
    rng = np.random.default_rng(2)
    data = types.SimpleNamespace(x_train=rng.normal(3.0, 2.0, size=(60, 4)).astype("float32"),
                                 x_test=rng.normal(3.0, 2.0, size=(30, 4)).astype("float32"), y_test=rng.integers(0, 2, 30))
    models = {}

    def train(config):
        models[config.seed] = m = _bn_model(config.seed)
        return None, m
    g = group(run(1, 0.5, [1.0]), run(0, 0.5, [1.0]))
    as_trained, settled, trained = report.settle(g, data, train=train)
    assert trained == [models[0], models[1]]  # seed order
    for seed, (before, after) in enumerate(zip(as_trained, settled)):
        fresh = _bn_model(seed)  # as trained: moving statistics 0 and 1; then set by hand to the training set's
        hand = lambda m: 100 * np.mean(np.argmax(np.asarray(m(data.x_test, training=False)), -1) == data.y_test)
        assert before == pytest.approx(hand(fresh))
        assert after == pytest.approx(hand(models[seed]))
        assert np.allclose(np.asarray(models[seed].layers[1].moving_mean), 0) is False
