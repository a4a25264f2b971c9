"""Micro-batches with their weights, the founding texts' formulation of the large batch.

    mean over B examples = sum_i (n_i / B) * (mean over micro-batch i),   B = n_1 + ... + n_k

With equal sizes every weight is 1/k, the familiar "mean of the means"; with unequal sizes
the plain mean of means over-weights the small micro-batch. The engine does not weigh
means (it sums each micro-batch's loss S_i and divides once by D = D_1 + ... + D_k); the
classic graphs, the pitfalls and the lessons do.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import numpy as np

from ..core.microbatch import batch_size, slices, split_sizes


def weights(sizes):
    """`w_i = n_i / (n_1 + ... + n_k)`: the weight of micro-batch i's mean loss or gradient."""
    sizes = np.asarray(sizes, dtype=np.float64)
    return sizes / sizes.sum()


def micro_batches(x, y, accum_steps):
    """Slice `(x, y)` into `accum_steps` micro-batches with their weights.

    Args:
        x, y: arrays (or tensors) with the same first dimension.
        accum_steps: number of micro-batches.
    Returns:
        list of `(x_i, y_i, w_i)` with `w_i = n_i / B`.
    """
    sizes = split_sizes(batch_size(x, y), accum_steps)
    return [(x_i, y_i, w) for (x_i, y_i), w in zip(slices((x, y), sizes), weights(sizes))]
