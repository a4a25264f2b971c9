"""The peak-bar figure draws each case's median over the unit as a bar, and every reading as a dot."""
import numpy as np
import pytest

from gradlab.studies.figures.peak_bars import plot_peak_bars


def test_bars_are_medians_in_units_and_dots_every_reading():
    # a unit of 30 MiB: the large batch's 240 is 8 units, readings 60, 66, 90 have median 66 = 2.2 units
    fig = plot_peak_bars({"large batch": 240.0, "one alive": [30.0, 30.0, 30.0], "two alive": [90.0, 60.0, 66.0]},
                         30.0)
    (ax,) = fig.axes
    bars = sorted(((p.get_y() + p.get_height() / 2, round(p.get_width(), 9)) for p in ax.patches), reverse=True)
    assert [w for _, w in bars] == [8.0, 1.0, 2.2]  # top down, in the order given
    labels = {round(float(y)): t.get_text() for y, t in zip(ax.get_yticks(), ax.get_yticklabels())}
    assert labels == {2: "large batch", 1: "one alive", 0: "two alive"}  # the first case on top
    dots = {round(float(line.get_ydata()[0])): sorted(round(float(x), 9) for x in line.get_xdata())
            for line in ax.get_lines() if line.get_marker() == "o" and len(line.get_xdata())}
    assert dots == {2: [8.0], 1: [1.0, 1.0, 1.0], 0: [2.0, 2.2, 3.0]}
    (unit,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert list(unit.get_xdata()) == [1.0, 1.0] and "one micro-batch" in unit.get_label()
    assert len(ax.texts) == 0  # no number written on a bar: readings move between runs
    (legend,) = fig.legends  # the figure's, below the axes
    assert sorted(t.get_text() for t in legend.get_texts()) == [
        "1: one micro-batch's peak", "each reading", "median reading"]
    assert ax.get_xlim()[0] == 0 and ax.get_xlim()[1] > 8.0 and "30.0 MiB" in ax.get_xlabel()


@pytest.mark.parametrize("readings, unit", [({}, 1.0), ({"a": []}, 1.0), ({"a": [1.0, np.nan]}, 1.0),
                                            ({"a": 1.0}, 0.0), ({"a": 1.0}, float("inf")),
                                            ({str(i): 1.0 for i in range(9)}, 1.0)])
def test_bad_arguments_are_refused(readings, unit):
    with pytest.raises(ValueError):
        plot_peak_bars(readings, unit)
