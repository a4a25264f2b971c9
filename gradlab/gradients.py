"""The gradient of one micro-batch, weighted so that micro-batches add up to the large batch.

    loss_i  = mean over micro-batch i of loss_fn(y, model(x))  (+ the model's own losses)
    grads_i = d(w_i * loss_i) / d(weights),   w_i = n_i / B

so `sum_i grads_i` is the gradient of the mean loss over all B examples. Weighting the
loss, not averaging the gradients afterwards, is what keeps unequal micro-batches exact.

Per-example weights (token counts, masks) are normalised once over the whole update,
`u_j = w_j * m / sum_k w_k` (m entries), so the same `n_i / B` weighting of micro-batch
means of `u_j l_j` gives the large-batch weighted mean `sum_j w_j l_j / sum_j w_j`.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf


def mean_loss(model, loss_fn, x, y, training=True, sample_weight=None):
    """Mean loss of `model` on `(x, y)`, plus the model's regularisation losses.

    `loss_fn` may return a scalar (Keras loss objects) or one loss per example
    (`keras.losses.sparse_categorical_crossentropy`); per-example losses are averaged.
    With `sample_weight` (already normalised by `normalize_sample_weight`) the loss is
    `mean_j(u_j l_j)`: a Keras loss object gets it as its own `sample_weight` (its
    `sum_over_batch_size` divides by the number of examples, which is what this needs).
    """
    pred = model(x, training=training)
    if sample_weight is None:
        loss = tf.convert_to_tensor(loss_fn(y, pred))
    elif isinstance(loss_fn, keras.losses.Loss):
        loss = tf.convert_to_tensor(loss_fn(y, pred, sample_weight=sample_weight))
    else:
        loss = tf.convert_to_tensor(loss_fn(y, pred))
        if loss.shape.rank == 0:
            raise ValueError("sample_weight needs per-example losses, but loss_fn returned a "
                             "scalar; return one loss per example, or use a keras.losses.Loss")
        u = tf.cast(sample_weight, loss.dtype)
        for _ in range(loss.shape.rank - u.shape.rank):  # (n,) weights on (n, T) losses
            u = u[..., None]
        loss = loss * u
    if loss.shape.rank != 0:
        loss = tf.reduce_mean(loss)
    if model.losses:
        # Regularisation terms belong to the update, not to the examples: weighting each
        # micro-batch's copy by w_i adds them up to exactly one copy per update.
        loss = loss + tf.cast(tf.add_n(model.losses), loss.dtype)
    return loss


def loss_and_grads(model, loss_fn, x, y, weight=1.0, sample_weight=None, scale_loss=None):
    """`(loss, grads)` for one micro-batch: its mean loss and the gradient of `weight * loss`.

    `scale_loss` (an optimizer's `scale_loss`, e.g. a `LossScaleOptimizer`'s dynamic scale)
    scales `weight * loss` before differentiating; the optimizer unscales, once per update.
    """
    variables = model.trainable_variables
    with tf.GradientTape() as tape:
        loss = mean_loss(model, loss_fn, x, y, sample_weight=sample_weight)
        scaled = loss * tf.cast(weight, loss.dtype)
        if scale_loss is not None:
            scaled = scale_loss(scaled)
    grads = tape.gradient(scaled, variables)
    return loss, grads


def densify(grads):
    """Dense gradients: `tf.IndexedSlices` (from `Embedding`, `gather`) become tensors.

    Keras's Adam adds the square of each occurrence of a duplicate row to its second moment,
    not the square of their sum, so a large batch through an Embedding would not be the
    mean-gradient update (a row of ones listed twice: 2, not 4); and
    slices of different lengths cannot be summed in a loop or all-reduced. Every gradlab
    strategy applies dense gradients, so all of them, large_batch included, agree.
    """
    return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]


def apply_update(optimizer, grads, variables, clip_norm=None):
    """One optimizer update from the accumulated `grads` (None entries are skipped).

    `clip_norm` clips the global norm of the whole update, once: clipping each micro-batch
    would not be clipping the update. Gradients of a scaled loss (`optimizer.scale_loss`)
    are clipped at `clip_norm * scale`, the same as clipping the unscaled update; a
    non-finite norm makes them NaN, which a `LossScaleOptimizer` skips.
    """
    pairs = [(g, v) for g, v in zip(densify(grads), variables) if g is not None]
    if clip_norm is not None:
        clipped, _ = tf.clip_by_global_norm([g for g, _ in pairs], optimizer.scale_loss(clip_norm))
        pairs = [(g, v) for g, (_, v) in zip(clipped, pairs)]
    optimizer.apply_gradients(pairs)


def normalize_sample_weight(sample_weight, batch):
    """`u = w * w.size / w.sum()`: weights that average 1 over the whole update.

    Then `mean_j(u_j l_j) = sum_j w_j l_j / sum_j w_j`, and so does any split into
    micro-batches weighted by `n_i / B`. Checked in numpy, before any TensorFlow work.

    Args:
        sample_weight: array of shape `(batch,)` or `(batch, ...)` (one weight per example,
            or per token), non-negative, finite, not all zero.
        batch: the number of examples in the update.
    Returns:
        float32 numpy array of the same shape.
    """
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0 or w.shape[0] != batch:
        raise ValueError(f"sample_weight must have one entry per example (first dimension "
                         f"{batch}), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"sample_weight must be finite and non-negative, got {sample_weight!r}")
    total = w.sum()
    if total == 0:
        raise ValueError("sample_weight sums to 0: the update would have no examples")
    return (w * (w.size / total)).astype(np.float32)
