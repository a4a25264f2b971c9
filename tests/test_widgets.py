"""The lab widget, driven as a user would: set the controls, press Run, read what it shows."""

import numpy as np
import pytest

from gradlab import experiments, widgets
from gradlab.cache import ResultCache

TINY = dict(updates=20, eval_every=10)


def make_lab(tmp_path, **kwargs):
    return widgets.Lab(**{**TINY, "cache": ResultCache(tmp_path / "cache"), **kwargs})


def set_controls(lab, strategy="fused", accum_steps=2, micro_batch=8, lr=0.1):
    lab.strategy.value = strategy
    lab.accum_steps.value = accum_steps
    lab.micro_batch.value = micro_batch
    lab.lr.value = lr


def test_run_trains_shows_progress_and_redraws(tmp_path):
    lab = make_lab(tmp_path)
    set_controls(lab, "accumulate", accum_steps=2, micro_batch=8, lr=0.1)
    empty_plot = bytes(lab.plot.value)
    seen = []
    lab.progress.observe(lambda change: seen.append(change["new"]), "value")

    result = lab.run()

    assert result is not None, lab.status.value
    assert not result.cached
    assert result.config == experiments.RunConfig(strategy="accumulate", accum_steps=2,
                                                  micro_batch=8, lr=0.1, sampling="paired",
                                                  **TINY)
    assert len(result.losses) == 20 and np.all(np.isfinite(result.losses))
    assert 0.0 <= result.accuracy <= 1.0
    assert lab.results == [result] and lab.last is result
    assert lab.progress.value == lab.progress.max == 20
    assert seen == list(range(1, 21))  # once per update, then held at the max
    assert bytes(lab.plot.value) != empty_plot
    assert bytes(lab.plot.value).startswith(b"\x89PNG")
    assert lab.status.value.startswith("Done: accumulate N=2 b=8 (B=16) lr=0.1")
    assert not lab.button.disabled


def test_same_configuration_again_comes_from_the_cache(tmp_path):
    lab = make_lab(tmp_path)
    set_controls(lab)
    first = lab.run()
    again = lab.run()

    assert again.cached and not first.cached
    assert lab.status.value.startswith("From cache: fused N=2 b=8")
    np.testing.assert_array_equal(again.losses, first.losses)
    assert again.accuracy == first.accuracy
    assert len(lab.results) == 1  # the same configuration is one curve, not two
    assert lab.progress.value == lab.progress.max

    # The cache is on disk: a new lab over the same directory does not train either.
    other = make_lab(tmp_path)
    set_controls(other)
    assert other.run().cached


def test_accumulation_equals_the_large_batch_on_the_plot(tmp_path):
    """Paired sampling: the same N*b gives the same examples per update, so N=4 x b=5
    (accumulated) and one batch of 20 must give the same loss curve."""
    lab = make_lab(tmp_path)
    set_controls(lab, "fused", accum_steps=4, micro_batch=5, lr=0.1)
    accumulated = lab.run()
    set_controls(lab, "large_batch", accum_steps=1, micro_batch=20, lr=0.1)
    large = lab.run()

    np.testing.assert_allclose(accumulated.losses, large.losses, rtol=1e-5, atol=1e-6)
    assert abs(accumulated.accuracy - large.accuracy) <= 0.002
    assert [r.config.accum_steps for r in lab.results] == [4, 1]


def test_moving_a_slider_runs_nothing(tmp_path):
    lab = make_lab(tmp_path)
    plot = bytes(lab.plot.value)
    for n in (1, 7, 32, 3):
        lab.accum_steps.value = n
    lab.micro_batch.value = 64
    lab.lr.value = 0.01
    assert lab.results == [] and bytes(lab.plot.value) == plot
    assert lab.batch.value == "effective batch B = N·b = 3·64 = 192"
    assert not any((tmp_path / "cache").rglob("*.json"))


def test_invalid_configuration_is_shown_not_raised(tmp_path):
    lab = make_lab(tmp_path)
    set_controls(lab)
    lab.run()
    plot = bytes(lab.plot.value)
    lab.accum_steps.value, lab.micro_batch.value = 32, 256  # B = 8192 > 4,000 images

    assert lab.run() is None
    assert lab.status.value.startswith("Error: ")
    assert "8192" in lab.status.value and "4,000" in lab.status.value
    assert lab.status.style.text_color == widgets._ERROR
    assert len(lab.results) == 1 and bytes(lab.plot.value) == plot
    assert not lab.button.disabled
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1


def test_failed_run_shows_its_traceback(tmp_path, monkeypatch):
    def broken(config, bar=None):
        bar.update(1)
        raise RuntimeError("the kernel ran out of patience")

    monkeypatch.setattr(experiments, "train", broken)
    lab = make_lab(tmp_path)
    set_controls(lab)

    assert lab.run() is None
    assert lab.status.value == "Error: RuntimeError: the kernel ran out of patience"
    assert lab.progress.bar_style == "danger"
    assert "Traceback" in lab.log.outputs[0]["text"]
    assert lab.results == [] and not lab.button.disabled
    assert not any((tmp_path / "cache").rglob("*.json"))


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


def test_every_offered_strategy_runs_and_agrees(tmp_path):
    # tests/conftest.py made two logical CPUs, so `towers` is offered.
    offered = widgets.available_strategies()
    assert {"large_batch", "fused", "accumulate", "host_average", "towers"} <= set(offered)
    lab = make_lab(tmp_path, updates=3, eval_every=3)
    assert lab.strategy.options == offered
    losses = {}
    for name in offered:
        set_controls(lab, name, accum_steps=2, micro_batch=4)
        result = lab.run()
        assert result is not None, lab.status.value
        losses[name] = result.losses
    for name, curve in losses.items():  # equal micro-batches: all of them are exact
        np.testing.assert_allclose(curve, losses["large_batch"], rtol=1e-5, err_msg=name)


def test_display(tmp_path):
    lab = make_lab(tmp_path)
    bundle = lab._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.widget.model_id
    assert "gradlab-lab" in lab.widget._dom_classes
