import matplotlib.colors
import matplotlib.figure
import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import FancyBboxPatch

from gradlab.studies.figures.lesson_plots import (draw_replicas, plot_applied_rates, plot_call_timeline, plot_example_weights,
                                                  plot_fused_saving, plot_hub_vs_ring, plot_loop_peaks, plot_update_ms)


def test_draw_replicas_draws_sums_in_each_replica_one_all_reduce_of_sums_and_rows_then_the_division():
    fig = draw_replicas([16, 15], accum_steps=3)
    ax, = fig.axes
    texts = [b for b in ax.patches if isinstance(b, FancyBboxPatch)]
    # batch + all-reduce + per replica (3 micro-batches + divide + apply)
    assert len(texts) == 2 + 2 * (3 + 2)
    labels = [t.get_text() for t in ax.texts]
    assert sum("all-reduce" in t for t in labels) == 1 and "[sums, rows]" in labels[1]
    assert labels.count("6 rows\nsum") == 1 and labels.count("5 rows\nsum") == 5  # 6+5+5 and 5+5+5
    assert "[sums, 16]" in labels and "[sums, 15]" in labels  # what each replica sends: its sums and its rows
    assert labels.count("÷ rows\n= 31") == 2  # every replica divides by the counted B after the all-reduce
    assert labels.count("update by $g_B$\nreplica 0") == 1 and labels.count("update by $g_B$\nreplica 1") == 1
    assert not any("apply" in t for t in labels)  # each copy steps by g_B; Keras's apply would all-reduce it again
    assert not any("/31" in t for t in labels)  # no weights n_ri / B inside a replica
    assert "1 all-reduce per update" in ax.get_title()


def test_draw_replicas_refuses_bad_input():
    with pytest.raises(ValueError, match="shards"):
        draw_replicas([], 2)
    with pytest.raises(ValueError, match="accum_steps"):
        draw_replicas([4, 4], 0)


def test_plot_example_weights_gives_each_example_1_over_k_n_i_against_1_over_B():
    fig = plot_example_weights([32, 32, 32, 4])
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    heights = [p.get_height() for p in ax.patches]
    assert heights[:4] == pytest.approx([1 / 128, 1 / 128, 1 / 128, 1 / 16])  # plain: 1/(N n_i)
    assert heights[4:] == pytest.approx([1 / 100] * 4)  # weighted: 1/B, the large batch's
    assert [t.get_text() for t in ax.texts] == ["x0.781", "x0.781", "x0.781", "x6.25"]
    with pytest.raises(ValueError):
        plot_example_weights([])
    with pytest.raises(ValueError):
        plot_example_weights([3, 0])


