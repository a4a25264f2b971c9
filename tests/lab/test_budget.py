"""The memory-budget widget: it builds from a model or by hand, and moving a control recomputes
the budget and redraws its bars (no browser: the widgets' values and the figure's bars)."""
import keras
import base64

import pytest

from gradlab.lab.budget import Budget, picture_budget, plot_budget
from gradlab.studies.memory_budget import TERMS, budget


def tiny():
    """3 inputs -> Dense(4) -> Dense(2): P = 26, a = 6 values and i = 3 values a row."""
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)])


def test_it_builds_from_a_model_at_the_starting_values():
    b = Budget(tiny(), B=10, N=3)
    assert b.params == 26 and b.input_bytes_per_row == 12
    assert b.result == budget(26, "adam", B=10, N=3, activation_bytes_per_row=24, input_bytes_per_row=12)
    assert b.large_batch == budget(26, "adam", B=10, N=1, activation_bytes_per_row=24, input_bytes_per_row=12)
    assert b.controls.plot.value[:4] == b"\x89PNG"
    assert "b = 4 rows" in b.controls.text.value and b.controls.kept.disabled
    assert "gradlab-budget" in b.widget._dom_classes and "gradlab-budget-n" in b.controls.N._dom_classes
    bundle = b._repr_mimebundle_()  # the widget, and its picture for renderers without widgets (GitHub)
    assert "application/vnd.jupyter.widget-view+json" in bundle and base64.b64decode(bundle["image/png"]) == b.controls.plot.value


def test_moving_a_control_updates_the_budget_and_the_plot():
    b = Budget(params=1000, activation_bytes_per_row=400, B=64, N=1, optimizer="sgd")
    first = b.controls.plot.value
    b.controls.N.value = 8
    assert b.result["activations"] == 8 * 400 and b.result["accumulator"] == 4000
    assert b.controls.plot.value != first
    b.controls.recompute.value = True
    assert not b.controls.kept.disabled
    b.controls.kept.value = 0.5
    assert b.result["activations"] == 8 * 200
    b.controls.dtype.value = "float16"  # a by hand is at float32: halved, as the weights
    assert (b.result["weights"], b.result["activations"]) == (2000, 8 * 100)
    b.controls.optimizer.value = "adam"
    assert b.result["optimizer"] == 2 * 2000
    b.controls.B.value = 128
    assert b.result["b"] == 16 and b.large_batch["activations"] == 128 * 200
    assert repr(b) == f"<gradlab.lab.Budget P=1000 total={b.result['total'] / 2**20:.2f} MiB>"
    assert b.picture().data == b.controls.plot.value  # the bars as they are now, as an image


def test_the_backward_term_is_counted_when_given():
    b = Budget(params=1000, activation_bytes_per_row=400, backward_bytes_per_row=100, B=64, N=8)
    assert b.result["backward"] == 8 * 100 and b.large_batch["backward"] == 64 * 100
    b.controls.dtype.value = "bfloat16"  # t by hand is at float32, as a
    assert b.result["backward"] == 8 * 50


def test_the_bars_stack_the_terms_in_mib():
    results = [budget(2**18, "adam", B=4, N=1, activation_bytes_per_row=2**20),
               budget(2**18, "adam", B=4, N=4, activation_bytes_per_row=2**20)]
    fig = plot_budget(results, ["N=1", "N=4"])
    ax = fig.axes[0]
    heights = {(c.get_label(), i): p.get_height() for c in ax.containers for i, p in enumerate(c.patches)}
    assert [heights[("activations", 0)], heights[("activations", 1)]] == [4.0, 1.0]
    assert heights[("weights", 0)] == 1.0 and heights[("optimizer", 1)] == 2.0
    tops = [ax.containers[-1].patches[i].get_y() + ax.containers[-1].patches[i].get_height() for i in (0, 1)]
    assert tops == pytest.approx([r["total"] / 2**20 for r in results])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(TERMS)
    # beside the stacks, each nonzero term on a log axis, one bar per result: the 1 MiB of
    # weights stays as long as the 4 MiB of activations would on a linear axis it is not
    terms = fig.axes[1]
    assert terms.get_xscale() == "log"
    widths = sorted(round(p.get_width(), 6) for p in terms.patches)
    nonzero = sorted(r[t] / 2**20 for r in results for t in TERMS if r[t])
    assert widths == pytest.approx(nonzero) and len(widths) == 9  # no accumulator at N = 1
    # every row named; a term neither result holds (no backward or input bytes given) says "(none)"
    assert [t.get_text() for t in terms.get_yticklabels()] == [t + " (none)" * (t in ("backward", "inputs")) for t in TERMS]


