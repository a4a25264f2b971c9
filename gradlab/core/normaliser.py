"""What a loss divides by, and the rules that decide "exact, or refused", for `step` and `fit`.

    L = (w_1 l_1 + ... + w_n l_n) / D     D = rows ("examples") or counted entries ("entries":
                                           a Keras mask's unmasked entries, the targets not
                                           equal to a loss's `ignore_class`)
    S_i = D_i * L_i   =>   (S_1 + ... + S_k) / (D_1 + ... + D_k) = L of the whole batch

holds only when the loss is such a mean, so before any update both faces probe it on the
first batch (`probe`): on pairs of rows, the loss must be the D-weighted mean of each row's
loss. A sum, a mean over a fixed `global_batch_size` and a loss that couples the rows of a
batch (in-batch negatives, a contrastive loss) fail it and are refused, in the same words
from `step` and from `fit`.

Lesson: notebooks/06-pitfalls.ipynb
"""
from __future__ import annotations

import math
import warnings

import keras
import numpy as np
import tensorflow as tf

from .. import _compat
from .microbatch import sum_dtype, take

RULES = ("examples", "entries")
PROBE_ROWS = 5    # rows of the first batch the pair probe uses: 4 pairs
PROBE_GROUP = 16  # rows probed against their two halves


def check_reduction(loss):
    """ValueError naming the first Keras loss in `loss` (one, or a list or dict) whose
    reduction does not divide by rows or entries ("sum", "mean_with_sample_weight"):
    checked when a strategy is made or a model compiled, before any TensorFlow work."""
    for fn in _losses(loss):
        reduction = getattr(fn, "reduction", None)
        if isinstance(fn, keras.losses.Loss) and reduction not in ("sum_over_batch_size", "mean", "none", None):
            raise ValueError(
                f"cannot accumulate this loss exactly: {type(fn).__name__} has reduction "
                f"{reduction!r}, which does not divide by the rows or entries of the batch, so "
                "splitting the batch would change the update. Use reduction "
                "'sum_over_batch_size' (Keras's default), or train with accum_steps=1")


def entries(y, y_pred, loss):
    """The entries a mean `loss` averages over, as a boolean tensor, or None for every entry
    of every row: the Keras mask of the one output `y_pred`, and-ed with `y != ignore_class`
    when `loss` (a Keras loss, or a list or dict of them) has one.

    Raises ValueError when the model has several outputs and one of them is masked or
    ignores a class: that output would need a normaliser of its own besides the others'.
    """
    flat = tf.nest.flatten(y_pred)
    masks = [_compat.keras_mask(p) for p in flat]
    ignore = [c for c in (getattr(fn, "ignore_class", None) for fn in _losses(loss)) if c is not None]
    if len(flat) > 1 and (ignore or any(m is not None for m in masks)):
        raise ValueError(
            f"{sum(m is not None for m in masks)} of the model's {len(flat)} outputs carry a Keras "
            f"mask and {len(ignore)} loss(es) an ignore_class: one update has one normaliser, so "
            "an output averaged over its own entries cannot be split exactly beside the others. "
            "Pass the mask as sample_weight instead, or use one output")
    mask = masks[0]
    if ignore:
        y = tf.convert_to_tensor(tf.nest.flatten(y)[0])
        if y.shape.rank == flat[0].shape.rank and y.shape[-1] == 1:
            y = tf.squeeze(y, -1)
        valid = tf.not_equal(y, tf.cast(ignore[0], y.dtype))  # Keras's own rule
        mask = valid if mask is None else tf.logical_and(tf.cast(mask, tf.bool), valid)
    return mask


def normaliser(rule, x, y, y_pred, loss):
    """`D` of one micro-batch under `rule` (one of `RULES`), a scalar in `sum_dtype()`."""
    if rule == "entries":
        return tf.reduce_sum(tf.cast(entries(y, y_pred, loss), sum_dtype()))
    return tf.cast(tf.shape(tf.nest.flatten(x)[0])[0], sum_dtype())


def keras_rule(y, y_pred, loss):
    """The rule Keras's own mean reduction follows on this output: "entries" if it is masked
    or the loss ignores a class, else "examples"."""
    return "examples" if entries(y, y_pred, loss) is None else "entries"


