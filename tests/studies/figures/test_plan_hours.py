import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.plan_hours import plot_plan_hours


def test_plot_plan_hours_draws_a_bar_per_plan_and_a_marker_per_end():
    plans = {"B = 1,024 on 8": ((11.3, 90.0), (11.3, 90.0)), "B = 512 on 8": ((7.9, 63.0), (8.9, 71.0))}
    fig = plot_plan_hours(plans, ends=("B_crit = 666", "B_crit = 1,325"), title="t")
    assert not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    bar1, bar2, low, high = ax.lines
    assert list(bar2.get_xdata()) == [7.9, 8.9] and list(bar2.get_ydata()) == [63.0, 71.0]
    assert list(bar1.get_xdata()) == [11.3, 11.3]  # a plan the range does not move: the bar is a point
    assert list(low.get_xdata()) == [11.3, 7.9] and list(high.get_ydata()) == [90.0, 71.0]
    assert [t.get_text() for t in ax.texts] == list(plans)
    assert ax.texts[1].xy == (8.9, 71.0)  # right of the later end
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["B_crit = 666", "B_crit = 1,325"]
    assert ax.get_xlim() == pytest.approx((0, 1.4 * 11.3)) and ax.get_ylim() == pytest.approx((0, 1.15 * 90))
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("wall-clock hours", "GPU-hours", "t")


@pytest.mark.parametrize("plans", [{}, {"a": ((1.0, 2.0),)}, {"a": ((1.0, 2.0), (0.0, 1.0))},
                                   {"a": ((1.0, float("nan")), (1.0, 2.0))}])
def test_plot_plan_hours_refuses_bad_input(plans):
    with pytest.raises(ValueError):
        plot_plan_hours(plans)
