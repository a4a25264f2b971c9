"""In-graph gradient accumulation: in tensors carried by one compiled loop, or in variables.

    acc <- 0;   for each micro-batch i:  acc <- acc + (S_i, dS_i, D_i);   apply(acc.grads / acc.norm)

Two homes for `acc` (the third, numpy on the host, is `host_average`):

- `loop_sum`: loop-carried tensors in one `tf.while_loop` over static-shaped micro-batches,
  so all micro-batches of an update run in one compiled call (XLA-ready) and Python
  dispatch is paid once per update.
- `Accumulators`: non-trainable `tf.Variable`s with zero / accumulate ops, one compiled call
  per micro-batch (the classic TF1 recipe: `zero_ops`, `accum_ops`, `train_step`, in TF2).

Lesson: notebooks/04-accumulating-in-variables.ipynb (the fused loop: notebooks/05-fused-accumulation.ipynb)
"""
from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from .. import _compat
from .gradients import densify
from .loss_terms import loss_terms
from .microbatch import split_sizes, sum_dtype

class Sums(NamedTuple):
    """`loss` = sum of S_i, `grads` = sum of dS_i/dw (None where S never reaches w), `norm` = sum
    of D_i, `broken` = micro-batches whose loss failed the contract's check (`contract`)."""
    loss: tf.Tensor
    grads: list
    norm: tf.Tensor
    broken: object = 0.0


def micro_sums(micro, part, variables, scale_loss=None, unit=1.0):
    """`Sums` of one micro-batch, `micro(part) -> (S, D)` or `(S, D, holds)` (the contract's
    check on its predictions, `contract.split_holds`), and the gradient of S, in units of `unit`.

    `unit` cancels in G / D; it keeps float16 gradients at Keras's scale: with `unit` = the
    update's normaliser, a micro-batch's gradient is the large batch's share of it, not D_i
    times larger (a LossScaleOptimizer would skip updates Keras's does not). `scale_loss`
    (a LossScaleOptimizer's) scales S before differentiating; the optimizer unscales once.
    """
    # No variables (an evaluation): nothing watched, so no activations kept for a gradient.
    with tf.GradientTape(watch_accessed_variables=bool(variables)) as tape:
        s, d, *holds = micro(part)
        # A micro-batch of no rows (a replica's empty shard) adds 0: its mean is 0/0, and
        # Keras's loss may even be shaped [0].
        s = tf.where(d > 0, tf.reduce_sum(tf.cast(s, sum_dtype())), tf.constant(0.0, sum_dtype())) / unit
        target = s if scale_loss is None else scale_loss(s)
    grads = densify(tape.gradient(target, variables))
    broken = 1.0 - tf.cast(holds[0], tf.float32) if holds else tf.constant(0.0)
    return Sums(s, grads, tf.cast(d, sum_dtype()) / unit, broken)


def loop_sum(micro, parts, variables, accum_steps, scale_loss=None, unit=1.0, overlap=1):
    """`Sums` over the micro-batches of `parts`, all in one compiled `tf.while_loop`.

    The split is `split_sizes(B, accum_steps)` (`[3, 3, 2, 2]` for 10 rows in 4), made
    statically when B is known at trace time and at run time when it is not (`model.fit`
    retraces with an unknown batch dimension once its batches differ in size: one trace then
    serves every B). No micro-batch is
    ever empty or padded, so only real rows reach the model, its metrics and XLA.
    Call inside `tf.function`.

    Args:
        micro: `micro(part) -> (S, D)`, called under a GradientTape in the loop body.
        parts: a nest of tensors sharing a first (batch) dimension: x, y, weights...
        variables: what to differentiate.
        accum_steps: micro-batches per update (at most B of them).
        scale_loss, unit: see `micro_sums`.
        overlap: micro-batches whose activations may be alive at once (the loop's
            `parallel_iterations`). 1 holds one micro-batch, the memory accumulation is for;
            2 lets one forward pass overlap the previous backward pass (twice the activations;
            faster only where the cores have room; lesson 11 measures its memory).
    Returns:
        `Sums`; gradients that are None in the first micro-batch are None.
    """
    parts = tf.nest.map_structure(tf.convert_to_tensor, parts)
    one = lambda part: micro_sums(micro, part, variables, scale_loss, unit)
    rows = batch_rows(parts)
    k = _max(_min(rows, accum_steps), 1)  # 1 for an empty replica shard: one empty micro-batch
    q, r = rows // k, rows % k            # r micro-batches of q + 1 rows, then k - r of q
    first_rows = q + _cast(r > 0)
    count_a, count_b = _max(r - 1, 0), k - _max(r, 1)
    start_b = first_rows + count_a * (q + 1)
    # Each micro-batch is cut from `parts` in the loop body, n rows from a moving start: XLA
    # then reads it in place (a dynamic-slice of static size n). Slicing off the rest of the
    # batch before the loop made XLA copy it whole, (N - 1) / N of the batch's inputs.
    take = lambda parts, start, n, i: tf.nest.map_structure(lambda p: _rows(p, start + i * n, n), parts)
    first = one(tf.nest.map_structure(lambda p: p[:first_rows], parts))
    return _loop(first, parts, [(lambda i, p: one(take(p, first_rows, q + 1, i)), count_a),
                                (lambda i, p: one(take(p, start_b, q, i)), count_b)], overlap)


