"""Lessons' figures: 01's gradient noise against b, 03's accuracy against N, 04's accumulator,
06's learning rates."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from gradlab.studies.figures.plots import (plot_accumulation, plot_accumulation_budget, plot_accuracy,
                                   plot_gradient_noise, plot_learning_rates, plot_training_loss, coinciding)


def _draws(seed=0, dim=20, sizes=(8, 32, 128)):
    rng = np.random.default_rng(seed)
    full = np.ones(dim)
    return full, {b: full + rng.standard_normal((10, dim)) / np.sqrt(b) for b in sizes}


def test_plot_gradient_noise_draws_the_finite_population_prediction():
    full, grads = _draws()
    fig = plot_gradient_noise(full, grads, trace_cov=20.0, population=256)
    assert not plt.fignum_exists(fig.number)
    _, right = fig.axes
    predicted = [line for line in right.lines if line.get_linestyle() == "--"]
    assert len(predicted) == 1
    b = np.array([8.0, 32.0, 128.0])
    expected = np.sqrt(20.0 / b * (256 - b) / 255)  # 1.546, 0.700, 0.279
    assert np.allclose(predicted[0].get_ydata(), expected)
    rms = [line for line in right.lines if line.get_label() == "root-mean-square of the draws (large circles)"][0]
    assert np.allclose(rms.get_ydata(), [np.sqrt(np.mean(np.linalg.norm(grads[k] - full, axis=1) ** 2))
                                         for k in (8, 32, 128)])


def test_plot_gradient_noise_with_replacement_predicts_trace_over_b_without_the_factor():
    full, grads = _draws()
    _, right = plot_gradient_noise(full, grads, trace_cov=20.0, with_replacement=True).axes
    predicted, = [line for line in right.lines if line.get_linestyle() == "--"]
    assert np.allclose(predicted.get_ydata(), [1.5811, 0.7906, 0.3953], atol=1e-4)  # sqrt(20 / b) by hand
    with pytest.raises(ValueError):
        plot_gradient_noise(full, grads, trace_cov=20.0, population=256, with_replacement=True)
    with pytest.raises(ValueError):
        plot_gradient_noise(full, grads, with_replacement=True)


def test_plot_gradient_noise_with_replacement_draws_the_predicted_cosine_from_b_simple():
    full, grads = _draws()  # |g|^2 = 20, so tr(Sigma) = 20 gives B_simple = 1
    left, _ = plot_gradient_noise(full, grads, trace_cov=20.0, with_replacement=True).axes
    predicted, = [line for line in left.lines if line.get_linestyle() == "--"]
    assert np.allclose(predicted.get_xdata(), [8, 32, 128])
    assert np.allclose(predicted.get_ydata(), [0.9428, 0.9847, 0.9961], atol=1e-4)  # 1/sqrt(1 + 1/b) by hand
    assert "B_{simple}$ = 1" in predicted.get_label()
    left, _ = plot_gradient_noise(full, grads, trace_cov=20.0, population=256).axes  # without replacement: none
    assert not [line for line in left.lines if line.get_linestyle() == "--"]


def test_plot_gradient_noise_left_panel_shows_each_draws_cosine_with_g_and_their_mean():
    full = np.array([1.0, 0.0])
    grads = {8: np.array([[1.0, 1.0], [0.0, 2.0]]),  # cosines 1/sqrt(2) = 0.7071 and 0: mean 0.3536
             32: np.array([[2.0, 0.0], [3.0, -3.0]])}  # cosines 1 and 0.7071: mean 0.8536
    left, _ = plot_gradient_noise(full, grads).axes
    dots = [c.get_offsets() for c in left.collections]
    assert np.allclose(sorted(dots[0][:, 1]), [0.0, 0.7071], atol=1e-4)
    assert np.allclose(sorted(dots[1][:, 1]), [0.7071, 1.0], atol=1e-4)
    assert all(np.all(np.abs(d[:, 0] / b - 1) < 0.12) for d, b in zip(dots, (8, 32)))  # beside their own b
    mean, = [line for line in left.lines if line.get_label().startswith("mean of the draws")]
    assert np.allclose(mean.get_xdata(), [8, 32]) and np.allclose(mean.get_ydata(), [0.3536, 0.8536], atol=1e-4)
    assert left.get_xscale() == "log" and left.get_ylim()[1] == 1.05


def test_plot_gradient_noise_puts_both_legends_outside_their_axes():
    full, grads = _draws()
    fig = plot_gradient_noise(full, grads, trace_cov=20.0, population=256)
    canvas = FigureCanvasAgg(fig)  # the figure comes closed in pyplot, without a renderer
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        legend_box = ax.get_legend().get_window_extent(renderer)
        assert legend_box.x0 >= ax.get_window_extent(renderer).x1  # to the right of the data


def test_plot_gradient_noise_without_the_prediction_draws_one_over_sqrt_b_through_the_first_rms():
    full, grads = _draws()
    fig = plot_gradient_noise(full, grads)
    _, right = fig.axes
    ref, = [line for line in right.lines if line.get_linestyle() == "--"]
    first = np.sqrt(np.mean(np.linalg.norm(grads[8] - full, axis=1) ** 2))
    assert np.allclose(ref.get_ydata(), first * np.sqrt(8 / np.array([8.0, 32.0, 128.0])))


def test_plot_gradient_noise_refuses_bad_arguments():
    full, grads = _draws()
    with pytest.raises(ValueError, match="at least one"):
        plot_gradient_noise(full, {})
    with pytest.raises(ValueError, match="together"):
        plot_gradient_noise(full, grads, trace_cov=20.0)
    with pytest.raises(ValueError, match="population"):
        plot_gradient_noise(full, grads, trace_cov=20.0, population=100)


ROWS = [{"accum_steps": n, "micro_batch": 100 // n, "updates": 200, "runs": 2,
         "accuracy_mean": m, "accuracy_std": 0.01, "accuracies": [m - 0.01, m + 0.01]}
        for n, m in ((1, 0.94), (5, 0.93), (10, 0.938), (20, 0.938))]
REFERENCE = {1: (100, 1000, 0.95, 0.0017), 20: (5, 20000, 0.952, 0.003)}


def test_plot_accuracy_draws_one_dot_per_run_and_the_mean_without_std_bars():
    fig = plot_accuracy(ROWS, reference=REFERENCE)
    assert not plt.fignum_exists(fig.number)
    ax, = fig.axes
    assert ax.get_xscale() == "log"
    dots = [line for line in ax.lines if line.get_linestyle() == "None" and line.get_marker() == "."]
    assert len(dots) == 4 and np.allclose(dots[3].get_ydata(), [92.8, 94.8])
    assert np.allclose(dots[3].get_xdata(), [20 / 1.06, 20 * 1.06])  # the 2 runs side by side
    mean, = [line for line in ax.lines if line.get_label().startswith("gradlab, 200 updates")]
    assert np.allclose(mean.get_ydata(), [94.0, 93.0, 93.8, 93.8])
    assert len(ax.containers) == 1  # one set of ± bars: the published reference's, none for 2 runs
    lo, hi = ax.get_ylim()
    assert hi - lo >= 4.0


def test_plot_accuracy_legend_lies_outside_the_axes():
    fig = plot_accuracy(ROWS, reference=REFERENCE)
    fig.draw_without_rendering()  # runs the constrained layout
    ax, = fig.axes
    legend, = fig.legends
    box, axes_box = legend.get_window_extent(), ax.get_window_extent()
    assert box.y1 <= axes_box.y0  # below the axes: no error bar or run dot under it
    assert len(legend.get_texts()) == 3  # the runs, their mean, the reference


def test_plot_accuracy_without_reference_takes_its_title_label_and_height():
    fig = plot_accuracy(ROWS, title="MLP: final accuracy", ylabel="final test accuracy (%)", min_height=1.0)
    ax, = fig.axes
    assert ax.get_title() == "MLP: final accuracy" and ax.get_ylabel() == "final test accuracy (%)"
    assert len(ax.containers) == 0 and len(fig.legends[0].get_texts()) == 2  # no reference drawn
    runs = np.concatenate([100 * np.asarray(r["accuracies"]) for r in ROWS])
    lo, hi = ax.get_ylim()
    assert lo <= runs.min() and runs.max() <= hi and hi - lo < 4.0  # the data's range, not 4 points


def test_plot_learning_rates_draws_identical_strategies_as_one_line():
    rates = {"large_batch": [0.5, 0.25], "fused": [0.5, 0.25], "keras": [0.25, 0.0625]}
    ax, = plot_learning_rates(rates, accum_steps=2).axes
    assert len(ax.lines) == 2
    assert list(ax.lines[0].get_ydata()) == [0.5, 0.25]
    assert list(ax.lines[1].get_ydata()) == [0.25, 0.0625]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["large_batch, fused (2 identical)", "keras"]


def test_plot_accumulation_stacks_to_the_target_and_keeps_zero_off_the_axis():
    fig = plot_accumulation([1.0, 1.8, 2.7], target=5.5)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["0", "1", "2.8", "5.5"]  # the accumulator after 0, 1, 2, 3 micro-batches
    tops = {round(p.get_x() + p.get_width() / 2): p.get_y() + p.get_height() for p in ax.patches}
    assert abs(tops[3] - 5.5) < 1e-9
    assert ax.get_ylim()[0] < 0 and ax.get_xlim()[0] < -0.3  # "0" clear of both axes
    with pytest.raises(ValueError, match="at least one"):
        plot_accumulation([], target=0.0)


def test_plot_step_ratios_draws_one_labelled_bar_per_optimizer_and_the_line_at_n():
    from gradlab.studies.figures.plots import plot_step_ratios
    fig = plot_step_ratios({"SGD": 4.0, "Adam": 1.006}, accum_steps=4)
    assert not plt.fignum_exists(fig.number)
    ax, off = fig.axes
    assert [p.get_height() for p in ax.patches] == [4.0, 1.006]
    assert [t.get_text() for t in ax.texts] == ["4.000", "1.006"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["SGD", "Adam"]
    assert list(ax.lines[0].get_ydata()) == [4.0, 4.0]  # the dashed line at N
    # the right panel: |ratio - 1| on a log axis, 3 and 0.006, the dashed line at N - 1
    assert off.get_yscale() == "log"
    assert np.allclose([p.get_height() for p in off.patches], [3.0, 0.006])
    assert [t.get_text() for t in off.texts] == ["3.0e+00", "6.0e-03"]
    assert list(off.lines[0].get_ydata()) == [3.0, 3.0]
    with pytest.raises(ValueError, match="ratios"):
        plot_step_ratios({}, accum_steps=4)
    with pytest.raises(ValueError, match="exactly 1"):
        plot_step_ratios({"SGD": 1.0}, accum_steps=4)


def test_plot_accumulation_budget_draws_the_budget_against_n_and_marks_the_break_even():
    # P = 1,000 weights, a = 100 bytes a row. Against N at B = 8: 8 P + 8 a = 8,800 bytes at N = 1;
    # 12 P + ceil(8 / N) a = 12,400, 12,200, 12,100 at N = 2, 4, 8. The N = 1 level 8,800 (dashed),
    # the floor 12 P = 12,000 (dotted). Against B with N = 4: 4 P < a (B - ceil(B / 4)) first at B = 55
    # (55 - 14 = 41 > 40; at 54, 54 - 14 = 40).
    fig = plot_accumulation_budget({"toy": (1000, 100, 8)}, ("toy", 4, 80), Ns=(1, 2, 4, 8))
    assert not plt.fignum_exists(fig.number)
    left, right = fig.axes
    curve = left.lines[0]
    assert np.allclose(np.asarray(curve.get_ydata()) * 2**20, [8800, 12400, 12200, 12100])
    assert np.allclose(left.lines[1].get_ydata()[0] * 2**20, 8800) and left.lines[1].get_linestyle() == "--"
    assert np.allclose(left.lines[2].get_ydata()[0] * 2**20, 12000) and left.lines[2].get_linestyle() == ":"
    assert left.get_yscale() == "log"
    one, acc = right.lines[:2]
    assert np.allclose(one.get_ydata()[[0, 54]] * 2**20, [8000 + 100, 8000 + 5500])  # B = 1 and 55
    assert np.allclose(acc.get_ydata()[54] * 2**20, 12000 + 14 * 100)  # B = 55: ceil(55 / 4) = 14 rows
    assert fig.break_even == 55 and list(right.lines[2].get_xdata()) == [55, 55]
    assert "from B = 55" in right.texts[0].get_text()
    with pytest.raises(ValueError, match="crossing"):
        plot_accumulation_budget({"toy": (1000, 100, 8)}, ("other", 4, 80))


def test_plot_accumulation_budget_relative_divides_each_model_by_its_large_batch_on_a_linear_axis():
    # The toy above: 8,800 bytes at N = 1; 12,400, 12,200, 12,100 at N = 2, 4, 8, over 8,800:
    # 1.4091, 1.3864, 1.375; the N = 1 level 1; the floor 12,000 / 8,800 = 1.3636. Break-even unchanged.
    fig = plot_accumulation_budget({"toy": (1000, 100, 8)}, ("toy", 4, 80), Ns=(1, 2, 4, 8), relative=True)
    left, _ = fig.axes
    assert np.allclose(left.lines[0].get_ydata(), [1, 12400 / 8800, 12200 / 8800, 12100 / 8800])
    assert np.isclose(left.lines[1].get_ydata()[0], 1.0) and np.isclose(left.lines[2].get_ydata()[0], 12000 / 8800)
    assert left.get_yscale() == "linear" and left.get_ylim()[0] == 0 and fig.break_even == 55


def test_plot_training_loss_shades_the_named_updates_and_draws_each_mean_where_its_window_fits():
    losses = np.arange(1.0, 61.0)
    fig = plot_training_loss({"a": losses}, window=9, shade=(31, 60))
    (ax,) = fig.axes
    span = [p for p in ax.patches if p.get_label() == "updates 31-60"]
    assert len(span) == 1
    x0, x1 = span[0].get_x(), span[0].get_x() + span[0].get_width()  # a Rectangle in data x
    assert (x0, x1) == (31, 60)
    smooth = [line for line in ax.lines if line.get_label() == "a"][0]
    assert np.allclose(smooth.get_xdata(), np.arange(5, 57)) and np.allclose(smooth.get_ydata(), np.arange(5.0, 57.0))
    assert not [p for p in plot_training_loss({"a": losses}, window=9).axes[0].patches]
    assert ax.get_legend().get_title().get_text() == "lines: 9-update moving average\nfaint: per update"
    faint = [line for line in ax.lines if line.get_label().startswith("_")]
    assert faint and all(line.get_alpha() == 0.35 for line in faint)


def test_plot_training_loss_draws_per_update_losses_only_for_the_curves_named_faint():
    curves = {"N = 1": np.linspace(2.3, 0.6, 60), "sum, N = 16": np.linspace(2.3, 2.0, 60)}
    (ax,) = plot_training_loss(curves, window=9, faint=["sum, N = 16"]).axes
    faint = [line for line in ax.lines if line.get_label().startswith("_")]
    assert len(faint) == 1 and np.allclose(faint[0].get_ydata(), curves["sum, N = 16"])
    assert ax.get_legend().get_title().get_text() == "lines: 9-update moving average\nfaint: per update (sum, N = 16)"
    (bare,) = plot_training_loss(curves, window=9, faint=[]).axes
    assert not [line for line in bare.lines if line.get_label().startswith("_")]
    assert bare.get_legend().get_title().get_text() == "lines: 9-update moving average"
    with pytest.raises(ValueError, match="faint"):
        plot_training_loss(curves, faint=["N = 4"])


def test_plot_training_loss_labels_1_2_5_ticks_plainly_and_keeps_the_legend_off_the_data():
    fig = plot_training_loss({"a": np.linspace(0.3, 21.0, 60)}, window=9)
    FigureCanvasAgg(fig).draw()
    (ax,) = fig.axes
    labels = {t.get_text() for t in ax.get_yticklabels() if 0.3 <= t.get_position()[1] <= 21.0}
    assert {"0.5", "1", "2", "5", "10", "20"} <= labels, labels
    assert ax.get_legend().get_window_extent().x0 > ax.get_window_extent().x1


def test_plot_training_loss_draws_a_retraced_curve_as_dots_on_the_earlier_line():
    base = np.linspace(2.3, 0.6, 60)
    curves = {"N = 1": base, "sum, N = 4": base * 0.7, "mean, N = 16": base * (1 + 1e-5)}
    assert coinciding(curves) == {"mean, N = 16": "N = 1"}
    assert coinciding({"a": base, "b": base[:30]}) == {} and coinciding({"a": base, "b": base * 1.01}) == {}
    (ax,) = plot_training_loss(curves, window=9).axes
    lines = {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
    assert set(lines) == {"N = 1", "sum, N = 4", "mean, N = 16, same as N = 1"}
    dots, under = lines["mean, N = 16, same as N = 1"], lines["N = 1"]
    assert dots.get_linestyle() == "None" and dots.get_marker() == "o" and under.get_linestyle() == "-"
    assert dots.get_zorder() > under.get_zorder()
    assert np.allclose(dots.get_ydata(), under.get_ydata(), rtol=1e-4)


def test_plot_accumulation_of_summed_loss_gradients_draws_B_g_B_and_names_the_division():
    fig = plot_accumulation([10.0, 18.0, 27.0], target=5.5, rows=10)  # 04's toy: dS_i, B = 10
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["0", "10", "28", "55"]
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and abs(dashed[0].get_ydata()[0] - 55.0) < 1e-9
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "$B\\,g_B$ = 55\n(the apply divides by $B$ = 10: $g_B$ = 5.5)"
    assert labels[1] == "micro-batch 1: $\\nabla S_1$ = 10"
    assert ax.get_ylim()[1] > 55
