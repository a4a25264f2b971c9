"""What a loss divides by, and the rules that decide "exact, or refused", for `step` and `fit`.

    L = (w_1 l_1 + ... + w_n l_n) / D     D = rows ("examples") or counted entries ("entries":
                                           a Keras mask's unmasked entries, the targets not
                                           equal to a loss's `ignore_class`)
    S_i = D_i * L_i   =>   (S_1 + ... + S_k) / (D_1 + ... + D_k) = L of the whole batch

holds only when the loss is such a mean: both faces check it inside the update, on its own
micro-batches' predictions (`contract`), and refuse a sum, a mean over a fixed
`global_batch_size` or a loss that couples the rows of a batch in the same words.

Lesson: notebooks/07-pitfalls-what-to-count.ipynb
"""
from __future__ import annotations

import warnings

import keras
import tensorflow as tf

from .. import _compat
from .microbatch import sum_dtype

RULES = ("examples", "entries")


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
    elif x is not None and not tf.executing_eagerly() and depends_on(losses, tf.nest.flatten(x)):
        what = "the model adds a loss (add_loss) computed from its inputs"
    else:
        return
    raise ValueError(
        f"{what}, and the loss averages over a Keras mask's unmasked entries: Keras divides "
        "the penalty by rows and the loss by entries, which one split cannot both reproduce. "
        "Pass the mask as sample_weight instead (every entry counted), or drop the penalty")


def warn_if_split_changes(model, parts, optimizer=None, stacklevel=4):
    """Warn (UserWarning) with `split_warning`'s reason, if there is one, and when a
    LossScaleOptimizer's skips can differ from the large batch's (`LOSS_SCALE_WARNING`: a
    model that computes in float16).
    What only the traced forward pass shows is warned by `state_writes`. `stacklevel`: as
    `warnings.warn`'s, counted from here (the user's call, where the face calls through a
    prologue)."""
    message = split_warning(model, parts)
    if message:
        warnings.warn(message, UserWarning, stacklevel=stacklevel)
    if parts > 1 and isinstance(optimizer, keras.optimizers.LossScaleOptimizer) and computes_in_float16(model):
        warnings.warn(LOSS_SCALE_WARNING, UserWarning, stacklevel=stacklevel)


def computes_in_float16(model):
    """Whether `model` or one of its layers computes in float16 (a `mixed_float16` policy): only
    then can its gradients reach float16's limit, the case `LOSS_SCALE_WARNING` is about. A
    float32 or bfloat16 model under a LossScaleOptimizer overflows where the large batch does."""
    return any(getattr(layer, "compute_dtype", None) == "float16" for layer in [model, *_compat.sublayers(model)])


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
            "(lessons 17 and 21, notebooks/17-the-lab.ipynb and 21-reproducing-the-table.ipynb, "
            "measure by how much)")


def _losses(loss):
    return [fn for fn in tf.nest.flatten(loss) if fn is not None and not isinstance(fn, str)]


def depends_on(tensors, sources):
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
