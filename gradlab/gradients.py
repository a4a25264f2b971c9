"""The gradient of one micro-batch, weighted so that micro-batches add up to the large batch.

    loss_i  = mean over micro-batch i of loss_fn(y, model(x))  (+ the model's own losses)
    grads_i = d(w_i * loss_i) / d(weights),   w_i = n_i / B

so `sum_i grads_i` is the gradient of the mean loss over all B examples. Weighting the
loss, not averaging the gradients afterwards, is what keeps unequal micro-batches exact.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import tensorflow as tf


def mean_loss(model, loss_fn, x, y, training=True):
    """Mean loss of `model` on `(x, y)`, plus the model's regularisation losses.

    `loss_fn` may return a scalar (Keras loss objects) or one loss per example
    (`keras.losses.sparse_categorical_crossentropy`); per-example losses are averaged.
    """
    pred = model(x, training=training)
    loss = tf.convert_to_tensor(loss_fn(y, pred))
    if loss.shape.rank != 0:
        loss = tf.reduce_mean(loss)
    if model.losses:
        # Regularisation terms belong to the update, not to the examples: weighting each
        # micro-batch's copy by w_i adds them up to exactly one copy per update.
        loss = loss + tf.cast(tf.add_n(model.losses), loss.dtype)
    return loss


def loss_and_grads(model, loss_fn, x, y, weight=1.0, unconnected=tf.UnconnectedGradients.NONE):
    """`(loss, grads)` for one micro-batch: its mean loss and the gradient of `weight * loss`."""
    variables = model.trainable_variables
    with tf.GradientTape() as tape:
        loss = mean_loss(model, loss_fn, x, y)
        scaled = loss * tf.cast(weight, loss.dtype)
    grads = tape.gradient(scaled, variables, unconnected_gradients=unconnected)
    return loss, grads


def densify(grads):
    """Dense gradients: `tf.IndexedSlices` (from `Embedding`, `gather`) become tensors.

    Keras's Adam applies an IndexedSlices gradient with duplicate rows one occurrence at a
    time, so a large batch through an Embedding would not be the mean-gradient update; and
    slices of different lengths cannot be summed in a loop or all-reduced. Every gradlab
    strategy applies dense gradients, so all of them, large_batch included, agree.
    """
    return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]


def apply_update(optimizer, grads, variables, clip_norm=None):
    """One optimizer update from the accumulated `grads` (None entries are skipped).

    `clip_norm` clips the global norm of the whole update, once: clipping each micro-batch
    would not be clipping the update.
    """
    pairs = [(g, v) for g, v in zip(densify(grads), variables) if g is not None]
    if clip_norm is not None:
        clipped, _ = tf.clip_by_global_norm([g for g, _ in pairs], clip_norm)
        pairs = [(g, v) for g, (_, v) in zip(clipped, pairs)]
    optimizer.apply_gradients(pairs)
