import matplotlib.colors
import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.patches import FancyBboxPatch

from gradlab.studies.figures.lesson_plots import draw_replicas, plot_example_weights, plot_rounding


def test_plot_rounding_draws_one_line_per_curve_on_a_log_axis_with_zeros_at_the_floor():
    fig = plot_rounding({"accumulate": [0.0, 3e-8, 6e-8], "fused": [1e-8, 1e-8, 2e-8]},
                        tolerance=1e-6, scale=6e-8)
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    assert ax.get_yscale() == "log"
    first = ax.lines[0].get_ydata()
    assert first[0] > 0 and first[0] < 1e-8 and first[1] == 3e-8  # the exact zero drawn below
    assert [line.get_ydata()[0] for line in ax.lines[2:]] == [1e-6, 6e-8]  # tolerance, scale
    assert ax.get_ylabel() == "max |w_accum - w_large|"
    assert [t.get_text() for t in ax.texts] == ["0 (identical)"]  # the floor says what it stands for
    assert "float32 spacing of the weights 6.0e-08" in [t.get_text() for t in ax.get_legend().get_texts()]
    loss = plot_rounding({"N=5 vs N=1": [0.0, 2e-7]}, ylabel="|loss difference|", title="losses",
                         scale=1.2e-7, scale_label="float32 spacing of the losses")
    assert loss.axes[0].get_ylabel() == "|loss difference|" and loss.axes[0].get_title() == "losses"
    assert "float32 spacing of the losses 1.2e-07" in [t.get_text() for t in loss.axes[0].get_legend().get_texts()]
    no_zeros = plot_rounding({"fused": [1e-8, 2e-8]})
    assert len(no_zeros.axes[0].texts) == 0


def test_plot_rounding_draws_one_tolerance_per_curve_in_its_colour():
    fig = plot_rounding({"SGD": [1e-8, 2e-8], "Adam": [1e-7, 3e-7]},
                        tolerance={"SGD": 1e-6, "Adam": 1e-5}, scale=3e-8)
    ax, = fig.axes
    sgd, adam, sgd_tol, adam_tol, spacing = ax.lines
    assert [sgd_tol.get_ydata()[0], adam_tol.get_ydata()[0], spacing.get_ydata()[0]] == [1e-6, 1e-5, 3e-8]
    assert sgd_tol.get_color() is not adam_tol.get_color()
    assert np.allclose(matplotlib.colors.to_rgba(sgd_tol.get_color()), matplotlib.colors.to_rgba(sgd.get_color()))
    assert np.allclose(matplotlib.colors.to_rgba(adam_tol.get_color()), matplotlib.colors.to_rgba(adam.get_color()))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "tolerance 1e-06 (SGD)" in labels and "tolerance 1e-05 (Adam)" in labels


def test_plot_rounding_labels_a_decade_under_every_curve():
    fig = plot_rounding({"SGD": [1.5e-8, 4.5e-8], "Adam": [1.4e-7, 3.3e-7]}, tolerance=1e-6, scale=3.5e-8)
    ax, = fig.axes
    bottom, top = ax.get_ylim()
    assert bottom <= 1e-8 < 1.5e-8 and top >= 1e-6  # 1e-8, the decade under SGD's curve, is on the axis
    fig.canvas.draw()
    labelled = [t.get_position()[1] for t in ax.get_yticklabels() if t.get_text() and bottom <= t.get_position()[1] <= top]
    assert min(labelled) <= 1.5e-8  # a labelled tick at or under the lowest point


def test_plot_rounding_refuses_empty_or_negative_curves():
    with pytest.raises(ValueError, match="at least one"):
        plot_rounding({})
    with pytest.raises(ValueError, match="'bad'"):
        plot_rounding({"bad": [1e-8, -1.0]})
    with pytest.raises(ValueError, match="'Adam'"):
        plot_rounding({"SGD": [1e-8]}, tolerance={"Adam": 1e-5})
    with pytest.raises(ValueError, match="> 0"):
        plot_rounding({"SGD": [1e-8]}, tolerance=0.0)


def test_draw_replicas_draws_every_micro_batch_of_every_replica_and_one_all_reduce():
    fig = draw_replicas([16, 15], accum_steps=3)
    ax, = fig.axes
    texts = [b for b in ax.patches if isinstance(b, FancyBboxPatch)]
    # batch + all-reduce + per replica (3 micro-batches + apply)
    assert len(texts) == 2 + 2 * (3 + 1)
    labels = [t.get_text() for t in ax.texts]
    assert sum("all-reduce" in t for t in labels) == 1
    assert "6 ex.\n× 6/31" in labels and "5 ex.\n× 5/31" in labels
    assert "1 all-reduce per update" in ax.get_title()


def test_draw_replicas_refuses_bad_input():
    with pytest.raises(ValueError, match="shards"):
        draw_replicas([], 2)
    with pytest.raises(ValueError, match="accum_steps"):
        draw_replicas([4, 4], 0)


def test_plot_example_weights_gives_each_example_1_over_k_n_i_against_1_over_B():
    fig = plot_example_weights([32, 32, 32, 4])
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, = fig.axes
    heights = [p.get_height() for p in ax.patches]
    assert heights[:4] == pytest.approx([1 / 128, 1 / 128, 1 / 128, 1 / 16])  # plain: 1/(k n_i)
    assert heights[4:] == pytest.approx([1 / 100] * 4)  # weighted: 1/B, the large batch's
    assert [t.get_text() for t in ax.texts] == ["x0.781", "x0.781", "x0.781", "x6.25"]
    with pytest.raises(ValueError):
        plot_example_weights([])
    with pytest.raises(ValueError):
        plot_example_weights([3, 0])


def test_plot_split_miss_panels_draws_the_miss_on_a_log_axis_above_the_unequalness_bars():
    from gradlab.studies.figures.lesson_plots import plot_split_miss_panels

    fig = plot_split_miss_panels([6, 7, 8, 9], [1e-8, 0.02, 0.0, 0.03], [0.0, 0.07, 0.0, 0.06], 2,
                                 fixed=[1e-7, 0.0, 1e-7, 2e-7])
    assert isinstance(fig, matplotlib.figure.Figure) and not plt.fignum_exists(fig.number)
    ax, bars = fig.axes
    assert ax.get_shared_x_axes().joined(ax, bars)  # one B axis for both panels
    keras, divides, fixed = ax.lines
    assert ax.get_yscale() == "log" and ax.get_ylim() == (1e-9, 10.0)
    assert list(keras.get_ydata()) == [1e-8, 0.02, 1e-9, 0.03] and list(fixed.get_ydata()) == [1e-7, 1e-9, 1e-7, 2e-7]
    assert list(divides.get_xdata()) == [6, 8] and divides.get_zorder() > fixed.get_zorder()
    assert [p.get_height() for p in bars.patches] == [0.0, 0.07, 0.0, 0.06]
    assert [t.get_text() for t in bars.get_legend().get_texts()] == ["unequalness Σ|1/N − n_i/B|"]
    assert "N = 2" in bars.get_xlabel() and "sum / N" in ax.get_title()
    with pytest.raises(ValueError, match="one miss"):
        plot_split_miss_panels([6, 7], [0.1], [0.0, 0.1], 2)
