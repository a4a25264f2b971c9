"""The lab's figures: their panels, legends under the data, and the picture's memory panel."""
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from gradlab.lab import figures

from figure_data import group, result


def legends_below_the_axes(fig):
    """Every legend of `fig` is a figure legend whose top is under every Axes' bottom."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    assert all(ax.get_legend() is None for ax in fig.axes)
    for legend in fig.legends:
        top = legend.get_window_extent(renderer).y1
        above = [ax for ax in fig.axes if ax.get_window_extent(renderer).y0 > top]
        assert above, "the legend overlaps a panel"
    return len(fig.legends)


def test_figures_draw_empty_partial_and_finished_groups():
    partial = group(result(losses=np.linspace(2.0, 1.0, 12)))
    finished = group(result(accum_steps=2, micro_batch=50), label="done", peak_mb=12.0)
    for x in figures.X_AXES:
        fig = figures.plot_lab([partial, finished], x=x, current=1)
        assert len(fig.axes) == 3 and legends_below_the_axes(fig) == 1
    empty = figures.plot_lab([])
    assert [t.get_text() for t in empty.axes[0].texts] == ["press Run"] and not empty.legends
    cost = figures.plot_lab_batches([partial, finished]).axes[2]
    assert [t.get_text() for t in cost.texts] == ["done:  2.0 ms · 12 MiB"]  # finished runs only


def test_the_difference_is_named_in_the_legend():
    ref = result(strategy="large_batch", accuracy=0.9)
    off = result(accum_steps=4, micro_batch=25, accuracy=0.85, losses=ref.losses + 0.02)
    fig = figures.plot_lab([group(off, reference={0: ref}, label="off")])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == \
        ["off: max |Δ| 0.02, accuracy -5.0 pts"]
    np.testing.assert_allclose(fig.axes[2].lines[0].get_ydata(), 0.02)


def test_the_picture_has_fewer_panels_and_memory_only_if_measured():
    runs = [group(result(accum_steps=n, micro_batch=25, noise_std=0.1 / n)) for n in (1, 2, 4)]
    fig = figures.plot_picture(runs, x="examples")
    assert len(fig.axes) == 4 and legends_below_the_axes(fig) == 2
    width, _ = fig.get_size_inches() * figures.PICTURE_DPI
    assert width == pytest.approx(960)
    assert fig.axes[0].get_xlabel() == "examples seen (updates × B)"

    runs[0].peak_mb, runs[2].peak_mb = 11.5, 20.25  # the middle one was not measured
    memory = figures.plot_picture(runs).axes[4]
    assert [t.get_text() for t in memory.texts] == ["N=1:  11.5 MiB", "N=4:  20.2 MiB"]
    assert [p.get_width() for p in memory.patches] == [11.5, 20.25]
    assert "fresh process" in memory.get_title()


def test_an_unknown_axis_is_refused():
    for plot in (figures.plot_lab, figures.plot_picture):
        with pytest.raises(ValueError, match="x must be one of updates, examples, seconds; got 'hours'"):
            plot([], x="hours")