def probe(loss_of, loss, x, y, sample_weight=None, candidates=None, weighted=False):
    """The rule `loss_of` follows on the first batch, and its entries per row.

    Runs eagerly, before any update. On each pair of consecutive rows among the first
    `PROBE_ROWS`, and on the first `PROBE_GROUP` rows against their two halves, `loss(a + b)`
    must equal `(D_a loss(a) + D_b loss(b)) / (D_a + D_b)` for the rule's D (relative
    tolerance 1e-4); the first of `candidates` that holds on every split is the rule
    (default: `keras_rule`). With weights (or `weighted`: Keras's `class_weight`), the probe
    weighs rows 1, 2, 3, ... so that a loss that does not weigh row by row shows.

    Args:
        loss_of: `loss_of(x, y, sample_weight) -> (mean loss, y_pred)`, eager, training=False.
        loss: the Keras loss(es) it applies (for `ignore_class`).
        x, y, sample_weight: the first batch (a nest of arrays or tensors).
        candidates: rules to try, in order.
        weighted: probe with weights even if `sample_weight` is None.
    Returns:
        `(rule, per_row)`: per_row is D per row on the probed rows (1.0 for "examples"),
        the scale of one update's normaliser (`B * per_row`).
    Raises:
        ValueError naming why no rule holds (`refusal`).
    """
    rows = tf.nest.flatten(x)[0].shape[0]
    if weighted or sample_weight is not None:
        # weights that differ from row to row: a per-row mean splits under any weights, a
        # loss that weighs its batch mean by the mean weight does not
        sample_weight = _varying(sample_weight, rows)
    value = _on_rows(loss_of, x, y, sample_weight)
    k = min(PROBE_ROWS, rows)
    _, pred = value(0, k)
    ys = take(y, 0, k)
    if candidates is None:
        candidates = [keras_rule(ys, pred, loss)]
    elif keras_rule(ys, pred, loss) == "examples":
        candidates = [r for r in candidates if r != "entries"] or ["examples"]
    candidates, seen = _holding(candidates, value, loss, x, y)
    if not candidates:
        raise ValueError(refusal(seen))
    rule = candidates[0]
    d = _norms(take(x, 0, k), ys, pred, loss)[rule] if rule == "entries" else k
    return rule, max(float(d) / k, 1e-3) if k else 1.0


def splits_in_training(loss_of_training, loss, x, y, rule, state):
    """Whether the training forward pass splits as `probe` found the inference one does: the
    same pairs and halves, through `loss_of_training` (the model called with training=True).
    A layer that mixes rows or draws randomness only when training fails it. `state` (the
    model's non-trainable variables: BatchNorm statistics, seeds) is put back afterwards."""
    saved = [v.numpy() for v in state]
    try:
        holding, _ = _holding([rule], _on_rows(loss_of_training, x, y, None), loss, x, y)
    finally:
        for v, value in zip(state, saved):
            v.assign(value)
    return bool(holding)


def _on_rows(loss_of, x, y, sample_weight):
    return lambda start, n: loss_of(take(x, start, n), take(y, start, n),
                                    None if sample_weight is None else take(sample_weight, start, n))


