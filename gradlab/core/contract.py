"""The contract, checked inside the update on each micro-batch's own predictions.

    S_i / D_i must be a mean:   D * L(rows) = D_a * L(a) + D_b * L(b)   for the halves a, b
                                L(rows + rows) = L(rows)                  (the rows twice)

`L` is the loss alone (Keras's compiled loss, or a strategy's `loss_fn`, plus the model's
own penalties) applied to predictions the update has already made: no extra read of the
data, no extra forward pass, nothing in the model or its random state touched. A sum, a mean
over a fixed `global_batch_size` and a loss that couples the rows of a batch (in-batch
negatives, a contrastive loss) fail it; the update is then skipped by the engine's guard
(`engine.CONTRACT_BROKEN`) and the face raises `REFUSAL` before any weight moves.

The halves need two rows: a micro-batch of one row is checked by the doubling alone, which
finds sums and fixed normalisers, not coupling.

Lesson: notebooks/07-pitfalls-what-to-count.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat

CHECKS = ("first", "every")  # when a face checks: its first update (after each compile/build), or every one
TOLERANCE = 1e-4  # relative, float32: a mean of the same values in another order is within 1e-6

REFUSAL = (
    "cannot accumulate this loss exactly: gradlab weights each micro-batch's loss by its share of "
    "the rows or entries, which reproduces the large batch only for a mean over them, and on a "
    "micro-batch's own predictions this loss's value times what it divides by is not the sum of "
    "its halves' (or the rows taken twice change it). So it adds up the rows' losses (a sum, or a "
    "sum over a fixed global_batch_size), which the weighting would divide again, or divides by "
    "something other than the rows or entries of the batch, or couples the rows of a batch "
    "(in-batch negatives, a contrastive loss, batch statistics), which no split into micro-batches "
    "can reproduce. The update was not applied: weights and optimizer state are as they were. Use "
    "a per-example mean (a keras.losses.Loss with reduction 'sum_over_batch_size', or a function "
    "returning one loss per example), or train with accum_steps=1")


def check_option(check):
    """`check` if it is one of `CHECKS`, else ValueError naming it (before any TensorFlow work)."""
    if check not in CHECKS:
        raise ValueError(f"check must be one of {CHECKS}, got {check!r}")
    return check


def split_holds(loss_of, norm_of, y, y_pred, sample_weight=None):
    """A boolean scalar: whether `loss_of` is a `norm_of`-weighted mean on these rows.

    Args:
        loss_of: `loss_of(y, y_pred, sample_weight) -> L`, the mean loss, no model call.
        norm_of: `norm_of(y, y_pred) -> D`, what `L` divides by (rows, or counted entries).
        y, y_pred, sample_weight: one micro-batch (nests of dense tensors; `y` and
            `sample_weight` may be None).
    Returns:
        True where every check holds, or where nothing can be compared (no entries, a
        non-finite loss: the guard's business, a prediction that is not a dense tensor).
    """
    if not all(isinstance(p, tf.Tensor) for p in tf.nest.flatten(y_pred)):
        return tf.constant(True)  # sparse or ragged predictions: not sliced here
    y_pred = tf.nest.map_structure(_stopped, y_pred)  # nothing here is differentiated
    rows = tf.shape(tf.nest.flatten(y_pred)[0])[0]
    half = rows // 2
    whole = _term(loss_of, norm_of, y, y_pred, sample_weight, 0, rows)
    twice = tuple(_both(t) for t in (y, y_pred, sample_weight))
    doubled = _term(loss_of, norm_of, *twice, 0, 2 * rows)
    checks = [_close(2.0 * whole[0], doubled[0], whole[2], doubled[2])]

    def halves():
        a = _term(loss_of, norm_of, y, y_pred, sample_weight, 0, half)
        b = _term(loss_of, norm_of, y, y_pred, sample_weight, half, rows)
        return _close(whole[0], a[0] + b[0], whole[2], a[2] + b[2])
    checks.append(tf.cond(rows >= 2, halves, lambda: tf.constant(True)))
    return tf.reduce_all(tf.stack(checks))


def checked(check_now, loss_of, norm_of, y, y_pred, sample_weight=None):
    """`split_holds(...)` while the boolean variable `check_now` is set, else True (one
    tf.cond: what an update that is not checked pays is the read of one variable)."""
    return tf.cond(check_now, lambda: split_holds(loss_of, norm_of, y, y_pred, sample_weight),
                   lambda: tf.constant(True))


def _term(loss_of, norm_of, y, y_pred, sample_weight, start, stop):
    """`(D * L, D, |D * L|)` of rows start:stop."""
    take = lambda nest: None if nest is None else tf.nest.map_structure(
        lambda t: _compat.slice_rows(t, start, stop), nest)
    ys, ps = take(y), take(y_pred)
    loss = tf.cast(loss_of(ys, ps, take(sample_weight)), tf.float32)
    d = tf.cast(norm_of(ys, ps), tf.float32)
    s = loss * d
    return s, d, tf.abs(s)


def _both(nest):
    return None if nest is None else tf.nest.map_structure(_twice, nest)


def _twice(t):
    out, mask = tf.concat([t, t], 0), _compat.keras_mask(t)
    return out if mask is None else _compat.with_keras_mask(out, tf.concat([mask, mask], 0))


def _stopped(t):
    out, mask = tf.stop_gradient(t), _compat.keras_mask(t)
    return out if mask is None else _compat.with_keras_mask(out, mask)


def _close(expected, got, scale_a, scale_b):
    scale = tf.maximum(tf.maximum(scale_a, scale_b), 1e-6)
    finite = tf.logical_and(tf.math.is_finite(expected), tf.math.is_finite(got))
    return tf.logical_or(tf.logical_not(finite), tf.abs(expected - got) <= TOLERANCE * scale)
