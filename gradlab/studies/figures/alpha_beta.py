"""Measured all-reduce times against message size, with the alpha-beta line fitted to them.

A ring all-reduce of M bytes over R replicas takes (Thakur et al., 2005; beta as bytes per second)

    t(M) = 2 (R - 1) alpha + 2 (R - 1) / R * M / beta ,

a straight line t = a + b M, so a line fitted to measured times gives

    alpha = a / (2 (R - 1)),        beta = 2 (R - 1) / (R b) .

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations


from ..distributed import comm_cost


def alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas):
    """alpha (µs) and beta (GiB/s) of the line `t = intercept_ms + slope_ms_per_byte * M` (the module's
    rule; `comm_cost.alpha_beta_of_line`, here refusing a line that cannot be a ring's).

    Args:
        intercept_ms: a, the line's time at M = 0 bytes, in ms.
        slope_ms_per_byte: b, ms per byte (> 0).
        replicas: R (>= 2).
    Returns:
        (alpha_us, beta_gib_per_s).
    """
    if replicas < 2 or slope_ms_per_byte <= 0:
        raise ValueError(f"need replicas >= 2 and a slope > 0, got {replicas!r} and {slope_ms_per_byte!r}")
    return comm_cost.alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas)