def test_bad_arguments_are_refused_before_any_widget():
    with pytest.raises(ValueError, match="give a model, or params and activation_bytes_per_row"):
        Budget(params=10)
    with pytest.raises(ValueError, match="unknown optimizer 'lion'"):
        Budget(params=10, activation_bytes_per_row=4, optimizer="lion")
    with pytest.raises(ValueError, match="N <= 64"):
        Budget(params=10, activation_bytes_per_row=4, N=100)


def test_recomputation_holds_the_kept_share_and_one_rebuilt_segment_when_given():
    # by hand: b (a kept + g) + b t bytes of rows, g and t scaled with the dtype as a is
    b = Budget(params=1000, activation_bytes_per_row=400, backward_bytes_per_row=100, segment_bytes_per_row=80,
               B=64, N=8, recompute=True, kept=0.125, optimizer="sgd")
    assert b.controls.kept.value == 0.125 and not b.controls.kept.disabled
    assert (b.result["activations"], b.result["backward"]) == (8 * (400 * 0.125 + 80), 8 * 100)
    assert b.result["total"] == 1000 * 4 * 3 + 8 * (50 + 80 + 100)
    assert b.large_batch["activations"] == 64 * 400  # one large batch: no recomputation, no segment
    b.controls.dtype.value = "bfloat16"
    assert b.result["activations"] == 8 * (200 * 0.125 + 40)
    b.controls.recompute.value = False  # the segment is held only while rebuilt
    assert b.result["activations"] == 8 * 200


def test_the_legend_hides_no_bar_and_no_total():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    # two totals close together, as lesson 11's 34.9 and 22.0 MiB, where a legend in the corner covered one
    results = [budget(2**20, "sgd", B=1024, N=1, activation_bytes_per_row=19_000),
               budget(2**20, "sgd", B=1024, N=4, activation_bytes_per_row=19_000)]
    fig = plot_budget(results, ["N=1", "N=4"])
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    drawn = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0] + \
            [t.get_window_extent(renderer) for t in ax.texts]
    assert len(ax.texts) == 2 and not any(legend.overlaps(box) for box in drawn)


def test_measured_peaks_are_drawn_as_ticks_across_their_bars():
    # lesson 11: the plan's stacks with each measured peak (MiB) as a black tick at that height
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20),
               budget(2**18, "sgd", B=4, N=4, activation_bytes_per_row=2**20)]
    fig = plot_budget(results, ["N=1", "N=4"], peaks=[7.5, 3.5], terms=False)
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    ticks = [line for line in ax.lines if line.get_color() == "black"]
    assert [list(line.get_ydata()) for line in ticks] == [[7.5, 7.5], [3.5, 3.5]]
    assert [round(line.get_xdata().mean(), 6) for line in ticks] == [0.0, 1.0]
    assert [t.get_text() for t in ax.texts] == ["6.0 MiB", "4.0 MiB", "7.5", "3.5"]  # totals (by hand: 1+1+4, 1+1+1+1), then the peaks
    assert "measured peak" in [t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match="one label \\(and peak\\) per result"):
        plot_budget(results, ["N=1", "N=4"], peaks=[1.0])
    # ticks that are not a measured peak say what they are
    named = plot_budget(results, ["N=1", "N=4"], peaks=[7.5, 3.5], terms=False, peak_label="median + held")
    texts = [t.get_text() for t in named.axes[0].get_legend().get_texts()]
    assert "median + held" in texts and "measured peak" not in texts


def test_legend_outside_sets_the_legend_right_of_the_axes_with_no_blank_strip_inside():
    # lesson 11: its stacks with ticks once left the axes' right third blank under the legend
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20),
               budget(2**18, "sgd", B=4, N=4, activation_bytes_per_row=2**20)]
    fig = plot_budget(results, ["N=1", "N=4"], peaks=[7.5, 3.5], terms=False, legend_outside=True,
                      title="budget (bars), measured peak (ticks)")
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    assert ax.get_xlim() == (-0.5, 1.95)  # the last bar (1.0 +- 0.3) and its tick's label, no strip
    assert ax.get_legend().get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1  # beside the axes
    assert fig.get_size_inches()[0] == 5.0
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "measured peak"
    assert ax.get_title() == "budget (bars), measured peak (ticks)"
    inside = plot_budget(results, ["N=1", "N=4"], peaks=[7.5, 3.5], terms=False).axes[0]
    assert inside.get_xlim() == (-0.5, 3.4) and fig.get_size_inches()[0] < 6.0  # the default keeps its strip
    with pytest.raises(ValueError, match="legend_outside draws the stacks alone"):
        plot_budget(results, ["N=1", "N=4"], legend_outside=True)


