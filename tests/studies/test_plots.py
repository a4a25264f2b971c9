"""Lesson 03's accuracy plot: mean ± std per N, one dot per run, the legend outside the data."""
import matplotlib.pyplot as plt
import numpy as np

from gradlab.studies.plots import plot_accuracy

ROWS = [{"accum_steps": n, "micro_batch": 100 // n, "updates": 200, "runs": 2,
         "accuracy_mean": m, "accuracy_std": 0.01, "accuracies": [m - 0.01, m + 0.01]}
        for n, m in ((1, 0.94), (5, 0.93), (10, 0.938), (20, 0.938))]
REFERENCE = {1: (100, 1000, 0.95, 0.0017), 20: (5, 20000, 0.952, 0.003)}


def test_plot_accuracy_draws_means_in_percent_and_one_dot_per_run():
    fig = plot_accuracy(ROWS, reference=REFERENCE)
    assert not plt.fignum_exists(fig.number)
    ax, = fig.axes
    assert ax.get_xscale() == "log"
    dots = [line for line in ax.lines if line.get_linestyle() == "None" and line.get_marker() == "."]
    assert len(dots) == 4 and np.allclose(dots[3].get_ydata(), [92.8, 94.8])
    lo, hi = ax.get_ylim()
    assert hi - lo >= 4.0


def test_plot_accuracy_legend_lies_outside_the_axes():
    fig = plot_accuracy(ROWS, reference=REFERENCE)
    fig.draw_without_rendering()  # runs the constrained layout
    ax, = fig.axes
    legend, = fig.legends
    box, axes_box = legend.get_window_extent(), ax.get_window_extent()
    assert box.y1 <= axes_box.y0  # below the axes: no error bar or run dot under it
    assert len(legend.get_texts()) == 2
