"""One micro-batch's loss terms: an unnormalised sum and what the loss divides it by.

    L_i = loss_fn(y_i, model(x_i))  (+ the model's own losses)    the mean the loss reports
    D_i = what L_i divides by: n_i examples, or the unmasked output entries of micro-batch i
    S_i = D_i * L_i                                                the unnormalised sum

and one update, however it is split (micro-batches, towers, replicas), is

    loss = (S_1 + ... + S_k) / (D_1 + ... + D_k),   grads = (dS_1 + ... + dS_k) / (D_1 + ... + D_k)

which is the large-batch mean loss and its gradient. With D_i = n_i this is the familiar
`g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k)`; with a Keras mask each micro-batch counts
its own unmasked entries, which no fixed weight could know in advance.

Per-example weights (token counts, masks) are normalised once over the whole update,
`u_j = w_j * m / sum_k w_k` (m entries), so the same `n_i / B` weighting of micro-batch
means of `u_j l_j` gives the large-batch weighted mean `sum_j w_j l_j / sum_j w_j`.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import math
import numbers

import keras
import numpy as np
import tensorflow as tf

from . import _compat
from .microbatch import take

RULES = ("examples", "mask")  # what a loss divides by: examples, or unmasked output entries

def mean_loss(model, loss_fn, x, y, training=True, sample_weight=None):
    """Mean loss of `model` on `(x, y)`, plus the model's regularisation losses.

    `loss_fn` may return a scalar (Keras loss objects) or one loss per example
    (`keras.losses.sparse_categorical_crossentropy`); per-example losses are averaged.
    With `sample_weight` (already normalised by `normalize_sample_weight`) the loss is
    `mean_j(u_j l_j)`: a Keras loss object gets it as its own `sample_weight` (its
    `sum_over_batch_size` divides by the number of examples, which is what this needs).
    """
    return _reduced(loss_fn, y, model(x, training=training), sample_weight, model.losses)


def _reduced(loss_fn, y, pred, sample_weight, extra_losses):
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


def loss_terms(model, loss_fn, x, y, rule="examples", sample_weight=None):
    """`(S, D)` of one micro-batch: `D` = what its mean loss divides by (`rule`), `S = D * L`.

    Call under a `tf.GradientTape`: the gradient of `S` summed over micro-batches and divided
    once by the summed `D` is the large-batch gradient (`D` is a count, not differentiated).

    Args:
        model, loss_fn, x, y, sample_weight: as in `mean_loss`.
        rule: one of `RULES`, found by `find_rule`.
    Returns:
        float32 scalars `(S, D)`.
    """
    pred = model(x, training=True)
    loss = tf.cast(_reduced(loss_fn, y, pred, sample_weight, model.losses), tf.float32)
    if rule == "mask":
        check_masked_penalties(model, model.losses, x)  # traced: the add_loss terms are known
        d = tf.reduce_sum(tf.cast(_masks(pred)[0], tf.float32))
    else:
        d = tf.cast(tf.shape(tf.nest.flatten(x)[0])[0], tf.float32)
    return loss * d, d


def find_rule(model, loss_fn, x, y):
    """What `loss_fn` divides by on this model: "examples" or "mask" (see `RULES`).

    Keras loss objects with a mean reduction divide by the unmasked entries when the output
    carries a Keras mask; losses that return one value per example are averaged by gradlab.
    Any other function returning a scalar is probed, eagerly and before any update, on a few
    pairs of examples: its loss on a pair must be the mean of its losses on each example,
    weighted by the candidate normaliser (1 per example, or its unmasked entries).

    Raises:
        ValueError: several outputs carry masks, a masked output meets an activity
            regulariser (`check_masked_penalties`), or no rule reproduces the loss (a sum, a
            mean normalised some other way): that loss cannot be split exactly.
    """
    rule = _find_rule(model, loss_fn, x, y)
    if rule == "mask":
        check_masked_penalties(model)
    return rule


def _find_rule(model, loss_fn, x, y):
    k = min(5, tf.nest.flatten(x)[0].shape[0])
    pred = model(take(x, 0, k), training=False)
    masks = _masks(pred)
    if len(masks) > 1:
        raise ValueError(
            f"{len(masks)} outputs carry Keras masks: one update has one normaliser, so a loss "
            "that averages each output over its own unmasked entries cannot be split exactly. "
            "Pass the masks as sample_weight with a per-example loss, or use accum_steps=1")
    if getattr(loss_fn, "ignore_class", None) is not None:
        raise ValueError(
            f"{type(loss_fn).__name__}(ignore_class={loss_fn.ignore_class!r}) averages over the "
            "entries of other classes, which a split counts only in AccumulatingModel's fit; "
            "here pass sample_weight = (y != ignore_class) with a per-example loss instead")
    if isinstance(loss_fn, keras.losses.Loss) and loss_fn.reduction not in ("none", None):
        return "mask" if masks else "examples"
    value = tf.convert_to_tensor(loss_fn(take(y, 0, k), pred))
    if value.shape.rank != 0:
        return "examples"  # one loss per example (or token): gradlab takes the mean itself
    candidates = ["mask", "examples"] if masks else ["examples"]
    seen = []
    for a in range(k - 1):
        pair = [_probe(model, loss_fn, x, y, j, n) for j, n in ((a, 2), (a, 1), (a + 1, 1))]
        seen.append([float(v) for v, _ in pair])
        candidates = [r for r in candidates if _mean_of_parts(r, pair)]
    if not candidates:
        raise ValueError(
            f"cannot tell what loss_fn divides by: on pairs of examples its loss is not the "
            f"mean of its per-example losses, weighted per example"
            f"{' or per unmasked entry' if masks else ''} (pair, first, second: {seen}). "
            "gradlab splits an update exactly only for a per-example mean: return one loss per "
            "example, or use a keras.losses.Loss with reduction 'sum_over_batch_size'")
    return candidates[0]


def check_masked_penalties(model, losses=(), x=None):
    """Raise ValueError if a penalty of `model` depends on the data: an activity regulariser
    (any layer), or, while a step is traced, one of `losses` (the model's own, `add_loss`)
    computed from the micro-batch `x`. Under the "mask" rule a split weighs each micro-batch
    by its unmasked entries, while Keras averages such a penalty over the batch's rows, so
    the two parts of the loss cannot share one normaliser and the split would be inexact.
    Penalties of the weights alone (kernel regularisers) are exact under any split."""
    names = [layer.name for layer in _compat.sublayers(model)
             if getattr(layer, "activity_regularizer", None) is not None]
    if names:
        what = f"layer(s) {', '.join(map(repr, names))} have an activity_regularizer"
    elif x is not None and not tf.executing_eagerly() and _depends_on(losses, tf.nest.flatten(x)):
        what = "the model adds a loss (add_loss) computed from its inputs"
    else:
        return
    raise ValueError(
        f"{what}, and the loss averages over a Keras mask's unmasked entries: Keras divides "
        "the penalty by rows and the loss by entries, which one split cannot both reproduce. "
        "Pass the mask as sample_weight instead (every entry counted), or drop the penalty")


def _depends_on(tensors, sources):
    """Whether any of the graph tensors `tensors` is computed from one of `sources` (same graph)."""
    targets = {t.op for t in sources if tf.is_tensor(t)}
    stack, seen = [t.op for t in tensors if tf.is_tensor(t)], set()
    while stack:
        op = stack.pop()
        if op in targets:
            return True
        if op not in seen:
            seen.add(op)
            stack.extend(t.op for t in op.inputs)
    return False


def normaliser_of(model, x, rule):
    """`D` of the whole batch `x` under `rule`, estimated from its first few examples (a
    float: the unit gradlab measures sums in; any positive value would be exact)."""
    rows = tf.nest.flatten(x)[0].shape[0]
    if rule != "mask":
        return float(rows)
    k = min(5, rows)
    per_example = float(tf.reduce_sum(tf.cast(_masks(model(take(x, 0, k), training=False))[0], tf.float32))) / k
    return max(per_example, 1.0) * rows


def _probe(model, loss_fn, x, y, start, n):
    pred = model(take(x, start, n), training=False)
    masks = _masks(pred)
    d = float(tf.reduce_sum(tf.cast(masks[0], tf.float32))) if masks else float(n)
    return float(tf.convert_to_tensor(loss_fn(take(y, start, n), pred))), {"mask": d, "examples": float(n)}


def _mean_of_parts(rule, pair):
    (both, db), (first, d1), (second, d2) = pair
    if db[rule] == 0:
        return True
    expected = (d1[rule] * first + d2[rule] * second) / db[rule]
    return abs(both - expected) <= 1e-4 * max(abs(both), abs(expected), 1e-6)


def _masks(pred):
    return [m for m in map(_compat.keras_mask, tf.nest.flatten(pred)) if m is not None]


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


def check_clip_norm(clip_norm):
    """`clip_norm` as a float (or None): a positive, finite number, else TypeError/ValueError
    naming the value (before any TensorFlow work)."""
    if clip_norm is None:
        return None
    if isinstance(clip_norm, bool) or not isinstance(clip_norm, numbers.Real):
        raise TypeError(f"clip_norm must be a positive number or None, got {clip_norm!r}")
    if not (math.isfinite(clip_norm) and clip_norm > 0):
        raise ValueError(f"clip_norm must be a positive number or None, got {clip_norm!r}")
    return float(clip_norm)


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
