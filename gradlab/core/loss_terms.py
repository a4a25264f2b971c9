"""One micro-batch's loss terms: an unnormalised sum and what the loss divides it by.

    L_i = loss_fn(y_i, model(x_i))  (+ the model's own losses)    the mean the loss reports
    D_i = what L_i divides by: n_i examples, or the unmasked output entries of micro-batch i
    S_i = D_i * L_i                                                the unnormalised sum

and one update, however it is split (micro-batches, towers, replicas), is

    loss = (S_1 + ... + S_k) / (D_1 + ... + D_k),   grads = (dS_1 + ... + dS_k) / (D_1 + ... + D_k)

which is the large-batch mean loss and its gradient. With D_i = n_i this is the familiar
`g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k)`; with a Keras mask each micro-batch counts
its own unmasked entries, which no fixed weight could know in advance.

Per-example weights (token counts, masks) multiply the losses as Keras's do: the `n_i / B`
weighting of micro-batch means of `w_j l_j` gives `sum_j w_j l_j / B`, Keras's
`sum_over_batch_size`; for a loss with reduction `"mean_with_sample_weight"` they are first
normalised once over the whole update, `u_j = w_j * m / sum_k w_k` (m entries), which gives
the large-batch weighted mean `sum_j w_j l_j / sum_j w_j` (`normalize_sample_weight`).

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from .microbatch import sum_dtype
from .normaliser import check_masked_penalties, keras_rule, normaliser


def mean_loss(model, loss_fn, x, y, training=True, sample_weight=None):
    """Mean loss of `model` on `(x, y)`, plus the model's regularisation losses.

    `loss_fn` may return a scalar (Keras loss objects) or one loss per example
    (`keras.losses.sparse_categorical_crossentropy`); per-example losses are averaged.
    With `sample_weight` (checked by `normalize_sample_weight`) the loss is
    `mean_j(u_j l_j)`: a Keras loss object gets it as its own `sample_weight` (its
    `sum_over_batch_size` divides by the number of examples, which is what this needs).
    """
    return reduced_loss(loss_fn, y, model(x, training=training), sample_weight, model.losses)


def reduced_loss(loss_fn, y, pred, sample_weight, extra_losses):
    """The mean loss `mean_loss` reports, from a prediction already made."""
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
    if extra_losses:
        # Regularisation belongs to the update, not to the examples: S_i = D_i * (L_i + R)
        # adds up to exactly one R once divided by the summed D.
        loss = loss + tf.cast(tf.add_n(extra_losses), loss.dtype)
    return loss


def loss_and_grads(model, loss_fn, x, y, weight=1.0, sample_weight=None):
    """`(loss, grads)` for one micro-batch: its mean loss and the gradient of `weight * loss`
    (with `weight = n_i / B`, micro-batch gradients add up to the large batch's)."""
    with tf.GradientTape() as tape:
        loss = mean_loss(model, loss_fn, x, y, sample_weight=sample_weight)
        scaled = loss * tf.cast(weight, loss.dtype)
    return loss, tape.gradient(scaled, model.trainable_variables)


def loss_terms(model, loss_fn, x, y, rule=None, sample_weight=None, pred=None):
    """`(S, D)` of one micro-batch: `D` = what its mean loss divides by (`rule`), `S = D * L`.

    Call under a `tf.GradientTape`: the gradient of `S` summed over micro-batches and divided
    once by the summed `D` is the large-batch gradient (`D` is a count, not differentiated).

    Args:
        model, loss_fn, x, y, sample_weight: as in `mean_loss`.
        rule: one of `normaliser.RULES`; None: Keras's own on this output (`keras_rule`).
        pred: `model(x, training=True)`, if already made.
    Returns:
        scalars `(S, D)` in `sum_dtype()`.
    """
    pred = model(x, training=True) if pred is None else pred
    if rule is None:
        rule = keras_rule(y, pred, loss_fn)
    loss = tf.cast(reduced_loss(loss_fn, y, pred, sample_weight, model.losses), sum_dtype())
    if rule == "entries":
        check_masked_penalties(model, model.losses, x)  # traced: the add_loss terms are known
    d = normaliser(rule, x, y, pred, loss_fn)
    return loss * d, d


def normalize_sample_weight(sample_weight, batch, over_weights=False):
    """The weights one update's micro-batches multiply their losses by, checked.

    By default `w` itself: each micro-batch's `sum_over_batch_size` mean of `w_j l_j`,
    weighted by `n_i / B`, gives `sum_j w_j l_j / B`, Keras's `train_on_batch` (its loss
    divides by the rows, not by the weights). With `over_weights` (a loss whose reduction is
    `"mean_with_sample_weight"`) `u = w * w.size / w.sum()`, normalised once over the whole
    update, so that the same means give `sum_j w_j l_j / sum_j w_j` however the batch is split.
    Checked in numpy, before any TensorFlow work.

    Args:
        sample_weight: array of shape `(batch,)` or `(batch, ...)` (one weight per example,
            or per token), non-negative, finite (and, `over_weights`, not all zero).
        batch: the number of examples in the update.
        over_weights: divide by the sum of the weights, not by the rows.
    Returns:
        numpy array of the same shape, in `keras.config.floatx()` (float32 or float64).
    """
    if isinstance(sample_weight, (dict, list, tuple)) and any(
            np.ndim(w) or isinstance(w, (dict, list, tuple)) for w in tf.nest.flatten(sample_weight)):
        raise TypeError(
            "step's sample_weight is one array for its one loss_fn, got a "
            f"{type(sample_weight).__name__} of per-output weights: multiply them into "
            "loss_fn's per-output losses, or use AccumulatingModel.fit, which takes "
            "per-output sample_weight as Keras's fit does")
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0 or w.shape[0] != batch:
        raise ValueError(f"sample_weight must have one entry per example (first dimension "
                         f"{batch}), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"sample_weight must be finite and non-negative, got {sample_weight!r}")
    dtype = "float64" if keras.config.floatx() == "float64" else "float32"
    if not over_weights:
        return w.astype(dtype)
    total = w.sum()
    if total == 0:
        raise ValueError("sample_weight sums to 0 and the loss's reduction is "
                         "'mean_with_sample_weight': the update would divide by 0")
    return (w * (w.size / total)).astype(dtype)
