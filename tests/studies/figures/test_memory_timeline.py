"""Lesson 11's memory-over-time figure: one panel per trace, the allocator's peak dashed."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from gradlab.studies.figures.memory_timeline import plot_memory_trace
from gradlab.studies.memory_trace import Trace


def _traces():
    ms = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])
    return [Trace(ms, np.array([0.0, 4.0, 6.0, 2.0, 0.0]), 7.0), Trace(ms, np.array([0.0, 2.0, 3.0, 3.0, 0.0]), 3.0)]


def test_each_trace_gets_a_panel_with_its_samples_and_its_peak():
    fig = plot_memory_trace(_traces(), ["plain", "recomputed"])
    assert not plt.fignum_exists(fig.number)
    panels = fig.axes
    assert len(panels) == 2
    for ax, expect, peak in zip(panels, ([0, 4, 6, 2, 0], [0, 2, 3, 3, 0]), (7.0, 3.0)):
        step, dashed = ax.lines
        np.testing.assert_array_equal(step.get_xdata(), [-1, 0, 1, 2, 3])
        np.testing.assert_array_equal(step.get_ydata(), expect)
        assert dashed.get_linestyle() == "--" and list(dashed.get_ydata()) == [peak, peak]
    assert [t.get_text() for t in panels[0].texts] == ["plain: peak 7.0 MiB"]
    assert [t.get_text() for t in panels[1].texts] == ["recomputed: peak 3.0 MiB"]
    assert panels[0].get_ylim() == panels[1].get_ylim() and panels[0].get_ylim()[0] == 0  # shared, from 0
    for ax in panels:  # each panel's legend names both lines, drawn in the panel's own colour
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == ["sampled by a thread", "allocator's own peak"]
        assert {h.get_color() for h in legend.legend_handles} == {ax.lines[0].get_color()}
    assert panels[0].lines[0].get_color() != panels[1].lines[0].get_color()


def test_peaks_given_apart_override_and_two_field_traces_draw_none():
    pairs = [(t.ms, t.mib) for t in _traces()]
    fig = plot_memory_trace(pairs, ["a", "b"])
    assert all(len(ax.lines) == 1 for ax in fig.axes)  # no peak known: none drawn
    fig = plot_memory_trace(pairs, ["a", "b"], peaks=[6.5, 3.5])
    assert [ax.lines[1].get_ydata()[0] for ax in fig.axes] == [6.5, 3.5]


def test_marks_are_dotted_lines_under_the_panel_label():
    fig = plot_memory_trace(_traces(), ["python loop", "fused loop"], marks=[[0.5], [0.0, 1.5, 2.5]])
    for ax, times in zip(fig.axes, ([0.5], [0.0, 1.5, 2.5])):
        step, dashed, *vertical = ax.lines
        assert [list(v.get_xdata()) for v in vertical] == [[t, t] for t in times]
        assert all(v.get_linestyle() == ":" and v.get_color() == "grey" for v in vertical)
        (label,) = ax.texts  # on a white box drawn above the lines, so a mark cannot cross it
        assert label.get_bbox_patch().get_facecolor() == (1.0, 1.0, 1.0, 1.0)
        assert label.get_zorder() > max(v.get_zorder() for v in vertical)
    assert [len(ax.lines) for ax in plot_memory_trace(_traces(), ["a", "b"]).axes] == [2, 2]  # no marks: none
    with pytest.raises(ValueError, match="1 for 2 traces"):
        plot_memory_trace(_traces(), ["a", "b"], marks=[[1.0]])


@pytest.mark.parametrize("args, named", [
    (([], []), "at least one trace"),
    ((_traces(), ["one"]), "1 labels for 2 traces"),
    ((_traces(), ["a", "b"], [1.0]), "1 peaks for 2 traces"),
    (([([0.0, 1.0], [0.0])], ["short"]), "'short'"),
    (([([0.0], [0.0])], ["x"], [float("inf")]), "inf"),
])
def test_bad_input_raises_naming_the_value(args, named):
    with pytest.raises(ValueError, match=named):
        plot_memory_trace(*args)


def test_levels_are_drawn_dotted_and_labelled_across_one_trace():
    from gradlab.studies.figures.memory_timeline import plot_trace_with_levels
    trace = _traces()[0]  # samples up to 6 MiB, peak 7
    levels = {"activations": 5.0, "+ gradients: the budget": 8.0}
    fig = plot_trace_with_levels(trace, "plain", levels, mark_at=1.5, title="t")
    assert not plt.fignum_exists(fig.number)
    assert tuple(fig.get_size_inches()) == (7.0, 3.4) and fig.get_suptitle() == "t"
    (ax,) = fig.axes
    step, peak, low, high, mark = ax.lines
    np.testing.assert_array_equal(step.get_ydata(), [0, 4, 6, 2, 0])
    assert list(peak.get_ydata()) == [7.0, 7.0] and peak.get_linestyle() == "--"
    for line, level, color in ((low, 5.0, "tab:olive"), (high, 8.0, "tab:gray")):
        assert list(line.get_ydata()) == [level, level] and line.get_linestyle() == ":"
        assert line.get_color() == color
    assert list(mark.get_xdata()) == [1.5, 1.5] and mark.get_linestyle() == "-."
    texts = ax.texts[1:]  # the first is the panel's own label
    assert [t.get_text() for t in texts] == [" activations: 5.00", " + gradients: the budget: 8.00"]
    assert [t.get_position() for t in texts] == [(-1.0, 5.0), (-1.0, 8.0)]  # at the first sample
    assert ax.get_ylim() == (0, pytest.approx(1.35 * 8.0))  # the top level, not the peak, sets the axis


def test_levels_without_a_mark_and_the_peak_above_them():
    from gradlab.studies.figures.memory_timeline import plot_trace_with_levels
    (ax,) = plot_trace_with_levels(_traces()[0], "plain", {"low": 1.0}).axes
    assert len(ax.lines) == 3  # samples, peak, one level: no vertical mark
    assert ax.get_ylim() == (0, pytest.approx(1.35 * 7.0))  # the peak is the highest


@pytest.mark.parametrize("levels, mark_at, named", [
    ({"a": float("nan")}, None, "'a'.*nan"),
    ({"a": "5"}, None, "'5'"),
    ({str(i): float(i) for i in range(6)}, None, "got 6"),
    ({"a": 1.0}, float("inf"), "mark_at.*inf"),
])
def test_levels_refuse_bad_input_naming_the_value(levels, mark_at, named):
    from gradlab.studies.figures.memory_timeline import plot_trace_with_levels
    with pytest.raises(ValueError, match=named):
        plot_trace_with_levels(_traces()[0], "plain", levels, mark_at=mark_at)


def test_a_label_the_peak_line_would_strike_goes_below_its_line():
    from gradlab.studies.figures.memory_timeline import plot_trace_with_levels, trace_peak_above
    # the trace's peak is 7 MiB; the axis runs to 1.35 * 7 = 9.45, so a label is about 0.57 MiB tall
    (ax,) = plot_trace_with_levels(_traces()[0], "plain", {"low": 5.0, "just under the peak": 6.8}).axes
    low, near = ax.texts[1:]
    assert (low.get_va(), near.get_va()) == ("bottom", "top")  # 7 - 6.8 = 0.2 < 0.57: the label goes below
    assert near.get_position() == (-1.0, 6.8)
    assert trace_peak_above(7.0, 6.8, 0.57) and not trace_peak_above(7.0, 7.1, 0.57)  # a peak below: label above
    assert not trace_peak_above(7.0, 5.0, 0.57) and not trace_peak_above(0.0, 0.0, 0.57)  # far, or no peak
