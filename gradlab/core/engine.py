"""One update from one batch, the same for `step(x, y)` and for `AccumulatingModel.fit`.

    batch -> split_sizes(B, accum_steps) -> (S_i, D_i) and dS_i per micro-batch
          -> summed where the batch runs (one device, towers, tf.distribute replicas)
          -> one all-reduce of the sums (replicas)
          -> guard (the contract held? finite?) -> w <- opt(w, G / D), once

    S = S_1 + ... + S_k,   G = dS_1 + ... + dS_k,   D = D_1 + ... + D_k

`S_i` is micro-batch i's unnormalised loss and `D_i` what its mean divides by
(`normaliser`). Sums add up in any order and over any split, so micro-batches, towers and
replicas all give the large-batch update; the division happens once. `update` is that
composition; the faces (`strategy.Strategy`, `fit.AccumulatingModel`) only supply
`micro(part) -> (S_i, D_i)` and their own bookkeeping. `updates` holds the other homes of
the sum (variables, numpy) built from the same pieces.

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat
from .accumulate import Sums, add_sums, batch_rows, loop_sum
from .gradients import apply_update
from .microbatch import slices, split_sizes, sum_dtype

APPLIED, LOSS_NOT_FINITE, GRADS_NOT_FINITE, CONTRACT_BROKEN = 0, 1, 2, 3
PLACES = ("one", "towers", "replicas")


def update(micro, parts, variables, optimizer, accum_steps, place="one", devices=None,
           clip_norm=None, guard=True, after=None, on_skip=None, overlap=1):
    """`w <- optimizer(w, G / D)` once, from the batch `parts`; returns `(S / D, status)`.

    Call inside `tf.function` ("one", "towers") or in a tf.distribute replica context
    ("replicas", with Keras's own loss division and gradient all-reduce switched off: see
    `_compat.losses_not_divided_by_replicas`, `_compat.gradients_already_reduced`).

    Args:
        micro: `micro(part) -> (S_i, D_i)` of one micro-batch `part` (a nest like `parts`),
            or `(S_i, D_i, holds)` with the contract's check of its loss (`contract`).
        parts: the batch, a nest of tensors sharing the first dimension (x, y, weights).
        variables, optimizer: what to update, and how.
        accum_steps: micro-batches per update (per tower or per replica).
        place: one of `PLACES`; `devices` lists the towers' devices.
        clip_norm: clip the global norm of the update (not of each micro-batch).
        guard: apply only when every micro-batch's contract check held and the loss and
            every gradient are finite (a tf.cond; a skipped update changes no weight, slot or
            counter). False with a LossScaleOptimizer, which skips and lowers its scale
            itself (then a broken contract is skipped by a guard of its own).
        after: runs with the update (BatchNorm statistics of the whole batch, once).
        on_skip: `on_skip(status)` runs when the guard skips the update.
        overlap: see `loop_sum`.
    Returns:
        `(loss, status)`: `APPLIED`, `LOSS_NOT_FINITE`, `GRADS_NOT_FINITE` or `CONTRACT_BROKEN`.
    """
    if place not in PLACES:
        raise ValueError(f"place must be one of {PLACES}, got {place!r}")
    rows = batch_rows(parts)
    replicas = tf.distribute.get_replica_context().num_replicas_in_sync if place == "replicas" else 1
    unit = tf.cast(tf.maximum(rows, 1) * replicas, sum_dtype())

    def local(parts):
        return loop_sum(micro, parts, variables, accum_steps, optimizer.scale_loss, unit, overlap)

    if place == "towers":
        sizes = _split(rows, len(devices))
        sums = None
        for device, part in zip(devices, slices(parts, sizes)):
            with tf.device(device), tf.name_scope(f"tower_{device.split(':')[-1]}"):
                tower = local(part)
            sums = tower if sums is None else add_sums(sums, tower)
    elif place == "replicas":
        # A replica's empty shard (a last batch of fewer rows than replicas) runs no
        # micro-batch: BatchNormalization's moments of no rows are NaN, and NaN * 0 in its
        # gradient would skip the whole update.
        # Each replica's unit is its own (its shard's rows): back to plain sums before they add.
        local_sums = _unless_empty(rows, local, parts, variables)
        sums = reduce_replicas(Sums(local_sums.loss * unit, [None if g is None else g * unit
                                                           for g in local_sums.grads],
                                    local_sums.norm * unit, local_sums.broken))
        return apply_replicated(optimizer, sums, variables, clip_norm, guard, on_skip)
    else:
        sums = local(parts)
    return apply_once(optimizer, sums, variables, clip_norm, guard, after, on_skip)


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


def apply_once(optimizer, sums, variables, clip_norm=None, guard=True, after=None, on_skip=None):
    """`w <- optimizer(w, G / D)` once; returns `(S / D, status)`.

    D = 0 (every entry masked) gives loss 0 and a zero gradient that the optimizer still
    applies (momentum moves, the step counts), as Keras's `divide_no_nan` does.
    In a tf.distribute replica context use `apply_replicated`.
    """
    loss = tf.math.divide_no_nan(sums.loss, sums.norm)
    grads = [None if g is None else tf.math.divide_no_nan(g, tf.cast(sums.norm, g.dtype))
             for g in sums.grads]

    def apply():
        apply_update(optimizer, grads, variables, clip_norm)
        if after is not None:
            after()
        return tf.constant(APPLIED)

    status = status_of(sums, finite=guard)
    if not tf.is_tensor(status):  # nothing to guard: applied
        return loss, apply()

    def skip():
        if on_skip is not None:
            on_skip(status)
        return status
    with _compat.gradients_already_reduced(optimizer):
        return loss, tf.cond(tf.equal(status, APPLIED), apply, skip)


def apply_replicated(optimizer, sums, variables, clip_norm=None, guard=True, on_skip=None):
    """`apply_once` in a replica context, after `reduce_replicas`.

    Keras's update under a strategy calls merge_call, which cannot sit inside a tf.cond in a
    replica context. So, as Keras's own LossScaleOptimizer does, the guard's tf.cond runs in
    the cross-replica context (one merge_call) and its applying branch re-enters the
    replicas; the status is the same on every replica, since the sums are all-reduced.
    """
    status = status_of(sums, finite=guard)
    if not tf.is_tensor(status):
        with _compat.gradients_already_reduced(optimizer):
            return apply_once(optimizer, sums, variables, clip_norm, guard=False)

    def cross_replica(distribution, status, sums):
        def apply():
            distribution.extended.call_for_each_replica(
                lambda s: apply_once(optimizer, s._replace(broken=0.0), variables, clip_norm,
                                     guard=False), args=(sums,))

        status = distribution.experimental_local_results(status)[0]

        def skip():
            if on_skip is not None:
                on_skip(status)
        tf.cond(tf.equal(status, APPLIED), apply, skip)

    with _compat.gradients_already_reduced(optimizer):
        tf.distribute.get_replica_context().merge_call(cross_replica, args=(status, sums))
    return tf.math.divide_no_nan(sums.loss, sums.norm), status


def status_of(sums, finite=True):
    """`APPLIED` if every micro-batch held the contract and (if `finite`) the loss and every
    gradient in `sums` are finite, else which failed first. A Python int when nothing is
    checked in the graph (no contract check traced, `finite` False)."""
    broken = sums.broken
    status = APPLIED
    if finite:
        finite_grads = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in sums.grads if g is not None])
        status = tf.where(tf.math.is_finite(tf.math.divide_no_nan(sums.loss, sums.norm)),
                          tf.where(finite_grads, APPLIED, GRADS_NOT_FINITE), LOSS_NOT_FINITE)
    if not tf.is_tensor(broken) and not broken:
        return status
    return tf.where(broken > 0, CONTRACT_BROKEN, status)


def _unless_empty(rows, run, parts, variables):
    """`run(parts)` (Sums) if `rows` > 0, else zero sums with the same gradients None (one
    tf.cond; no cond at all when `rows` is known at trace time)."""
    if not tf.is_tensor(rows):
        return run(parts)
    connected = []

    def full():
        s = run(parts)
        connected.extend((j, g.dtype) for j, g in enumerate(s.grads) if g is not None)
        return s.loss, s.norm, [s.grads[j] for j, _ in connected]

    def empty():
        return (tf.constant(0.0, sum_dtype()), tf.constant(0.0, sum_dtype()),
                [tf.zeros(variables[j].shape, dtype) for j, dtype in connected])

    loss, norm, grads = tf.cond(rows > 0, full, empty)
    out = [None] * len(variables)
    for (j, _), g in zip(connected, grads):
        out[j] = g
    return Sums(loss, out, norm)


def _split(rows, towers):
    if tf.is_tensor(rows):
        raise ValueError("towers need the batch size at trace time (a static shape)")
    return split_sizes(rows, towers)
