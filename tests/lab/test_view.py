"""The lab widget, driven as a user would: set the controls, press Run, read what it shows.

Its run logic runs headless on a stub trainer (`stub`, tests/lab/conftest.py); real training
runs in a few tests, the others are marked slow."""

import threading

import numpy as np
import pytest
from matplotlib.figure import Figure

from gradlab.lab import Lab, figures, runner, settings, view
from gradlab.studies.runs import experiments, run_config
from gradlab.studies.cache import ResultCache

from lab_stubs import stub_accuracy, stub_losses, stub_train

TINY = dict(updates=20, eval_every=10)


def make_lab(tmp_path, **kwargs):
    # memory=False: the fresh process that measures memory has one test below, with a stand-in
    return Lab(**{**TINY, "memory": False, "cache": ResultCache(tmp_path / "cache"),
                          "redraw_seconds": 0, **kwargs})


def set_controls(lab, strategy="fused", accum_steps=2, micro_batch=8, lr=0.1, seeds=1,
                 setting="exact"):
    lab.strategy.value = strategy
    lab.accum_steps.value = accum_steps
    lab.micro_batch.value = micro_batch
    lab.lr.value = lr
    lab.seeds.value = seeds
    lab.setting.value = setting


def cached_files(tmp_path):
    return sorted((tmp_path / "cache").rglob("*.json"))


def lab_with_two_runs(tmp_path):
    """A lab that has run N=2 b=8, then N=1 b=16: (lab, first group, second group)."""
    lab = make_lab(tmp_path)
    set_controls(lab)
    first = lab.run()
    set_controls(lab, accum_steps=1, micro_batch=16)
    return lab, first, lab.run()


def test_run_trains_shows_progress_and_redraws_while_training(tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path, live_every=5)
    set_controls(lab, "accumulate", accum_steps=2, micro_batch=8, lr=0.1)
    empty_plot, empty_summary = bytes(lab.plot.value), bytes(lab.summary.value)
    seen, plots_seen = [], []
    lab.progress.observe(lambda change: seen.append(change["new"]), "value")
    lab.plot.observe(lambda change: plots_seen.append(len(lab.groups[0].results[0].losses)), "value")

    group = lab.run()

    assert group is not None, lab.status.value
    assert not group.cached and group.seeds == [0]
    result, = group.results
    config = run_config.RunConfig(strategy="accumulate", accum_steps=2, micro_batch=8, lr=0.1,
                                   sampling="paired", **TINY)
    assert stub == [config] and result.config == config
    np.testing.assert_array_equal(result.losses, stub_losses(config))
    assert (result.accuracy, result.seconds_per_update) == (stub_accuracy(config), 1e-3)
    assert lab.groups == [group] and lab.current is group
    assert lab.progress.value == lab.progress.max == 20
    assert seen == list(range(1, 21))  # once per update, then held at the max
    # Live: redrawn after updates 5, 10, 15 and 20 (each snapshot), then once at the end.
    assert plots_seen[:4] == [5, 10, 15, 20], plots_seen
    assert bytes(lab.plot.value) != empty_plot and bytes(lab.summary.value) != empty_summary
    assert lab.status.value.startswith("Done: accumulate N=2 b=8 lr=0.1, seeds 0: 1 run(s)")
    assert not lab.button.disabled and lab.stop_button.disabled
    assert len(cached_files(tmp_path)) == 1


def test_same_configuration_again_comes_from_the_cache(tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path)
    set_controls(lab)
    first = lab.run().results[0]
    again = lab.run()

    assert again.cached and not first.cached
    assert lab.status.value.startswith("From cache: fused N=2 b=8")
    np.testing.assert_array_equal(again.results[0].losses, first.losses)
    assert again.accuracy == first.accuracy
    assert len(lab.groups) == 1  # the same configuration is one curve, not two

    # The cache is on disk: a new lab over the same directory does not train either.
    other = make_lab(tmp_path)
    set_controls(other)
    assert other.run().cached
    assert len(stub) == 1  # trained once


