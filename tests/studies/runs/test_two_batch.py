import numpy as np
import pytest

from gradlab.studies.runs.two_batch import two_batch_noise_scale


def test_exact_expectations_give_back_the_true_noise_scale():
    g_sq, trace = 1.34, 94.3  # E|G_b|^2 = |g|^2 + tr(Sigma)/b
    est = two_batch_noise_scale([g_sq + trace / 32], [g_sq + trace / 256], 32, 256)
    assert est.grad_sq_norm == pytest.approx(g_sq, rel=1e-12)
    assert est.trace_cov == pytest.approx(trace, rel=1e-12)
    assert est.noise_scale == pytest.approx(trace / g_sq, rel=1e-12)


def test_micro_batch_and_accumulated_norms_estimate_the_population_statistics():
    # oracle: tr(Sigma) and |g|^2 of synthetic per-example gradients, computed directly
    rng = np.random.default_rng(0)
    per_example = rng.standard_normal((5000, 20)) + 0.3
    g = per_example.mean(axis=0)
    trace = float(((per_example - g) ** 2).sum(axis=1).mean())
    b, k = 8, 4
    small, big = [], []
    for _ in range(4000):
        idx = rng.integers(0, len(per_example), size=b * k)  # with replacement: independent draws
        micro = per_example[idx].reshape(k, b, -1).mean(axis=1)  # each micro-batch's gradient
        small.extend((micro ** 2).sum(axis=1))
        big.append(float((micro.mean(axis=0) ** 2).sum()))  # the accumulated gradient
    est = two_batch_noise_scale(small, big, b, b * k)
    assert est.trace_cov == pytest.approx(trace, rel=0.05)
    assert est.grad_sq_norm == pytest.approx(float(g @ g), rel=0.05)
    assert est.noise_scale == pytest.approx(trace / float(g @ g), rel=0.1)


def test_no_signal_left_gives_an_infinite_noise_scale():
    assert two_batch_noise_scale([1.0], [0.5], 1, 2).noise_scale == float("inf")


@pytest.mark.parametrize("args, match", [
    (([1.0], [0.5], 0, 2), "small_batch.*0"),
    (([1.0], [0.5], 4, 4), "smaller.*4"),
    (([1.0], [0.5], 2, 2.5), "big_batch.*2.5"),
    (([], [0.5], 1, 2), "small_sq_norms"),
    (([1.0], [-0.5], 1, 2), "big_sq_norms.*-0.5"),
    (([float("nan")], [0.5], 1, 2), "small_sq_norms"),
])
def test_bad_input_is_refused_naming_it(args, match):
    with pytest.raises(ValueError, match=match):
        two_batch_noise_scale(*args)
