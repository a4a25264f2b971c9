"""The benchmark runs, and what it reports is consistent; no timing is asserted here
(speed and memory are benchmarks: `python -m gradlab bench`)."""
import json
import statistics
import subprocess

import keras
import matplotlib.figure
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from gradlab.studies import bench
from gradlab.studies import memory as gl_memory
from gradlab.studies.data import load_mnist
from gradlab.studies.models import make_model
from gradlab.studies.plots import plot_bench

TINY = dict(rounds=2, updates=1, warmup=1, progress=False)


@pytest.mark.slow
def test_cli_json_is_one_object_and_the_table_shows_it(capsys):
    code = bench.cli(["--model", "mlp", "--strategies", "large_batch", "fused", "keras", "--accum", "3",
                      "--micro-batch", "4", "--rounds", "2", "--updates", "1", "--warmup", "1",
                      "--no-memory", "--no-progress", "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)  # the whole output parses
    table = bench.format_bench(result).splitlines()
    assert any(line.startswith("fused ") for line in table)
    c, rows = result["config"], result["strategies"]
    assert (c["accum_steps"], c["micro_batch"], c["batch"]) == (3, 4, 12)
    assert list(rows) == ["large_batch", "fused", "keras"]
    median = {name: statistics.median(r["ms"]) for name, r in rows.items()}
    for name, r in rows.items():
        assert len(r["ms"]) == 2
        # The summary is of the recorded rounds, and each ratio is this row over the other.
        assert (r["ms_min"], r["ms_median"], r["ms_max"]) == pytest.approx(
            (min(r["ms"]), median[name], max(r["ms"])))
        assert r["vs_large_batch"] == pytest.approx(median[name] / median["large_batch"])
        assert r["vs_keras"] == pytest.approx(median[name] / median["keras"])
        # Warm-up traced the compiled functions; the timed rounds traced nothing new.
        assert r["traces"] >= 1 and r["retraces"] == 0, name


@pytest.mark.slow
def test_default_run_is_two_workloads_side_by_side(capsys):
    argv = ["--strategies", "large_batch", "fused", "--accum", "2", "--micro-batch", "2",
            "--rounds", "1", "--updates", "1", "--warmup", "1", "--no-memory", "--no-progress"]
    assert bench.cli(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [w["config"]["model"] for w in out["workloads"]] == list(bench.WORKLOADS) == ["mlp", "conv"]
    assert bench.cli(argv) == 0
    text = capsys.readouterr().out
    assert "where accumulation costs speed, and where it saves memory:" in text
    assert "fused on mlp (N=2, b=2)" in text and "fused on conv (N=2, b=2)" in text


def test_headline_reports_compilation_apart_from_training_memory():
    # The numbers of issue 14: XLA's compilation made fused look 7x hungrier than large_batch.
    rows = {"large_batch": dict(vs_keras=0.25, vs_large_batch=1.0, peak_mb=1.1,
                                peak_vs_large_batch=1.0, compile_mb=20.5),
            "fused": dict(vs_keras=0.31, vs_large_batch=1.82, peak_mb=2.0,
                          peak_vs_large_batch=2.0 / 1.1, compile_mb=144.5)}
    result = {"config": {"model": "mlp", "accum_steps": 10, "micro_batch": 10}, "strategies": rows}
    assert bench.headline([result]) == [
        "fused on mlp (N=10, b=10): 3.2x faster than keras, 1.82x the time of large_batch, "
        "1.82x its training memory (2.0 vs 1.1 MB), compiling took 144 MB once (large_batch 20 MB)"]


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
    assert "train MB" in bench.format_bench(sweep["runs"][0])
    fig = plot_bench(sweep, memory="tf_peak_mb")
    assert len(fig.axes) == 2 and "allocator" in fig.axes[1].get_title()
    assert len(fig.axes[1].get_lines()) == 2  # one line per strategy


def test_towers_join_the_default_strategies_when_there_are_devices():
    # tests/conftest.py made two logical CPUs
    assert bench.default_strategies() == ["large_batch", "fused", "accumulate", "keras",
                                          "host_average", "towers", "mirrored"]


def test_fused_never_retraces_for_batches_of_the_same_shape():
    d = load_mnist()
    for jit in (False, True):
        s = gl.make_strategy("fused", make_model("mlp", seed=0), "sparse_categorical_crossentropy",
                             keras.optimizers.SGD(0.1), accum_steps=4, jit_compile=jit)
        s.step(d.x_train[:30], d.y_train[:30])  # 30 = 8 + 8 + 7 + 7: two runs of equal sizes
        assert s.trace_count() == 1
        for k in range(1, 4):  # new examples, as numpy arrays and as tensors
            x, y = d.x_train[30 * k:30 * k + 30], d.y_train[30 * k:30 * k + 30]
            s.step(x, y) if k % 2 else s.step(tf.constant(x), tf.constant(y))
        assert s.trace_count() == 1, jit


def test_fused_with_xla_equals_large_batch():
    # The bench's fused+xla rows are the same work: XLA changes the speed, not the update.
    d = load_mnist()
    x, y = d.x_train[:30], d.y_train[:30]
    runs = []
    for name, options in (("large_batch", {}), ("fused", {"jit_compile": True})):
        s = gl.make_strategy(name, make_model("mlp", seed=1),
                             keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                             keras.optimizers.SGD(0.1, momentum=0.9), accum_steps=4, **options)
        runs.append(([s.step(x, y) for _ in range(3)], s.model.weights))
    (la, wa), (lb, wb) = runs
    np.testing.assert_allclose(la, lb, rtol=1e-5, atol=1e-6)
    for va, vb in zip(wa, wb):
        np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-5, atol=1e-6, err_msg=va.path)


@pytest.mark.slow
def test_sweep_gives_one_value_per_n_and_plots_one_line_per_strategy():
    sweep = bench.run_sweep([1, 2], micro_batch=4, strategies=["large_batch", "fused"],
                            memory=False, **TINY)
    assert sweep["accum_steps"] == [1, 2] and len(sweep["runs"]) == 2
    assert [r["config"]["batch"] for r in sweep["runs"]] == [4, 8]
    for name, r in sweep["strategies"].items():
        assert r["ms_median"] == [run["strategies"][name]["ms_median"] for run in sweep["runs"]]
    assert "N=2" in bench.format_sweep(sweep)
    fig = plot_bench(sweep)
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) == 1
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["large_batch", "fused"]


def test_a_memory_process_that_hangs_is_reported_not_waited_for(monkeypatch):
    def hang(cmd, **kwargs):
        assert kwargs["timeout"] == bench.MEMORY_TIMEOUT
        raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])
    monkeypatch.setattr(gl_memory.subprocess, "run", hang)
    r = bench.measure_memory("fused")
    assert r["peak_mb"] is None and r["memory_error"] == f"timed out after {bench.MEMORY_TIMEOUT} s"


