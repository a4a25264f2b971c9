"""BatchNorm's moving variance over the updates: each series drawn from its values, the shortfall worked by hand."""
import pytest

from gradlab.studies.figures.moving_variance import plot_moving_variance, settled_shortfall


def test_shortfall_is_the_mean_gap_after_the_start():
    # after 2 of 4 updates: reference mean (10 + 10) / 2 = 10, values (9 + 8) / 2 = 8.5 -> 1 - 0.85 = 0.15
    assert settled_shortfall([1, 1, 10, 10], [5, 5, 9, 8], 2) == pytest.approx(0.15)
    assert settled_shortfall([2, 2], [3, 3], 0) == pytest.approx(-0.5)  # above the reference
    with pytest.raises(ValueError, match="one length"):
        settled_shortfall([1, 2], [1], 0)
    with pytest.raises(ValueError, match="after"):
        settled_shortfall([1, 2], [1, 2], 2)


def test_figure_draws_each_series_over_the_updates_and_labels_the_shortfall():
    series = {"large batch": [1.0, 10.0, 10.0], "window": [1.0, 10.0, 10.0], "micro": [1.0, 9.0, 9.0]}
    fig = plot_moving_variance(series, after=1)
    every, settled = fig.axes
    large, window, micro = every.lines[:3]
    assert list(large.get_xdata()) == [1, 2, 3] and list(micro.get_ydata()) == [1.0, 9.0, 9.0]
    assert large.get_linewidth() > window.get_linewidth() and window.get_linestyle() == "--"
    assert [line.get_label() for line in (large, window, micro)] == [
        "large batch", "window (0% off after update 1)", "micro (10% low after update 1)"]
    assert list(every.lines[3].get_xdata()) == [1, 1]  # the dotted mark at update `after`
    # the second panel: only the updates after `after`, on their own y range (the start, 1.0, is left out)
    assert [list(line.get_xdata()) for line in settled.lines] == [[2, 3]] * 3
    assert list(settled.lines[2].get_ydata()) == [9.0, 9.0] and settled.get_ylim()[0] > 1.0
    assert settled.get_ylabel() == every.get_ylabel() == "moving variance, summed over features"  # both panels
    plain = plot_moving_variance(series)
    assert len(plain.axes) == 1 and [line.get_label() for line in plain.axes[0].lines] == list(series)  # no after
    with pytest.raises(ValueError, match="same length"):
        plot_moving_variance({"a": [1.0], "b": [1.0, 2.0]})
    with pytest.raises(ValueError, match="at least one"):
        plot_moving_variance({})
    with pytest.raises(ValueError, match="after=3"):
        plot_moving_variance(series, after=3)
