"""A failed `step` leaves no trace: the state an update moves outside its guard, put back.

    saved = rollback.save();  try: update  except: rollback.restore(saved); raise

The finite-gradient `tf.cond` guards the weights and the optimizer's slots. TensorFlow
still runs the ops on other variables when the gradient fails: BatchNorm's moving
statistics and seeds (the forward pass moves them), and the optimizer's counters when the
update is not guarded (a LossScaleOptimizer keeps its own rule).

Lesson: none teaches it (notebooks/08-clipping-and-loss-scale.ipynb teaches the guard it completes);
tests/training/test_strategies.py checks it.
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat


class Rollback:
    """Saves and restores `model`'s non-trainable state (and `optimizer`'s counters unless
    `guarded`), plus a BatchNorm window's recorded moments."""

    def __init__(self, model, optimizer, guarded, moments):
        self.state = [v for v in model.non_trainable_variables if not v.trainable]
        if not guarded:
            self.state += _compat.counters(optimizer)
        self.moments = moments
        self._read = tf.function(lambda: [tf.identity(v) for v in self.state])

    def save(self):
        return self._read() if self.state else []

    def restore(self, saved):
        for v, value in zip(self.state, saved):
            v.assign(value)
        self.moments.reset()
