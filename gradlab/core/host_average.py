"""Host averaging: fetch each micro-batch's gradients as numpy, average them on the host.

    g = (g_1 + ... + g_k) / k                               (equal micro-batches)
    g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k)       (in general)

The second seed recipe: a TF1 graph computes gradients, Python averages them, and a
placeholder per variable feeds the mean back to `apply_gradients`. Simple, and the
slowest: every gradient crosses the device boundary twice.

Both rules are taken as a running sum, so averaging holds two gradients of host memory
(the sum and one weighted term), not the k that `np.stack(...).mean(axis=0)` copies; the
sum of equal micro-batches is the same float32 result as that one-liner, added in order.

Lesson: notebooks/03-host-averaging.ipynb (the running sum's memory: 20-host-cost.ipynb)
"""
from __future__ import annotations

import numpy as np


class HostSum:
    """A running sum of gradient lists on the host: `add(grads, n)` adds n * grads (n = 1:
    the grads themselves), `mean(total)` divides once. Holds one array per variable, kept in
    at least float32 so float16 gradients do not round at every addition."""

    def __init__(self):
        self.sums = None

    def add(self, grads, n=1.0):
        grads = [None if g is None else np.asarray(g) for g in grads]
        if self.sums is None:
            self.sums, self._dtypes = [None] * len(grads), [None] * len(grads)
        elif len(grads) != len(self.sums):
            raise ValueError(f"micro-batches have different numbers of gradients: "
                             f"{sorted({len(self.sums), len(grads)})}")
        for v, g in enumerate(grads):
            if g is None:
                continue
            dtype = np.result_type(g.dtype, np.float32)
            if self.sums[v] is None:  # a copy: the sum is changed in place, the caller's array never
                self._dtypes[v] = g.dtype
                self.sums[v] = g.astype(dtype)
                if n != 1.0:
                    self.sums[v] *= dtype.type(n)
            elif n == 1.0:
                self.sums[v] += g
            else:
                term = g.astype(dtype)  # scaled in place: one temporary, not two
                term *= dtype.type(n)
                self.sums[v] += term

    def mean(self, total):
        """The sums divided by `total` in place (0: zero gradients, as Keras divides no-NaN),
        each in its gradient's dtype; `None` where every micro-batch had `None`. The sums are
        spent: dividing in place is what keeps the host at two gradients."""
        if self.sums is None:
            raise ValueError("HostSum.mean needs at least one micro-batch added")
        out = []
        for s, dtype in zip(self.sums, self._dtypes):
            if s is not None:
                if total:
                    s /= s.dtype.type(total)
                else:
                    s[...] = 0
                s = s.astype(dtype, copy=False)
            out.append(s)
        self.sums = None
        return out


def host_average(grads_list, counts=None):
    """Average lists of numpy gradients variable by variable, as a running sum.

    Args:
        grads_list: list over micro-batches of lists of arrays (or `None`), one per variable.
        counts: optional examples (or counted entries) per micro-batch; `None` means equal
            micro-batches; all 0 gives zero gradients.
    Returns:
        list of averaged arrays in the gradients' dtype, `None` where every micro-batch had `None`.
    """
    if not grads_list:
        raise ValueError(f"host_average needs at least one micro-batch, got {grads_list!r}")
    if counts is not None and len(counts) != len(grads_list):
        raise ValueError(f"counts must have one entry per micro-batch ({len(grads_list)}), got {counts!r}")
    total = len(grads_list) if counts is None else float(np.sum(counts))
    acc = HostSum()
    for i, grads in enumerate(grads_list):
        acc.add(grads, 1.0 if counts is None else float(counts[i]))
    return acc.mean(total)