class Accumulators:
    """One zero-initialised, non-trainable variable per trainable variable, plus the loss and
    normaliser sums.

    `accumulate(sums)` adds, `sums()` reads, `reset()` zeroes. A `None` gradient leaves its
    accumulator alone; `sums()` reports it as `None` until a gradient arrives.
    """

    def __init__(self, variables):
        # Zeros from each variable's shape and dtype: Variable.initialized_value(), which the
        # TF1 recipe used, raises NotImplementedError in TensorFlow 2.21.
        self.variables = [
            tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False, name=_short(v) + "_accum")
            for v in variables
        ]
        self.loss = tf.Variable(0.0, trainable=False, name="loss_accum", dtype=sum_dtype())
        self.norm = tf.Variable(0.0, trainable=False, name="norm_accum", dtype=sum_dtype())
        self.broken = tf.Variable(0.0, trainable=False, name="broken_accum")
        self._touched = [False] * len(self.variables)

    def accumulate(self, sums):
        """`acc += sums` (call inside or outside tf.function)."""
        self.loss.assign_add(sums.loss)
        self.norm.assign_add(sums.norm)
        self.broken.assign_add(sums.broken)
        for j, (acc, g) in enumerate(zip(self.variables, sums.grads)):
            if g is not None:
                acc.assign_add(g)
                self._touched[j] = True  # recorded once, at trace time: which grads exist

    def sums(self):
        grads = [acc.read_value() if t else None for acc, t in zip(self.variables, self._touched)]
        return Sums(self.loss.read_value(), grads, self.norm.read_value(), self.broken.read_value())

    def reset(self):
        for acc in self.variables + [self.loss, self.norm, self.broken]:
            acc.assign(tf.zeros_like(acc))


def fused_grads(model, loss_fn, x, y, sizes, sample_weight=None, rule="examples"):
    """Mean loss and mean gradient over `x`, in `len(sizes)` micro-batches of one loop.

        loss, grads = S / D, G / D   with   (S, G, D) = loop_sum(loss_terms, ...)

    Call inside `tf.function`. `sizes` must be `split_sizes(B, len(sizes))`, the one split
    gradlab makes (a list, or a tensor whose value is known at trace time).
    """
    static = tf.get_static_value(sizes) if tf.is_tensor(sizes) else sizes
    if static is None:
        raise ValueError(f"sizes must be known at trace time (static shapes), got {sizes!r}")
    static = [int(n) for n in static]
    if static != split_sizes(sum(static), len(static)):
        raise ValueError(f"sizes must be split_sizes({sum(static)}, {len(static)}) = "
                         f"{split_sizes(sum(static), len(static))}, the split gradlab makes; got {static}")
    parts = (x, y) if sample_weight is None else (x, y, sample_weight)
    micro = lambda part: loss_terms(model, loss_fn, part[0], part[1], rule, *part[2:])
    s = loop_sum(micro, parts, model.trainable_variables, len(static))
    return s.loss / s.norm, [None if g is None else g / s.norm for g in s.grads]


