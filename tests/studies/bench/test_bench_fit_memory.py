"""`bench --fit --memory`: bad arguments refused naming the value, the floor's arithmetic by
hand, and one small real run of the fresh-process protocol (no memory or time is asserted
as a goal: those are benchmarks)."""
import json

import matplotlib.figure
import numpy as np
import pytest

from gradlab.studies.bench import cli as bench_cli, fit_memory as bench_memory, memory_child, memory_report
from gradlab.studies.figures.memory_plots import plot_memory


@pytest.mark.parametrize("argv, word", [
    (["--model", "resnet"], "'resnet'"),
    (["--model", "conv", "--batch", "512", "--accum", "1,3"], "accum_steps 3"),
    (["--model", "conv", "--updates", "0"], "updates must be an integer >= 1, got 0"),
    (["--model", "conv", "--overlap", "0"], "'0'"),
    (["--model", "conv", "--accum", "2,x"], "'2,x'"),
    (["--model", "conv", "--limit", "0"], "limit must be an integer >= 1, got 0"),
])
def test_bad_cli_arguments_are_refused_naming_the_value(argv, word, capsys):
    with pytest.raises(SystemExit) as e:
        bench_memory.cli(argv)
    assert e.value.code == 2
    assert word in capsys.readouterr().err


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(model="mlp"), ValueError, "'mlp'"),
    (dict(accum=4), ValueError, "accum.*4"),
    (dict(overlaps=[1.5]), TypeError, "1.5"),
    (dict(batch=0), ValueError, "batch.*0"),
    (dict(seed=-1), ValueError, "seed.*-1"),
])
def test_plan_refuses_bad_input_before_any_run(kwargs, error, word):
    with pytest.raises(error, match=word):
        bench_memory.plan(**kwargs)


def test_plan_has_every_contender_once():
    runs = bench_memory.plan("conv", batch=512, accum=[1, 4, 16])
    got = [(r["contender"], r["batch"], r["accum_steps"], r["overlap"]) for r in runs]
    assert got == [("plain", 512, 1, 1), ("plain", 128, 1, 1), ("plain", 32, 1, 1),
                   ("accumulating", 512, 1, 1),
                   ("accumulating", 512, 4, 1), ("keras", 128, 4, 1),
                   ("accumulating", 512, 16, 1), ("keras", 32, 16, 1),
                   ("accumulating", 512, 16, 2),  # overlap=2 at the largest N
                   ("input", 512, 1, 1)]  # the control: fit's input alone


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(contender="keras"), ValueError, "'keras'"),
    (dict(contender="plain", limit_mb=0), ValueError, "limit_mb.*0"),
    (dict(contender="plain", limit_mb="100"), TypeError, "'100'"),
    (dict(contender="accumulating", batch=512, accum_steps=3), ValueError, "accum_steps 3"),
])
def test_fit_under_limit_refuses_bad_input_before_any_run(kwargs, error, word):
    with pytest.raises(error, match=word):
        bench_memory.fit_under_limit(**kwargs)


def test_the_oom_line_names_the_refused_tensor():
    message = ("Graph execution error:\n\nDetected at node x\n"
               "OOM when allocating tensor with shape[512,24,24,64] and type float\n\t [[{{node y}}]]")
    assert memory_child.oom_line(message) == (
        "OOM when allocating tensor with shape[512,24,24,64] and type float")
    assert memory_child.oom_line("\nsomething else\nmore") == "something else"


def _row(contender, batch, n, peak, overlap=1, ms=10.0, trainable=1.0, step=None):
    return dict(contender=contender, batch=batch, accum_steps=n, overlap=overlap,
                peak_mb=peak + 8.0, base_mb=8.0, train_mb=peak, ms_update=ms, trainable_mb=trainable,
                step_mb=peak - 2.0 if step is None else step)


