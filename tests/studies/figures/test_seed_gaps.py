import matplotlib.pyplot as plt
import numpy as np
import pytest


def test_interval_is_the_mean_and_students_half_width():
    from gradlab.studies.figures.seed_gaps import interval
    mean, half = interval([0.4, 0.1, 0.7])  # three seeds' gaps: 0.4 ± 4.303 · 0.3 / sqrt(3)
    assert mean == pytest.approx(0.4) and half == pytest.approx(4.302653 * 0.3 / np.sqrt(3), rel=1e-6)  # t_2 unrounded
    with pytest.raises(ValueError):
        interval([1.0])
    twelve = [0.1] * 6 + [0.3] * 6  # mean 0.2, sd 0.1044 (ddof 1); t_11 = 2.200985 from a t table
    assert interval(twelve) == pytest.approx((0.2, 2.200985 * np.sqrt(0.12 / 11) / np.sqrt(12)), rel=1e-6)


def test_plot_seed_gaps_draws_each_seed_and_the_interval_per_row():
    from gradlab.studies.figures.seed_gaps import plot_seed_gaps
    fig = plot_seed_gaps([("schedule", [-5.3, -4.2, -5.0]), ("uneven", [0.0, 0.0, 0.0])])
    assert not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.texts] == ["schedule: -4.8 ± 1.4", "uneven: +0.0 ± 0.0"]
    ticks = [line for line in ax.lines if line.get_gid() == "seeds"]
    np.testing.assert_allclose(ticks[0].get_xdata(), [-5.3, -4.2, -5.0])
    means = [float(np.asarray(c.lines[0].get_xdata())[0]) for c in ax.containers]
    assert means == pytest.approx([-4.8333333, 0.0])


def test_plot_paired_curves_draws_each_run_and_names_the_largest_gap():
    from gradlab.studies.figures.seed_gaps import plot_paired_curves
    fig = plot_paired_curves([10, 20, 30], {"off": {"N = 1": [0.5, 0.6, 0.7], "N = 20": [0.5, 0.6, 0.7]},
                                            "on": {"N = 1": [0.5, 0.6, 0.7], "N = 20": [0.52, 0.57, 0.71]}})
    assert not plt.fignum_exists(fig.number)
    off, on = fig.axes
    # by hand: off identical (gap 0); on |2|, |-3|, |1| points -> 3.0
    assert off.get_title() == "off: largest gap 0.0 points" and on.get_title() == "on: largest gap 3.0 points"
    np.testing.assert_allclose(on.lines[1].get_ydata(), [52.0, 57.0, 71.0])
    np.testing.assert_allclose(on.lines[0].get_xdata(), [10, 20, 30])
    with pytest.raises(ValueError):
        plot_paired_curves([10, 20], {"bad": {"N = 1": [0.5]}})
