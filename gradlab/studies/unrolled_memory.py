"""Peak memory of one update of B rows, written three ways, each in a fresh process.

    "large batch":        g = grad L_B                                   (one forward, one backward)
    "unrolled loop":      g = sum_i grad((n_i / B) L_i), a Python loop in one tf.function
                          (lesson 12's `MyAccumulatingModel`): k forward/backward pairs in one graph,
                          ordered only by the running sum, so TensorFlow may run several at once
    "AccumulatingModel":  the same sum in a `tf.while_loop` that runs one micro-batch at a time

The peak is the BFC allocator's, minus what it held before the measured updates (`memory.measure`).
A peak depends on the executor's scheduling: read the numbers a run prints, not a constant.

Lesson: notebooks/12-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

from ..core.microbatch import check_count
from . import memory

KINDS = ("large batch", "unrolled loop", "AccumulatingModel")
CHILD_TIMEOUT = 300


def peaks(accum_steps=4, rows=4096, hidden=1024, updates=2, parallel=2):
    """Each kind's `memory.measure` dict, each in a fresh process, `parallel` at a time.

    Args:
        accum_steps: micro-batches of the unrolled loop and of AccumulatingModel.
        rows, hidden: the batch B of random 784-pixel rows, and the width of the MLP's two
            hidden ReLU layers (784-hidden-hidden-10, SGD(0.01), no XLA).
        updates: measured updates after the first.
    Returns:
        {kind: measure's dict (peak_mb, held_mb, ...) or {"error": why}} for each of KINDS.
    """
    args = [check_count(n, v) for n, v in (("accum_steps", accum_steps), ("rows", rows),
                                           ("hidden", hidden), ("updates", updates))]
    run = lambda kind: memory.in_fresh_process(  # noqa: E731
        [__name__, kind, *map(str, args)], CHILD_TIMEOUT)
    with ThreadPoolExecutor(check_count("parallel", parallel)) as pool:
        return dict(zip(KINDS, pool.map(run, KINDS)))


def _step(kind, accum_steps, rows, hidden):
    """(a zero-argument callable making one update of `kind` on fixed random data, its model)."""
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(hidden, activation="relu"),
                              keras.layers.Dense(hidden, activation="relu"), keras.layers.Dense(10)])
    x = tf.constant(np.random.default_rng(0).standard_normal((rows, 784)), tf.float32)
    y = tf.constant(np.random.default_rng(1).integers(0, 10, rows))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.SGD(0.01)
    if kind == "AccumulatingModel":
        from ..training.fit import AccumulatingModel
        acc = AccumulatingModel(model, accum_steps=accum_steps, jit_compile=False)
        acc.compile(optimizer=optimizer, loss=loss_fn)
        return (lambda: acc.train_on_batch(x, y)), model
    k = 1 if kind == "large batch" else accum_steps

    @tf.function(jit_compile=False)
    def update():
        total = [tf.zeros_like(v) for v in model.trainable_variables]
        for i in range(k):  # unrolled: k forward/backward pairs in the one traced graph
            lo, hi = i * rows // k, (i + 1) * rows // k
            with tf.GradientTape() as tape:
                loss = (hi - lo) / rows * loss_fn(y[lo:hi], model(x[lo:hi], training=True))
            total = [t + g for t, g in zip(total, tape.gradient(loss, model.trainable_variables))]
        optimizer.apply(total, model.trainable_variables)
    return update, model


def _main(argv):
    kind, accum_steps, rows, hidden, updates = argv[0], *map(int, argv[1:])
    if kind not in KINDS:
        raise SystemExit(f"kind must be one of {KINDS}, got {kind!r}")
    from .._quiet import quiet
    quiet()
    print(json.dumps(memory.measure(_step(kind, accum_steps, rows, hidden)[0], updates=updates)))


if __name__ == "__main__":
    _main(sys.argv[1:])