def test_seeds_are_cached_one_by_one_and_drawn_as_a_band(tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path)
    set_controls(lab, seeds=2)
    two = lab.run()
    assert two.seeds == [0, 1] and len(cached_files(tmp_path)) == 2
    assert two.label == "fused N=2 b=8 lr=0.1 (2 seeds)"
    np.testing.assert_allclose(two.losses, np.mean([stub_losses(c) for c in stub], axis=0))
    assert two.accuracy == pytest.approx(0.505)

    set_controls(lab, seeds=3)
    three = lab.run()
    assert three is two and three.seeds == [0, 1, 2]
    assert [r.cached for r in three.results] == [True, True, False]  # only seed 2 trained
    assert [c.seed for c in stub] == [0, 1, 2]
    assert len(cached_files(tmp_path)) == 3
    assert "1 run(s) trained" in lab.status.value and " ± " in lab.status.value


@pytest.mark.slow
def test_accumulation_equals_the_large_batch_and_the_difference_says_so(tmp_path):
    """Paired sampling: the same N*b gives the same examples per update, so N=4 x b=5
    (accumulated) and one batch of 20 must give the same loss curve."""
    lab = make_lab(tmp_path)
    set_controls(lab, "fused", accum_steps=4, micro_batch=5, lr=0.1)
    accumulated = lab.run()
    assert accumulated.difference() is None  # no large batch of 20 yet
    set_controls(lab, "large_batch", accum_steps=1, micro_batch=20, lr=0.1)
    large = lab.run()

    np.testing.assert_allclose(accumulated.losses, large.losses, rtol=1e-5, atol=1e-6)
    assert bytes(lab.plot.value).startswith(b"\x89PNG")
    assert abs(accumulated.accuracy - large.accuracy) <= 0.002
    delta, worst, acc = accumulated.difference()
    assert len(delta) == 20 and worst < 1e-5 and abs(acc) <= 0.002
    assert large.difference() is None  # the large batch is its own twin
    assert [g.config.accum_steps for g in lab.groups] == [4, 1]


def test_stop_ends_a_run_and_caches_nothing(tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path, live_every=5)
    set_controls(lab)
    lab.plot.observe(lambda change: lab.stop(), "value")  # Stop at the first live redraw

    assert lab.run() is None
    assert lab.status.value == "Stopped after 6 of 20 updates (seed 0): nothing of it was cached."
    assert lab.groups == [] and cached_files(tmp_path) == []
    assert not lab.button.disabled and lab.stop_button.disabled


def test_the_run_button_trains_in_a_thread(tmp_path, monkeypatch, quick_plots):
    threads = []

    def train(config, *args):
        threads.append(threading.current_thread().name)
        return stub_train(config, *args)
    monkeypatch.setattr(experiments, "train", train)
    lab = make_lab(tmp_path)
    set_controls(lab, accum_steps=3, micro_batch=4)
    lab.button.click()
    lab.wait(timeout=300)
    assert threads == ["gradlab-lab-run"]

    assert [g.label for g in lab.groups] == ["fused N=3 b=4 lr=0.1"], lab.status.value
    assert lab.status.value.startswith("Done: fused N=3 b=4")
    assert not lab.button.disabled and lab.stop_button.disabled


def test_measure_runs_the_large_batch_gradlab_and_the_naive_way_and_says_how_far_each_is(
        tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path)
    set_controls(lab, accum_steps=4, micro_batch=5, lr=0.1, setting="cosine lr schedule")
    large, fused, keras = lab.measure()

    common = dict(lr=0.1, sampling="paired", schedule="cosine", **TINY)
    assert stub == [run_config.RunConfig(strategy="large_batch", accum_steps=1, micro_batch=20, **common),
                    run_config.RunConfig(strategy="fused", accum_steps=4, micro_batch=5, **common),
                    run_config.RunConfig(strategy="keras", accum_steps=4, micro_batch=5, **common)]
    assert [g.config for g in (large, fused, keras)] == stub
    assert fused.difference()[1] == 0.0
    worst = np.max(np.abs(stub_losses(stub[2]) - stub_losses(stub[0])))
    assert keras.difference()[1] == pytest.approx(worst) and worst == pytest.approx(0.05)
    assert lab.status.value == ("Measured against one large batch of 20: "
                                "fused N=4 b=5 lr=0.1, cosine lr: max |Δloss| 0, accuracy +0.0 pts; "
                                "keras N=4 b=5 lr=0.1, cosine lr: max |Δloss| 0.05, accuracy +0.0 pts.")