def test_floor_is_plain_fit_at_the_micro_batch_plus_one_gradient_sum():
    rows = bench_memory.add_floors([
        _row("plain", 512, 1, 300.0), _row("plain", 32, 1, 30.0),
        _row("accumulating", 512, 16, 33.0, ms=40.0), _row("keras", 32, 16, 31.5),
        _row("accumulating", 512, 16, 50.0, overlap=2, ms=30.0)])
    plain, small, ours, keras, two = rows
    assert plain["floor_mb"] == 300.0 and plain["vs_floor"] == 1.0  # its own peak
    assert small["micro_batch"] == 32 and small["vs_plain"] == pytest.approx(30 / 300)
    # 30 MB (weights + slots + a gradient + activations of 32) + 1 MB of gradient sum
    assert ours["micro_batch"] == keras["micro_batch"] == 32
    assert ours["floor_mb"] == keras["floor_mb"] == 31.0
    assert ours["vs_floor"] == pytest.approx(33 / 31) and keras["vs_floor"] == pytest.approx(31.5 / 31)
    assert ours["vs_plain"] == pytest.approx(33 / 300)
    q = bench_memory.ratios(rows, 16)
    assert q["accumulating_vs_keras"] == pytest.approx(33 / 31.5)
    assert q["accumulating_vs_plain"] == pytest.approx(33 / 300)
    assert q["overlap2_time"] == pytest.approx(30 / 40) and q["overlap2_memory"] == pytest.approx(50 / 33)


def test_the_step_floor_is_the_update_alone_of_plain_fit_at_the_micro_batch():
    # a pipeline that holds more for one contender (train 40, step 26) than for the other
    # (train 27, step 26): the updates alone agree
    rows = bench_memory.add_floors([
        _row("plain", 512, 1, 300.0, step=290.0), _row("plain", 32, 1, 26.0, step=25.0),
        _row("accumulating", 512, 16, 40.0, step=26.0), _row("keras", 32, 16, 27.0, step=26.0)])
    plain, small, ours, keras = rows
    assert plain["step_floor_mb"] == 290.0 and plain["step_vs_floor"] == 1.0
    assert ours["step_floor_mb"] == keras["step_floor_mb"] == 26.0  # 25 + one gradient sum of 1
    assert ours["step_vs_floor"] == keras["step_vs_floor"] == 1.0
    assert ours["vs_floor"] == pytest.approx(40 / 27)
    q = bench_memory.ratios(rows, 16)
    assert q["accumulating_vs_keras"] == pytest.approx(40 / 27) and q["step_accumulating_vs_keras"] == 1.0


def test_the_input_control_row_has_no_floor():
    rows = bench_memory.add_floors([
        dict(_row("plain", 512, 1, 300.0, step=290.0), batch_input_mb=1.5),
        _row("plain", 32, 1, 26.0, step=25.0),
        _row("accumulating", 512, 16, 40.0, step=26.0), _row("keras", 32, 16, 27.0, step=26.0),
        _row("input", 512, 1, 4.5)])
    assert rows[-1]["floor_mb"] is None and rows[-1]["vs_floor"] is None
    assert [r["floor_mb"] for r in rows[2:4]] == [27.0, 27.0]  # 26 + a gradient sum of 1, as the bench's floor


def test_a_failed_run_leaves_its_floor_and_ratios_empty():
    rows = bench_memory.add_floors([_row("plain", 8, 1, 40.0), dict(
        contender="accumulating", batch=8, accum_steps=2, overlap=1, error="exit 1: boom")])
    assert rows[1]["floor_mb"] is None and rows[1]["vs_floor"] is None
    assert bench_memory.ratios(rows, 2)["accumulating_vs_plain"] is None


def test_the_figure_marks_plain_fit_and_draws_each_series():
    rows = bench_memory.add_floors([
        _row("plain", 8, 1, 40.0), _row("plain", 4, 1, 30.0), _row("accumulating", 8, 1, 41.0),
        _row("accumulating", 8, 2, 31.0), _row("keras", 4, 2, 30.5),
        _row("accumulating", 8, 2, 35.0, overlap=2), _row("input", 8, 1, 3.0)])
    fig = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows})
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) == 2
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["AccumulatingModel, epoch", "AccumulatingModel, update (train_on_batch)",
                      "reference (epoch): plain fit at b = B/N + one gradient sum",
                      "AccumulatingModel, overlap=2, epoch", "Keras gradient_accumulation_steps, epoch",
                      "Keras gradient_accumulation_steps, update (train_on_batch)", "plain fit at B = 8, epoch: 40 MiB",
                      "fit's input alone (a linear model at B = 8)"]
    ax_mb = fig.axes[0]
    assert list(ax_mb.lines[0].get_ydata()) == [41.0, 31.0]
    assert list(ax_mb.lines[1].get_ydata()) == [39.0, 29.0]  # the steps (updates alone), dashed
    assert ax_mb.lines[1].get_linestyle() == "--"
    assert list(ax_mb.lines[-2].get_ydata()) == [40.0, 40.0]  # plain fit, horizontal
    assert list(ax_mb.lines[-1].get_ydata()) == [3.0, 3.0]  # the control
    with pytest.raises(ValueError, match="run_bench_memory"):
        plot_memory({"rows": []})


