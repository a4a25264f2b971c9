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
