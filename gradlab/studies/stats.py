"""Is a difference real? Mean ± std over runs, and tests against run-to-run noise.

    mean_std(values)        -> (mean, sample std)
    pooled_t(groups)        -> Student's t of every group against the first, variance pooled
    anova(groups)           -> one-way F test: does any group differ?
    welch_t(a, b)           -> Welch's t-test when spreads differ
    t_quantile(p, dof)      -> Student's t quantile (4.303 at p = 0.975, dof = 2), for confidence intervals
    moving_average(v, w)    -> centred moving average (the trend that loss noise is measured around)

Plain numpy and math (the incomplete beta function by its continued fraction), so gradlab
needs no scipy.

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import math

import numpy as np


def mean_std(values):
    """`(mean, sample std)` with ddof=1 (std 0.0 for a single value)."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0


def moving_average(values, window):
    """Centred moving average: `m_t = mean(v_{t-h} ... v_{t+h})`, `h = min(window // 2, t, n-1-t)`.

    Near the ends the window shrinks symmetrically (so an even `window` averages
    `2 * (window // 2) + 1` values). Centred, not an EMA: an EMA lags a falling curve, and
    the lag would count as noise.
    """
    values = np.asarray(values, dtype=np.float64)
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)):
        raise TypeError(f"window must be a positive integer, got {window!r}")
    if window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    csum = np.concatenate([[0.0], np.cumsum(values)])
    t = np.arange(len(values))
    h = np.minimum(window // 2, np.minimum(t, len(values) - 1 - t))
    return (csum[t + h + 1] - csum[t - h]) / (2 * h + 1)


def pooled_t(groups):
    """Every group against the first, with the variance pooled over all groups (Student's t):

        s^2 = sum_g sum_i (x_gi - m_g)^2 / (n - k),   t_g = (m_g - m_1) / (s sqrt(1/n_g + 1/n_1))
        dof = n - k,   p_g = I_{dof/(dof+t^2)}(dof/2, 1/2)      (n values in k groups)

    If N changes nothing, every row of the table is the same experiment with the same spread,
    so it is pooled over all rows: n - k degrees of freedom, where one pair of rows of 2
    runs each would have 2 and a spread too unsteady to test against (Welch's test, which
    does not assume equal spreads, is `welch_t`).

    Returns:
        `[None, (t, dof, p), ...]`, one entry per group; all None if n - k < 1.
    """
    s2, dof = pooled_var(groups)
    if dof < 1:
        return [None] * len(groups)
    out = [None]
    first = np.asarray(groups[0], dtype=np.float64)
    for g in groups[1:]:
        g = np.asarray(g, dtype=np.float64)
        diff = g.mean() - first.mean()
        se2 = s2 * (1 / len(g) + 1 / len(first))
        out.append(_student(diff, se2, dof))
    return out


def anova(groups):
    """One-way analysis of variance: does any group mean differ beyond the spread within groups?

        F = [sum_g n_g (m_g - m)^2 / (k - 1)] / s^2,   p = I_{d2/(d2 + d1 F)}(d2/2, d1/2)

    with s^2 and d2 = n - k as in `pooled_t`, d1 = k - 1. For two groups, F = t^2.

    Returns:
        `(F, d1, d2, p)`, or None with fewer than 2 groups or n - k < 1.
    """
    s2, d2 = pooled_var(groups)
    d1 = len(groups) - 1
    if d1 < 1 or d2 < 1:
        return None
    means = [float(np.mean(g)) for g in groups]
    grand = float(np.mean(np.concatenate([np.asarray(g, np.float64) for g in groups])))
    between = sum(len(g) * (m - grand) ** 2 for g, m in zip(groups, means)) / d1
    if s2 == 0:
        return (0.0 if between == 0 else math.inf), d1, d2, float(between == 0)
    f = between / s2
    return f, d1, d2, _betainc(d2 / 2, d1 / 2, d2 / (d2 + d1 * f))


def pooled_var(groups):
    """`(s^2, n - k)`: the within-group variance pooled over k groups of n values."""
    groups = [np.asarray(g, dtype=np.float64) for g in groups]
    dof = sum(len(g) for g in groups) - len(groups)
    ss = sum(float(np.sum((g - g.mean()) ** 2)) for g in groups)
    return (ss / dof if dof > 0 else math.nan), dof


def _student(diff, se2, dof):
    """`(t, dof, two-sided p)` of a difference with squared standard error `se2`."""
    if se2 == 0:
        return (0.0 if diff == 0 else math.copysign(math.inf, diff)), dof, float(diff == 0)
    t = diff / math.sqrt(se2)
    return float(t), float(dof), _two_sided_p(t, dof)


def _two_sided_p(t, dof):
    """P(|T| >= |t|) for Student's t with `dof` degrees of freedom: I_{dof/(dof+t^2)}(dof/2, 1/2)."""
    return _betainc(dof / 2, 0.5, dof / (dof + t * t))


def welch_t(a, b):
    """Welch's t-test of equal means, two-sided: `(t, dof, p)`.

        t = (mean_a - mean_b) / sqrt(s_a^2/n_a + s_b^2/n_b)
        dof = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))
        p = I_{dof/(dof+t^2)}(dof/2, 1/2)       (the Student-t tail, both sides)

    Needs two values on each side. With no spread at all, p is 1 for equal means, else 0.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"Welch's t-test needs at least 2 values per group, got {len(a)} and {len(b)}")
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    if va + vb == 0:
        return _student(a.mean() - b.mean(), 0.0, math.nan)
    dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return _student(a.mean() - b.mean(), va + vb, dof)


def t_cdf(t, dof):
    """Student's t distribution's CDF with `dof` degrees of freedom: `P(T <= t)`.

        P(T <= t) = 1 - I_{dof/(dof+t^2)}(dof/2, 1/2) / 2     for t >= 0, and symmetric about 0
    """
    if dof <= 0:
        raise ValueError(f"dof must be positive, got {dof!r}")
    tail = _two_sided_p(t, dof) / 2  # P(T > |t|)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, dof):
    """The t with `P(T <= t) = p` for Student's t with `dof` degrees of freedom, by bisection on `t_cdf`.

    A paired 95% interval over n seeds is `mean ± t_quantile(0.975, n - 1) * s / sqrt(n)`; table values:
    12.706 (dof 1), 4.303 (2), 3.182 (3), 2.776 (4), 1.960 as dof grows.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p!r}")
    if p < 0.5:
        return -t_quantile(1.0 - p, dof)
    low, high = 0.0, 1.0
    while t_cdf(high, dof) < p:  # widen until the quantile is inside [low, high]
        low, high = high, 2 * high
    for _ in range(200):  # halve the bracket down to float precision
        mid = (low + high) / 2
        if mid in (low, high):
            break
        low, high = (mid, high) if t_cdf(mid, dof) < p else (low, mid)
    return (low + high) / 2


def _betainc(a, b, x):
    """Regularised incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast only below this point
        return 1.0 - _betainc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    tiny = 1e-300
    fix = lambda v: v if abs(v) > tiny else tiny  # noqa: E731
    c, d = 1.0, 1.0 / fix(1.0 - (a + b) * x / (a + 1))
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 / fix(1.0 + num * d)
            c = fix(1.0 + num / c)
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return front * h / a
