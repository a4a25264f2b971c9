"""One update from many micro-batches: sum, then divide once, then apply once.

    S = S_1 + ... + S_k,   G = dS_1 + ... + dS_k,   D = D_1 + ... + D_k
    w <- optimizer(w, G / D)                                        (one update)

`S_i` is micro-batch i's unnormalised loss and `D_i` what its mean divides by (examples or
unmasked entries, `gradients.loss_terms`). Sums add up in any order and over any split, so
micro-batches, towers and replicas all give the large-batch update; the division happens
once. Every way of averaging gradients is a choice of where the sum lives (`LoopSum`: tensors
carried by one compiled loop, `accumulate.loop_sum`; `VariableSum`: `tf.Variable`s;
`HostSum`: numpy) and where the batch runs (one device; `tower_sum` on listed devices;
`replica_sum` under tf.distribute, one all-reduce), then `apply_once`. `KerasSum` is Keras's
own accumulation, the reference that is not exact.

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from . import _compat, distribute
from .accumulate import Accumulators, Sums, add_sums, loop_sum, micro_sums
from .gradients import apply_update, mean_loss
from .host_average import host_average
from .microbatch import slices, split_sizes

APPLIED, LOSS_NOT_FINITE, GRADS_NOT_FINITE = 0, 1, 2


def tower_sum(micro, parts, variables, accum_steps, devices, sizes, scale_loss=None):
    """`Sums` of the batch split over `devices` (`sizes`: examples per tower), each tower
    running `loop_sum` on its own device; their sums add up like micro-batches'."""
    total = None
    for device, part, n in zip(devices, slices(parts, sizes), sizes):
        with tf.device(device), tf.name_scope(f"tower_{device.split(':')[-1]}"):
            tower = loop_sum(micro, part, variables, accum_steps,
                             split_sizes(n, accum_steps), scale_loss)
        total = tower if total is None else add_sums(total, tower)
    return total


def replica_sum(micro, parts, variables, accum_steps, scale_loss=None):
    """In a replica context: this replica's `loop_sum` over its static shard, then ONE
    all-reduce SUM of the loss, the normaliser and every gradient, so each replica holds the
    global `Sums`. Uneven shards need no weights: the normalisers are summed with the rest."""
    local = loop_sum(micro, parts, variables, accum_steps,
                     split_sizes(_rows(parts), accum_steps), scale_loss)
    return reduce_replicas(local)


def reduce_replicas(sums):
    """One all-reduce SUM (TensorFlow packs the list into one collective) of `sums`."""
    connected = [j for j, g in enumerate(sums.grads) if g is not None]
    reduced = tf.distribute.get_replica_context().all_reduce(
        tf.distribute.ReduceOp.SUM, [sums.loss, sums.norm] + [sums.grads[j] for j in connected])
    grads = list(sums.grads)
    for j, g in zip(connected, reduced[2:]):
        grads[j] = g
    return Sums(reduced[0], grads, reduced[1])


def apply_once(optimizer, sums, variables, clip_norm=None, guard=True, after=None):
    """`w <- optimizer(w, G / D)` once; returns `(S / D, status)` (`APPLIED`, `LOSS_NOT_FINITE`
    or `GRADS_NOT_FINITE`).

    With `guard` the update is applied only when the loss and every gradient are finite,
    inside a `tf.cond`, so a skipped update changes no weight, slot or counter (the caller
    reports it). A LossScaleOptimizer does its own check (skip and lower the scale): pass
    `guard=False`. `after()` runs with the update (e.g. BatchNorm statistics, once).
    In a tf.distribute replica context use `apply_replicated`.
    """
    loss = sums.loss / sums.norm
    grads = [None if g is None else g / tf.cast(sums.norm, g.dtype) for g in sums.grads]

    def apply():
        apply_update(optimizer, grads, variables, clip_norm)
        if after is not None:
            after()
        return tf.constant(APPLIED)

    if not guard:
        return loss, apply()
    status = status_of(sums)

    def skip():
        return status
    with _compat.gradients_already_reduced(optimizer):
        return loss, tf.cond(tf.equal(status, APPLIED), apply, skip)


def apply_replicated(optimizer, sums, variables, clip_norm=None, guard=True, on_skip=None):
    """`apply_once` in a replica context, after `reduce_replicas`.

    Keras's update under a strategy calls merge_call, which cannot sit inside a tf.cond in a
    replica context. So, as Keras's own LossScaleOptimizer does, the guard's tf.cond runs in
    the cross-replica context (one merge_call) and its applying branch re-enters the
    replicas; the status is the same on every replica, since the sums are all-reduced.
    `on_skip()` runs (cross-replica) when the update is skipped. Returns `(S / D, status)`.
    """
    if not guard:
        with _compat.gradients_already_reduced(optimizer):
            return apply_once(optimizer, sums, variables, clip_norm, guard=False)
    status = status_of(sums)

    def cross_replica(distribution, status, sums):
        def apply():
            distribution.extended.call_for_each_replica(
                lambda s: apply_once(optimizer, s, variables, clip_norm, guard=False), args=(sums,))

        def skip():
            if on_skip is not None:
                on_skip()
        ok = tf.equal(distribution.experimental_local_results(status)[0], APPLIED)
        tf.cond(ok, apply, skip)

    with _compat.gradients_already_reduced(optimizer):
        tf.distribute.get_replica_context().merge_call(cross_replica, args=(status, sums))
    return sums.loss / sums.norm, status


