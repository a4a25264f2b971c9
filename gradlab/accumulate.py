"""In-graph gradient accumulation: into variables, or in one compiled loop.

    acc <- 0;   for each micro-batch i:  acc <- acc + w_i * grads_i;   apply(acc)

Two ways to hold `acc`:

- `Accumulators`: non-trainable `tf.Variable`s with zero / accumulate ops, one call per
  micro-batch (the classic TF1 recipe, in TF2).
- `fused_grads`: loop-carried tensors in one `tf.range` loop, so all micro-batches of an
  update run in one compiled call and Python dispatch is paid once per update.

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .gradients import densify, loss_and_grads


class Accumulators:
    """One zero-initialised, non-trainable variable per trainable variable.

    `accumulate(grads)` adds, `values()` reads, `reset()` zeroes. A `None` gradient leaves
    its accumulator alone; `values()` reports it as `None` until a gradient arrives.
    """

    def __init__(self, variables):
        # Zeros from each variable's shape and dtype: Variable.initialized_value(), which the
        # TF1 recipe used, raises NotImplementedError in TensorFlow 2.21.
        self.variables = [
            tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False, name=_short(v) + "_accum")
            for v in variables
        ]
        self._touched = [False] * len(self.variables)

    def accumulate(self, grads):
        """`acc_j += grads_j` for every non-None gradient (call inside or outside tf.function)."""
        for j, (acc, g) in enumerate(zip(self.variables, densify(grads))):
            if g is not None:
                acc.assign_add(g)
                self._touched[j] = True  # recorded once, at trace time: which grads exist

    def values(self):
        return [acc if t else None for acc, t in zip(self.variables, self._touched)]

    def reset(self):
        for acc in self.variables:
            acc.assign(tf.zeros_like(acc))


def fused_grads(model, loss_fn, x, y, sizes, sample_weight=None, scale_loss=None):
    """Mean loss and mean gradient over `x`, computed in `len(sizes)` micro-batches in-graph.

    Call inside `tf.function`. Micro-batch i is `x[o_i : o_i + n_i]` with weight
    `w_i = n_i / sum(sizes)`; the first one is peeled out of the loop so that gradients that
    are `None` (variables the loss does not touch) are known at trace time and stay `None`.

    Args:
        model, loss_fn: as in `make_strategy`.
        x, y: the examples of this update (or of this tower).
        sizes: int32 tensor of micro-batch sizes, summing to `len(x)`.
        sample_weight, scale_loss: sliced and passed on to `loss_and_grads`.
    Returns:
        `(loss, grads)`: the weighted mean loss and the list of mean gradients.
    """
    sizes = tf.cast(sizes, tf.int32)
    starts = tf.concat([[0], tf.cumsum(sizes)[:-1]], axis=0)
    total = tf.cast(tf.reduce_sum(sizes), tf.float32)

    def micro(i, unconnected=tf.UnconnectedGradients.NONE):
        s, n = starts[i], sizes[i]
        w = tf.cast(n, tf.float32) / total
        sw = None if sample_weight is None else sample_weight[s:s + n]
        loss, grads = loss_and_grads(model, loss_fn, x[s:s + n], y[s:s + n], w, unconnected,
                                     sample_weight=sw, scale_loss=scale_loss)
        return tf.cast(loss, tf.float32) * w, densify(grads)

    loss, first = micro(0)
    connected = [j for j, g in enumerate(first) if g is not None]
    acc = [first[j] for j in connected]
    for i in tf.range(1, tf.size(sizes)):
        # Variables with no gradient were found above; ZERO keeps the loop's structure fixed.
        loss_i, grads = micro(i, tf.UnconnectedGradients.ZERO)
        loss = loss + loss_i
        acc = [a + grads[j] for a, j in zip(acc, connected)]
    grads = [None] * len(first)
    for a, j in zip(acc, connected):
        grads[j] = a
    return loss, grads


def _short(v):
    name = getattr(v, "path", None) or v.name
    return name.split(":")[0].replace("/", "_")