@pytest.mark.slow
def test_measure_shows_keras_under_a_schedule_differs_and_gradlab_does_not(tmp_path):
    lab = make_lab(tmp_path)
    set_controls(lab, accum_steps=4, micro_batch=5, lr=0.1, setting="cosine lr schedule")
    measured = lab.measure()
    assert measured is not None, (lab.status.value, lab.log.outputs)
    large, fused, keras = measured

    assert large.config == run_config.RunConfig(strategy="large_batch", accum_steps=1,
                                                 micro_batch=20, lr=0.1, sampling="paired",
                                                 schedule="cosine", **TINY)
    assert fused.difference()[1] < 1e-5
    # Keras's schedule counts micro-batches: lr reaches 0 after 20 / 4 = 5 updates.
    assert keras.difference()[1] > 0.01
    # ... so its weights, and its test accuracy, stay as they were after update 5.
    assert keras.results[0].eval_updates.tolist() == [0, 10, 20]
    assert keras.results[0].eval_accuracy[1] == keras.results[0].eval_accuracy[2]
    assert lab.status.value.startswith("Measured against one large batch of 20: ")
    assert "keras N=4 b=5 lr=0.1, cosine lr: max |Δloss|" in lab.status.value


@pytest.mark.slow
def test_measure_uneven_micro_batches(tmp_path):
    lab = make_lab(tmp_path)
    set_controls(lab, accum_steps=4, micro_batch=3, lr=0.1, setting="uneven micro-batches")
    assert lab.batch.value == "effective batch B = N·b - N//2 = 4·3 - 2 = 10"
    measured = lab.measure()
    assert measured is not None, (lab.status.value, lab.log.outputs)
    large, fused, keras = measured

    assert large.config.micro_batch == fused.config.effective_batch == 10
    assert fused.difference()[1] < 1e-5
    assert keras.difference()[1] > 1e-3  # Keras divides by N: micro-batches of 3, 3, 2, 2


@pytest.mark.slow
def test_measure_clipping_and_batchnorm(tmp_path):
    lab = make_lab(tmp_path)
    set_controls(lab, accum_steps=4, micro_batch=5, lr=0.5, setting="clip each micro-batch")
    measured = lab.measure()
    assert measured is not None, (lab.status.value, lab.log.outputs)
    _, once, each = measured
    assert once.config.clip == "update" and each.config.clip == "micro"
    assert once.difference()[1] < 1e-5 and each.difference()[1] > 1e-3

    lab.setting.value = "BatchNorm, statistics per update"
    _, window, micro = lab.measure()
    assert (window.config.batchnorm, micro.config.batchnorm) == ("window", "micro")
    # Both normalise with micro-batch statistics, unlike the large batch ...
    assert window.difference()[1] > 1e-3 and micro.difference()[1] > 1e-3
    # ... and the moving statistics do not enter training: the same training losses.
    np.testing.assert_allclose(window.losses, micro.losses, rtol=1e-5, atol=1e-6)
    # The strategies' warning that BatchNorm makes them inexact is a note under the plot.
    notes = [o["text"] for o in lab.log.outputs if o["name"] == "stdout"]
    assert any("BatchNormalization normalises with its own statistics" in t for t in notes), notes


def test_x_axis_hide_and_remove(tmp_path, stub, quick_plots):
    lab, first, second = lab_with_two_runs(tmp_path)
    by_updates = bytes(lab.plot.value)

    lab.x_axis.value = "examples"
    assert bytes(lab.plot.value) != by_updates
    row = lab.runs.children[0]
    checkbox, remove = row.children[1], row.children[2]
    assert checkbox.description == first.label
    both = bytes(lab.plot.value)
    checkbox.value = False
    assert not first.visible and bytes(lab.plot.value) != both
    remove.click()
    assert lab.groups == [second] and len(lab.runs.children) == 1
    assert len(cached_files(tmp_path)) == 2  # the cache keeps it


