"""Where the sum of one update lives: loop-carried tensors, variables, numpy, or Keras's optimizer.

    Loop(overlap)   tensors carried by one compiled loop (`accumulate.loop_sum`); runs inside
                    the caller's `tf.function`, on any place
    Variables()     `tf.Variable` accumulators: one compiled call per micro-batch, then one
                    compiled apply (the classic zero / accumulate / apply recipe)
    Host()          numpy: each micro-batch's sums fetched and added on the host (a running
                    `HostSum`), divided once, fed back to one compiled apply
    KerasOptimizer(model, loss_fn)
                    Keras 3's own `gradient_accumulation_steps`: each micro-batch's mean-loss
                    gradient handed to the optimizer, which sums and applies. The reference,
                    not exact: it divides by N whatever the sizes, counts every micro-batch
                    as an iteration, and applies whatever it accumulated (no guard)

A home is a small object `engine.update` is given: `sum(task, parts, unit)` gives the
batch's sums (or a handle on them) and `apply(task, sums)` the update's `(loss, status)`.
Every home but `Loop` runs eagerly, making its own compiled calls (`in_graph` False), on one
device; `functions` lists them (for trace counts).

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from .. import _compat
from .accumulate import Accumulators, Sums, batch_rows, loop_sum, micro_sums
from .apply import APPLIED, apply_once
from .gradients import apply_update
from .host_average import HostSum
from .loss_terms import mean_loss
from .microbatch import slices, split_sizes, sum_dtype


def compiled(fn, jit=False):
    """`tf.function` as the engine traces: without autograph, as Keras's fit (the engine's
    loops are tf.while_loops already, and converting its Python and the user's loss took
    1.5 s of the MLP's first fused step)."""
    return tf.function(fn, jit_compile=jit or None, autograph=False)


class Loop:
    """Loop-carried tensors: every micro-batch of the update in one compiled loop.

    `overlap`: micro-batches whose activations may be alive at once (`loop_sum`)."""
    in_graph = True
    functions = ()

    def __init__(self, overlap=1):
        self.overlap = overlap

    def sum(self, task, parts, unit):
        return loop_sum(task.micro, parts, task.variables, task.accum_steps,
                        task.optimizer.scale_loss, unit, self.overlap)

    def apply(self, task, sums):
        return apply_once(task.optimizer, sums, task.variables, task.clip_norm, task.guard,
                          task.after, task.on_skip)

    def __repr__(self):
        return f"Loop(overlap={self.overlap})"


class _Eager:
    """A home that runs eagerly, one compiled call per micro-batch, bound to one task (its
    compiled calls are made for it: a face makes a new home with each new task)."""
    in_graph = False
    task = None

    def bind(self, task):
        """Make this home's compiled calls for `task`; returns the home."""
        if self.task is None:
            self.task = task
            self._made()
        elif self.task is not task:
            raise ValueError(f"{self!r} is bound to another task: make a new home per task")
        return self

    def _parts(self, parts):
        return slices(parts, split_sizes(batch_rows(parts), self.task.accum_steps))


class Variables(_Eager):
    """`tf.Variable` accumulators (`accumulate.Accumulators`), zeroed after each apply and
    after a failed micro-batch (a failed step leaves nothing behind)."""

    def _made(self):
        t = self.task
        self.accumulators = Accumulators(t.variables)
        self._accum = compiled(lambda part, unit: self.accumulators.accumulate(
            micro_sums(t.micro, part, t.variables, t.optimizer.scale_loss, unit)))
        self._apply = compiled(self._apply_and_reset)
        self.functions = [self._accum, self._apply]

    def sum(self, task, parts, unit):
        self.bind(task)
        try:
            for part in self._parts(parts):
                self._accum(part, unit)
        except BaseException:
            self.accumulators.reset()
            raise
        return self.accumulators  # the sums live there; read inside the compiled apply

    def apply(self, task, sums):
        return self._apply()

    def _apply_and_reset(self):
        t = self.task
        out = apply_once(t.optimizer, self.accumulators.sums(), t.variables, t.clip_norm, t.guard,
                         t.after, t.on_skip)
        self.accumulators.reset()
        return out

    def __repr__(self):
        return "Variables()"


