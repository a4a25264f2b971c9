"""The applied-rates figure draws each case's rate per update, counted from 1, and marks where one drops to 0."""
import numpy as np
import pytest

from gradlab.studies.figures.applied_rates import plot_applied_rates


def test_lines_are_the_rates_and_the_first_zero_is_marked():
    raw = [0.4, 0.2, 0.1, 0.0, 0.0, 0.0]  # reaches 0 at update 4 of 6 and stays there
    per_update = [0.5, 0.45, 0.35, 0.25, 0.1, 0.05]  # never 0
    fig = plot_applied_rates({"raw": raw, "PerUpdate": per_update})
    (ax,) = fig.axes
    lines = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    assert [line.get_label() for line in lines] == ["raw", "PerUpdate"]
    assert [list(line.get_xdata()) for line in lines] == [[1, 2, 3, 4, 5, 6]] * 2  # updates counted from 1
    assert [list(line.get_ydata()) for line in lines] == [raw, per_update]
    (marker,) = [line for line in ax.get_lines() if line.get_linestyle() == ":"]  # only raw reaches 0
    assert list(marker.get_xdata()) == [4, 4]
    assert [t.get_text() for t in ax.texts] == ["update 4 of 6: 0 from here"]
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] == pytest.approx(0.5 * 1.08)
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["PerUpdate", "raw"]


def test_a_rate_that_is_zero_then_rises_is_not_marked():
    fig = plot_applied_rates({"dip": [0.3, 0.0, 0.2]})
    (ax,) = fig.axes
    assert not ax.texts and all(line.get_linestyle() == "-" for line in ax.get_lines())


@pytest.mark.parametrize("rates", [{}, {"a": []}, {"a": [1.0, np.nan]}, {"a": [1.0, -0.1]},
                                   {"a": [1.0], "b": [1.0, 2.0]}, {str(i): [1.0] for i in range(5)}])
def test_bad_arguments_are_refused(rates):
    with pytest.raises(ValueError):
        plot_applied_rates(rates)
