"""The course's two yardsticks, printed one way (README, "Two yardsticks").

    spacings(a, b) = max_i |a_i - b_i| / spacing(max_i |b_i|)    # rounding when <= 10: "exact"
    miss(a, b)     = ||a - b|| / ||b||                            # the miss, over every entry together
    miss(a, b, start=w0) = ||(a - w0) - (b - w0)|| / ||b - w0||   # the miss of an update read off weights
    verdict(a, b)  -> "exact: 1.0 spacings" | "exact: 0 spacings, bit for bit" | "miss 1.07%" | "miss 250 eps"
                    | "not exact: 25 spacings, 1.1 eps (rerun in float64)"   # miss < 100 eps

`spacing(x) = np.spacing(np.float32(x))`, the gap from x to the next float32 (lesson 01), and
`eps = 2^-23`, float32's spacing at 1. A miss prints in % down to 0.01%, in `eps` below that.
`a` and `b` are arrays, or lists of arrays (a model's weights, a list of gradients), taken entry
by entry; `verdict` is the one sentence every lesson prints, so the unit never drifts.

Lesson: notebooks/01-why-average.ipynb (derives both), every lesson that prints a verdict,
notebooks/22-how-this-course-measures.ipynb (why ten spacings)
"""
from __future__ import annotations

import numpy as np

EPS = 2.0 ** -23  # float32's spacing at 1
ROUNDING = 10  # spacings: a gap up to this is rounding (README, "Two yardsticks")
# A miss under this many eps is rounding-sized over a norm (lesson 22), so past ten spacings the
# verdict does not call it a miss ("miss" means a bug): float64 tells rounding from a bug.
RERUN = 100


def _entries(values, name):
    """`values` as a list of float64 arrays: one array, or a list/tuple of them (weights, grads)."""
    if isinstance(values, (list, tuple)):
        if not values:
            raise ValueError(f"{name} is an empty list; give an array or a list of arrays")
        return [np.asarray(v, np.float64) for v in values]
    if values is None or isinstance(values, (str, bytes, dict)):
        raise TypeError(f"{name} must be an array or a list of arrays, got {type(values).__name__}")
    return [np.asarray(values, np.float64)]


def _pair(a, b):
    a, b = _entries(a, "a"), _entries(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} arrays and b has {len(b)}; compare like with like")
    for i, (u, v) in enumerate(zip(a, b)):
        if u.shape != v.shape:
            raise ValueError(f"array {i}: a has shape {u.shape} and b has shape {v.shape}")
    return a, b


def largest(values):
    """The largest |entry| over every array in `values`."""
    return max(float(np.max(np.abs(v))) if v.size else 0.0 for v in _entries(values, "values"))


def spacings(a, b, at=None):
    """The largest |a - b| in float32 spacings at the largest |entry| of `at` (default `b`).

    Args:
        a, b: arrays, or lists of arrays of the same shapes.
        at: what sets the spacing: `b` by default; the weights, for an update read off them
            (lesson 03: the difference carries the weights' rounding).
    Returns:
        a float: 0.0 for bit-identical values, <= 10 for rounding.
    """
    a, b = _pair(a, b)
    top = largest(b if at is None else at)
    gap = max(float(np.max(np.abs(u - v))) if u.size else 0.0 for u, v in zip(a, b))
    return gap / float(np.spacing(np.float32(top)))


def miss(a, b, start=None):
    """Lesson 01's miss: ||a - b|| / ||b - start|| over every entry together (start None: zeros).

    Args:
        a, b: arrays, or lists of arrays: two gradients, or two sets of weights after updates.
        start: the weights both updates began from, so the miss is of the update, not the weights.
    Returns:
        a float (0.0107 is a 1.07% miss).
    """
    a, b = _pair(a, b)
    if start is not None:
        start, _ = _pair(start, b)
        a = [u - s for u, s in zip(a, start)]
        b = [v - s for v, s in zip(b, start)]
    size = np.sqrt(sum(float(np.sum(v ** 2)) for v in b))
    if size == 0.0:
        raise ValueError("b (less start) is all zeros, so a miss relative to it is undefined")
    return float(np.sqrt(sum(float(np.sum((u - v) ** 2)) for u, v in zip(a, b)))) / size


def as_miss(m):
    """A miss as the course prints it: '1.07%' down to 0.01%, '3.2 eps' below (eps = 2^-23), '0 (bit-for-bit)'."""
    m = float(m)
    if not np.isfinite(m) or m < 0:
        raise ValueError(f"a miss is a finite size >= 0, got {m}")
    if m == 0.0:
        return "0 (bit-for-bit)"  # "0.0 eps" read as a rounding-sized miss, not as none
    if m >= 1e-4:
        return f"{100 * m:.3g}%"
    return f"{m / EPS:.1f} eps"


def as_spacings(k):
    """k spacings as the course prints them: "0 spacings, bit for bit" only for k == 0, one
    significant digit under 0.05 ("0.007 spacings", never "0.0"), else one decimal ("2.5 spacings")."""
    k = float(k)
    if not np.isfinite(k) or k < 0:
        raise ValueError(f"a gap in spacings is a finite size >= 0, got {k}")
    if k == 0.0:
        return "0 spacings, bit for bit"
    if k < 0.05:
        return f"{k:.1g} spacings"
    return f"{k:.1f} spacings"


def verdict(a, b, start=None, at=None):
    """One line: 'exact: k spacings' within ten spacings, else `beyond(k, miss)`.

    The spacing is float32's at the largest |entry| of `at` (default `b`): `spacings` says where,
    so the line does not repeat it (readers took the entry's value for a second measure).

    Args:
        a, b, at: as `spacings`; start: as `miss` (weights after updates: the miss of the update,
            and, unless `at` is given, the spacing at the weights).
    Returns:
        "exact: 1.0 spacings"; "exact: 0 spacings, bit for bit" only when every entry is equal;
        under 0.05 spacings one significant digit ("exact: 0.007 spacings"), so a one-ulp gap at a
        small entry never prints as "0.0"; or what `beyond` says.
    """
    k = spacings(a, b, at=at)
    if k <= ROUNDING:
        return f"exact: {as_spacings(k)}"
    return beyond(k, miss(a, b, start=start))


def beyond(k, m):
    """Past ten spacings (k), the miss m: "miss 1.07%" (or "miss 250 eps") from RERUN eps up;
    below, "not exact: 25 spacings, 1.1 eps (rerun in float64)", rounding-sized over the norm.
    """
    if m >= RERUN * EPS:
        return f"miss {as_miss(m)}"
    return f"not exact: {k:.0f} spacings, {as_miss(m)} (rerun in float64)"
