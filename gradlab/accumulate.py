"""In-graph gradient accumulation: in tensors carried by one compiled loop, or in variables.

    acc <- 0;   for each micro-batch i:  acc <- acc + (S_i, dS_i, D_i);   apply(acc.grads / acc.norm)

Two homes for `acc` (the third, numpy on the host, is `host_average`):

- `loop_sum`: loop-carried tensors in one `tf.while_loop` over static-shaped micro-batches,
  so all micro-batches of an update run in one compiled call (XLA-ready) and Python
  dispatch is paid once per update.
- `Accumulators`: non-trainable `tf.Variable`s with zero / accumulate ops, one compiled call
  per micro-batch (the classic TF1 recipe: `zero_ops`, `accum_ops`, `train_step`, in TF2).

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from .gradients import densify, loss_terms

# Loop iterations that may run at once (XLA runs them one by one). Measured on 2 CPU cores:
# 2 is ~25% faster than 1 (one micro-batch's forward pass overlaps the previous one's
# backward pass), and peak memory stays flat at about two micro-batches whatever
# accum_steps is; 10 (tf.while_loop's default) is ~15% faster again on tiny micro-batches,
# but memory then grows with accum_steps (conv, b=32: 22 MB at N=2, 76 MB at N=32).
PARALLEL_ITERATIONS = 2


class Sums(NamedTuple):
    """`loss` = sum of S_i, `grads` = sum of dS_i/dw (None where S never reaches w), `norm` = sum of D_i."""
    loss: tf.Tensor
    grads: list
    norm: tf.Tensor


def micro_sums(micro, part, variables, scale_loss=None):
    """`Sums` of one micro-batch: `micro(part) -> (S, D)` and the gradient of S.

    `scale_loss` (a LossScaleOptimizer's) scales S before differentiating; the optimizer
    unscales once per update.
    """
    with tf.GradientTape() as tape:
        s, d = micro(part)
        # A micro-batch of no rows (a replica's empty shard, or the short last micro-batch
        # where none is left) adds 0: its mean is 0/0, and Keras's loss may even be shaped [0].
        s = tf.where(d > 0, tf.reduce_sum(tf.cast(s, tf.float32)), 0.0)
        target = s if scale_loss is None else scale_loss(s)
    grads = densify(tape.gradient(target, variables))
    return Sums(s, grads, tf.cast(d, tf.float32))


def loop_sum(micro, parts, variables, accum_steps, sizes=None, scale_loss=None):
    """`Sums` over the micro-batches of `parts`, all in one compiled `tf.while_loop`.

    Call inside `tf.function`. Every micro-batch has a static shape, which XLA needs, and an
    iteration takes its gradient inside the loop, so its activations are freed before the
    next micro-batch's are made.

    Args:
        micro: `micro(part) -> (S, D)`, called under a GradientTape in the loop body.
        parts: a nest of tensors sharing a first (batch) dimension: x, y, weights...
        variables: what to differentiate.
        accum_steps: micro-batches per update.
        sizes: static micro-batch sizes (`split_sizes`): runs of equal sizes are reshaped to
            `[count, n, ...]`. None when the batch dimension is unknown at trace time
            (`model.fit`): then B rows run as micro-batches of `m = ceil(B / accum_steps)`
            rows and one shorter last one, `B - m * (B // m)` rows, if any (at most
            `accum_steps` micro-batches; no padding, so nothing but real rows reaches the
            model, its metrics or its BatchNorm statistics). One trace serves every B. The
            same split is made when None is passed but the batch dimension is known.
        scale_loss: see `micro_sums`.
    Returns:
        `Sums`; gradients that are None in the first micro-batch are None.
    """
    one = lambda part: micro_sums(micro, part, variables, scale_loss)
    take = lambda stack, i: tf.nest.map_structure(lambda s: tf.gather(s, i), stack)
    rows = tf.nest.flatten(parts)[0].shape[0]
    if sizes is None and rows:  # known after all (a dataset that divides evenly, XLA's probe)
        sizes = _ceil_sizes(rows, accum_steps)
    if sizes is None:
        first, stack, count, last = _split_unknown(parts, accum_steps)
        short = tf.cast(tf.shape(tf.nest.flatten(last)[0])[0] > 0, tf.int32)  # 0 or 1 of them
        return _loop(one(first), [(lambda i: one(take(stack, i)), 0, count),
                                  (lambda i: one(last), 0, short)])
    loops, first = [], None
    for k, (o, n, count) in enumerate(_runs(sizes)):
        stack = tf.nest.map_structure(lambda p, o=o, n=n, count=count: _stack(p, o, n, count), parts)
        step = lambda i, stack=stack: one(take(stack, i))
        if k == 0:
            first = step(0)
        loops.append((step, 1 if k == 0 else 0, count))
    return _loop(first, loops)


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
        self.loss = tf.Variable(0.0, trainable=False, name="loss_accum")
        self.norm = tf.Variable(0.0, trainable=False, name="norm_accum")
        self._touched = [False] * len(self.variables)

    def accumulate(self, sums):
        """`acc += sums` (call inside or outside tf.function)."""
        self.loss.assign_add(sums.loss)
        self.norm.assign_add(sums.norm)
        for j, (acc, g) in enumerate(zip(self.variables, sums.grads)):
            if g is not None:
                acc.assign_add(g)
                self._touched[j] = True  # recorded once, at trace time: which grads exist

    def sums(self):
        grads = [acc.read_value() if t else None for acc, t in zip(self.variables, self._touched)]
        return Sums(self.loss.read_value(), grads, self.norm.read_value())

    def reset(self):
        for acc in self.variables + [self.loss, self.norm]:
            acc.assign(tf.zeros_like(acc))


def fused_grads(model, loss_fn, x, y, sizes, sample_weight=None, rule="examples"):
    """Mean loss and mean gradient over `x`, in `len(sizes)` micro-batches of one loop.

        loss, grads = S / D, G / D   with   (S, G, D) = loop_sum(loss_terms, ...)

    Call inside `tf.function`. `sizes` are static micro-batch sizes (a list, or a tensor whose
    value is known at trace time).
    """
    static = tf.get_static_value(sizes) if tf.is_tensor(sizes) else sizes
    if static is None:
        raise ValueError(f"sizes must be known at trace time (static shapes), got {sizes!r}")
    parts = (x, y) if sample_weight is None else (x, y, sample_weight)
    micro = lambda part: loss_terms(model, loss_fn, part[0], part[1], rule, *part[2:])
    s = loop_sum(micro, parts, model.trainable_variables, len(static), [int(n) for n in static])
    return s.loss / s.norm, [None if g is None else g / s.norm for g in s.grads]


def _loop(first, loops):
    """Start from `first` (Sums), add `step(i)` for each `(step, start, stop)` in a while loop.

    Which gradients are None is decided once, from `first`, at trace time; every step traces
    the same graph, so the loop carries exactly the others.
    """
    connected = [j for j, g in enumerate(first.grads) if g is not None]
    loss, norm, acc = first.loss, first.norm, [first.grads[j] for j in connected]

    def body(i, loss, norm, acc, step):
        s = step(i)
        return loss + s.loss, norm + s.norm, [a + s.grads[j] for a, j in zip(acc, connected)]

    for step, start, stop in loops:
        # Each loop starts once the micro-batches before it are summed: nothing in a step
        # depends on the sum, so the runtime could start it beside them, and the memory of
        # their activations would add up.
        with tf.control_dependencies([loss, norm, *acc]):
            if not tf.is_tensor(stop) and stop - start <= 1:  # zero or one micro-batch: no loop
                if stop > start:
                    loss, norm, acc = body(start, loss, norm, acc, step)
                continue
            i = tf.constant(start) + 0  # + 0: an op, so that it waits for the sum
        _, loss, norm, acc = tf.while_loop(
            lambda i, *_: i < stop,
            lambda i, l, d, a, step=step: (i + 1, *body(i, l, d, a, step)),
            (i, loss, norm, acc), parallel_iterations=PARALLEL_ITERATIONS)
    grads = [None] * len(first.grads)
    for a, j in zip(acc, connected):
        grads[j] = a
    return Sums(loss, grads, norm)


def _runs(sizes):
    """`[(offset, n, count)]`: consecutive micro-batches of equal size n, grouped."""
    runs, o = [], 0
    for n in sizes:
        if runs and runs[-1][1] == n:
            runs[-1][2] += 1
        else:
            runs.append([o, n, 1])
        o += n
    return [tuple(r) for r in runs]


def _stack(p, o, n, count):
    """Rows `o : o + n * count` of `p` as a `[count, n, ...]` tensor."""
    p = tf.convert_to_tensor(p)
    if o or p.shape[0] != n * count:
        p = p[o:o + n * count]
    return _reshape(p, count, n)


def _ceil_sizes(rows, accum_steps):
    """The split `_split_unknown` makes, for `rows` known at trace time: 11, 4 -> [3, 3, 3, 2]."""
    m = -(-rows // accum_steps)
    return [m] * (rows // m) + ([rows % m] if rows % m else [])


def _split_unknown(parts, accum_steps):
    """`(first, stack, count, last)` for B rows known only at run time, m = ceil(B / accum_steps):
    `first` is rows `[0, m)`, `stack` the next `count` micro-batches of m rows as
    `[count, m, ...]`, `last` the remaining `B - m * (B // m)` rows (possibly none)."""
    rows = tf.shape(tf.nest.flatten(parts)[0])[0]
    m = tf.maximum((rows + accum_steps - 1) // accum_steps, 1)
    full = rows // m  # micro-batches of m rows; 0 only when B = 0 (an empty replica shard)
    count = tf.maximum(full - 1, 0)

    rows_of = lambda lo, hi: tf.nest.map_structure(lambda p: tf.convert_to_tensor(p)[lo:hi], parts)
    stack = tf.nest.map_structure(lambda p: _reshape(p, count, m), rows_of(m, m + count * m))
    return rows_of(0, m), stack, count, rows_of(full * m, rows)


def add_sums(a, b):
    """`a + b`, gradient by gradient (None where both are None)."""
    grads = [x if y is None else y if x is None else x + y for x, y in zip(a.grads, b.grads)]
    return Sums(a.loss + b.loss, grads, a.norm + b.norm)


def _reshape(p, count, n):
    rest = p.shape[1:]
    if rest.is_fully_defined():
        return tf.reshape(p, [count, n] + rest.as_list())
    return tf.reshape(p, tf.concat([[count, n], tf.shape(p)[1:]], axis=0))


def _short(v):
    name = getattr(v, "path", None) or v.name
    return name.split(":")[0].replace("/", "_")