def test_slider_moves_run_nothing_and_invalid_configurations_are_shown(tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path)
    plot = bytes(lab.plot.value)
    for n in (1, 7, 32, 3):
        lab.accum_steps.value = n
    lab.micro_batch.value = 64
    lab.lr.value = 0.01
    assert lab.groups == [] and bytes(lab.plot.value) == plot
    assert lab.batch.value == "effective batch B = N·b = 3·64 = 192"
    assert cached_files(tmp_path) == []

    lab.accum_steps.value, lab.micro_batch.value = 32, 256  # B = 8192 > 4,000 images
    assert lab.run() is None
    assert lab.status.value.startswith("Error: ") and "8192" in lab.status.value
    assert lab.status.style.text_color == "#cf222e"
    lab.accum_steps.value, lab.setting.value = 1, "uneven micro-batches"
    assert lab.run() is None and "need N >= 2" in lab.status.value
    assert lab.groups == [] and not lab.button.disabled and cached_files(tmp_path) == []
    assert stub == []


def test_failed_run_shows_its_traceback(tmp_path, monkeypatch, quick_plots):
    def broken(config, bar=None, *args):
        bar.update(1)
        raise RuntimeError("the kernel ran out of patience")

    monkeypatch.setattr(experiments, "train", broken)
    lab = make_lab(tmp_path)
    set_controls(lab)

    assert lab.run() is None
    assert lab.status.value == "Error: RuntimeError: the kernel ran out of patience"
    assert lab.progress.bar_style == "danger"
    assert "Traceback" in lab.log.outputs[0]["text"]
    assert lab.groups == [] and not lab.button.disabled
    assert cached_files(tmp_path) == []


def test_bad_arguments_are_refused_before_any_widget(tmp_path):
    with pytest.raises(ValueError, match="accum_steps must be an integer >= 1, got 0"):
        make_lab(tmp_path, accum_steps=0)
    with pytest.raises(ValueError, match="'nope'"):
        make_lab(tmp_path, strategy="nope")
    with pytest.raises(ValueError, match="micro_batch=256; got 4 and 300"):
        make_lab(tmp_path, micro_batch=300)
    with pytest.raises(ValueError, match="'towers' is not among the choices"):
        make_lab(tmp_path, strategy="towers", strategies=("fused",))
    with pytest.raises(TypeError, match="lr must be a positive number"):
        make_lab(tmp_path, lr="fast")
    with pytest.raises(ValueError, match="lr slider spans 0.001 to 3.16; got lr=10"):
        make_lab(tmp_path, lr=10)  # the slider would have clamped it to 3.16
    with pytest.raises(ValueError, match="seeds slider reaches 5; got seeds=9"):
        make_lab(tmp_path, seeds=9)
    with pytest.raises(ValueError, match="setting must be one of .*got 'wrong'"):
        make_lab(tmp_path, setting="wrong")
    with pytest.raises(ValueError, match="x must be one of updates, examples, seconds; got 'time'"):
        make_lab(tmp_path, x="time")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError, match="result cache '.*loop' cannot be written"):
        Lab(**{**TINY, "memory": False, "cache": ResultCache(loop)})


@pytest.mark.slow
def test_every_offered_strategy_runs_and_agrees(tmp_path):
    # tests/common.py made two logical CPUs, so `towers` is offered.
    offered = settings.available_strategies()
    assert {"large_batch", "fused", "accumulate", "host_average", "towers"} <= set(offered)
    lab = make_lab(tmp_path, updates=3, eval_every=3)
    assert lab.strategy.options == offered
    losses = {}
    for name in offered:
        set_controls(lab, name, accum_steps=2, micro_batch=4)
        group = lab.run()
        assert group is not None, lab.status.value
        losses[name] = group.losses
    for name, curve in losses.items():  # equal micro-batches: all of them are exact
        np.testing.assert_allclose(curve, losses["large_batch"], rtol=1e-5, err_msg=name)


