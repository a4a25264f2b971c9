"""Average gradients across towers: the TF1 multi-GPU recipe, generalised to unequal towers.

    g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k)

where tower t saw n_t examples and g_t is its mean gradient. With equal towers this is the
plain mean, computed as in the original: expand_dims, concat on a new tower axis, reduce_mean.
The engine does not use it (it sums and divides once); the classic tower graph and the
lessons do (`gl.average_gradients`).

Lesson: notebooks/02-tower-averaging.ipynb
"""
from __future__ import annotations

import numbers

import tensorflow as tf

from .weights import weights as count_weights


def average_gradients(tower_grads, counts=None):
    """Average `(grad, var)` pairs across towers, variable by variable.

    Args:
        tower_grads: list over towers of lists of `(grad, var)` pairs, every tower listing
            the same variables in the same order (as `compute_gradients` returns them).
        counts: optional examples per tower; `None` means equal towers.
    Returns:
        list of `(mean_grad, var)`, the variable taken from the first tower. A gradient that
        is `None` in every tower stays `None`; `tf.IndexedSlices` stay sparse (their rows are
        concatenated and scaled, which sums duplicates exactly as the dense mean would).

    Works on eager tensors, inside `tf.function` and on TF1 graph tensors.
    """
    tower_grads = _check_towers(tower_grads)
    k = len(tower_grads)
    w = [1.0 / k] * k if counts is None else _check_counts(counts, k)
    averaged = []
    for pairs in zip(*tower_grads):
        var = pairs[0][1]
        grads = [g for g, _ in pairs]
        if all(g is None for g in grads):
            averaged.append((None, var))
        elif any(g is None for g in grads):
            raise ValueError(f"variable {_name(var)} has a gradient in some towers and None in others")
        elif any(isinstance(g, tf.IndexedSlices) for g in grads):
            averaged.append((_average_slices(grads, w), var))
        else:
            averaged.append((_average_dense(grads, w, counts is None), var))
    return averaged


def _average_dense(grads, w, equal):
    # A new leading "tower" axis, then reduce over it: the shape of the original recipe.
    stacked = tf.concat([tf.expand_dims(g, 0) for g in grads], axis=0)
    if equal:
        return tf.reduce_mean(stacked, axis=0)
    w = tf.reshape(tf.constant(w, dtype=stacked.dtype), [-1] + [1] * (stacked.shape.rank - 1))
    return tf.reduce_sum(w * stacked, axis=0)


def _average_slices(grads, w):
    slices = [g if isinstance(g, tf.IndexedSlices) else _as_slices(g) for g in grads]
    values = tf.concat([wt * s.values for wt, s in zip(w, slices)], axis=0)
    indices = tf.concat([tf.cast(s.indices, tf.int64) for s in slices], axis=0)
    return tf.IndexedSlices(values, indices, slices[0].dense_shape)


def _as_slices(g):
    g = tf.convert_to_tensor(g)
    rows = tf.range(tf.shape(g, out_type=tf.int64)[0])
    return tf.IndexedSlices(g, rows, tf.shape(g, out_type=tf.int64))


def _check_towers(tower_grads):
    if not isinstance(tower_grads, (list, tuple)) or len(tower_grads) == 0:
        raise ValueError(f"average_gradients needs at least one tower, got {tower_grads!r}")
    towers = [list(t) for t in tower_grads]
    lengths = [len(t) for t in towers]
    if len(set(lengths)) != 1:
        raise ValueError(f"towers have different numbers of gradients: {lengths}")
    for t, pairs in enumerate(towers):
        for p in pairs:
            if not (isinstance(p, (list, tuple)) and len(p) == 2):
                raise TypeError(f"tower {t} must hold (grad, var) pairs, got {p!r}")
    return towers


def _check_counts(counts, k):
    counts = list(counts)
    if len(counts) != k:
        raise ValueError(f"counts must give one example count per tower ({k}), got {counts!r}")
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or c <= 0:
            raise ValueError(f"counts must be positive numbers, got {counts!r}")
    return [float(v) for v in count_weights(counts)]


def _name(var):
    return getattr(var, "name", None) or getattr(var, "path", None) or repr(var)