def test_plot_update_ms_draws_each_schedules_median_and_middle_half():
    fig = plot_update_ms({"once": [[1, 2, 3, 4, 5], [2, 2, 2, 2, 2]], "naive": [[1, 1, 1, 1, 9], [4, 5, 6, 7, 8]]},
                         [1, 2], title="two schedules")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    once, naive = ax.containers  # one errorbar per schedule, in the order given
    assert list(once.lines[0].get_xdata()) == [1, 2] and list(once.lines[0].get_ydata()) == [3, 2]  # medians
    assert list(naive.lines[0].get_ydata()) == [1, 6]
    # middle half by hand: [1..5] -> 2 to 4; [2]*5 -> 2 to 2; [1,1,1,1,9] -> 1 to 1; [4..8] -> 5 to 7
    (once_bars,), (naive_bars,) = once.lines[2], naive.lines[2]
    assert [tuple(seg[:, 1]) for seg in once_bars.get_segments()] == [(2, 4), (2, 2)]
    assert [tuple(seg[:, 1]) for seg in naive_bars.get_segments()] == [(1, 1), (5, 7)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["once", "naive"]
    assert ax.get_ylim()[0] == 0 and ax.get_title() == "two schedules"
    assert ax.get_xlabel() == "accum_steps (micro-batches per replica per update)"  # the default
    with pytest.raises(ValueError, match="accum_steps"):
        plot_update_ms({"once": [[1.0]]}, [0])
    with pytest.raises(ValueError, match="one non-empty array"):
        plot_update_ms({"once": [[1.0]]}, [1, 2])


def test_plot_update_ms_takes_an_x_axis_label_and_keeps_the_data():
    ms = {"fused": [[1, 2, 3], [4, 5, 6]]}
    default, one_device = plot_update_ms(ms, [1, 2]), plot_update_ms(ms, [1, 2], xlabel="N (one device)")
    assert one_device.axes[0].get_xlabel() == "N (one device)"
    assert default.axes[0].get_xlabel() == "accum_steps (micro-batches per replica per update)"
    assert list(one_device.axes[0].containers[0].lines[0].get_ydata()) == [2, 5]  # medians, unchanged by the label


def test_plot_loop_peaks_draws_one_line_per_loop_and_reads_the_right_axis_in_gradients():
    peaks = {"one at a time": {8: 1.5, 2: 1.5, 4: 1.5}, "unrolled": {2: 1.5, 4: 3.0, 8: 6.0}}
    fig = plot_loop_peaks(peaks, gradient_mib=0.75, title="t")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    one, unrolled = ax.lines
    assert list(one.get_xdata()) == [2, 4, 8] and list(one.get_ydata()) == [1.5, 1.5, 1.5]  # sorted by N
    assert list(unrolled.get_ydata()) == [1.5, 3.0, 6.0] and ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["one at a time", "unrolled"]
    right, = ax.child_axes
    # by hand: 6.0 MiB at 0.75 MiB a gradient reads 8 gradients, and 8 gradients 6.0 MiB back
    forward, inverse = right._functions
    assert forward(6.0) == pytest.approx(8.0) and inverse(8.0) == pytest.approx(6.0)
    assert right.get_ylabel() == "gradients" and ax.get_title() == "t" and ax.get_ylim()[0] == 0
    assert not plot_loop_peaks({"a": {1: 1.0}}).axes[0].child_axes  # no gradient size: no right axis
    for bad in (({},), ({"a": {}},), ({"a": {0: 1.0}},), ({"a": {2: float("nan")}},), ({"a": {2: 1.0}}, 0.0)):
        with pytest.raises(ValueError):
            plot_loop_peaks(*bad)


def test_plot_hub_vs_ring_draws_2_r_minus_1_copies_against_2_r_minus_1_over_r():
    # G = 1 MB at 1 GB/s: one copy takes 1 ms = 1,000 µs; at R = 4 the hub's link carries 3 copies out, then 3 back,
    # 6,000 µs an update, a ring's 1,500 (its sends and receives at once)
    fig = plot_hub_vs_ring(1e6, 1e9, compute_ms=0.5, towers=[2, 4, 8], compute_label="32 rows of compute")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    hub, ring, compute = ax.lines
    assert list(hub.get_xdata()) == [2, 4, 8] and list(hub.get_ydata()) == pytest.approx([2000, 6000, 14000])
    assert list(ring.get_ydata()) == pytest.approx([1000, 1500, 1750])
    assert list(compute.get_ydata()) == pytest.approx([500, 500]) and ax.get_yscale() == "log"
    assert "R - 1" in hub.get_label() and "2 (R - 1) / R" in ring.get_label()
    assert compute.get_label() == "32 rows of compute" and "µs" in ax.get_ylabel()


def test_plot_hub_vs_ring_refuses_bad_input():
    for bad in ({"copy_bytes": 0}, {"link_bytes_per_s": float("nan")}, {"compute_ms": True}, {"towers": [1, 2]},
                {"towers": []}):
        args = {"copy_bytes": 1e6, "link_bytes_per_s": 1e9, "compute_ms": 0.5} | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            plot_hub_vs_ring(**args)


def test_plot_applied_rates_draws_each_schedules_rate_against_the_update_from_1():
    fig = plot_applied_rates({"raw": [0.1, 0.05, 0.0], "PerUpdate": [0.1, 0.09, 0.08]}, title="two schedules")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    raw, per_update = ax.get_lines()  # one line per label, in the order given
    assert list(raw.get_xdata()) == [1, 2, 3] and list(raw.get_ydata()) == [0.1, 0.05, 0.0]
    assert list(per_update.get_ydata()) == [0.1, 0.09, 0.08]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["raw", "PerUpdate"]
    assert ax.get_ylim()[0] == 0 and ax.get_title() == "two schedules" and ax.get_xlabel() == "update k (from 1)"
    with pytest.raises(ValueError, match="non-empty 1-D"):
        plot_applied_rates({})
    with pytest.raises(ValueError, match="non-empty 1-D"):
        plot_applied_rates({"raw": []})


def test_plot_spacings_to_reference_draws_each_gap_on_a_log_axis_with_the_rounding_band():
    from gradlab.studies.figures.lesson_plots import plot_spacings_to_reference

    fig = plot_spacings_to_reference({"plain": 0.0, "yours": 1.0, "miscount": 52_000.0}, reference="the large batch")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    assert ax.get_xscale() == "log" and "the large batch" in ax.get_xlabel()
    bars = ax.containers[0]
    ends = [bar.get_x() + bar.get_width() for bar in bars]
    assert ends == pytest.approx([0.1, 1.0, 52_000.0])  # each bar ends at its gap, 0 at the floor, 0.1
    assert [bar.get_y() + bar.get_height() / 2 for bar in bars] == pytest.approx([2, 1, 0])  # the first on top
    assert {t.get_position()[1]: t.get_text() for t in ax.get_yticklabels()} == {2: "plain", 1: "yours", 0: "miscount"}
    red = matplotlib.colors.to_rgba("tab:red")
    assert [bar.get_facecolor() == red for bar in bars] == [False, False, True]  # past the band: red
    assert bars[0].get_hatch() == "///" and bars[0].get_facecolor()[3] == 0  # 0: a hatched, unfilled stub
    assert bars[1].get_hatch() is None and bars[1].get_facecolor()[3] == 1
    band, = ax.patches[:1]
    assert band.get_x() == pytest.approx(0.01) and band.get_x() + band.get_width() == pytest.approx(10)
    assert [t.get_text() for t in ax.texts] == ["0 (bit for bit), drawn at 0.1", "1.0", "52,000"]
    for bad in ({}, {"x": -1.0}, {"x": float("nan")}, {"x": True}):
        with pytest.raises(ValueError):
            plot_spacings_to_reference(bad)


def test_plot_miss_against_imbalance_puts_each_update_at_its_token_imbalance():
    from gradlab.studies.figures.lesson_plots import plot_miss_against_imbalance

    fig = plot_miss_against_imbalance([0.041, 0.002, 0.092], [[145, 130], [129, 130], [123, 152]])
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    dots = ax.collections[0].get_offsets()
    assert list(dots[:, 0]) == pytest.approx([15 / 275, 1 / 259, 29 / 275])  # |D_0 - D_1| / (D_0 + D_1)
    assert list(dots[:, 1]) == pytest.approx([4.1, 0.2, 9.2])  # the misses, in percent
    assert [t.get_text() for t in ax.texts] == ["[145, 130]", "[129, 130]", "[123, 152]"]
    assert "imbalance" in ax.get_xlabel() and "%" in ax.get_ylabel()
    for misses, tokens in (([], []), ([0.1], [[1, 2], [3, 4]]), ([-0.1], [[1, 2]]), ([0.1], [[0, 2]]), ([0.1], [[5]])):
        with pytest.raises(ValueError):
            plot_miss_against_imbalance(misses, tokens)


def test_fit_step_spans_places_steps_updates_the_wait_and_the_epoch_crossing_by_hand():
    from gradlab.studies.figures.lesson_plots import fit_step_spans
    # an accumulating step: batches of 6, 6, 2 per epoch of 14, one update a step, two epochs
    got = fit_step_spans([6, 6, 2] * 2, [1, 2, 3, 4, 5, 6], epoch_rows=14)
    assert got["starts"] == [0, 6, 12, 14, 20, 26] and got["ends"] == [6, 12, 14, 20, 26, 28]
    assert got["updates"] == [6, 12, 14, 20, 26, 28] and got["waiting"] == (28, 28) and got["across"] == []
    # Keras-like: micro-batches of 3, 3, 3, 3, 2 per epoch of 14, an update every 4th apply (counted across epochs)
    rows = [3, 3, 3, 3, 2] * 2
    counts = [i // 4 for i in range(1, 11)]  # applies 1..10 -> updates after applies 4 and 8
    got = fit_step_spans(rows, counts, epoch_rows=14)
    assert got["ends"] == [3, 6, 9, 12, 14, 17, 20, 23, 26, 28]
    assert got["updates"] == [12, 23]  # the 4th apply ends at 12, the 8th at 23
    assert got["across"] == [(12, 14, 23)]  # the 2 left over join epoch 2's first 9
    assert got["waiting"] == (23, 28)


def test_plot_fit_steps_draws_one_dot_per_update_and_labels_the_crossing():
    from gradlab.studies.figures.lesson_plots import plot_fit_steps
    lanes = {"yours": ([6, 6, 2] * 2, [1, 2, 3, 4, 5, 6], 2),
             "keras": ([3, 3, 3, 3, 2] * 2, [i // 4 for i in range(1, 11)], 1)}
    fig = plot_fit_steps(lanes, epoch_rows=14)
    ax, = fig.axes
    dots = [line for line in ax.lines if line.get_label().startswith(("yours", "keras"))]
    assert [len(line.get_xdata()) for line in dots] == [6, 2]
    assert list(dots[1].get_xdata()) == [12, 23]
    texts = [t.get_text() for t in ax.texts]
    assert "2 + 9" in texts and "5 waiting" in texts and texts.count("2 rows") == 4  # the short steps, by rows
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["yours: 6 fit steps, 6 updates",
                                                                   "keras: 10 fit steps, 2 updates"]
    # zoomed on examples 9 to 26, by hand: yours' steps 12-14, 14-20, 20-26 lie inside, updates at 12, 14, 20, 26;
    # keras's steps 9-12 ... 23-26 (six) inside, updates at 12 and 23; its crossing (ends 23) and its wait (from 23)
    # are labelled; the short steps at 26-28 are out of view, those at 12-14 labelled
    fig = plot_fit_steps(lanes, epoch_rows=14, window=(9, 26))
    ax, = fig.axes
    assert ax.get_xlim() == (9, 26)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["yours: 3 fit steps, 4 updates in view",
                                                                   "keras: 6 fit steps, 2 updates in view"]
    dots = [line for line in ax.lines if line.get_label().startswith(("yours", "keras"))]
    assert [list(line.get_xdata()) for line in dots] == [[12, 14, 20, 26], [12, 23]]
    assert sorted(t.get_text() for t in ax.texts) == ["2 + 9", "2 rows", "2 rows", "5 waiting"]
    fig = plot_fit_steps(lanes, epoch_rows=14, window=(0, 11))  # before any crossing, wait or short step
    assert [t.get_text() for t in fig.axes[0].texts] == []
    with pytest.raises(ValueError, match="one update count per fit step"):
        plot_fit_steps({"x": ([1, 2], [1], 1)}, epoch_rows=3)
    with pytest.raises(ValueError, match="window"):
        plot_fit_steps(lanes, epoch_rows=14, window=(5, 5))


def test_plot_fused_saving_draws_both_strategies_against_n_and_labels_each_n_with_their_ratio():
    table = {4: (9.0, 6.0), 1: (5.0, 4.0), 32: (48.0, 16.0)}  # unsorted: drawn by N
    fig = plot_fused_saving(table, title="t")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    accumulate, fused = ax.lines
    assert list(accumulate.get_xdata()) == [1, 4, 32] and list(accumulate.get_ydata()) == [5.0, 9.0, 48.0]
    assert list(fused.get_ydata()) == [4.0, 6.0, 16.0] and ax.get_xscale() == "log" and ax.get_ylim()[0] == 0
    # by hand: 5/4 = 1.25, 9/6 = 1.50, 48/16 = 3.00, each above its accumulate point
    assert [t.get_text() for t in ax.texts] == ["x1.25", "x1.50", "x3.00"]
    assert [t.xy for t in ax.texts] == [(1, 5.0), (4, 9.0), (32, 48.0)]
    given = plot_fused_saving(table, ratios={1: 1.22, 4: 1.76, 32: 2.84}).axes[0]  # per-round medians, as given
    assert [t.get_text() for t in given.texts] == ["x1.22", "x1.76", "x2.84"]
    assert ax.get_title().startswith("t")
    for bad in (({},), ({0: (1.0, 1.0)},), ({2: (1.0, 0.0)},), ({2: (1.0,)},), ({2: (2.0, 1.0)}, {4: 2.0})):
        with pytest.raises(ValueError):
            plot_fused_saving(*bad)


def test_plot_call_timeline_draws_n_plus_one_calls_against_one_end_to_end():
    fig = plot_call_timeline(2, call_us=1000, work_us=3000)
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    boxes = [v for p in ax.patches for v in (p.get_y() + p.get_height() / 2, p.get_x(), p.get_width())]
    # by hand, in ms: accumulate call 0-1, work 1-4, call 4-5, work 5-8, apply call 8-9; fused call 0-1, work 1-4, 4-7
    assert boxes == pytest.approx([1, 0, 1, 1, 1, 3, 1, 4, 1, 1, 5, 3, 1, 8, 1,  # (lane, start, width)
                                   0, 0, 1, 0, 1, 3, 0, 4, 3])
    assert [t.get_text().strip() for t in ax.texts] == ["9.0 ms", "7.0 ms"]  # (2 + 1) 1 + 2 x 3; 1 + 2 x 3
    assert len(ax.get_legend().get_texts()) == 2
    for bad in ((0, 1, 1), (1.5, 1, 1), (True, 1, 1), (2, 0, 1), (2, 1, -1), (2, float("nan"), 1)):
        with pytest.raises(ValueError):
            plot_call_timeline(*bad)
