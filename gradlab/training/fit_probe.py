"""Before `AccumulatingModel`'s first update: its first batch probed as `step` probes it.

    rule, per_row = normaliser.probe(loss of rows, ...)   refused in the same words as step
    then: the layers only training uses are built, and a warning where the split changes
    the forward pass (Dropout, BatchNormalization, a training pass that is not row by row)
    or a loss scale's skips

Lesson: notebooks/08-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import functools

from .. import _compat
from ..core import normaliser
from . import trainables
from .first_batch import first_batch


def check_first_batch(acc, x, y, sample_weight, weighted=False):
    """Probe `acc` (an `AccumulatingModel`) on the first rows of `x`, once per compile.

    Returns `x`, or, for a Python generator, the same batches with the first put back."""
    if acc._rule is not None or not acc.compiled:
        return x
    _compat.check_fit_hooks()  # Keras still calls the private methods the wrapper overrides
    batch, x = first_batch(x, y, sample_weight)
    if batch is None:  # a data source gradlab cannot peek at: Keras's rule, unprobed
        return x
    xs, ys, sws = batch
    with acc.distribute_strategy.scope():
        rule, per_row = normaliser.probe(functools.partial(loss_of, acc), acc.loss, xs, ys, sws,
                                         weighted=weighted)
        trainables.build_for_training(acc.model, xs)
        trainables.check_known(acc.optimizer, acc.model, acc.model.trainable_variables)
        normaliser.warn_if_split_changes(
            acc.model, acc.accum_steps * acc.distribute_strategy.num_replicas_in_sync,
            acc.optimizer, lambda: normaliser.splits_in_training(
                functools.partial(loss_of, acc, training=True), acc.loss, xs, ys, rule,
                acc.model.non_trainable_variables))
    acc.built = acc.model.built
    acc._rule, acc._per_row = rule, per_row
    return x


def loss_of(acc, x, y, sample_weight, training=False):
    """`(loss, y_pred)`: Keras's compiled loss of `acc` on rows, its trackers left as found."""
    y_pred = acc.model(x, training=training)
    loss = acc.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
    for tracker in _compat.output_loss_trackers(acc):  # the probe is not training
        tracker.reset_state()
    return loss, y_pred