class Host(_Eager):
    """numpy on the host: each micro-batch's sums `dS_i` fetched and added to a running
    `HostSum`, then G / D fed back to one compiled apply (normaliser 1). The host holds two
    gradients, the sum and the one just fetched."""

    def _made(self):
        t = self.task
        self._sums = compiled(lambda part, unit: micro_sums(t.micro, part, t.variables,
                                                            t.optimizer.scale_loss, unit))
        self._apply = compiled(lambda sums: apply_once(t.optimizer, sums, t.variables,
                                                       t.clip_norm, t.guard, t.after, t.on_skip))
        self.functions = [self._sums, self._apply]

    def sum(self, task, parts, unit):
        self.bind(task)
        acc, norm, loss, broken = HostSum(), 0.0, 0.0, 0.0
        for part in self._parts(parts):
            s = self._sums(part, unit)
            acc.add([None if g is None else g.numpy() for g in s.grads])
            norm += float(s.norm)
            loss += float(s.loss)
            broken += float(s.broken)
        mean = acc.mean(norm)
        return Sums(tf.constant(loss / (norm or 1.0), sum_dtype()),
                    [None if g is None else tf.constant(g) for g in mean],
                    tf.constant(1.0, sum_dtype()), tf.constant(broken))

    def apply(self, task, sums):
        return self._apply(sums)

    def __repr__(self):
        return "Host()"


class KerasOptimizer(_Eager):
    """Keras 3's own accumulation: the optimizer (`make_optimizer`) sums each micro-batch's
    mean-loss gradient and applies their mean every `accum_steps` micro-batches. The update's
    loss is the rows-weighted mean of the micro-batches' mean losses."""
    guarded = False  # Keras applies whatever it accumulated

    def __init__(self, model, loss_fn):
        self.model, self.loss_fn = model, loss_fn

    @staticmethod
    def make_optimizer(optimizer, accum_steps, clip_norm):
        """`optimizer` made again with `gradient_accumulation_steps=accum_steps` (and Keras's
        clipping of the accumulated mean, `global_clipnorm`); itself when `accum_steps` is 1."""
        if accum_steps == 1:
            return optimizer
        # Keras accumulates, and clips the accumulated mean (global_clipnorm), in the optimizer
        # that applies; a LossScaleOptimizer wraps it and checks every micro-batch.
        extra = dict(gradient_accumulation_steps=accum_steps)
        if clip_norm is not None:
            extra["global_clipnorm"] = clip_norm
        if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
            inner = optimizer.inner_optimizer
            inner = type(inner).from_config(dict(inner.get_config(), **extra))
            return type(optimizer)(inner, initial_scale=optimizer.initial_scale,
                                   dynamic_growth_steps=optimizer.dynamic_growth_steps)
        return type(optimizer).from_config(dict(optimizer.get_config(), **extra))

    def _made(self):
        self._step = compiled(self._micro_step)
        self.functions = [self._step]

    def _micro_step(self, part):
        t = self.task
        with tf.GradientTape() as tape:
            loss = mean_loss(self.model, self.loss_fn, part[0], part[1], sample_weight=(part[2:] or [None])[0])
            scaled = t.optimizer.scale_loss(loss)
        # Under accumulation Keras clips (global_clipnorm above); clipping here would clip
        # each micro-batch, which is not clipping the update.
        apply_update(t.optimizer, tape.gradient(scaled, t.variables), t.variables,
                     t.clip_norm if t.accum_steps == 1 else None)
        return loss

    def sum(self, task, parts, unit):
        self.bind(task)
        losses, sizes = [], []
        try:
            for part in self._parts(parts):
                losses.append(float(self._step(part)))
                sizes.append(batch_rows(part))
        except BaseException:
            # Undo the half-finished window: Keras would apply it on a later micro-batch.
            for opt in _compat.optimizer_chain(task.optimizer):
                for acc in _compat.keras_accumulators(opt):
                    acc.assign(tf.zeros_like(acc))
            raise
        return np.dot(losses, sizes) / sum(sizes)  # applied already: the loss is what is left

    def apply(self, task, sums):
        return sums, APPLIED

    def __repr__(self):
        return f"KerasOptimizer({self.model.name!r})"
