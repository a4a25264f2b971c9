"""Two runs side by side on the same batches: where their weights part, and why.

    gap[t]   = max |w_a - w_b| over all weights, before update t + 1
    flips[t] = first-layer ReLU inputs of update t + 1's batch that are > 0 in one run, not the other

A ReLU is the one kink of an MLP: while no input crosses 0 between the two runs, their
updates differ only by rounding; a crossing sends one row's gradient through a unit in one
run and not in the other, an update-sized difference at once.

Lesson: notebooks/18-the-lab.ipynb
"""
from __future__ import annotations

import keras
import numpy as np

from ..data import load_mnist
from .run_loop import run_strategy, sample_order


def lockstep(config_a, config_b, updates=None):
    """Train `config_a` and `config_b` (the same B, seed and `sampling="paired"`, so the
    same batches and start) update by update. Returns `(gap, flips)`, two arrays of
    `updates` (default: the configs' `updates`): before each update, the largest weight
    difference, and the count of first-layer ReLU inputs of its batch on different sides of 0.
    The models' dtype is Keras's floatx when called."""
    if config_a.effective_batch != config_b.effective_batch or config_a.seed != config_b.seed:
        raise ValueError("lockstep compares runs of one B and one seed")
    if not config_a.sampling == config_b.sampling == "paired":
        raise ValueError("lockstep needs sampling='paired', so that both runs see the same batches")
    data = load_mnist()
    runs = [run_strategy(c) for c in (config_a, config_b)]
    order = sample_order(config_a, len(data.x_train))[:updates or config_a.updates]
    gap, flips = np.empty(len(order)), np.empty(len(order), dtype=int)
    for t, idx in enumerate(order):
        x, y = data.x_train[idx], data.y_train[idx]
        weights = [r.model.get_weights() for r in runs]
        gap[t] = max(float(np.abs(a - b).max()) for a, b in zip(*weights))
        active = [_first_dense(r.model)(keras.ops.convert_to_tensor(x.reshape(len(x), -1), r.model.dtype)) > 0
                  for r in runs]
        flips[t] = int(np.sum(np.asarray(active[0]) != np.asarray(active[1])))
        for r in runs:
            r.step(x, y)
    return gap, flips


def _first_dense(model):
    dense = next(layer for layer in model.layers if isinstance(layer, keras.layers.Dense))
    return lambda h: h @ dense.kernel + dense.bias
