"""All-reduces in one `fit` update of a model under a `tf.distribute` strategy, per replica.

    all_reduces_per_update(model, distribution, x, y) = all-reduce ops in the traced
        distribution.run(model.train_step, ((x, y),)) / local replicas

Traced only, never run: the variables do not move. For an `AccumulatingModel` it traces the
step as its `fit` does (Keras losses not divided by the replicas, the optimizer's own
all-reduce off), so the count is the one `fit` pays; for a plain Keras model, Keras's step.

Lesson: notebooks/13-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
"""
from __future__ import annotations

import contextlib

import tensorflow as tf

from ... import _compat
from ...core import distribute


def all_reduces_per_update(model, distribution, x, y):
    """All-reduce ops per local replica in one traced `train_step` of `model` (compiled and
    built inside `distribution.scope()`) on batches shaped like `x`, `y` (any batch size)."""
    from ...training.fit import AccumulatingModel

    step = tf.function(lambda a, b: distribution.run(model.train_step, args=((a, b),)))
    spec = [tf.TensorSpec([None, *a.shape[1:]], tf.as_dtype(a.dtype)) for a in (x, y)]
    with contextlib.ExitStack() as stack:
        if isinstance(model, AccumulatingModel):
            stack.enter_context(_compat.losses_not_divided_by_replicas())
            stack.enter_context(_compat.gradients_already_reduced(model.optimizer))
        graph = step.get_concrete_function(*spec).graph
    return distribute.count_all_reduces(graph) / len(distribution.extended.worker_devices)
