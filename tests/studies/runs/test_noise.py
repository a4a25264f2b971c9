"""Gradient-noise estimates, checked on a linear model whose per-example gradients are known.

    pred_i = w . x_i,   loss_i = (pred_i - y_i)^2 / 2,   g_i = (w . x_i - y_i) x_i
"""
import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies.runs import noise


def linear_model(w):
    w = np.asarray(w, dtype=np.float32).reshape(-1, 1)
    model = keras.Sequential([keras.Input((w.shape[0],)),
                              keras.layers.Dense(1, use_bias=False,
                                                 kernel_initializer=keras.initializers.Constant(w))])
    return model


def half_squared_error(y, pred):
    return 0.5 * tf.reduce_mean(tf.square(pred[:, 0] - y))


def linear_problem(n=64, dim=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=n)).astype(np.float32)
    w = np.array([0.3, 0.1, -0.4], dtype=np.float32)
    g = (x @ w - y)[:, None] * x  # per-example gradients, by hand
    return linear_model(w), x, y, g.astype(np.float64)


def test_hand_computed_one_dimensional_case():
    # w = 1, y = 0: g_i = x_i^2 = 1, 4, 9, 16.  G = 7.5, |G|^2 = 56.25,
    # tr(S) = (6.5^2 + 3.5^2 + 1.5^2 + 8.5^2) / 4 = 129 / 4 = 32.25, B_simple = 32.25 / 56.25.
    model = linear_model([1.0])
    x = np.array([[1.0], [2.0], [3.0], [4.0]], dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    (grads,) = noise.per_example_grads(model, half_squared_error, x, y)
    np.testing.assert_allclose(np.ravel(grads), [1.0, 4.0, 9.0, 16.0], rtol=1e-6)
    for chunk in (1, 3, 4):  # chunks of unequal size are merged by Chan's rule
        stats = noise.gradient_stats(model, half_squared_error, x, y, chunk=chunk)
        assert stats.n == 4
        np.testing.assert_allclose(stats.grad, [7.5], rtol=1e-6)
        np.testing.assert_allclose(stats.grad_sq_norm, 56.25, rtol=1e-6)
        np.testing.assert_allclose(stats.trace_cov, 32.25, rtol=1e-6)
        np.testing.assert_allclose(stats.noise_scale, 32.25 / 56.25, rtol=1e-6)


def test_gradient_stats_match_per_example_gradients_by_hand():
    model, x, y, g = linear_problem()
    G = g.mean(axis=0)
    stats = noise.gradient_stats(model, half_squared_error, x, y, chunk=10)
    np.testing.assert_allclose(stats.grad, G, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats.trace_cov, np.mean(np.sum((g - G) ** 2, axis=1)), rtol=1e-5)
    np.testing.assert_allclose(stats.noise_scale, stats.trace_cov / (G @ G), rtol=1e-5)


def test_sample_gradients_are_the_means_of_the_drawn_examples():
    model, x, y, g = linear_problem()
    G = g.mean(axis=0)
    draws = noise.sample_gradients(model, half_squared_error, x, y, accum_steps=3, micro_batch=2,
                                   draws=5, full_grad=G, seed=7)
    rng = np.random.default_rng(7)  # the same draws, redone by hand
    for d in range(5):
        idx = rng.integers(0, len(x), size=6)
        gb = g[idx].mean(axis=0)
        np.testing.assert_allclose(draws["sq_dev"][d], np.sum((gb - G) ** 2), rtol=1e-4)
        np.testing.assert_allclose(draws["sq_norm"][d], gb @ gb, rtol=1e-4)
        np.testing.assert_allclose(draws["cosine"][d], gb @ G / np.sqrt((gb @ gb) * (G @ G)),
                                   rtol=1e-4)
        loss = 0.5 * np.mean((x[idx] @ model.get_weights()[0][:, 0] - y[idx]) ** 2)
        np.testing.assert_allclose(draws["loss"][d], loss, rtol=1e-4)


def test_accumulated_gradient_variance_falls_as_one_over_n_times_b():
    model, x, y, g = linear_problem()
    G = g.mean(axis=0)
    trace = np.mean(np.sum((g - G) ** 2, axis=1))
    sizes, variances = [], []
    for n in (1, 2, 4, 8):
        d = noise.sample_gradients(model, half_squared_error, x, y, n, 2, 400, G, seed=n)
        sizes.append(2 * n)
        variances.append(d["sq_dev"].mean())
        # E|g_B - G|^2 = tr(S)/B; 400 draws leave about 10% of sampling error
        np.testing.assert_allclose(variances[-1], trace / (2 * n), rtol=0.25)
    slope, _ = noise.loglog_slope(sizes, variances)
    assert -1.15 < slope < -0.85


def test_two_batch_estimators_invert_the_expected_norms():
    # E|g_B|^2 = |G|^2 + tr(S)/B with |G|^2 = 2, tr(S) = 10: 12 at B=1, 3 at B=10.
    grad_sq, trace, scale = noise.two_batch_noise_scale([11.0, 13.0], 3.0, 1, 10)
    assert (grad_sq, trace, scale) == pytest.approx((2.0, 10.0, 5.0))
    with pytest.raises(ValueError, match="b_small must be smaller than b_big, got 10 and 10"):
        noise.two_batch_noise_scale(1.0, 1.0, 10, 10)


def test_loss_noise_of_a_straight_line_is_zero_and_of_noise_its_variance():
    t = np.arange(4000, dtype=np.float64)
    line = 2.0 - 1e-4 * t
    assert noise.loss_noise(line).var == pytest.approx(0.0, abs=1e-20)
    rng = np.random.default_rng(0)
    result = noise.loss_noise(line + rng.normal(scale=0.1, size=t.size), window=51)
    assert result.var == pytest.approx(0.01, rel=0.06)
    assert result.std == pytest.approx(np.sqrt(result.var))
    assert result.window == 51 and result.count == 3000 - 50
    short = noise.loss_noise([1.0, 2.0])  # no full window of 3
    assert np.isnan(short.var) and short.count == 0


def test_loglog_slope_and_bad_inputs():
    x = np.array([1.0, 10.0, 100.0])
    slope, c = noise.loglog_slope(x, 3.0 / x)
    assert slope == pytest.approx(-1.0) and c == pytest.approx(3.0)
    with pytest.raises(ValueError, match="positive values"):
        noise.loglog_slope([1, 2], [1, 0])
    with pytest.raises(ValueError, match=r"shapes \(2,\) and \(3,\)"):
        noise.loglog_slope([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="1-D"):
        noise.loss_noise(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="draws must be an integer >= 1, got 0"):
        model, x, y, g = linear_problem()
        noise.sample_gradients(model, half_squared_error, x, y, 1, 1, 0, g.mean(0))
