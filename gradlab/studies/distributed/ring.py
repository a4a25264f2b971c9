"""A ring all-reduce written from scratch, in numpy, over R simulated devices.

Each device r holds an array g_r of n values (nbytes = n * itemsize). Every array is cut the
same way into R chunks c = 0 .. R-1 (`np.array_split`: sizes differ by at most one value),
and device r sends only to device r+1 (mod R):

    reduce-scatter, steps s = 0 .. R-2:  device r sends chunk (r - s) mod R to r+1,
                                         which adds it to its own copy of that chunk
        after R-1 steps device r holds the full sum  sum_q g_q  of chunk (r + 1) mod R
    all-gather,     steps s = 0 .. R-2:  device r sends chunk (r + 1 - s) mod R to r+1,
                                         which overwrites its copy with it
        after R-1 more steps every device holds  sum_q g_q  whole

Each step every device sends one chunk, about nbytes / R, so over the 2 (R - 1) steps

    sent per device = 2 (R - 1) / R * nbytes     (exactly, when R divides n)

whatever R is: the bandwidth term of `comm_cost.ring_time` does not grow with the devices.
With uneven chunks device r sends every chunk but (r+1) in reduce-scatter and every chunk
but (r+2) in all-gather: 2 nbytes - |c_(r+1)| - |c_(r+2)| bytes, and all devices together
send exactly 2 (R - 1) nbytes. R = 1 sends nothing.

The sums are added in ring order (chunk c is summed starting at device c+1), so they can
differ from another all-reduce's in the last bits of float rounding, never more.

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class RingResult(NamedTuple):
    """What `ring_all_reduce` returns.

    results: one array per device, each the elementwise sum of all inputs, in their shape.
    sent: int array (2 (R - 1), R): bytes device r sent at step s (reduce-scatter steps first).
    chunks: the R chunk sizes (values) the flattened arrays were cut into.
    history: when asked for (`record=True`), the devices' chunks after each step: a list of
        2 (R - 1) + 1 entries (the start first), each a list of R lists of R chunk arrays.
    """
    results: list
    sent: np.ndarray
    chunks: list
    history: list | None

    def sent_per_device(self):
        """Total bytes each device sent, over all steps."""
        return self.sent.sum(axis=0)


def ring_all_reduce(arrays, record=False):
    """Sum `arrays` (one per simulated device) by a ring all-reduce; every device gets the sum.

        reduce-scatter: for s in 0..R-2, every r at once: chunk[r+1][(r-s)%R] += chunk[r][(r-s)%R]
        all-gather:     for s in 0..R-2, every r at once: chunk[r+1][(r+1-s)%R] = chunk[r][(r+1-s)%R]
        bytes sent per device = 2 (R - 1) / R * nbytes    (R dividing the size)

    Args:
        arrays: a sequence of R >= 1 numpy arrays (or array-likes) of one shape and numeric dtype.
        record: keep every device's chunks after each step in `history` (for a walk-through).
    Returns:
        a `RingResult` (results, sent, chunks, history).
    """
    if isinstance(arrays, np.ndarray) or not hasattr(arrays, "__len__"):
        raise TypeError(f"arrays must be a list of arrays, one per device, got {type(arrays).__name__}")
    if len(arrays) == 0:
        raise ValueError("arrays must hold at least one array (one per device), got none")
    arrays = [np.asarray(a) for a in arrays]
    shape, dtype = arrays[0].shape, arrays[0].dtype
    for r, a in enumerate(arrays):
        if a.shape != shape or a.dtype != dtype:
            raise ValueError(f"every device's array must have device 0's shape {shape} and dtype {dtype}; "
                             f"device {r} has {a.shape} and {a.dtype}")
    if not (np.issubdtype(dtype, np.number) and not np.issubdtype(dtype, np.bool_)):
        raise TypeError(f"arrays must be numeric, got dtype {dtype}")
    R = len(arrays)
    # chunk[r][c]: device r's copy of chunk c (copies: the inputs stay as they were)
    chunk = [[c.copy() for c in np.array_split(a.reshape(-1), R)] for a in arrays]
    sizes = [len(c) for c in chunk[0]]
    sent = np.zeros((2 * (R - 1), R), dtype=np.int64)
    history = [_snapshot(chunk)] if record else None
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(R - 1):
            step = s if phase == "reduce-scatter" else R - 1 + s
            # Every device sends at once: read all messages before any is received.
            messages = []
            for r in range(R):
                c = (r - s) % R if phase == "reduce-scatter" else (r + 1 - s) % R
                messages.append((c, chunk[r][c].copy()))
                sent[step, r] = chunk[r][c].nbytes
            for r, (c, message) in enumerate(messages):
                receiver = chunk[(r + 1) % R]
                receiver[c] = receiver[c] + message if phase == "reduce-scatter" else message
            if record:
                history.append(_snapshot(chunk))
    results = [np.concatenate(device).reshape(shape) for device in chunk]
    return RingResult(results, sent, sizes, history)


def _snapshot(chunk):
    return [[c.copy() for c in device] for device in chunk]
