"""Two runs side by side on the same batches: where their weights part.

    gap[t] = max |w_a - w_b| over all weights, before update t + 1

Runs that compute the same update in another order stay a few float32 spacings apart while
every step they take is smooth in the weights; a kink (a ReLU input, a clipping threshold)
that rounding puts on different sides in the two runs parts them by an update-sized step at
once, which the gap shows as a jump.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import numpy as np

from ..data import load_mnist
from .run_loop import run_strategy, sample_order


def lockstep(config_a, config_b, updates=None):
    """Train `config_a` and `config_b` (one B, one seed, `sampling="paired"`: the same
    batches and start) update by update. Returns the largest weight difference before each
    update, an array of `updates` (default: the configs' `updates`). The models' dtype is
    Keras's floatx when called."""
    if config_a.effective_batch != config_b.effective_batch or config_a.seed != config_b.seed:
        raise ValueError("lockstep compares runs of one B and one seed")
    if not config_a.sampling == config_b.sampling == "paired":
        raise ValueError("lockstep needs sampling='paired', so that both runs see the same batches")
    data = load_mnist()
    runs = [run_strategy(c) for c in (config_a, config_b)]
    order = sample_order(config_a, len(data.x_train))[:updates or config_a.updates]
    gap = np.empty(len(order))
    for t, idx in enumerate(order):
        weights = [r.model.get_weights() for r in runs]
        gap[t] = max(float(np.abs(a - b).max()) for a, b in zip(*weights))
        for r in runs:
            r.step(data.x_train[idx], data.y_train[idx])
    return gap
