"""The runner without widgets: what it trains, caches, says and records, on the stub trainer."""
import threading

import numpy as np
import pytest

from gradlab.lab import runner as runner_module
from gradlab.lab import settings
from gradlab.lab.runner import Listener, Runner
from gradlab.studies.runs import experiments
from gradlab.studies.cache import ResultCache

from lab_stubs import stub_accuracy, stub_losses, stub_train

TINY = dict(updates=20, eval_every=10, sampling="paired")


class Recorder(Listener):
    """Everything a Runner tells its view, in order."""

    def __init__(self):
        self.events = []

    def busy(self, running): self.events.append(("busy", running))
    def status(self, text, kind): self.events.append(("status", text, kind))
    def progress(self, value, total, style): self.events.append(("progress", value, total, style))
    def note(self, text): self.events.append(("note", text))
    def failure(self, text): self.events.append(("failure", text))
    def redraw(self, summary=True): self.events.append(("redraw", summary))
    def runs_changed(self): self.events.append(("runs",))

    def of(self, kind):
        return [e[1:] for e in self.events if e[0] == kind]


def make(tmp_path, **kwargs):
    recorder = Recorder()
    return Runner(ResultCache(tmp_path / "cache"), recorder, redraw_seconds=0, memory=False,
                  **kwargs), recorder


def configs(strategy="fused", n=2, b=8, seeds=1, setting="exact", lr=0.1):
    return settings.configs(strategy, n, b, lr, seeds, setting, **TINY)


def test_a_run_trains_every_seed_reports_progress_and_caches(tmp_path, stub):
    runner, seen = make(tmp_path, live_every=5)
    group = runner.run(configs(seeds=2))

    assert group.seeds == [0, 1] and [c.seed for c in stub] == [0, 1]
    np.testing.assert_array_equal(group.results[1].losses, stub_losses(stub[1]))
    assert group.accuracy == pytest.approx(np.mean([stub_accuracy(c) for c in stub]))
    # One bar for both seeds: 40 updates, each one sent (under PROGRESS_MESSAGES), then done.
    values = [v for v, total, style in seen.of("progress") if total is None]
    assert seen.of("progress")[0] == (0, 40, "info") and values == list(range(1, 41))
    assert seen.of("progress")[-1] == (40, 40, "success")
    # Live redraws (no summary) at updates 5, 10, 15, 20 of each seed, while training.
    assert seen.of("redraw").count((False,)) == 8
    # The finished run is drawn once (a full redraw of many runs costs as much as a short run).
    assert seen.of("redraw").count((True,)) == 1 and seen.events[-2] == ("redraw", True)
    assert seen.of("busy") == [(True,), (False,)]
    text, kind = runner.message
    assert kind == "ok" and text.startswith("Done: fused N=2 b=8 lr=0.1, seeds 0-1: 2 run(s)")
    assert " ± " in text
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2

    again = runner.run(configs(seeds=3))  # seeds 0 and 1 from the cache, 2 trained
    assert again is group and [r.cached for r in group.results] == [True, True, False]
    assert runner.run(configs(seeds=3)).cached and len(stub) == 3
    assert runner.message[0].startswith("From cache: fused N=2 b=8 lr=0.1, seeds 0-2")


def test_progress_is_sent_at_most_a_hundred_times(tmp_path, stub):
    runner, seen = make(tmp_path)
    runner.run(settings.configs("fused", 1, 4, 0.1, 1, "exact", updates=1000, eval_every=500))
    values = [v for v, total, _ in seen.of("progress") if total is None]
    assert len(values) == runner_module.PROGRESS_MESSAGES and values[-1] == 1000


def test_stop_ends_the_run_and_nothing_is_kept(tmp_path, stub):
    runner, seen = make(tmp_path, live_every=5)
    original = seen.redraw
    seen.redraw = lambda summary=True: (runner.stop(), original(summary))  # Stop at the first redraw
    assert runner.run(configs()) is None
    assert runner.message == ("Stopped after 6 of 20 updates (seed 0): nothing of it was cached.",
                              "error")
    assert seen.of("progress")[-1] == (None, None, "warning")
    assert runner.groups.all == [] and runner.groups.current is None
    assert list((tmp_path / "cache").rglob("*.json")) == []