def _holding(candidates, value, loss, x, y):
    """The rules among `candidates` for which every probed split holds, and the values seen:
    pairs of rows, then the first PROBE_GROUP rows against their two halves (a loss that
    couples three or more rows, such as in-batch hard negatives, can look split on pairs)."""
    rows = tf.nest.flatten(x)[0].shape[0]
    k, group = min(PROBE_ROWS, rows), min(PROBE_GROUP, rows)
    splits = [(a, 1, 1) for a in range(k - 1)] + ([(0, group // 2, group - group // 2)] if group > 2 else [])
    seen = []
    for start, n1, n2 in splits:
        parts = []
        for s0, n in ((start, n1 + n2), (start, n1), (start + n1, n2)):
            l, p = value(s0, n)
            parts.append((float(l), _norms(take(x, s0, n), take(y, s0, n), p, loss)))
        seen.append(tuple(round(v, 6) for v, _ in parts))
        candidates = [r for r in candidates if _mean_of_parts(r, parts)]
    return candidates, seen


def _varying(sample_weight, rows):
    """Weights 1, 2, 3, 1, 2, 3, ... down the rows, shaped like `sample_weight` (or (rows,);
    a dict or list of per-output weights: each of them)."""
    if sample_weight is not None and keras.tree.is_nested(sample_weight):
        return keras.tree.map_structure(lambda w: _varying(w, rows), sample_weight)
    shape = (rows,) if sample_weight is None else np.shape(sample_weight)
    pattern = (1.0 + np.arange(rows) % 3).reshape((rows,) + (1,) * (len(shape) - 1))
    return np.broadcast_to(pattern, shape).astype("float32")


def refusal(seen):
    """The one message both faces refuse a loss with, `seen` its (pair, first, second) values."""
    sums = all(abs(b - (f + s)) <= 1e-4 * max(abs(b), 1e-6) for b, f, s in seen)
    why = ("it adds up the rows' losses (a sum, or a sum over a fixed global_batch_size) "
           "instead of averaging them" if sums else
           "it divides by something other than the rows or entries of the batch, or it "
           "couples the rows of a batch (in-batch negatives, a "
           "contrastive loss, batch statistics), which no split into micro-batches can reproduce")
    return (f"cannot accumulate this loss exactly: on pairs of rows its value is not the mean of "
            f"each row's value (pair, first, second: {seen}), so {why}. Use a per-example mean "
            "(a keras.losses.Loss with reduction 'sum_over_batch_size', or a function returning "
            "one loss per example), or train with accum_steps=1")


def check_masked_penalties(model, losses=(), x=None):
    """Raise ValueError if a penalty of `model` depends on the data: an activity regulariser
    (any layer), or, while a step is traced, one of `losses` (the model's own, `add_loss`)
    computed from the micro-batch `x`. Under the "entries" rule a split weighs each
    micro-batch by its entries, while Keras averages such a penalty over the batch's rows, so
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


def warn_if_split_changes(model, parts, optimizer=None, splits_in_training=None):
    """Warn (UserWarning) with `split_warning`'s reason, if there is one; else, if
    `splits_in_training()` (a zero-argument check, see the function of that name) is False,
    that the training forward pass is not row by row; and when a LossScaleOptimizer's skips
    can differ from the large batch's (`LOSS_SCALE_WARNING`)."""
    message = split_warning(model, parts)
    if message is None and parts > 1 and splits_in_training is not None and not splits_in_training():
        message = (f"the model's training forward pass (call with training=True) is not row by row: "
                   "on the first rows its loss is not the mean of its parts' losses, as it is in "
                   "inference (a layer that mixes rows or draws randomness when training), so each "
                   f"of the {parts} micro-batches runs its own and this update is close to the "
                   "large batch's, not equal")
    if message:
        warnings.warn(message, UserWarning, stacklevel=4)
    if parts > 1 and isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        warnings.warn(LOSS_SCALE_WARNING, UserWarning, stacklevel=4)


# Gradients reach the loss scale at Keras's per-row scale, but a float16 weight gradient is a
# sum over rows: over B/N rows it overflows later than the large batch's over B rows.
LOSS_SCALE_WARNING = (
    "LossScaleOptimizer: each micro-batch's float16 gradients are at Keras's scale, but they "
    "sum fewer rows than the large batch's, so near float16's limit (a loss scale close to "
    "overflowing) an update the large batch would skip can be applied, and the scale then "
    "differs from Keras's")


def split_warning(model, parts):
    """Why an update of `parts` micro-batches differs from the large batch, or None: its
    Dropout and noise layers (rate or stddev not 0) and trainable BatchNormalization layers
    run once per micro-batch."""
    random = lambda layer: (("Dropout" in type(layer).__name__ or "Noise" in type(layer).__name__)
                            and getattr(layer, "rate", getattr(layer, "stddev", 1)) != 0)
    layers = [layer for layer in _compat.sublayers(model) if layer.trainable and (
        isinstance(layer, keras.layers.BatchNormalization) or random(layer))]
    if parts < 2 or not layers:
        return None
    return (f"{', '.join(repr(l.name) for l in layers)}: each of the {parts} micro-batches runs "
            "its own forward pass (Dropout and noise layers draw their own masks or noise, "
            "BatchNormalization normalises with its own statistics), so this update is close to the large batch's, not equal "
            "(lesson 6, notebooks/06-pitfalls.ipynb, measures by how much)")


def _norms(x, y, y_pred, loss):
    mask = entries(y, y_pred, loss)
    n = float(tf.nest.flatten(x)[0].shape[0])
    return {"examples": n, "entries": n if mask is None else float(tf.reduce_sum(tf.cast(mask, tf.float32)))}


def _mean_of_parts(rule, pair):
    (both, db), (first, d1), (second, d2) = pair
    if db[rule] == 0 or not all(math.isfinite(v) for v in (both, first, second)):
        return True  # nothing to compare: no entries, or a non-finite row (the update's guard says so)
    expected = (d1[rule] * first + d2[rule] * second) / db[rule]
    return abs(both - expected) <= 1e-4 * max(abs(both), abs(expected), 1e-6)


def _losses(loss):
    return [fn for fn in tf.nest.flatten(loss) if fn is not None and not isinstance(fn, str)]


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
