"""In-graph gradient accumulation: into variables, or in one compiled loop.

    acc <- 0;   for each micro-batch i:  acc <- acc + w_i * grads_i;   apply(acc)

Two ways to hold `acc`:

- `Accumulators`: non-trainable `tf.Variable`s with zero / accumulate ops, one call per
  micro-batch (the classic TF1 recipe, in TF2).
- `fused_grads`: loop-carried tensors in one `tf.while_loop` over static-shaped
  micro-batches, so all micro-batches of an update run in one compiled call (XLA-ready)
  and Python dispatch is paid once per update.

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .gradients import densify, loss_and_grads


class Accumulators:
    """One zero-initialised, non-trainable variable per trainable variable.

    `accumulate(grads)` adds, `values()` reads, `reset()` zeroes. A `None` gradient leaves
    its accumulator alone; `values()` reports it as `None` until a gradient arrives.
    """

    def __init__(self, variables):
        # Zeros from each variable's shape and dtype: Variable.initialized_value(), which the
        # TF1 recipe used, raises NotImplementedError in TensorFlow 2.21.
        self.variables = [
            tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False, name=_short(v) + "_accum")
            for v in variables
        ]
        self._touched = [False] * len(self.variables)

    def accumulate(self, grads):
        """`acc_j += grads_j` for every non-None gradient (call inside or outside tf.function)."""
        for j, (acc, g) in enumerate(zip(self.variables, densify(grads))):
            if g is not None:
                acc.assign_add(g)
                self._touched[j] = True  # recorded once, at trace time: which grads exist

    def values(self):
        return [acc if t else None for acc, t in zip(self.variables, self._touched)]

    def reset(self):
        for acc in self.variables:
            acc.assign(tf.zeros_like(acc))


# Loop iterations that may run at once (XLA runs them one by one). Measured on 2 CPU cores:
# 2 is ~25% faster than 1 (one micro-batch's forward pass overlaps the previous one's
# backward pass), and peak memory stays flat at about two micro-batches whatever
# accum_steps is. tf.while_loop's default, 10, is ~15% faster again on tiny micro-batches,
# but memory then grows with N (conv, b=32: 22 MB at N=2, 76 MB at N=32).
PARALLEL_ITERATIONS = 2


def fused_grads(model, loss_fn, x, y, sizes, sample_weight=None, scale_loss=None):
    """Mean loss and mean gradient over `x`, computed in `len(sizes)` micro-batches in-graph.

        loss, acc = w_0 * (loss_0, grads_0)         (peeled: finds the None gradients)
        for i in 1 .. N-1:   loss, acc += w_i * (loss_i, grads_i),    w_i = n_i / sum(sizes)

    Call inside `tf.function`. Micro-batch i is `x[o_i : o_i + n_i]`. Each run of equal
    sizes (`split_sizes` makes at most two: n+1, then n) is reshaped to `[count, n, ...]`
    and indexed in a `tf.while_loop`, so every micro-batch has a static shape (which XLA
    needs) and an iteration runs few ops. The gradient is taken inside the loop body, so a
    micro-batch's activations are freed before the next ones are made. Gradients that are
    `None` (variables the loss does not touch) stay `None`.

    Args:
        model, loss_fn: as in `make_strategy`.
        x, y: the examples of this update (or of this tower).
        sizes: micro-batch sizes summing to `len(x)`: a list, or a tensor whose value is
            known at trace time (`tf.constant`).
        sample_weight, scale_loss: sliced and passed on to `loss_and_grads`.
    Returns:
        `(loss, grads)`: the weighted mean loss and the list of mean gradients.
    """
    parts = [x, y] + ([] if sample_weight is None else [sample_weight])

    def micro(batch, w):
        sw = batch[2] if len(batch) > 2 else None
        loss, grads = loss_and_grads(model, loss_fn, batch[0], batch[1], w,
                                     sample_weight=sw, scale_loss=scale_loss)
        return tf.cast(loss, tf.float32) * w, densify(grads)

    static = tf.get_static_value(sizes) if tf.is_tensor(sizes) else sizes
    if static is None:
        raise ValueError(f"sizes must be known at trace time (static shapes), got {sizes!r}")
    sizes = [int(n) for n in static]
    total = sum(sizes)
    loops = []
    for k, (o, n, count) in enumerate(_runs(sizes)):
        # tf.nest: a model with several inputs or outputs takes dicts or lists of tensors.
        stack = tf.nest.map_structure(lambda p, o=o, n=n, count=count: _stack(p, o, n, count), parts)
        step = lambda i, stack=stack, w=n / total: micro(
            tf.nest.map_structure(lambda s: tf.gather(s, i), stack), w)
        if k == 0:
            first = micro(tf.nest.map_structure(lambda s: s[0], stack), n / total)
        loops.append((step, 1 if k == 0 else 0, count))
    return _accumulate(first, loops)


def _accumulate(first, loops):
    """Start from `first = (loss, grads)`, add `step(i)` for each `(step, start, stop)`.

    Which gradients are `None` is decided once, from `first`, at trace time; every step
    traces the same graph, so the loop carries exactly the others. (Asking the tape for
    zeros instead fails on Keras 3 variables, whose dtype is a string.)
    """
    loss, grads = first
    connected = [j for j, g in enumerate(grads) if g is not None]
    acc = [grads[j] for j in connected]

    def body(i, loss, acc, step):
        loss_i, grads_i = step(i)
        return loss + loss_i, [a + grads_i[j] for a, j in zip(acc, connected)]

    for step, start, stop in loops:
        # Each loop starts once the micro-batches before it are summed: nothing in a step
        # depends on the sum, so the runtime could start it beside them, and the memory of
        # their activations would add up.
        with tf.control_dependencies([loss, *acc]):
            if stop - start <= 1:  # zero or one micro-batch
                loss, acc = (loss, acc) if stop == start else body(start, loss, acc, step)
                continue
            i = tf.constant(start) + 0  # + 0: an op, so that it waits for the sum
        _, loss, acc = tf.while_loop(
            lambda i, *_: i < stop, lambda i, l, a, step=step: (i + 1, *body(i, l, a, step)),
            (i, loss, acc), parallel_iterations=PARALLEL_ITERATIONS)
    grads = [None] * len(grads)
    for a, j in zip(acc, connected):
        grads[j] = a
    return loss, grads


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
    rest = p.shape[1:]
    if rest.is_fully_defined():
        return tf.reshape(p, [count, n] + rest.as_list())
    return tf.reshape(p, tf.concat([[count, n], tf.shape(p)[1:]], axis=0))


def _short(v):
    name = getattr(v, "path", None) or v.name
    return name.split(":")[0].replace("/", "_")
