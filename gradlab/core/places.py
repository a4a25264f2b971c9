"""Where the batch runs: one device, towers on listed devices, or tf.distribute replicas.

    One        sums = home.sum(batch);                         home.apply(sums)
    Towers     sums = home.sum(part_1) + ... + home.sum(part_T)  (part_t on device t); home.apply(sums)
    Replicas   sums = all_reduce(home.sum(this replica's shard)) (one collective);    apply_replicated

A place is a small object `engine.update` is given; it decides the update's `unit` (what the
sums are kept in, `accumulate.micro_sums`), how the batch's sums are gathered, and how they
are applied. Only loop-carried sums (`homes.Loop`) run on towers or replicas.

Lesson: notebooks/13-across-replicas.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .accumulate import Sums, add_sums
from .apply import apply_replicated
from .microbatch import slices, split_sizes, sum_dtype


class One:
    """The whole batch on the current device."""
    eager_homes = True  # homes that run eagerly (their own compiled calls) may sum here

    def unit(self, rows):
        return _unit(rows)

    def sums(self, add, parts, rows, unit, variables):
        """The batch's `Sums`, from `add(part)` (a home's sums of `part`, in units of `unit`)."""
        return add(parts)

    def apply(self, home, task, sums):
        return home.apply(task, sums)

    def __repr__(self):
        return "One()"


class Towers(One):
    """The batch split `split_sizes(B, len(devices))` over `devices`, each part's sums made on
    its device and added; one apply. Needs the batch size at trace time."""

    eager_homes = False

    def __init__(self, devices):
        self.devices = list(devices)

    def sums(self, add, parts, rows, unit, variables):
        if tf.is_tensor(rows):
            raise ValueError("towers need the batch size at trace time (a static shape)")
        total = None
        for device, part in zip(self.devices, slices(parts, split_sizes(rows, len(self.devices)))):
            with tf.device(device), tf.name_scope(f"tower_{device.split(':')[-1]}"):
                tower = add(part)
            total = tower if total is None else add_sums(total, tower)
        return total

    def __repr__(self):
        return f"Towers({self.devices!r})"


class Replicas(One):
    """Call in a tf.distribute replica context, with Keras's own loss division and gradient
    all-reduce switched off (`_compat.losses_not_divided_by_replicas`,
    `_compat.gradients_already_reduced`): each replica sums its shard, one all-reduce adds
    the sums (uneven shards need no weights), `apply_replicated` applies."""
    eager_homes = False

    def unit(self, rows):
        return _unit(rows) * tf.distribute.get_replica_context().num_replicas_in_sync

    def sums(self, add, parts, rows, unit, variables):
        # A replica's empty shard (a last batch of fewer rows than replicas) runs no
        # micro-batch: BatchNormalization's moments of no rows are NaN, and NaN * 0 in its
        # gradient would skip the whole update.
        local = _unless_empty(rows, add, parts, variables)
        # Each replica's unit is its own (its shard's rows): back to plain sums before they add.
        return reduce_replicas(Sums(local.loss * unit, [None if g is None else g * unit for g in local.grads],
                                    local.norm * unit, local.broken))

    def apply(self, home, task, sums):
        return apply_replicated(task.optimizer, sums, task.variables, task.clip_norm, task.guard,
                                task.on_skip)

    def __repr__(self):
        return "Replicas()"


ONE = One()


def reduce_replicas(sums):
    """One all-reduce SUM (TensorFlow packs the list into one collective) of `sums`, so
    every replica holds the global sums; uneven shards need no weights."""
    connected = [j for j, g in enumerate(sums.grads) if g is not None]
    broken = tf.cast(sums.broken, sums.loss.dtype)  # one dtype: packed into one collective
    reduced = tf.distribute.get_replica_context().all_reduce(
        tf.distribute.ReduceOp.SUM, [sums.loss, sums.norm, broken] + [sums.grads[j] for j in connected])
    grads = list(sums.grads)
    for j, g in zip(connected, reduced[3:]):
        grads[j] = g
    return Sums(reduced[0], grads, reduced[1], reduced[2])


def _unit(rows):
    """The batch's rows (at least 1) in the sums' dtype: a constant when known at trace time."""
    if tf.is_tensor(rows):
        return tf.cast(tf.maximum(rows, 1), sum_dtype())
    return tf.constant(max(rows, 1), sum_dtype())


def _unless_empty(rows, run, parts, variables):
    """`run(parts)` (Sums) if `rows` > 0, else zero sums with the same gradients None (one
    tf.cond; no cond at all when `rows` is known at trace time)."""
    if not tf.is_tensor(rows):
        return run(parts)
    connected = []

    def full():
        s = run(parts)
        connected.extend((j, g.dtype) for j, g in enumerate(s.grads) if g is not None)
        # the contract's verdict travels with the sums: dropped here, a broken contract
        # under tf.distribute would be applied as if it held
        return s.loss, s.norm, tf.cast(s.broken, tf.float32), [s.grads[j] for j, _ in connected]

    def empty():
        return (tf.constant(0.0, sum_dtype()), tf.constant(0.0, sum_dtype()), tf.constant(0.0),
                [tf.zeros(variables[j].shape, dtype) for j, dtype in connected])

    loss, norm, broken, grads = tf.cond(rows > 0, full, empty)
    out = [None] * len(variables)
    for (j, _), g in zip(connected, grads):
        out[j] = g
    return Sums(loss, out, norm, broken)