def test_overlap_10_is_drawn_hollow_so_overlap_2_at_the_same_point_shows():
    rows = [_row("plain", 8, 1, 40.0), _row("accumulating", 8, 2, 35.0, overlap=2),
            _row("accumulating", 8, 2, 35.0, overlap=10)]
    ax_mb = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, time=False).axes[0]
    by_label = {line.get_label(): line for line in ax_mb.lines}
    assert by_label["AccumulatingModel, overlap=10 (the default), epoch"].get_markerfacecolor() == "none"
    assert by_label["AccumulatingModel, overlap=2, epoch"].get_markerfacecolor() != "none"


def test_the_time_panel_draws_every_epoch_and_plain_fits_range():
    rows = bench_memory.add_floors([
        dict(_row("plain", 8, 1, 40.0), ms_update=30.0, ms_epochs=[29, 30, 45]),
        _row("plain", 4, 1, 30.0),
        dict(_row("accumulating", 8, 2, 31.0), ms_update=20.0, ms_epochs=[50, 10, 40, 20, 30])])
    ax_ms = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}).axes[1]
    dots = [list(line.get_ydata()) for line in ax_ms.lines if line.get_linestyle() == "None"]
    assert dots == [[50, 10, 40, 20, 30]]  # the one accumulating row's five epochs, at N = 2
    assert list(ax_ms.lines[0].get_ydata()) == [20.0]  # its median
    (band,) = ax_ms.patches  # plain fit's epochs, 29 to 45 ms
    assert (band.get_y(), band.get_y() + band.get_height()) == (29, 45)


def test_time_stat_fastest_joins_each_runs_fastest_epoch_and_moves_plain_fits_line():
    rows = bench_memory.add_floors([
        dict(_row("plain", 8, 1, 40.0), ms_update=30.0, ms_epochs=[29, 30, 45]),
        _row("plain", 4, 1, 30.0),
        dict(_row("accumulating", 8, 2, 31.0), ms_update=30.0, ms_epochs=[50, 10, 40, 20, 30]),
        dict(_row("accumulating", 8, 4, 21.0), ms_update=25.0, ms_epochs=[42, 25, 41, 24, 26]),
        dict(_row("accumulating", 8, 4, 40.0, overlap=2), ms_update=41.0, ms_epochs=[22, 41, 43])])
    result = {"config": {"model": "conv", "batch": 8}, "rows": rows}
    fig = plot_memory(result, time_stat="fastest")
    ax_ms = fig.axes[1]
    joined = [line for line in ax_ms.lines if line.get_linestyle() == "-"]
    # overlap 1 at N = 2 and 4: min(50, 10, 40, 20, 30) = 10, min(42, 25, 41, 24, 26) = 24, not the medians 30, 25;
    # overlap 2 at N = 4: min(22, 41, 43) = 22, not 41; plain fit's black line: min(29, 30, 45) = 29, not 30
    assert [list(line.get_ydata()) for line in joined] == [[10, 24], [22], [29, 29]]
    assert list(plot_memory(result).axes[1].lines[0].get_ydata()) == [30.0, 25.0]  # the default: the medians
    assert "plain fit at B = 8, epoch: 40 MiB; fastest epoch 29 ms" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert ax_ms.get_title() == "Time per update, fastest epoch joined"
    with pytest.raises(ValueError, match="time_stat must be 'median' or 'fastest', got 'min'"):
        plot_memory(result, time_stat="min")

