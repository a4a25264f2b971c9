import matplotlib.figure
import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.update_time import plot_call_timeline, plot_fused_saving, plot_update_ms


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


def test_plot_call_timeline_draws_fused_plus_n_split_extra_calls():
    fig = plot_call_timeline(2, work_us=3000, once_us=1000, extra_us={"bare": 500, "writes": 250})
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    boxes = [v for p in ax.patches for v in (p.get_y() + p.get_height() / 2, p.get_x(), p.get_width())]
    # by hand, in ms: accumulate once 0-1, bare 1-1.5, writes 1.5-1.75, work 1.75-4.75, bare 4.75-5.25,
    # writes 5.25-5.5, work 5.5-8.5; fused once 0-1, work 1-4, 4-7
    assert boxes == pytest.approx([1, 0, 1, 1, 1, 0.5, 1, 1.5, 0.25, 1, 1.75, 3, 1, 4.75, 0.5, 1, 5.25, 0.25, 1, 5.5, 3,
                                   0, 0, 1, 0, 1, 3, 0, 4, 3])
    assert [t.get_text().strip() for t in ax.texts] == ["8.5 ms", "7.0 ms"]  # 1 + 2 (0.75 + 3); 1 + 2 x 3
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "fused's update less its work (1000 µs, both)", "extra call: bare (500 µs)", "extra call: writes (250 µs)",
        "a micro-batch's work (3000 µs)"]
    for bad in ((0, 1, 1, {"a": 1}), (1.5, 1, 1, {"a": 1}), (True, 1, 1, {"a": 1}), (2, 0, 1, {"a": 1}),
                (2, 1, -1, {"a": 1}), (2, 1, 1, {}), (2, 1, 1, {"a": float("nan")}), (2, 1, 1, {1: 1.0}),
                (2, 1, 1, [1.0])):
        with pytest.raises(ValueError):
            plot_call_timeline(*bad)
