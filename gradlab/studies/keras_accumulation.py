"""What Keras 3's own `gradient_accumulation_steps=N` divides by and counts, probed on a lone weight.

    update              = (g_N + sum_{i<N} g_i) / N     Keras: `(g + acc_g) / steps`, whatever n_i
    optimizer.iterations = _iterations // N             updates (the EMA reads this one)
    learning rate        = schedule(_iterations)        micro-steps, read at the update's N-th call
    PerUpdate(schedule, N)(step) = schedule(step // N)  the rate of update k, read at kN + N - 1
    under_strategy(strategy, model_fn, x, y, ...)       N under a tf.distribute strategy: what fit does

Lesson: notebooks/06-keras-accumulation.ipynb; under_strategy: notebooks/15-fit-across-replicas.ipynb
"""
from __future__ import annotations

import numbers
import re

import keras
import numpy as np

from gradlab._compat import counters


def probe(grads=(1.0, 2.0, 3.0, 4.0)):
    """One Keras update of a lone weight (0.0) with `SGD(1.0, gradient_accumulation_steps=N)`,
    N = len(grads), fed the gradients `grads` one `apply_gradients` call each.

    Returns:
        a list of dicts, one per call: `weight` after it, `iterations` (the public counter)
        and `micro_steps` (the private `_iterations` that `apply` increments).
    """
    if len(grads) < 2 or not all(isinstance(g, numbers.Real) for g in grads):
        raise ValueError(f"probe needs two or more real gradients, got {grads!r}")
    w = keras.Variable(np.zeros(1, np.float32))
    opt = keras.optimizers.SGD(1.0, gradient_accumulation_steps=len(grads))
    calls = []
    for g in grads:
        opt.apply_gradients([(np.array([g], np.float32), w)])
        calls.append({"weight": float(w.numpy()[0]), "iterations": int(opt.iterations.numpy()),
                      "micro_steps": micro_steps(opt)})
    return calls


def micro_steps(optimizer):
    """The `apply` calls `optimizer` has counted: Keras's private `_iterations`, read through
    gradlab's probed layer (`_compat.counters`), so a Keras that renames it fails loudly.
    Under `gradient_accumulation_steps=N`, `optimizer.iterations` is this `// N`."""
    return int(counters(optimizer)[0].numpy())


def applied_rates(schedule, accum_steps=None, updates=3):
    """The learning rate each of `updates` SGD updates applies (a lone weight, gradient 1,
    so an update moves it by its rate), with Keras's `gradient_accumulation_steps=accum_steps`
    (None: one `apply_gradients` call per update)."""
    if accum_steps is not None and (not isinstance(accum_steps, int) or accum_steps < 2):
        raise ValueError(f"accum_steps must be None or an int >= 2 (Keras's rule), got {accum_steps!r}")
    w = keras.Variable(np.zeros(1, np.float32))
    opt = keras.optimizers.SGD(learning_rate=schedule, gradient_accumulation_steps=accum_steps)
    rates = []
    for _ in range(updates):
        before = float(w.numpy()[0])
        for _ in range(accum_steps or 1):
            opt.apply_gradients([(np.ones(1, np.float32), w)])
        rates.append(before - float(w.numpy()[0]))
    return np.array(rates)


@keras.saving.register_keras_serializable(package="gradlab")
class PerUpdate(keras.optimizers.schedules.LearningRateSchedule):
    """`schedule(step // accum_steps)`: a schedule written in updates, for an optimizer with
    `gradient_accumulation_steps=accum_steps`, which reads schedules at every micro-step.

    Args:
        schedule: a `LearningRateSchedule` (or any callable of the step) counted in updates.
        accum_steps: N, the optimizer's `gradient_accumulation_steps`, an int >= 1.
    """

    def __init__(self, schedule, accum_steps):
        if not callable(schedule):
            raise TypeError(f"schedule must be a LearningRateSchedule or callable, got {schedule!r}")
        if not isinstance(accum_steps, int) or isinstance(accum_steps, bool) or accum_steps < 1:
            raise ValueError(f"accum_steps must be an int >= 1, got {accum_steps!r}")
        self.schedule, self.accum_steps = schedule, accum_steps

    def __call__(self, step):
        return self.schedule(keras.ops.floor_divide(step, self.accum_steps))

    def get_config(self):
        return {"schedule": keras.saving.serialize_keras_object(self.schedule), "accum_steps": self.accum_steps}

    @classmethod
    def from_config(cls, config):
        return cls(keras.saving.deserialize_keras_object(config["schedule"]), config["accum_steps"])


def under_strategy(strategy, model_fn, x, y, batch_size=16, steps=4, **compile_args):
    """Keras's own `SGD(0.1, gradient_accumulation_steps=steps)` in `strategy.scope()`: one epoch of
    `fit` over (x, y) in order, in batches of `batch_size`, with sparse cross-entropy from logits.
    Keras 3.15 applies inside an `ops.cond`, where TensorFlow cannot run the cross-replica
    `merge_call` while it traces the branch (keras-team/keras#20582): compiled, fit raises a
    RuntimeError before any update; `run_eagerly=True` trains.

    Args:
        strategy: a tf.distribute strategy (lesson 15: MirroredStrategy on two logical CPUs).
        model_fn: a function returning a fresh, built model (logits).
        x, y: the rows and labels.
        batch_size, steps: fit's batch and the optimizer's gradient_accumulation_steps.
        **compile_args: more for `compile` (jit_compile=True, run_eagerly=True).
    Returns:
        (updates applied, the largest |w - w_init|, the RuntimeError's message without colour codes,
        or "none").

    Lesson: notebooks/15-fit-across-replicas.ipynb
    """
    with strategy.scope():
        model = model_fn()
        model.compile(optimizer=keras.optimizers.SGD(0.1, gradient_accumulation_steps=steps),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), **compile_args)
        w_init = model.get_weights()
        try:
            model.fit(x, y, batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
            error = "none"
        except RuntimeError as e:
            error = " ".join(re.sub(r"\x1b\[\d*m", "", str(e)).split())
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(model.get_weights(), w_init))
    return int(model.optimizer.iterations), moved, error
