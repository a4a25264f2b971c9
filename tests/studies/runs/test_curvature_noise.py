"""B_noise = tr(H S) / (G^T H G) against a least-squares model whose H, S and G numpy writes down."""
import numpy as np
import pytest

import keras

from gradlab.studies.runs.curvature_noise import curvature_noise_scale


def least_squares(n=48, features=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=n)).astype(np.float32)[:, None]
    model = keras.Sequential([keras.Input((features,)), keras.layers.Dense(1)])
    model.layers[0].set_weights([np.array([[0.3], [0.1], [-0.4]], np.float32), np.array([0.2], np.float32)])
    return model, x, y


def by_hand(model, x, y):
    # loss_i = (w.x_i + c - y_i)^2: g_i = 2 r_i (x_i, 1), H = (2/n) sum (x_i, 1)(x_i, 1)^T, exactly
    w, c = (a.astype(np.float64) for a in model.layers[0].get_weights())
    xt = np.hstack([x, np.ones((len(x), 1))]).astype(np.float64)
    r = xt @ np.append(w[:, 0], c) - y[:, 0]
    g_i = 2 * r[:, None] * xt
    G = g_i.mean(0)
    d = g_i - G
    S = d.T @ d / len(x)
    H = 2 * xt.T @ xt / len(x)
    return np.trace(H @ S) / (G @ H @ G), np.trace(H @ S), G @ H @ G


def test_b_noise_matches_the_hand_computed_value_within_its_standard_error():
    model, x, y = least_squares()
    exact, trace, ghg = by_hand(model, x, y)
    est = curvature_noise_scale(model, keras.losses.MeanSquaredError(), x, y, probes=400, chunk=20)
    assert est.ghg == pytest.approx(ghg, rel=1e-5)  # G^T H G has no sampling: float32 rounding only
    assert abs(est.noise_scale - exact) < 4 * est.stderr < 0.25 * exact, (est, exact)
    assert est.trace_hs / est.ghg == pytest.approx(est.noise_scale) and est.probes == 400


def test_chunks_and_a_regulariser_do_not_change_it():
    model, x, y = least_squares()
    one = curvature_noise_scale(model, keras.losses.MeanSquaredError(), x, y, probes=8, chunk=48)
    many = curvature_noise_scale(model, keras.losses.MeanSquaredError(), x, y, probes=8, chunk=7)
    assert many.noise_scale == pytest.approx(one.noise_scale, rel=1e-4)
    # an L2 penalty adds 2 * lam to H and 2 * lam * w to G: both sides of the ratio, by hand
    lam = 0.1
    model.layers[0].kernel_regularizer = keras.regularizers.L2(lam)
    reg = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_regularizer=keras.regularizers.L2(lam))])
    reg.set_weights(model.get_weights())
    est = curvature_noise_scale(reg, keras.losses.MeanSquaredError(), x, y, probes=400, chunk=20)
    w, c = (a.astype(np.float64) for a in reg.get_weights())
    xt = np.hstack([x, np.ones((len(x), 1))]).astype(np.float64)
    r = xt @ np.append(w[:, 0], c) - y[:, 0]
    d = 2 * r[:, None] * xt
    G = d.mean(0) + 2 * lam * np.append(w[:, 0], 0.0)
    d = d - d.mean(0)  # the penalty is the same for every example: no noise
    H = 2 * xt.T @ xt / len(x) + 2 * lam * np.diag([1.0, 1.0, 1.0, 0.0])
    exact = np.trace(H @ (d.T @ d / len(x))) / (G @ H @ G)
    assert est.ghg == pytest.approx(G @ H @ G, rel=1e-5)
    assert abs(est.noise_scale - exact) < 4 * est.stderr, (est, exact)


def test_bad_arguments_are_named_before_any_work():
    model, x, y = least_squares()
    with pytest.raises(ValueError, match="probes must be an integer >= 2, got 1"):
        curvature_noise_scale(model, keras.losses.MeanSquaredError(), x, y, probes=1)
    with pytest.raises(ValueError, match="reduction='sum'"):
        curvature_noise_scale(model, keras.losses.MeanSquaredError(reduction="sum"), x, y)
    with pytest.raises(ValueError, match="chunk"):
        curvature_noise_scale(model, keras.losses.MeanSquaredError(), x, y, chunk=0)


def test_text_states_b_noise_its_error_and_on_request_its_two_factors():
    from gradlab.studies.runs.curvature_noise import CurvatureNoise
    c = CurvatureNoise(126.73 / 1.527, 6.6, 126.73, 1.527, 32)  # B_noise 82.99...
    assert c.text() == "83 ± 7"
    assert c.text(breakdown=True) == "83 ± 7 = tr(H Sigma) 126.7 / g^T H g 1.53"
    model, x, y = least_squares()  # a real estimate: its text reads its own fields, rounded as above
    est = curvature_noise_scale(model, keras.losses.MeanSquaredError(), x, y, probes=8, chunk=48)
    exact, trace, ghg = by_hand(model, x, y)
    number, rest = est.text(breakdown=True).split(" = ")
    assert number == f"{round(est.noise_scale)} ± {round(est.stderr)}"
    assert rest == f"tr(H Sigma) {est.trace_hs:.1f} / g^T H g {ghg:.2f}"  # g^T H g has no sampling: the hand value