def test_a_second_job_is_refused_while_one_runs(tmp_path, monkeypatch):
    started, release = threading.Event(), threading.Event()

    def slow(config, *args):
        started.set()
        release.wait(10)
        return stub_train(config, *args)
    monkeypatch.setattr(experiments, "train", slow)
    runner, _ = make(tmp_path)
    runner.start(lambda: runner.run(configs()))
    assert started.wait(10)
    assert runner.run(configs(n=4)) is None
    assert runner.message == ("Busy: a run is in progress (Stop ends it).", "error")
    release.set()
    runner.wait(10)
    assert [g.config.accum_steps for g in runner.groups.all] == [2]


def test_a_failure_is_said_with_its_traceback(tmp_path, monkeypatch):
    def broken(config, bar=None, *args):
        bar.update(1)
        raise RuntimeError("the kernel ran out of patience")
    monkeypatch.setattr(experiments, "train", broken)
    runner, seen = make(tmp_path)
    assert runner.run(configs()) is None
    assert runner.message == ("Error: RuntimeError: the kernel ran out of patience", "error")
    assert seen.of("progress")[-1] == (None, None, "danger")
    assert "Traceback" in seen.of("failure")[0][0]
    assert runner.groups.all == [] and seen.of("busy")[-1] == (False,)


def test_measure_says_how_far_each_way_is_from_the_large_batch(tmp_path, stub):
    runner, seen = make(tmp_path)
    plan = settings.measure_plan("fused", "cosine lr schedule",
                                 lambda s, name: configs(s, 4, 5, setting=name))
    large, fused, keras = runner.measure(plan)
    # Drawn after the large batch, after gradlab's way, and once at the end.
    assert seen.of("redraw").count((True,)) == 3
    assert [c.strategy for c in stub] == ["large_batch", "fused", "keras"]
    assert fused.difference()[1] == 0.0
    assert keras.difference()[1] == pytest.approx(0.05)
    assert runner.message == ("Measured against one large batch of 20: "
                              "fused N=4 b=5 lr=0.1, cosine lr: max |Δloss| 0, accuracy +0.0 pts; "
                              "keras N=4 b=5 lr=0.1, cosine lr: max |Δloss| 0.05, accuracy +0.0 pts.",
                              "ok")


def test_warnings_of_a_run_become_notes(tmp_path, monkeypatch):
    import warnings

    def warns(config, *args):
        warnings.warn("BatchNorm makes it inexact")
        warnings.warn("BatchNorm makes it inexact")  # said once
        return stub_train(config, *args)
    monkeypatch.setattr(experiments, "train", warns)
    runner, seen = make(tmp_path)
    runner.run(configs())
    assert seen.of("note") == [("Note: BatchNorm makes it inexact",)]


def test_memory_is_measured_once_per_configuration(tmp_path, stub, monkeypatch):
    calls = []

    def peak(config, cache):  # stands in for the fresh process of run_memory
        calls.append(config)
        return {"peak_mb": 12.0, "compile_peak_mb": 20.0, "device": "CPU:0"}
    monkeypatch.setattr(runner_module.run_memory, "allocator_peak", peak)
    runner, _ = make(tmp_path)
    runner.memory = True
    group = runner.run(configs(seeds=2))
    runner.wait()
    assert group.peak_mb == 12.0 and len(calls) == 1 and calls[0].accum_steps == 2
    runner.run(configs(seeds=2))  # from the cache: the group keeps its measurement
    runner.wait()
    assert len(calls) == 1


def test_a_failed_memory_measurement_is_a_note(tmp_path, stub, monkeypatch):
    monkeypatch.setattr(runner_module.run_memory, "allocator_peak",
                        lambda config, cache: {"error": "exit 1: boom"})
    runner, seen = make(tmp_path)
    runner.memory = True
    group = runner.run(configs())
    runner.wait()
    assert group.peak_mb is None
    assert seen.of("note") == [("Note: the allocator peak of fused N=2 b=8 was not measured "
                                "(exit 1: boom)",)]
