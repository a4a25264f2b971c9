"""The plain mean's error and its two factors: each series is drawn from the values given, in order."""
import pytest

from gradlab.studies.figures.weighting import plot_weighting_factors


def test_factors_figure_draws_each_series_in_its_own_panel():
    fig = plot_weighting_factors([1, 2, 3], [0.3, 0.1, 0.0], [0.2, 0.1, 0.0], [1.5, 1.0, 0.9])
    error, mismatch, spread = fig.axes
    assert list(error.lines[0].get_ydata()) == [0.3, 0.1, 0.0] and error.lines[0].get_linestyle() == "None"
    assert list(mismatch.lines[0].get_ydata()) == [0.2, 0.1, 0.0]
    assert list(spread.lines[0].get_xdata()) == [1, 2, 3] and list(spread.lines[0].get_ydata()) == [1.5, 1.0, 0.9]
    assert all(ax.get_ylim()[0] == 0 for ax in fig.axes)
    with pytest.raises(ValueError, match="one value each"):
        plot_weighting_factors([1, 2], [0.1, 0.2], [0.1], [1.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        plot_weighting_factors([1], [0.1], [0.1], [float("inf")])


def test_factors_figure_can_draw_the_product_over_the_measured_points():
    fig = plot_weighting_factors([1, 2, 3], [0.3, 0.1, 0.0], [0.2, 0.1, 0.0], [1.5, 1.0, 0.9], product=True)
    points, line = fig.axes[0].lines[:2]
    assert list(points.get_ydata()) == [0.3, 0.1, 0.0] and points.get_linestyle() == "None"
    assert list(line.get_xdata()) == [1, 2, 3] and list(line.get_ydata()) == pytest.approx([0.3, 0.1, 0.0])
    assert line.get_label() == "mismatch x spread"
    assert len(plot_weighting_factors([1], [0.1], [0.1], [1.0]).axes[0].lines) == 1  # the default draws no line
