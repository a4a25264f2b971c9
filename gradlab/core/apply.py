"""The end of every update: guard, then `w <- optimizer(w, G / D)` once.

    status = APPLIED | LOSS_NOT_FINITE | GRADS_NOT_FINITE | CONTRACT_BROKEN   (`status_of`)
    status == APPLIED ?  w <- optimizer(w, G / D); after()  :  on_skip(status)

`apply_once` on one device (inside `tf.function` or in one compiled call of its own),
`apply_replicated` in a tf.distribute replica context after the sums' one all-reduce.

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat
from .gradients import apply_update

APPLIED, LOSS_NOT_FINITE, GRADS_NOT_FINITE, CONTRACT_BROKEN = 0, 1, 2, 3


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
