import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from gradlab.studies.plots import plot_gradient_noise


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
    means = [line for line in right.lines if line.get_label() == "mean of the draws"][0]
    assert np.allclose(means.get_ydata(), [np.linalg.norm(grads[k] - full, axis=1).mean() for k in (8, 32, 128)])


def test_plot_gradient_noise_puts_both_legends_outside_their_axes():
    full, grads = _draws()
    fig = plot_gradient_noise(full, grads, trace_cov=20.0, population=256)
    canvas = FigureCanvasAgg(fig)  # the figure comes closed in pyplot, without a renderer
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        legend_box = ax.get_legend().get_window_extent(renderer)
        assert legend_box.x0 >= ax.get_window_extent(renderer).x1  # to the right of the data


def test_plot_gradient_noise_without_the_prediction_draws_one_over_sqrt_b_through_the_first_mean():
    full, grads = _draws()
    fig = plot_gradient_noise(full, grads)
    _, right = fig.axes
    ref, = [line for line in right.lines if line.get_linestyle() == "--"]
    first = np.linalg.norm(grads[8] - full, axis=1).mean()
    assert np.allclose(ref.get_ydata(), first * np.sqrt(8 / np.array([8.0, 32.0, 128.0])))


def test_plot_gradient_noise_refuses_bad_arguments():
    full, grads = _draws()
    with pytest.raises(ValueError, match="at least one"):
        plot_gradient_noise(full, {})
    with pytest.raises(ValueError, match="together"):
        plot_gradient_noise(full, grads, trace_cov=20.0)
    with pytest.raises(ValueError, match="population"):
        plot_gradient_noise(full, grads, trace_cov=20.0, population=100)