def test_totals_on_bars_keeps_each_total_at_its_bar_top_under_a_higher_tick():
    # lesson 11: a tick far above its bar (the Python loop) once lifted the bar's total beside the tick
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20),
               budget(2**18, "sgd", B=4, N=4, activation_bytes_per_row=2**20)]  # totals 6 and 4 MiB
    lifted = plot_budget(results, ["N=1", "N=4"], peaks=[5.5, 7.5], terms=False).axes[0]
    assert [t.get_position()[1] for t in lifted.texts[:2]] == [6.0, 7.5]  # the default: above the higher
    on_bars = plot_budget(results, ["N=1", "N=4"], peaks=[5.5, 7.5], terms=False, totals_on_bars=True).axes[0]
    assert [t.get_text() for t in on_bars.texts[:2]] == ["6.0 MiB", "4.0 MiB"]
    assert [t.get_position()[1] for t in on_bars.texts[:2]] == [6.0, 4.0]  # each bar's own top
    assert [t.get_position()[1] for t in on_bars.texts[2:]] == [5.5, 7.5]  # the ticks' labels stay at the ticks


def test_the_terms_panel_can_be_linear_and_the_picture_redrawn_with_it():
    results = [budget(2**18, "adam", B=4, N=1, activation_bytes_per_row=2**20)]
    terms = plot_budget(results, ["N=1"], scale="linear").axes[1]
    assert terms.get_xscale() == "linear" and terms.get_xlabel() == "MiB (linear scale)"
    # the bars' lengths are the terms in MiB on either axis: 1 MiB of weights, 4 of activations
    assert sorted(round(p.get_width(), 6) for p in terms.patches) == [1.0, 1.0, 2.0, 4.0]
    with pytest.raises(ValueError, match="scale is 'log' or 'linear'"):
        plot_budget(results, ["N=1"], scale="symlog")
    b = Budget(params=1000, activation_bytes_per_row=400, B=64, N=4, optimizer="sgd")
    assert b.picture().data == b.controls.plot.value  # the default: the widget's own picture
    log = b.picture(scale="log").data  # the widget draws its terms on a linear axis; redrawn on a log one
    assert log[:4] == b"\x89PNG" and log != b.controls.plot.value


def test_the_terms_panel_can_be_drawn_alone():
    results = [budget(2**18, "adam", B=4, N=1, activation_bytes_per_row=2**20)]
    (alone,) = plot_budget(results, ["N=1"], scale="linear", stacks=False).axes  # one panel: the terms
    assert alone.get_xlabel() == "MiB (linear scale)"
    assert sorted(round(p.get_width(), 6) for p in alone.patches) == [1.0, 1.0, 2.0, 4.0]  # as beside the stacks
    for options in (dict(terms=False), dict(peaks=[6.5]), dict(limit=(5, "GPU"))):
        with pytest.raises(ValueError, match="stacks=False draws the terms alone"):
            plot_budget(results, ["N=1"], stacks=False, **options)
    b = Budget(params=1000, activation_bytes_per_row=400, B=64, N=4, optimizer="sgd")
    assert b.picture(scale="linear", stacks=False).data[:4] == b"\x89PNG"


def test_the_picture_of_bars_is_a_png_of_plot_budget():
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20)]
    picture = picture_budget(results, ["N=1"], peaks=[6.5], terms=False)
    assert picture.format == "png" and picture.data[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="one label \\(and peak\\) per result"):
        picture_budget(results, ["N=1"], peaks=[1.0, 2.0])


def test_a_limit_is_a_dashed_line_across_the_stacks_and_empty_terms_leave_the_legend():
    # lesson 01: ResNet-50's bars against a 16 GiB GPU; here 4 + 1 + 1 = 6 MiB (sgd: weights, gradient,
    # activations 4 rows x 1 MiB) against a limit of 5 MiB, and no accumulator, backward or inputs
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20)]
    ax = plot_budget(results, ["N=1"], terms=False, limit=(5, "small GPU")).axes[0]
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and list(dashed[0].get_ydata()) == [5, 5]
    assert [t.get_text() for t in ax.texts] == ["6.0 MiB"]
    assert ax.get_ylim()[1] > 6.5  # room above the 6 MiB bar for its total (margins, not pinned by empty terms)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["small GPU: 5 MiB", "weights", "gradients",
                                                                  "activations"]
    with pytest.raises(ValueError, match="limit is None or"):
        plot_budget(results, ["N=1"], limit=(0, "none"))


