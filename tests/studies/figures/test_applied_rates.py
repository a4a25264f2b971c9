import matplotlib.figure
import matplotlib.pyplot as plt
import pytest

from gradlab.studies.figures.applied_rates import plot_applied_rates


def test_plot_applied_rates_draws_each_schedules_rate_against_the_update_from_1():
    fig = plot_applied_rates({"raw": [0.1, 0.05, 0.0], "PerUpdate": [0.1, 0.09, 0.08]}, title="two schedules")
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    raw, per_update = ax.get_lines()  # one line per label, in the order given
    assert list(raw.get_xdata()) == [1, 2, 3] and list(raw.get_ydata()) == [0.1, 0.05, 0.0]
    assert list(per_update.get_ydata()) == [0.1, 0.09, 0.08]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["raw", "PerUpdate"]
    assert ax.get_ylim()[0] == 0 and ax.get_title() == "two schedules" and ax.get_xlabel() == "update k (from 1)"
    with pytest.raises(ValueError, match="non-empty 1-D"):
        plot_applied_rates({})
    with pytest.raises(ValueError, match="non-empty 1-D"):
        plot_applied_rates({"raw": []})