def status_of(sums):
    """`APPLIED` if the loss and every gradient in `sums` are finite, else which is not."""
    finite_grads = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in sums.grads if g is not None])
    return tf.where(tf.math.is_finite(sums.loss / sums.norm),
                    tf.where(finite_grads, APPLIED, GRADS_NOT_FINITE), LOSS_NOT_FINITE)


# -- where the sum lives: each runs one update of a `steps.Step` and returns (loss, status) --

class LoopSum:
    """The sum in tensors carried by one compiled loop: on one device, towers or replicas."""

    def __init__(self, step):
        self.step = step
        if step.place == "replicas":
            self._fn = step.function(self._replica_update)
        else:
            self._fn = step.function(self._update, step.jit())
        self._last = None

    def __call__(self, parts, sizes):
        if self.step.place != "replicas":
            return self._fn(parts)
        dist = self.step.distribution
        self._last = distribute.shard(dist, parts)
        return tuple(dist.experimental_local_results(v)[0] for v in self._fn(self._last))

    def _update(self, parts):
        s = self.step
        if s.place == "towers":
            sums = tower_sum(s.micro, parts, s.variables, s.accum_steps, s.devices,
                             s.sizes(_rows(parts)), s.scale_loss)
        else:
            sums = loop_sum(s.micro, parts, s.variables, s.accum_steps,
                            split_sizes(_rows(parts), s.accum_steps), s.scale_loss)
        return apply_once(s.optimizer, sums, s.variables, s.clip_norm, s.guard, s.moments.update)

    def _replica_update(self, parts):
        s = self.step

        def replica(p):
            sums = replica_sum(s.micro, p, s.variables, s.accum_steps, s.scale_loss)
            return apply_replicated(s.optimizer, sums, s.variables, s.clip_norm, s.guard)
        with _compat.losses_not_divided_by_replicas():
            return s.distribution.run(replica, args=(parts,))

    def all_reduce_count(self):
        """All-reduce ops each replica runs per update, counted in the traced graph."""
        if self._last is None:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        graph = self._fn.get_concrete_function(self._last).graph
        return distribute.count_all_reduces(graph) / len(self.step.distribution.extended.worker_devices)


class VariableSum:
    """The sum in `tf.Variable` accumulators: one compiled call per micro-batch, then apply."""

    def __init__(self, step):
        self.step = step
        self.accumulators = Accumulators(step.variables)
        self._accum = step.function(self._accumulate)
        self._apply = step.function(self._apply_and_reset)

    def _accumulate(self, part):
        s = self.step
        self.accumulators.accumulate(micro_sums(s.micro, part, s.variables, s.scale_loss))

    def __call__(self, parts, sizes):
        try:
            for part in slices(parts, sizes):
                self._accum(part)
        except BaseException:
            self.accumulators.reset()  # a failed step leaves nothing behind
            raise
        return self._apply()

    def _apply_and_reset(self):
        s = self.step
        out = apply_once(s.optimizer, self.accumulators.sums(), s.variables, s.clip_norm, s.guard,
                         s.moments.update)
        self.accumulators.reset()
        return out


class HostSum:
    """The sum in numpy: each micro-batch's mean gradient fetched, `host_average`d, fed back."""

    def __init__(self, step):
        self.step = step
        self._sums = step.function(self._sums_of)
        self._apply = step.function(self._apply_mean)

    def _sums_of(self, part):
        s = self.step
        return micro_sums(s.micro, part, s.variables, s.scale_loss)

    def _apply_mean(self, loss, grads):
        s = self.step
        return apply_once(s.optimizer, Sums(loss, grads, tf.constant(1.0)), s.variables, s.clip_norm, s.guard)

    def __call__(self, parts, sizes):
        means, norms, loss = [], [], 0.0
        for part in slices(parts, sizes):
            s = self._sums(part)
            d = float(s.norm)
            means.append([None if g is None else g.numpy() / (d or 1.0) for g in s.grads])
            norms.append(d)
            loss += float(s.loss)
        mean = host_average(means, counts=norms)
        return self._apply(tf.constant(loss / sum(norms)), [None if g is None else tf.constant(g) for g in mean])


class KerasSum:
    """Keras 3's own `gradient_accumulation_steps`, one compiled optimizer call per micro-batch.

    A reference, not exact in general: Keras divides the accumulated sum by N (so unequal
    micro-batches are mis-weighted) and counts every micro-batch as an optimizer iteration.
    It applies whatever it accumulated (no finite-gradient guard).
    """

    guards = False

    def __init__(self, step):
        self.step = step
        self._fn = step.function(self._micro_step)

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
        s = self.step
        with tf.GradientTape() as tape:
            loss = mean_loss(s.model, s.loss_fn, part[0], part[1], sample_weight=(part[2:] or [None])[0])
            scaled = s.optimizer.scale_loss(loss)
        # Under accumulation Keras clips (global_clipnorm above); clipping here would clip
        # each micro-batch, which is not clipping the update.
        apply_update(s.optimizer, tape.gradient(scaled, s.variables), s.variables,
                     s.clip_norm if s.accum_steps == 1 else None)
        return loss

    def __call__(self, parts, sizes):
        losses = []
        try:
            for part in slices(parts, sizes):
                losses.append(float(self._fn(part)))
        except BaseException:
            # Undo the half-finished window: Keras would apply it on a later micro-batch.
            for opt in _compat.optimizer_chain(self.step.optimizer):
                for acc in _compat.keras_accumulators(opt):
                    acc.assign(tf.zeros_like(acc))
            raise
        return np.dot(losses, sizes) / sum(sizes), APPLIED


def _rows(parts):
    return tf.nest.flatten(parts)[0].shape[0]
