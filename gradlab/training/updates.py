"""Where the sum of one update lives, for `step(x, y)`: each class performs a whole update.

    LoopUpdate      tensors carried by one compiled loop (`engine.update`): one, towers, replicas
    VariableUpdate  `tf.Variable` accumulators: one compiled call per micro-batch, then apply
    HostUpdate      numpy: each micro-batch's mean gradient fetched, `host_average`d, fed back
    KerasUpdate     Keras 3's own `gradient_accumulation_steps`: the reference, not exact

Each takes a `Setup` (everything an update needs, as values) and is called as
`update(parts) -> (loss, status)`; none calls back into the strategy that made it.

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

import keras
import numpy as np
import tensorflow as tf

from .. import _compat

from ..core import distribute, engine
from ..core.accumulate import Accumulators, Sums, batch_rows, micro_sums
from ..core.gradients import apply_update
from ..core.loss_terms import mean_loss
from ..core.host_average import host_average
from ..core.microbatch import slices, split_sizes, sum_dtype


class Setup(NamedTuple):
    """What one update needs, fixed when a strategy is (re)built."""
    micro: Callable          # micro(part) -> (S_i, D_i)
    variables: list
    optimizer: keras.optimizers.Optimizer
    accum_steps: int
    place: str = "one"       # engine.PLACES
    devices: Optional[list] = None
    distribution: object = None
    clip_norm: Optional[float] = None
    guard: bool = True
    after: Optional[Callable] = None
    jit: bool = False
    overlap: int = 1
    model: object = None     # KerasUpdate only
    loss_fn: object = None   # KerasUpdate only


def _function(fn, jit=False):
    # autograph=False, as Keras's fit: the engine's loops are tf.while_loops already, and
    # converting its Python and the user's loss took 1.5 s of the MLP's first fused step
    return tf.function(fn, jit_compile=jit or None, autograph=False)


class LoopUpdate:
    """`engine.update` in one compiled call: on one device, towers, or replicas."""

    def __init__(self, setup):
        self.setup = setup
        s = setup
        if s.place == "replicas":
            def replica(parts):
                return engine.update(s.micro, parts, s.variables, s.optimizer, s.accum_steps, "replicas",
                                     clip_norm=s.clip_norm, guard=s.guard,
                                     overlap=s.overlap)

            def run(parts):
                with _compat.losses_not_divided_by_replicas():
                    return s.distribution.run(replica, args=(parts,))
            self.fn = _function(run)
        else:
            self.python = lambda parts: engine.update(
                s.micro, parts, s.variables, s.optimizer, s.accum_steps, s.place, s.devices,
                s.clip_norm, s.guard, s.after, overlap=s.overlap)
            self.fn = _function(self.python, s.jit)
        self.functions = [self.fn]
        self._last = None

    def __call__(self, parts):
        if self.setup.place != "replicas":
            return self.fn(parts)
        dist = self.setup.distribution
        self._last = distribute.shard(dist, parts)
        return tuple(dist.experimental_local_results(v)[0] for v in self.fn(self._last))

    def all_reduce_count(self):
        """All-reduce ops each replica runs per update, counted in the traced graph."""
        if self._last is None:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        graph = self.fn.get_concrete_function(self._last).graph
        return distribute.count_all_reduces(graph) / len(self.setup.distribution.extended.worker_devices)


class VariableUpdate:
    """The sum in `tf.Variable` accumulators: one compiled call per micro-batch, then apply."""

    def __init__(self, setup):
        s = self.setup = setup
        self.accumulators = Accumulators(s.variables)
        self._accum = _function(lambda part, unit: self.accumulators.accumulate(
            micro_sums(s.micro, part, s.variables, s.optimizer.scale_loss, unit)))
        self._apply = _function(self._apply_and_reset)
        self.functions = [self._accum, self._apply]

    def __call__(self, parts):
        unit = _unit(self.setup, parts)
        try:
            for part in slices(parts, split_sizes(batch_rows(parts), self.setup.accum_steps)):
                self._accum(part, unit)
        except BaseException:
            self.accumulators.reset()  # a failed step leaves nothing behind
            raise
        return self._apply()

    def _apply_and_reset(self):
        s = self.setup
        out = engine.apply_once(s.optimizer, self.accumulators.sums(), s.variables, s.clip_norm,
                                s.guard, s.after)
        self.accumulators.reset()
        return out


class HostUpdate:
    """The sum in numpy: each micro-batch's mean gradient fetched, `host_average`d by its
    normaliser, fed back and applied once."""

    def __init__(self, setup):
        s = self.setup = setup
        self._sums = _function(lambda part, unit: micro_sums(s.micro, part, s.variables,
                                                             s.optimizer.scale_loss, unit))
        self._apply = _function(lambda loss, grads, broken: engine.apply_once(
            s.optimizer, Sums(loss, grads, tf.constant(1.0, sum_dtype()), broken), s.variables,
            s.clip_norm, s.guard))
        self.functions = [self._sums, self._apply]

    def __call__(self, parts):
        means, norms, loss, broken = [], [], 0.0, 0.0
        unit = _unit(self.setup, parts)
        for part in slices(parts, split_sizes(batch_rows(parts), self.setup.accum_steps)):
            s = self._sums(part, unit)
            d = float(s.norm)
            means.append([None if g is None else g.numpy() / (d or 1.0) for g in s.grads])
            norms.append(d)
            loss += float(s.loss)
            broken += float(s.broken)
        mean = host_average(means, counts=norms)
        grads = [None if g is None else tf.constant(g) for g in mean]
        return self._apply(tf.constant(loss / (sum(norms) or 1.0), sum_dtype()), grads,
                           tf.constant(broken))


class KerasUpdate:
    """Keras 3's own `gradient_accumulation_steps`, one compiled optimizer call per micro-batch.

    A reference, not exact in general: Keras divides the accumulated sum by N (so unequal
    micro-batches are mis-weighted) and counts every micro-batch as an optimizer iteration.
    It applies whatever it accumulated (no finite-gradient guard).
    """

    def __init__(self, setup):
        self.setup = setup
        self.fn = _function(self._micro_step)
        self.functions = [self.fn]

    @staticmethod
    def make_optimizer(optimizer, accum_steps, clip_norm):
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

    def _micro_step(self, part):
        s = self.setup
        with tf.GradientTape() as tape:
            loss = mean_loss(s.model, s.loss_fn, part[0], part[1], sample_weight=(part[2:] or [None])[0])
            scaled = s.optimizer.scale_loss(loss)
        # Under accumulation Keras clips (global_clipnorm above); clipping here would clip
        # each micro-batch, which is not clipping the update.
        apply_update(s.optimizer, tape.gradient(scaled, s.variables), s.variables,
                     s.clip_norm if s.accum_steps == 1 else None)
        return loss

    def __call__(self, parts):
        sizes = split_sizes(batch_rows(parts), self.setup.accum_steps)
        losses = []
        try:
            for part in slices(parts, sizes):
                losses.append(float(self.fn(part)))
        except BaseException:
            # Undo the half-finished window: Keras would apply it on a later micro-batch.
            for opt in _compat.optimizer_chain(self.setup.optimizer):
                for acc in _compat.keras_accumulators(opt):
                    acc.assign(tf.zeros_like(acc))
            raise
        return np.dot(losses, sizes) / sum(sizes), engine.APPLIED


def _unit(setup, parts):
    """The update's unit (`micro_sums`), one value for all its micro-batches: its rows."""
    return tf.constant(batch_rows(parts), sum_dtype())