def test_a_zoom_panel_shows_the_thin_terms_under_the_stacks_with_their_mib():
    # lesson 01: 488 MiB of weights, gradient, Adam and accumulator under 36,641 MiB of activations.
    # Here P = 2**18 float32 (1 MiB each): weights 1, gradients 1, Adam 2, accumulator 1 (N = 4 only),
    # activations 1,024 MiB per row, so B = 4 keeps 4,096 MiB at N = 1 and 1,024 MiB at N = 4.
    results = [budget(2**18, "adam", B=4, N=1, activation_bytes_per_row=2**30),
               budget(2**18, "adam", B=4, N=4, activation_bytes_per_row=2**30)]
    fig = plot_budget(results, ["N=1", "N=4"], terms=False, zoom=8)
    ax, bottom = fig.axes
    assert [t.get_text() for t in ax.texts] == ["4,100 MiB", "1,029 MiB"]  # 4 + 4,096; 5 + 1,024: no decimals
    assert ax.yaxis.get_major_formatter()(4000, 0) == "4,000"
    assert bottom.get_ylim() == (0, 8)
    # labelled bottom up, every term that ends below the cut: weights, gradients, optimizer (N=1, N=4), accumulator
    assert sorted(t.get_text() for t in bottom.texts) == sorted(["1", "1", "1", "1", "2", "2", "1"])
    with pytest.raises(ValueError, match="zoom is None or"):
        plot_budget(results, ["N=1", "N=4"], zoom=8)  # terms=True
    with pytest.raises(ValueError, match="zoom is None or"):
        plot_budget(results, ["N=1", "N=4"], terms=False, zoom=0)


def test_names_relabel_terms_in_the_legend_and_the_rows():
    # lesson 01 says "layer outputs" where the budget's term is "activations"; the bars stay the same
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20)]
    ax = plot_budget(results, ["N=1"], terms=False, limit=(5, "small GPU"),
                     names={"activations": "layer outputs"}).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["small GPU: 5 MiB", "weights", "gradients",
                                                                  "layer outputs"]
    heights = {c.get_label(): c.patches[0].get_height() for c in ax.containers}
    assert heights["layer outputs"] == 4.0 and heights["weights"] == 1.0  # 4 rows x 1 MiB; P = 2**18 float32
    rows = plot_budget(results, ["N=1"], names={"activations": "layer outputs"}).axes[1]
    assert [t.get_text() for t in rows.get_yticklabels()][4] == "layer outputs"
    with pytest.raises(ValueError, match="names takes terms"):
        plot_budget(results, ["N=1"], names={"outputs": "x"})


def test_measured_ticks_leave_empty_terms_out_of_the_legend_and_the_title_is_the_callers():
    # lesson 11: SGD holds no optimizer slots, so beside measured ticks no "optimizer" entry
    # names a bar that is not there; sgd, B = 4: weights, gradients, activations
    results = [budget(2**18, "sgd", B=4, N=1, activation_bytes_per_row=2**20)]
    ax = plot_budget(results, ["N=1"], peaks=[5.5], terms=False, title="What one update holds").axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["measured peak", "weights", "gradients",
                                                                  "activations"]
    assert ax.get_title() == "What one update holds"


def test_the_terms_panel_title_stays_inside_the_figure_with_long_labels():
    # lesson 11's widget picture: two long labels once ran side by side past the right edge
    results = [budget(2**18, "sgd", B=4, N=n, activation_bytes_per_row=2**20) for n in (1, 4)]
    labels = ["N = 1, float32, no recomputation", "N = 4, bfloat16, recompute every block"]
    fig = plot_budget(results, labels)
    fig.canvas.draw()
    title = fig.axes[1].title
    box = title.get_window_extent()
    assert title.get_text().count("\n") == 2 and 0 <= box.x0 and box.x1 <= fig.bbox.width, (box, fig.bbox.width)


