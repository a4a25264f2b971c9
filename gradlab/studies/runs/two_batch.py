"""The noise scale from gradient norms at two batch sizes, as accumulation produces them.

    E|G_b|^2 = |g|^2 + tr(Sigma) / b                       (b examples drawn independently)
    |g|^2    ~ (B |G_B|^2 - b |G_b|^2) / (B - b)
    tr(Sigma) ~ (|G_b|^2 - |G_B|^2) / (1/b - 1/B)
    B_simple ~ tr(Sigma) / |g|^2

McCandlish et al. (2018), "An Empirical Model of Large-Batch Training", arXiv:1812.06162,
Appendix A.1. Each of the two estimates is unbiased; their ratio is not, so average
|G_b|^2 and |G_B|^2 over many steps first and divide once. Accumulation hands over both
gradients at no extra cost: each micro-batch's gradient G_b (b = its size) and the
accumulated one G_B (B = k * b).

Lesson: notebooks/18-batch-size-and-noise.ipynb
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np


class TwoBatchEstimate(NamedTuple):
    grad_sq_norm: float  # |g|^2
    trace_cov: float  # tr(Sigma)
    noise_scale: float  # B_simple = tr(Sigma) / |g|^2


def _mean_of(name, values):
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be one or more finite squared norms >= 0, got {values!r}")
    return float(arr.mean())


def two_batch_noise_scale(small_sq_norms, big_sq_norms, small_batch, big_batch):
    """|g|^2, tr(Sigma) and B_simple from mean squared gradient norms at two batch sizes.

    Args:
        small_sq_norms: |G_b|^2 of gradients of batches of `small_batch` (e.g. every
            micro-batch's gradient), one value or many; their mean is used.
        big_sq_norms: |G_B|^2 of gradients of batches of `big_batch` (e.g. the accumulated
            gradients), one value or many; their mean is used.
        small_batch, big_batch: the two batch sizes, integers with 1 <= small < big.
    Returns:
        TwoBatchEstimate(grad_sq_norm, trace_cov, noise_scale). With few draws |g|^2 can
        come out <= 0; then noise_scale is inf.

    Lesson: notebooks/18-batch-size-and-noise.ipynb
    """
    for name, b in (("small_batch", small_batch), ("big_batch", big_batch)):
        if isinstance(b, bool) or not isinstance(b, numbers.Integral) or b < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {b!r}")
    if not small_batch < big_batch:
        raise ValueError(f"small_batch must be smaller than big_batch, got {small_batch!r} and {big_batch!r}")
    small = _mean_of("small_sq_norms", small_sq_norms)
    big = _mean_of("big_sq_norms", big_sq_norms)
    b, B = float(small_batch), float(big_batch)
    grad_sq = (B * big - b * small) / (B - b)
    trace = (small - big) / (1.0 / b - 1.0 / B)
    scale = trace / grad_sq if grad_sq > 0 else float("inf")
    return TwoBatchEstimate(grad_sq, trace, scale)