def test_ideal_draws_plain_fits_peak_over_n_dashed_and_only_when_asked():
    rows = bench_memory.add_floors([_row("plain", 8, 1, 40.0), _row("plain", 4, 1, 30.0),
                                    _row("accumulating", 8, 2, 31.0), _row("accumulating", 8, 4, 21.0)])
    result = {"config": {"model": "conv", "batch": 8}, "rows": rows}
    by_label = {line.get_label(): line for line in plot_memory(result, time=False, ideal=True).axes[0].lines}
    line = by_label["plain fit's 40 MiB / N"]
    assert list(line.get_xdata()) == [1, 2, 4] and list(line.get_ydata()) == [40.0, 20.0, 10.0]  # 40 / N by hand
    assert line.get_linestyle() == "--"
    step = {line.get_label(): line for line in plot_memory(result, time=False, peak="update", ideal=True).axes[0].lines}
    assert list(step["plain fit's 38 MiB / N"].get_ydata()) == [38.0, 19.0, 9.5]  # the update alone: 40 - 2
    plain_labels = [line.get_label() for line in plot_memory(result, time=False).axes[0].lines]
    assert not any("/ N" in label for label in plain_labels)  # the default draws the figure as before
    with pytest.raises(TypeError, match="ideal"):
        plot_memory(result, ideal="yes")


def test_table_draws_plain_fit_on_b_over_n_rows_at_n_and_leaves_out_the_reference():
    rows = bench_memory.add_floors([_row("plain", 8, 1, 40.0), _row("plain", 4, 1, 30.0), _row("plain", 2, 1, 20.0),
                                    _row("accumulating", 8, 2, 31.0), _row("accumulating", 8, 4, 21.0),
                                    _row("keras", 4, 2, 30.5)])
    fig = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, time=False, peak="update",
                      ideal=True, table=True)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["AccumulatingModel, overlap 1, update", "Keras gradient_accumulation_steps, update",
                      "plain fit on B/N rows, update", "plain fit's 38 MiB / N"]
    plain = {line.get_label(): line for line in fig.axes[0].lines}["plain fit on B/N rows, update"]
    # plain fit on 8, 4, 2 rows stands at N = 8/8, 8/4, 8/2; its update peaks: 40 - 2, 30 - 2, 20 - 2
    assert list(plain.get_xdata()) == [1, 2, 4] and list(plain.get_ydata()) == [38.0, 28.0, 18.0]
    with pytest.raises(ValueError, match="peak='update'"):
        plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, table=True)


def test_relative_draws_each_update_peak_over_the_large_batchs_with_a_1_over_n_line():
    rows = bench_memory.add_floors([_row("plain", 8, 1, 40.0), _row("plain", 4, 1, 30.0), _row("plain", 2, 1, 20.0),
                                    _row("accumulating", 8, 2, 31.0), _row("accumulating", 8, 4, 21.0)])
    result = {"config": {"model": "conv", "batch": 8}, "rows": rows}
    fig = plot_memory(result, time=False, peak="update", ideal=True, table=True, relative=True)
    lines = {line.get_label(): line for line in fig.axes[0].lines}
    assert list(lines) == ["AccumulatingModel, overlap 1", "plain fit on B/N rows", "1/N"]  # no ", update", no MiB
    # the large batch's update peak is 40 - 2 = 38 MiB; by hand: 38/38, 29/38, 19/38 and 28/38, 18/38
    assert np.allclose(lines["AccumulatingModel, overlap 1"].get_ydata(), [29 / 38, 19 / 38])
    assert np.allclose(lines["plain fit on B/N rows"].get_ydata(), [1.0, 28 / 38, 18 / 38])
    assert list(lines["1/N"].get_xdata()) == [1, 2, 4] and list(lines["1/N"].get_ydata()) == [1.0, 0.5, 0.25]
    assert lines["plain fit on B/N rows"].get_markerfacecolor() == "none"  # a ring, seen around the others
    assert fig.axes[0].get_ylabel() == "update peak / the large batch's"
    with pytest.raises(ValueError, match="table=True"):
        plot_memory(result, peak="update", relative=True)
    with pytest.raises(TypeError, match="relative"):
        plot_memory(result, peak="update", table=True, relative="yes")


