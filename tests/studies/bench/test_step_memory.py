"""`step_memory`: each strategy's memory measured in a fresh process, by the module's own
entry point; a child that hangs or fails is reported, not waited for."""
import json
import subprocess
import sys

import pytest

from gradlab.studies.bench import step as bench, step_memory, step_report
from gradlab.studies import memory as gl_memory
from gradlab.studies.models import make_model
from gradlab.studies.figures.plots import plot_bench

TINY = dict(rounds=2, updates=1, warmup=1, progress=False)


@pytest.mark.slow
def test_memory_is_measured_in_fresh_processes():
    sweep = bench.run_sweep([4], micro_batch=8, strategies=["large_batch", "fused"],
                            memory=True, memory_updates=1, **TINY)
    rows = sweep["runs"][0]["strategies"]
    # Oracle from the model alone: an update holds at least one float32 gradient per weight.
    grad_mb = make_model("mlp").count_params() * 4 / 2**20
    for name, r in rows.items():
        assert "memory_error" not in r, r.get("memory_error")
        assert r["peak_mb"] == r["tf_peak_mb"] >= grad_mb, (name, r)
        assert r["rss_reset"] is True and r["memory_device"] == "CPU:0"
        assert sweep["strategies"][name]["peak_mb"] == [r["peak_mb"]]
    # Compiling with XLA (fused on the mlp) holds far more than an update needs; reported apart.
    assert rows["fused"]["compile_mb"] > 5 * rows["fused"]["peak_mb"]
    assert "train MB" in step_report.format_bench(sweep["runs"][0])
    fig = plot_bench(sweep, memory="tf_peak_mb")
    assert len(fig.axes) == 2 and "allocator" in fig.axes[1].get_title()
    assert len(fig.axes[1].get_lines()) == 2  # one line per strategy


def test_a_memory_process_that_hangs_is_reported_not_waited_for(monkeypatch):
    def hang(cmd, **kwargs):
        assert kwargs["timeout"] == step_memory.MEMORY_TIMEOUT
        raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])
    monkeypatch.setattr(gl_memory.subprocess, "run", hang)
    r = step_memory.measure_memory("fused")
    assert r["peak_mb"] is None and r["memory_error"] == f"timed out after {step_memory.MEMORY_TIMEOUT} s"


def test_the_child_is_this_module_run_with_its_spec(monkeypatch):
    seen = {}

    def child(cmd, **kwargs):
        seen["cmd"], seen["env"] = cmd, kwargs["env"]
        return subprocess.CompletedProcess(cmd, 0, stdout='noise\n{"peak_mb": 1.5}\n', stderr="")
    monkeypatch.setattr(gl_memory.subprocess, "run", child)
    assert step_memory.measure_memory("fused+xla", accum_steps=3, towers=2) == {"peak_mb": 1.5}
    assert seen["cmd"][:3] == [sys.executable, "-m", "gradlab.studies.bench.step_memory"]
    assert json.loads(seen["cmd"][3]) == dict(name="fused+xla", model="mlp", accum_steps=3,
                                              micro_batch=10, optimizer="sgd", inputs="numpy",
                                              updates=3, seed=0, towers=2)
    assert seen["env"]["TF_CPU_ALLOCATOR_USE_BFC"] == "true"  # else the allocator keeps no peak


def test_a_failed_child_gives_every_field_as_none(monkeypatch):
    monkeypatch.setattr(gl_memory.subprocess, "run", lambda cmd, **kwargs: subprocess.CompletedProcess(
        cmd, 1, stdout="", stderr="Traceback...\nValueError: boom"))
    r = step_memory.measure_memory("fused")
    assert r == dict(step_memory.FAILED, memory_error="exit 1: ValueError: boom")
