"""Host averaging: fetch each micro-batch's gradients as numpy, average them on the host.

    g = np.stack([g_1, ..., g_k]).mean(axis=0)              (equal micro-batches)
    g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k)       (in general)

The second seed recipe: a TF1 graph computes gradients, Python averages them, and a
placeholder per variable feeds the mean back to `apply_gradients`. Simple, and the
slowest: every gradient crosses the device boundary twice.

Lesson: notebooks/05-host-averaging.ipynb
"""
from __future__ import annotations

import numpy as np


def host_average(grads_list, counts=None):
    """Average lists of numpy gradients variable by variable.

    Args:
        grads_list: list over micro-batches of lists of arrays (or `None`), one per variable.
        counts: optional examples (or counted entries) per micro-batch; `None` means equal
            micro-batches; all 0 gives zero gradients.
    Returns:
        list of averaged arrays, `None` where every micro-batch had `None`.
    """
    if not grads_list:
        raise ValueError(f"host_average needs at least one micro-batch, got {grads_list!r}")
    lengths = {len(g) for g in grads_list}
    if len(lengths) != 1:
        raise ValueError(f"micro-batches have different numbers of gradients: {sorted(lengths)}")
    if counts is not None and len(counts) != len(grads_list):
        raise ValueError(f"counts must have one entry per micro-batch ({len(grads_list)}), got {counts!r}")
    if counts is not None:
        # no counted entries at all (every entry masked): a zero gradient, as Keras divides no-NaN
        total = float(np.sum(counts))
        w = np.asarray(counts, dtype=np.float64) / (total or 1.0)
    averaged = []
    for per_var in zip(*grads_list):
        if all(g is None for g in per_var):
            averaged.append(None)
            continue
        stacked = np.stack([np.asarray(g) for g in per_var])
        if counts is None:
            averaged.append(stacked.mean(axis=0))
        else:
            averaged.append(np.tensordot(w, stacked, axes=1).astype(stacked.dtype))
    return averaged