@pytest.mark.slow
def test_a_small_real_run_prints_one_json_object(capsys):
    assert bench_cli.cli(["memory", "--model", "conv", "--batch", "4", "--accum", "1,2",
                          "--updates", "1", "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = result["rows"]
    assert [(r["contender"], r["accum_steps"], r["overlap"]) for r in rows] == [
        ("plain", 1, 1), ("plain", 1, 1), ("accumulating", 1, 1), ("accumulating", 2, 1),
        ("keras", 2, 1), ("accumulating", 2, 2), ("input", 1, 1)]
    for r in rows:
        assert "error" not in r, r.get("error")
        assert r["device"] == "CPU:0"
        # The allocator held the weights when the measured epoch began, and more at its peak.
        assert r["peak_mb"] >= r["base_mb"] >= r["weights_mb"] > 0, r
        sum_held_in_base = r["trainable_mb"] if r["contender"] == "keras" else 0.0
        assert r["train_mb"] == pytest.approx(r["peak_mb"] - r["base_mb"] + sum_held_in_base)
        assert r["ms_update"] > 0 and r["compile_peak_mb"] > 0
        assert r["step_mb"] > sum_held_in_base, r  # the update allocated something
        # one batch of the rows fit is given: float32 images of 28x28 and int32 labels
        assert r["batch_input_mb"] == pytest.approx(r["batch"] * (28 * 28 + 1) * 4 / 2**20)
    keras_row = rows[4]
    assert keras_row["optimizer_mb"] >= keras_row["trainable_mb"]  # its accumulators
    assert rows[0]["vs_floor"] == 1.0 and rows[3]["floor_mb"] == pytest.approx(
        rows[1]["train_mb"] + rows[1]["trainable_mb"])
    assert "AccumulatingModel overlap=2" in memory_report.format_bench_memory(result)


@pytest.mark.slow
def test_under_a_limit_plain_fit_runs_out_of_memory_and_accumulation_trains():
    """Issue 22's point: at B = 512 plain fit of the conv net needs ~360 MB of the allocator,
    AccumulatingModel(16) ~60 MB; under 150 MB only the second one runs, and it learns."""
    free = bench_memory.fit_under_limit("plain", None)
    assert free["outcome"] == "ran" and free["peak_mb"] > 150, free  # the limit is what stops it
    plain = bench_memory.fit_under_limit("plain", 150)
    assert plain["outcome"] == "out of memory", plain
    assert plain["error"].startswith("OOM when allocating tensor")
    ours = bench_memory.fit_under_limit("accumulating", 150, accum_steps=16)
    assert ours["outcome"] == "ran", ours
    assert ours["error"] is None and ours["peak_mb"] < 150
    assert ours["finite"] and ours["losses"][1] < ours["losses"][0]
    text = memory_report.format_limit([plain, ours])
    assert "out of memory: OOM" in text and "AccumulatingModel N=16" in text


@pytest.mark.gpu("bench --fit --memory on the conv net, each run in a process on GPU:0: the "
                 "allocator's peak read there, AccumulatingModel(4) holding less than plain fit "
                 "at B = 256, and both fitting the same losses")
def test_fit_memory_reads_the_gpu_allocator(capsys, monkeypatch):
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")  # the children's matmuls in float32, as Keras's oracle
    assert bench.cli(["--fit", "--memory", "--model", "conv", "--batch", "256", "--accum", "1,4",
                      "--updates", "2", "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    for r in rows:
        assert "error" not in r, r.get("error")
        assert r["device"] == "GPU:0"
        assert r["peak_mb"] >= r["base_mb"] >= r["weights_mb"] > 0, r
        assert r["train_mb"] > 0 and r["step_mb"] > 0, r
    run = {(r["contender"], r["batch"], r["accum_steps"], r["overlap"]): r for r in rows}
    plain, ours = run[("plain", 256, 1, 1)], run[("accumulating", 256, 4, 1)]
    # one micro-batch's activations (64 rows) at a time, not the batch's 256
    assert ours["train_mb"] < plain["train_mb"], (ours["train_mb"], plain["train_mb"])
    np.testing.assert_allclose(ours["losses"], plain["losses"], rtol=1e-4)
    np.testing.assert_allclose(run[("accumulating", 256, 1, 1)]["losses"], plain["losses"], rtol=1e-5)


def test_without_time_only_the_memory_panel_is_drawn():
    rows = bench_memory.add_floors([
        dict(_row("plain", 8, 1, 40.0), ms_update=30.0, ms_epochs=[29, 30, 45]),
        _row("plain", 4, 1, 30.0), dict(_row("accumulating", 8, 2, 31.0), ms_update=20.0)])
    fig = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, time=False)
    (ax_mb,) = fig.axes
    assert list(ax_mb.lines[-1].get_ydata()) == [40.0, 40.0]  # plain fit, horizontal
    assert ax_mb.get_ylabel() == "allocator peak above its start (MiB)"
    with pytest.raises(TypeError, match="time must be True or False, got 'no'"):
        plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, time="no")


def test_a_row_at_overlap_10_is_a_series_of_its_own():
    rows = bench_memory.add_floors([
        _row("plain", 8, 1, 40.0), _row("plain", 4, 1, 30.0), _row("accumulating", 8, 2, 31.0),
        _row("accumulating", 8, 2, 38.0, overlap=10)])
    fig = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, time=False)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "AccumulatingModel, overlap=10 (the default), epoch" in labels
    (line,) = [ln for ln in fig.axes[0].lines if ln.get_label() == "AccumulatingModel, overlap=10 (the default), epoch"]
    assert list(line.get_xdata()) == [2] and list(line.get_ydata()) == [38.0]


def test_the_update_figure_reads_the_update_peak_for_every_line():
    # plain at b = 4: epoch 30, update 20; ours at N = 2: epoch 25, update 29 (the reference is 20 + 1)
    rows = bench_memory.add_floors([
        _row("plain", 8, 1, 40.0, step=36.0), _row("plain", 4, 1, 30.0, step=20.0),
        _row("accumulating", 8, 2, 25.0, step=29.0)])
    fig = plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, time=False, peak="update")
    (ax_mb,) = fig.axes
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "AccumulatingModel, update", "reference (update): plain fit at b = B/N + one gradient sum",
        "plain fit at B = 8, update: 36 MiB"]
    assert list(ax_mb.lines[0].get_ydata()) == [29.0]  # ours, the update: not the epoch's 25
    assert list(ax_mb.lines[1].get_ydata()) == [21.0]  # plain fit's update at b = 4, plus one gradient sum
    assert list(ax_mb.lines[2].get_ydata()) == [36.0, 36.0]
    with pytest.raises(ValueError, match="peak must be 'epoch' or 'update', got 'step'"):
        plot_memory({"config": {"model": "conv", "batch": 8}, "rows": rows}, peak="step")


