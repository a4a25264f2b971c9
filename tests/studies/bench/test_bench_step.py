"""`bench`: run_bench and run_sweep hang together, the command line prints what they return,
and `bench --fit` takes the shared options; no timing is asserted here (speed and memory are
benchmarks: `python -m gradlab bench`)."""
import json
import statistics

import matplotlib.figure
import pytest

from gradlab.studies.bench import cli as bench_cli, options, step as bench, step_report
from gradlab.studies.figures.plots import plot_bench

TINY = dict(rounds=2, updates=1, warmup=1, progress=False)


@pytest.mark.slow
def test_cli_json_is_one_object_and_the_table_shows_it(capsys):
    code = bench.cli(["--model", "mlp", "--strategies", "large_batch", "fused", "keras", "--accum", "3",
                      "--micro-batch", "4", "--rounds", "2", "--updates", "1", "--warmup", "1",
                      "--no-memory", "--no-progress", "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)  # the whole output parses
    table = step_report.format_bench(result).splitlines()
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


@pytest.mark.slow
def test_sweep_gives_one_value_per_n_and_plots_one_line_per_strategy():
    sweep = bench.run_sweep([1, 2], micro_batch=4, strategies=["large_batch", "fused"],
                            memory=False, **TINY)
    assert sweep["accum_steps"] == [1, 2] and len(sweep["runs"]) == 2
    assert [r["config"]["batch"] for r in sweep["runs"]] == [4, 8]
    for name, r in sweep["strategies"].items():
        assert r["ms_median"] == [run["strategies"][name]["ms_median"] for run in sweep["runs"]]
    assert "N=2" in step_report.format_sweep(sweep)
    fig = plot_bench(sweep)
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) == 1
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["large_batch", "fused"]


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


def test_bench_and_bench_fit_share_one_set_of_common_options(capsys):
    # Each parent is made afresh: a default set for one mode never leaks into the other.
    fit, plain = options.shared_options(7, "timed epochs"), options.shared_options(20, "timed rounds")
    assert vars(fit.parse_args([])) == dict(accum=10, micro_batch=10, rounds=7, no_progress=False,
                                           json=False)
    assert plain.parse_args(["--accum", "3", "--json"]).accum == 3
    assert plain.parse_args([]).rounds == 20
    assert bench.parser().parse_args([]).rounds == 20
    with pytest.raises(SystemExit):
        bench_cli.cli(["--fit", "--help"])
    text = capsys.readouterr().out
    for option in ("--accum", "--micro-batch", "--rounds", "--no-progress", "--json"):
        assert option in text, option
    assert "timed epochs per contender (7)" in text
