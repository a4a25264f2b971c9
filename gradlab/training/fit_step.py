"""One `fit` step of `AccumulatingModel`: the engine's update with Keras's glue around it.

    train_step: w <- optimizer(w, (dS_1 + ... + dS_k) / (D_1 + ... + D_k))   (engine.update)
                then Keras's loss tracker and compiled metrics, as plain fit reports them
    test_step:  the same micro-batches forward only: loss S / D of the batch, Keras's metrics

Each takes the model's public Keras API (`acc`: compiled loss and metrics, optimizer, options)
and, as arguments, the state the wrapper owns: its contract check (`check_state.CheckState`),
BatchNorm window, skipped-update counter and the rows it is fed by index (`fit_rows`).

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import functools

import tensorflow as tf

from .. import _compat
from ..core import accumulate, engine, homes, places
from ..core.micro_loss import MicroLoss
from . import fit_rows
from .options import guarded


def train_step(acc, data, check, window, skipped, rows_now=None):
    """One update of `acc` (an `AccumulatingModel`) from one `fit` batch; returns the logs.

    Args:
        acc: the model: its compiled loss and metrics, optimizer and options.
        data: Keras's batch (rows, or row indices into `rows_now`).
        check: its `CheckState` (the variable arming the contract's check, the refusal).
        window: its BatchNorm window (`batchnorm.WindowMoments` or `NO_WINDOW`).
        skipped: the variable counting skipped (non-finite) updates.
        rows_now: the `fit_rows.Rows` that `data` indexes, or None (whole batches).
    """
    parts, micro, rows = _batch(acc, data, check, window, rows_now, training=True)
    distributed = tf.distribute.has_strategy()
    if distributed and acc.batchnorm == "window":  # wrapped outside the strategy's scope
        raise ValueError("batchnorm='window' runs on one device only; got a fit under "
                         f"{type(tf.distribute.get_strategy()).__name__}")
    guard = guarded(acc.optimizer, homes.Loop)
    task = engine.Task(micro, acc.trainable_variables, acc.optimizer, acc.accum_steps,
                       acc.clip_norm, guard, window.update, functools.partial(_skipped, check, skipped))
    loss, _ = engine.update(task, parts, homes.Loop(acc.overlap),
                            places.Replicas() if distributed else places.ONE)
    # Keras's own tracker: this batch's mean loss, weighted by its rows (this replica's
    # under tf.distribute, so that the replicas' sum on read is the global batch).
    _compat.loss_tracker(acc).update_state(loss, sample_weight=rows)
    logs = acc.get_metrics_result()
    if guard:
        logs["skipped_updates"] = tf.identity(skipped)
    return _compat.reducible_by_keras(logs, acc.distribute_strategy)


def test_step(acc, data, check, window, rows_now=None):
    """Keras's evaluation of one batch, in the update's micro-batches (one micro-batch's
    activations at a time): the loss (S_1 + ... + S_k) / (D_1 + ... + D_k) of the whole batch
    (of all replicas' shards under tf.distribute), metrics and each output's loss as Keras's
    own `test_step` reports them for the batch. Arguments as `train_step`'s."""
    parts, micro, rows = _batch(acc, data, check, window, rows_now, training=False)
    sums = accumulate.loop_sum(micro, parts, [], acc.accum_steps)
    if tf.distribute.has_strategy():
        sums = places.reduce_replicas(sums)
    # as in train_step: this batch's loss, weighted by this replica's rows
    _compat.loss_tracker(acc).update_state(tf.math.divide_no_nan(sums.loss, sums.norm),
                                           sample_weight=rows)
    return _compat.reducible_by_keras(acc.get_metrics_result(), acc.distribute_strategy)


def _batch(acc, data, check, window, rows_now, training):
    """`(parts, micro, rows)` of one batch: what the engine splits, `micro(part) -> (S_i, D_i)`
    of one of its micro-batches, and this replica's rows."""
    # the batch's rows, or row indices whose rows each micro-batch takes (fit_rows)
    parts, take, y = fit_rows.parts(rows_now, data)
    rows = tf.shape(tf.nest.flatten(parts)[0])[0]
    rows_of_batch = batch_rows(acc, rows, y)

    def micro(part):
        return micro_sums(acc, check, window, take(part), rows_of_batch, training)[0]
    return parts, micro, rows


def _skipped(check, skipped, status):
    """The guard skipped the update: a non-finite one is counted in `skipped`; a broken
    contract is recorded in `check.refused` for `fit_function` to raise after the call
    (`contract.REFUSAL`)."""
    broken = tf.equal(status, engine.CONTRACT_BROKEN)
    skipped.assign_add(1.0 - tf.cast(broken, tf.float32))
    check.refused.assign(tf.logical_or(check.refused, broken))


def batch_rows(acc, rows, y):
    """The rows of the whole batch: `rows`, or under tf.distribute the replicas' sum of
    theirs, where Keras's per-output loss trackers need it (weighing each replica's mean
    by its share of the batch is what makes their synced result exact)."""
    if not tf.distribute.has_strategy() or not _compat.output_loss_trackers(acc, y):
        return rows
    return tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, rows)


def micro_sums(acc, check, window, part, rows_of_batch, training=True):
    """`((S_i, D_i, holds), y_pred)` of one micro-batch of a batch of `rows_of_batch` rows:
    `micro_loss.MicroLoss` with Keras's compiled loss (its metrics are updated on the way),
    armed by `check.now`, recording into BatchNorm's `window`; `holds` is False once an update
    was refused (`check.refused`), so no later step of the same call applies."""
    x, y, sw = part["x"], part.get("y"), part.get("sample_weight")

    def loss_of(x, y, y_pred, sw):
        n = tf.cast(tf.shape(tf.nest.flatten(y_pred)[0])[0], tf.float32)
        # Keras tracks each output's loss once per batch; a micro-batch's share of the batch
        # as its weight adds up to the same (rows / 0 on an empty replica shard: weight 0).
        share = tf.math.divide_no_nan(n, tf.cast(rows_of_batch, tf.float32))
        with _compat.output_loss_weight(acc, share, y, y_pred):
            loss = acc.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw, training=training)
        acc.compute_metrics(x, y, y_pred, sample_weight=sw)
        return loss

    def check_loss_of(y, y_pred, sw):  # the check's halves leave the per-output trackers alone
        with _compat.output_loss_weight(acc, 0.0, y, y_pred):
            return acc.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=sw, training=True)

    # The model itself, not the wrapper: the wrapper's call adds only a name scope, yet
    # the renamed graph came out of Grappler in an order holding 24 MB more at the peak
    # (one Transformer block, 64 rows: 112.7 vs 88.2 MB, plain fit's 88.3).
    micro_loss = MicroLoss(acc.model, acc.loss, loss_of, check.now, check_loss_of,
                           seen=check.warned, passes=acc.forward_passes(), moments=window)
    terms, y_pred = micro_loss(x, y, sw, training)
    if training:
        terms = (*terms[:2], tf.logical_and(terms[2], tf.logical_not(check.refused)))
    return terms, y_pred