def test_without_its_strip_the_legend_sits_over_falling_stacks_and_hides_nothing():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    # lesson 01's shape: totals that fall to the right (N = 1, 2, 4, 8 of 8 rows of 1 MiB, 1 MiB of SGD
    # weights), cut at a zoom and against a limit; the axis ends half a bar past the last stack
    results = [budget(2**18, "sgd", B=8, N=N, activation_bytes_per_row=2**20) for N in (1, 2, 4, 8)]
    fig = plot_budget(results, ["N=1", "N=2", "N=4", "N=8"], terms=False, zoom=3, limit=(7, "small GPU"),
                      legend_strip=False)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax, zoom_ax = fig.axes
    assert ax.get_xlim() == (-0.5, 3.5) and zoom_ax.get_xlim() == (-0.5, 3.5)  # shared: both trimmed
    # by hand: 8 + 2 = 10 MiB at N = 1; then 4, 2, 1 MiB of rows, 2 MiB fixed and a 1 MiB accumulator
    assert [t.get_text() for t in ax.texts] == ["10.0 MiB", "7.0 MiB", "5.0 MiB", "4.0 MiB"]
    legend = ax.get_legend().get_window_extent(renderer)
    drawn = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0] + \
            [t.get_window_extent(renderer) for t in ax.texts]
    assert not any(legend.overlaps(box) for box in drawn)
    with_strip = plot_budget(results, ["N=1", "N=2", "N=4", "N=8"], terms=False, zoom=3)
    assert with_strip.axes[0].get_xlim() == (-0.5, 4.9)  # the default keeps the strip
    with pytest.raises(ValueError, match="need legend_strip=True"):
        plot_budget(results[:1], ["N=1"], peaks=[9.0], terms=False, legend_strip=False)


def test_the_widget_draws_its_terms_on_a_linear_axis_and_names_an_empty_row():
    # lesson 11: activations cut fourfold must look a quarter as long; SGD's optimizer row holds nothing and says so
    b = Budget(params=2**18, activation_bytes_per_row=2**20, B=4, N=4, optimizer="sgd")
    fig = plot_budget([b.large_batch, b.result], b._labels, scale=b.scale)
    terms = fig.axes[1]
    assert b.scale == "linear" and terms.get_xscale() == "linear"
    widths = {(round(p.get_y() + p.get_height() / 2)): [] for p in terms.patches}
    for p in terms.patches:
        widths[round(p.get_y() + p.get_height() / 2)].append(round(p.get_width(), 6))
    row = {term: k for k, term in enumerate(TERMS)}
    assert widths[row["activations"]] == [4.0, 1.0]  # 4 rows of 1 MiB, then one a micro-batch
    assert row["optimizer"] not in widths  # no bar: SGD keeps no slots
    labels = [t.get_text() for t in terms.get_yticklabels()]
    assert labels[row["optimizer"]] == "optimizer (none)"
    assert labels[row["accumulator"]] == "accumulator"  # held at N = 4, though not by the large batch
    assert Budget(params=2**18, activation_bytes_per_row=2**20, optimizer="adam").result["optimizer"] > 0
    adam = plot_budget([budget(2**18, "adam", B=4, N=1, activation_bytes_per_row=2**20)], ["N=1"]).axes[1]
    assert "optimizer" in [t.get_text() for t in adam.get_yticklabels()]
    with pytest.raises(ValueError, match="scale is 'log' or 'linear'"):
        Budget(params=10, activation_bytes_per_row=4, scale="symlog")


def test_legend_outside_keeps_four_long_labels_and_their_ticks_labels_apart():
    # lesson 11's four updates: "fused loop" and "AccumulatingModel" once ran together under their bars, and a
    # tick's label ("19.6") ran into the next bar; labels are wrapped at spaces and the figure widens with the bars
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    results = [budget(2**18, "sgd", B=4, N=n, activation_bytes_per_row=2**20) for n in (1, 4, 4, 4)]
    labels = ["plain", "Python loop", "fused loop", "AccumulatingModel"]
    fig = plot_budget(results, labels, peaks=[7.5, 6.5, 3.9, 3.8], terms=False, legend_outside=True,
                      totals_on_bars=True)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    assert fig.get_size_inches()[0] == 7.5  # 1.5 inches a bar, and 1.5 for the legend
    assert [t.get_text() for t in ax.get_xticklabels()] == ["plain", "Python\nloop", "fused\nloop", "AccumulatingModel"]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    peak_labels = [t for t in ax.texts if t.get_text() in ("7.5", "6.5", "3.9", "3.8")]
    bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0]
    assert len(peak_labels) == 4 and not any(t.get_window_extent(renderer).overlaps(b) for t in peak_labels for b in bars)