def test_picture_and_display(tmp_path, stub):
    lab = make_lab(tmp_path)
    set_controls(lab)
    lab.run()
    picture = lab.picture(tmp_path / "lab.png")
    assert picture.data.startswith(b"\x89PNG") and (tmp_path / "lab.png").read_bytes() == picture.data
    width = int.from_bytes(picture.data[16:20], "big")  # the PNG header's IHDR width
    assert width == 960
    bundle = lab._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.widget.model_id
    assert bundle["text/plain"].startswith("gradlab's lab, a widget: run the notebook")
    assert repr(lab) == "<gradlab.lab.Lab fused N=2 b=8 lr=0.1: 1 configurations>"
    assert "gradlab-lab" in lab.widget._dom_classes


def test_picture_of_given_groups_ignores_what_the_widget_shows(tmp_path, stub, monkeypatch):
    lab, first, _ = lab_with_two_runs(tmp_path)
    lab.show(first, False)  # hidden on the widget, yet asked for
    drawn = []
    monkeypatch.setattr(figures, "plot_picture", lambda groups, **kw: drawn.append((groups, kw)) or Figure())
    lab.picture(groups=[first], labels=["mine"])
    assert drawn[0][0] == [first] and drawn[0][1]["labels"] == ["mine"] and drawn[0][1]["current"] is None


def test_picture_draws_one_group_dashed_on_top_in_given_colours_and_restores_their_styles(
        tmp_path, stub, monkeypatch):
    lab, first, second = lab_with_two_runs(tmp_path)
    styles = [(g.linestyle, g.color) for g in (first, second)]
    drawn = []
    monkeypatch.setattr(figures, "plot_picture", lambda groups, **kw: drawn.append(
        ([(g, g.linestyle, g.color) for g in groups], kw)) or Figure())
    lab.picture(groups=[first, second], labels=["a", "b"], dashed=0, colors=["black", "tab:red"])
    assert drawn[0][0] == [(second, "-", "tab:red"), (first, "--", "black")]  # the dashed one last
    assert drawn[0][1]["labels"] == ["b", "a"]
    assert [(g.linestyle, g.color) for g in (first, second)] == styles  # the widget's styles put back
    with pytest.raises(ValueError, match="pass groups"):
        lab.picture(dashed=0)
    with pytest.raises(ValueError, match="one colour per group"):
        lab.picture(groups=[first], colors=["black", "red"])


def test_picture_draws_a_dotted_reference_in_its_place_first_so_it_stays_the_reference(tmp_path, stub, monkeypatch):
    # lesson 17: the large batch's black line lay hidden under the two ways that coincide with it; dotted, loss_band
    # lifts it above them (test_curves), while it stays first: the accuracy panel's reference
    lab, first, second = lab_with_two_runs(tmp_path)
    styles = [(g.linestyle, g.color) for g in (first, second)]
    drawn = []
    monkeypatch.setattr(figures, "plot_picture", lambda groups, **kw: drawn.append(
        ([(g, g.linestyle) for g in groups], kw)) or Figure())
    lab.picture(groups=[first, second], labels=["reference", "way"], dashed=1, dotted=0)
    assert drawn[0][0] == [(first, ":"), (second, "--")]  # the dotted reference first, the dashed way last
    assert drawn[0][1]["labels"] == ["reference", "way"]
    assert [(g.linestyle, g.color) for g in (first, second)] == styles
    with pytest.raises(ValueError, match="both dashed and dotted"):
        lab.picture(groups=[first, second], dashed=0, dotted=0)
    with pytest.raises(ValueError, match="pass groups"):
        lab.picture(dotted=0)


def test_show_only_hides_every_other_group_and_says_so(tmp_path, stub, quick_plots):
    lab, first, second = lab_with_two_runs(tmp_path)
    lab.show_only([first], "Showing the first run.")
    assert (first.visible, second.visible) == (True, False)
    assert lab.controls.status.value == "Showing the first run."
    lab.show_only(second)
    assert (first.visible, second.visible) == (False, True)
    assert lab.controls.status.value == "Showing the first run."  # no status given: kept