def test_cli_reports_only_bad_arguments_as_usage_errors(monkeypatch):
    def fail_inside(**kwargs):
        raise ValueError("raised inside TensorFlow")
    monkeypatch.setattr(bench, "run_bench", fail_inside)
    with pytest.raises(ValueError, match="inside TensorFlow"):  # a traceback, not exit 2
        bench.cli(["--strategies", "fused", "--no-memory", "--no-progress"])


def test_bad_arguments_are_refused_before_any_work():
    with pytest.raises(ValueError, match="'nope'"):
        bench.run_bench(strategies=["large_batch", "nope"])
    with pytest.raises(ValueError, match="'keras\\+xla'"):
        bench.run_bench(strategies=["keras+xla"])
    with pytest.raises(ValueError, match="each strategy once"):
        bench.run_bench(strategies=["fused", "fused"])
    with pytest.raises(ValueError, match="accum_steps.*0"):
        bench.run_bench(accum_steps=0)
    with pytest.raises(ValueError, match="'resnet'"):
        bench.run_bench(model="resnet")
    with pytest.raises(ValueError, match="'rmsprop'"):
        bench.run_bench(optimizer="rmsprop")
    with pytest.raises(ValueError, match="accum.*4"):
        bench.run_sweep(4)
    with pytest.raises(ValueError, match="run_sweep"):
        plot_bench({"strategies": {}})
    with pytest.raises(ValueError, match="'rss'"):
        plot_bench({"accum_steps": [1], "strategies": {}, "config": {}}, memory="rss")
    with pytest.raises(SystemExit):
        bench.cli(["--sweep", "1,x"])
    with pytest.raises(SystemExit):
        bench.cli(["--strategies", "nope"])