def test_the_input_control_is_a_whole_fit_peak_and_is_left_out_of_the_update_figure():
    rows = bench_memory.add_floors([_row("plain", 8, 1, 40.0), _row("plain", 4, 1, 30.0),
                                    _row("accumulating", 8, 2, 31.0), _row("input", 8, 1, 3.0)])
    result = {"config": {"model": "conv", "batch": 8}, "rows": rows}
    epoch = [line.get_label() for line in plot_memory(result, time=False).axes[0].lines]
    assert "fit's input alone (a linear model at B = 8)" in epoch
    update = [line.get_label() for line in plot_memory(result, time=False, peak="update").axes[0].lines]
    assert not any("input alone" in label for label in update)  # one measure: the update's peak throughout


@pytest.mark.slow
def test_asked_for_the_child_returns_the_weights_fit_left_and_accumulation_matches_plain_fit():
    # lesson 11 compares its run under a limit with plain fit weight by weight: the child returns
    # each trainable weight as fit left it, only when asked; at B = 4 two micro-batches of 2 give
    # plain fit's weights to float32 rounding, 1e-5 (the conv net's first kernel: 3 x 3 x 1 x 64)
    spec = dict(model="conv", batch=4, accum_steps=1, overlap=1, examples=4, updates=1, epochs=1, seed=0)
    assert "weights" not in memory_child.measure_fit(dict(spec, contender="plain"))
    plain = memory_child.measure_fit(dict(spec, contender="plain", weights=True))["weights"]
    ours = memory_child.measure_fit(dict(spec, contender="accumulating", accum_steps=2, weights=True))["weights"]
    assert np.shape(plain[0]) == (3, 3, 1, 64) and len(plain) == len(ours)
    start = [w.numpy() for w in memory_child.memory_model("conv", 0).trainable_weights]
    assert max(np.abs(np.subtract(p, s)).max() for p, s in zip(plain, start)) > 1e-4  # fit moved them
    assert max(np.abs(np.subtract(p, q)).max() for p, q in zip(plain, ours)) < 1e-5