def test_memory_is_shown_in_the_summary_and_the_picture(tmp_path, stub, quick_plots, monkeypatch):
    drawn = []
    monkeypatch.setattr(runner.run_memory, "allocator_peak", lambda config, cache: {
        "peak_mb": 12.0, "compile_peak_mb": 20.0, "device": "CPU:0"})
    monkeypatch.setattr(figures, "plot_picture", lambda groups, **kw: drawn.append(groups) or
                        figures.Figure())
    lab = make_lab(tmp_path, memory=True)
    set_controls(lab, seeds=2)
    group = lab.run()
    lab.wait()
    assert group.peak_mb == 12.0
    cost = figures.plot_lab_batches(lab.groups).axes[2]
    assert [t.get_text() for t in cost.texts] == ["fused N=2 b=8:  1.0 ms · 12 MiB"]
    lab.picture()
    assert drawn == [[group]]
    # Switched off, a new configuration is not measured; the measured one keeps its peak.
    lab.memory = False
    set_controls(lab, accum_steps=1)
    unmeasured = lab.run()
    lab.wait()
    assert lab.memory is False and unmeasured.peak_mb is None and group.peak_mb == 12.0


def test_bad_lab_arguments_name_their_value(tmp_path):
    with pytest.raises(ValueError, match="live_every must be an integer >= 1, got 0"):
        make_lab(tmp_path, live_every=0)
    with pytest.raises(ValueError, match="got 'wrong'"):
        make_lab(tmp_path, setting="wrong")


def test_snapshot_is_the_widgets_two_plots_and_the_one_seed_picture_a_png(tmp_path, stub):
    lab = make_lab(tmp_path)
    set_controls(lab)
    group = lab.run()
    curves, summary = lab.snapshot()
    assert (curves.data, summary.data) == (bytes(lab.plot.value), bytes(lab.summary.value))
    assert curves.data.startswith(b"\x89PNG") and summary.data.startswith(b"\x89PNG")
    set_controls(lab, accum_steps=4)
    lab.run()
    assert lab.snapshot()[0].data != curves.data  # the plot as it is now, with the second run
    picture = lab.picture_one_seed([group], ["mine"], upto=100)
    assert picture.data.startswith(b"\x89PNG") and int.from_bytes(picture.data[16:20], "big") == 960


def test_set_moves_several_controls_and_checks_them_all_first(tmp_path, stub, quick_plots):
    lab = make_lab(tmp_path)
    assert lab.set(strategy="large_batch", accum_steps=1, micro_batch=100, lr=0.25, seeds=3,
                   setting="cosine lr schedule", x_axis="examples") is lab
    assert (lab.strategy.value, lab.accum_steps.value, lab.micro_batch.value, lab.lr.value, lab.seeds.value,
            lab.setting.value, lab.x_axis.value) == ("large_batch", 1, 100, 0.25, 3, "cosine lr schedule", "examples")
    assert lab.batch.value == settings.batch_text("cosine lr schedule", 1, 100)  # as moving each one does
    before = (lab.strategy.value, lab.accum_steps.value, lab.micro_batch.value)
    with pytest.raises(ValueError, match=r"no control 'accum' \(given 4\)"):
        lab.set(strategy="fused", accum=4)
    with pytest.raises(ValueError, match=r"control 'micro_batch' cannot be 100000: a number from 1 to "):
        lab.set(accum_steps=4, micro_batch=100_000)
    with pytest.raises(ValueError, match=r"control 'setting' cannot be 'nope'; its options: 'exact'"):
        lab.set(strategy="fused", setting="nope")
    with pytest.raises(ValueError, match=r"control 'x_axis' cannot be 'time'"):
        lab.set(x_axis="time")
    with pytest.raises(ValueError, match=r"control 'seeds' cannot be '2'"):
        lab.set(seeds="2")
    assert (lab.strategy.value, lab.accum_steps.value, lab.micro_batch.value) == before  # nothing moved