def _loop(first, parts, loops, overlap=1):
    """Start from `first` (Sums), add `step(i, parts)` for i < count, for each `(step, count)`.

    Which gradients are None is decided once, from `first`, at trace time; every step traces
    the same graph, so the loop carries exactly the others. A count known to be 0 or 1 at
    trace time makes no loop.
    """
    connected = [j for j, g in enumerate(first.grads) if g is not None]
    loss, norm, acc = first.loss, first.norm, [first.grads[j] for j in connected]
    broken = tf.convert_to_tensor(first.broken, tf.float32)

    def body(i, loss, norm, broken, acc, step, parts):
        s = step(i, parts)
        return (loss + s.loss, norm + s.norm, broken + s.broken,
                [a + s.grads[j] for a, j in zip(acc, connected)])

    for step, count in loops:
        # Each loop starts once the micro-batches before it are summed: nothing in a step
        # depends on the sum, so the runtime could start it beside them, and the memory of
        # their activations would add up.
        with tf.control_dependencies([loss, norm, *acc]):
            if not tf.is_tensor(count) and count <= 1:
                if count == 1:
                    zero = _zero_after(loss, acc)
                    if _compat.traced_for_xla():  # the micro-batch's own start waits (`_rows`)
                        loss, norm, broken, acc = body(zero, loss, norm, broken, acc, step, parts)
                    else:
                        step_parts = tf.nest.map_structure(lambda p: _rows(p, zero, batch_rows(p)), parts)
                        loss, norm, broken, acc = body(0, loss, norm, broken, acc, step, step_parts)
                continue
            i = tf.constant(0) + 0  # + 0: an op, so that it waits for the sum
        _, loss, norm, broken, acc = tf.while_loop(
            lambda i, *_: i < count,
            lambda i, l, d, b, a, step=step: (i + 1, *body(i, l, d, b, a, step, parts)),
            (i, loss, norm, broken, acc), parallel_iterations=overlap)
    grads = [None] * len(first.grads)
    for a, j in zip(acc, connected):
        grads[j] = a
    return Sums(loss, grads, norm, broken)


def _zero_after(loss, acc):
    """0, computed from `loss` and `acc`: rows read from a start plus it wait for them, under XLA too.

    XLA's scheduler ignores control dependencies: a micro-batch added without a loop (N = 2,
    or a count of 1) ran beside the one before it, both alive (at N = 2, as much memory as the
    whole batch). A start row `zero`, always 0 but computed from the sums, is a dependency
    XLA cannot fold away (no value is both NaN and finite). XLA's optimization barrier did
    not order them on its CPU backend, and copies its inputs without XLA. Without XLA the
    whole batch is re-read from `zero` (a slice that shares its rows); under XLA the
    micro-batch's own start adds it: a slice as long as the batch would be simplified away.
    """
    done = tf.add_n([tf.cast(tf.reduce_sum(a), tf.float32) for a in acc] + [tf.cast(loss, tf.float32)])
    return tf.cast(tf.logical_and(tf.math.is_nan(done), tf.math.is_finite(done)), tf.int32)


def batch_rows(parts):
    """The batch dimension: a Python int when known at trace time, else a scalar tensor."""
    p = tf.nest.flatten(parts)[0]
    return p.shape[0] if p.shape[0] is not None else tf.shape(p)[0]


# Split arithmetic on Python ints (static batch: static shapes) or on tensors (unknown batch).
def _min(a, b):
    return tf.minimum(a, b) if tf.is_tensor(a) or tf.is_tensor(b) else min(a, b)


def _max(a, b):
    return tf.maximum(a, b) if tf.is_tensor(a) or tf.is_tensor(b) else max(a, b)


def _cast(condition):
    return tf.cast(condition, tf.int32) if tf.is_tensor(condition) else int(condition)


def add_sums(a, b):
    """`a + b`, gradient by gradient (None where both are None)."""
    grads = [x if y is None else y if x is None else x + y for x, y in zip(a.grads, b.grads)]
    return Sums(a.loss + b.loss, grads, a.norm + b.norm, a.broken + b.broken)


def _rows(p, start, n):
    """Rows `start` to `start + n` of `p`, a slice of static size where the shape is known: a
    size of -1 ("to the end") with a moving start makes XLA pad the slice to the whole batch.
    Under XLA a start that is a tensor is a DynamicSlice: a `tf.slice` start that XLA can trace
    back to the batch makes it fold the batch in as a constant and compile every call anew."""
    rest = p.shape[1:]
    begin = tf.concat([[tf.cast(start, tf.int32)], tf.zeros_like(tf.shape(p)[1:])], 0)
    # A loop that runs 0 times is still compiled: there n may be one row more than the batch
    # (B rows in 1), a size XLA refuses, so it is capped at B (a loop that runs has n <= B).
    n = _min(n, batch_rows(p))
    cut = _compat.dynamic_slice if tf.is_tensor(start) and _compat.traced_for_xla() else tf.slice
    if rest.is_fully_defined() and not tf.is_tensor(n):
        return cut(p, begin, [n] + rest.as_list())
    # (under XLA a size read from tf.shape is a compile-time constant: XLA knows every shape)
    return cut(p, begin, tf.concat([[n], tf.shape(p)[1:]], 0))


def _short(v):
    name = getattr(v, "path", None) or v.name
    return name.split(":")[0].replace("/", "_")
