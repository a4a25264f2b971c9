import math

import numpy as np
import pytest

from gradlab.studies import stats


def test_welch_t_against_closed_forms():
    a, b = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0, 10.0]
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 5
    t, dof, p = stats.welch_t(a, b)
    assert t == pytest.approx((2.5 - 6.0) / math.sqrt(va + vb))
    assert dof == pytest.approx((va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 4))
    # p = 1 - 2 * integral_0^|t| of the Student-t density, integrated numerically
    s = np.linspace(0.0, abs(t), 100_001)
    pdf = math.exp(math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2)) / math.sqrt(dof * math.pi) \
        * (1 + s ** 2 / dof) ** (-(dof + 1) / 2)
    assert p == pytest.approx(1 - 2 * np.trapezoid(pdf, s), abs=1e-8)
    assert p == pytest.approx(0.0691, abs=1e-4)
    assert stats.welch_t(b, a)[2] == pytest.approx(p)
    # Student t with 2 degrees of freedom: P(|T| > t) = 1 - t / sqrt(t^2 + 2)
    for t in (0.3, 1.0, 2.5, 9.0):
        assert stats._betainc(1.0, 0.5, 2 / (2 + t * t)) == pytest.approx(1 - t / math.sqrt(t * t + 2))
    assert stats._betainc(0.5, 0.5, 0.5) == pytest.approx(0.5)                       # Cauchy, t = 1
    assert stats._betainc(5.0, 0.5, 10 / (10 + 2.228139 ** 2)) == pytest.approx(0.05, abs=1e-6)
    assert stats.welch_t([1, 1], [1, 1])[2] == 1.0 and stats.welch_t([1, 1], [2, 2])[2] == 0.0
    with pytest.raises(ValueError, match="at least 2 values per group, got 1 and 2"):
        stats.welch_t([1], [1, 2])
    assert stats.mean_std([0.9, 0.95, 1.0]) == pytest.approx((0.95, 0.05))


def test_pooled_t_and_anova_against_closed_forms():
    a, b, c = [1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [5.0, 6.0, 7.0]
    # means 2, 3, 6; within-group s^2 = (2 + 2 + 2) / (9 - 3) = 1; between = 3 * 26/3 / 2 = 13
    f, d1, d2, p = stats.anova([a, b, c])
    assert (f, d1, d2) == pytest.approx((13.0, 2, 6))
    assert p == pytest.approx((1 + 2 * 13.0 / 6) ** -3)  # F(2, d2) tail: (1 + 2f/d2)^(-d2/2)
    first, (t_b, dof_b, _), (t_c, _, _) = stats.pooled_t([a, b, c])
    assert first is None and dof_b == 6
    assert (t_b, t_c) == pytest.approx((1 / math.sqrt(2 / 3), 4 / math.sqrt(2 / 3)))
    # Two groups: the pooled t is Student's, and the ANOVA is its square.
    x, y = [0.91, 0.95, 0.93, 0.90], [0.96, 0.94, 0.97]
    sp2 = (3 * np.var(x, ddof=1) + 2 * np.var(y, ddof=1)) / 5
    (_, (t, dof, p2)) = stats.pooled_t([x, y])
    assert t == pytest.approx((np.mean(y) - np.mean(x)) / math.sqrt(sp2 * (1 / 4 + 1 / 3)))
    assert stats.anova([x, y])[0] == pytest.approx(t * t) and stats.anova([x, y])[3] == pytest.approx(p2)
    assert stats.pooled_t([[1.0], [2.0]]) == [None, None] and stats.anova([[1.0], [2.0]]) is None
    assert stats.anova([[1.0, 1.0], [1.0, 1.0]])[3] == 1.0


# -- command line ---------------------------------------------------------------------------------


def test_moving_average_is_centred_and_shrinks_at_the_ends():
    v = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    # h = min(1, t, 4 - t): the ends average themselves alone, the middle three neighbours
    np.testing.assert_allclose(stats.moving_average(v, 3), [1.0, 7 / 3, 14 / 3, 28 / 3, 16.0])
    np.testing.assert_allclose(stats.moving_average(v, 4), stats.moving_average(v, 5))
    assert stats.moving_average(v, 5)[2] == pytest.approx(31 / 5)
    line = 2.0 - 1e-4 * np.arange(4000)
    np.testing.assert_allclose(stats.moving_average(line, 51), line, atol=1e-12)
    np.testing.assert_allclose(stats.moving_average(v, 1), v)
    with pytest.raises(ValueError, match="window must be a positive integer, got 0"):
        stats.moving_average(v, 0)
    with pytest.raises(TypeError, match="window must be a positive integer, got 2.5"):
        stats.moving_average(v, 2.5)


def test_t_quantile_matches_the_student_t_table():
    from gradlab.studies.stats import t_cdf, t_quantile
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 9: 2.262, 29: 2.045}  # two-sided 95%: the 97.5th percentile
    for dof, value in table.items():
        assert round(t_quantile(0.975, dof), 3) == value, dof
    assert abs(t_quantile(0.975, 1) - 12.7062047) < 1e-6  # dof 1 is Cauchy: tan(pi (p - 1/2))
    assert abs(t_quantile(0.995, 2) - 9.9248432) < 1e-6
    assert round(t_quantile(0.975, 10_000), 2) == 1.96  # the normal's as dof grows
    assert t_quantile(0.025, 2) == -t_quantile(0.975, 2) and abs(t_quantile(0.5, 3)) < 1e-12
    assert abs(t_cdf(t_quantile(0.9, 5), 5) - 0.9) < 1e-12 and abs(t_cdf(-1.0, 1) - 0.25) < 1e-12
    with pytest.raises(ValueError):
        t_quantile(1.0, 2)
    with pytest.raises(ValueError):
        t_cdf(1.0, 0)
