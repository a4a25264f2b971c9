import matplotlib.pyplot as plt
import numpy as np
import pytest


def test_plot_rounding_growth_draws_medians_guides_and_blocked_sums():
    from gradlab.studies.figures.rounding_growth import plot_rounding_growth
    running = [np.array([1.0, 2.0, 4.0]), np.array([3.0, 5.0, 12.0])]
    fig = plot_rounding_growth([100, 1000], running, [76, 972], {"np.sum": [0.2, 0.4, 1.1]})
    assert not plt.fignum_exists(fig.number)
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log"
    line = {ln.get_gid(): ln for ln in ax.lines}
    np.testing.assert_allclose(line["median"].get_ydata(), [2.0, 5.0])
    np.testing.assert_allclose(line["worst"].get_ydata(), [4.0, 12.0])
    np.testing.assert_allclose(line["sqrt"].get_ydata(), [2.0, 2.0 * np.sqrt(10)])  # sqrt(terms), from the first median
    np.testing.assert_allclose(line["worst case"].get_ydata(), [76, 972])
    np.testing.assert_allclose(line["rounding"].get_ydata(), [10, 10])
    (bar,) = ax.containers  # np.sum: its median at the largest count (alone: on it), a bar up to its worst
    x, y = bar.lines[0].get_data()
    assert x[0] == pytest.approx(1000) and y[0] == pytest.approx(0.4)
    assert "np.sum, 1,000 terms: median, bar to worst" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_blocked_sums_sit_at_the_largest_count_not_right_of_it():
    from gradlab.studies.figures.rounding_growth import plot_rounding_growth
    running = [np.array([1.0, 2.0]), np.array([3.0, 5.0])]
    blocked = {"np.sum": [0.4, 1.1], "tf.reduce_sum": [0.2, 0.8], "tf.matmul": [5.1, 17.6]}
    fig = plot_rounding_growth([10**4, 10**5], running, [1e3, 1e4], blocked)
    xs = [bar.lines[0].get_data()[0][0] for bar in fig.axes[0].containers]
    assert xs == pytest.approx([10**5 / 1.06, 10**5, 10**5 * 1.06])  # a few percent either side of 10^5
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][-3:] == [
        f"{name}, 100,000 terms: median, bar to worst" for name in blocked]


def test_plot_rounding_growth_wants_one_error_array_per_count():
    from gradlab.studies.figures.rounding_growth import plot_rounding_growth
    with pytest.raises(ValueError):
        plot_rounding_growth([100, 1000], [np.ones(3)], [76, 972])


def test_plot_rounding_growth_fits_the_sqrt_guide_through_every_median():
    from gradlab.studies.figures.rounding_growth import plot_rounding_growth
    # medians 2 at 100 terms, 40 at 10,000: log c = mean(log 2 - log 10, log 40 - log 100) = log sqrt(0.2 * 0.4)
    fig = plot_rounding_growth([100, 10_000], [np.full(3, 2.0), np.full(3, 40.0)], [50, 5000], guide="fit")
    line, = [g for g in fig.axes[0].lines if g.get_gid() == "sqrt"]
    np.testing.assert_allclose(line.get_ydata(), [np.sqrt(0.08) * 10, np.sqrt(0.08) * 100])
    assert line.get_label().endswith("fitted")
    with pytest.raises(ValueError, match="guide"):
        plot_rounding_growth([100, 10_000], [np.ones(3), np.ones(3)], [50, 5000], guide="last")
