"""Behaviours that changed within the supported range (Keras 3.8 to 3.15), with no private name.

Each probe returns which variant it found (`_probing.FOUND`, printed by `doctor`), and the
functions below act on it.
"""
from __future__ import annotations

import contextlib

import keras
import tensorflow as tf

from ._probing import _broken, _found_by
from .distribute import mirrored_strategy

ACTIVITY_MEAN = "activity regularisers average over rows (Keras 3.14 on)"
ACTIVITY_SUM = "activity regularisers sum over rows (Keras 3.8-3.13): a model with one is refused"
METRICS_ON_READ = "metric variables sum over replicas on read (Keras 3.10 on)"
METRICS_ON_WRITE = ("metric variables mirrored on write (Keras 3.8-3.9): AccumulatingModel "
                    "makes its own sum on read")


def _probe_activity_penalty():
    layer = keras.layers.Dense(1, use_bias=False, kernel_initializer="ones",
                               activity_regularizer=keras.regularizers.L1(1.0))
    layer(tf.ones((2, 1)))
    penalty = float(tf.add_n(layer.losses))  # 1.0 averaged over the 2 rows, 2.0 summed
    if penalty not in (1.0, 2.0):
        raise _broken(f"an L1(1.0) activity penalty of two rows of ones is {penalty}, neither "
                      "their mean (1.0) nor their sum (2.0)")
    return ACTIVITY_MEAN if penalty == 1.0 else ACTIVITY_SUM


def activity_penalty_is_a_mean():
    """Whether Keras divides an activity regulariser's penalty by the batch's rows (3.14 on,
    keras-team/keras#22018). Keras 3.8-3.13 sum it over the rows: the loss of a model with
    one is then no mean over rows, and both faces refuse it at its first update, as they
    refuse any loss that adds up its rows."""
    return _found_by(_probe_activity_penalty) == ACTIVITY_MEAN


def _probe_metric_sync():
    with mirrored_strategy(["/cpu:0"]).scope():
        total = keras.metrics.Mean().variables[0].value
    if not isinstance(total, tf.distribute.DistributedValues):
        raise _broken("a Keras metric made in a MirroredStrategy's scope is not distributed")
    return METRICS_ON_READ if total.synchronization == tf.VariableSynchronization.ON_READ \
        else METRICS_ON_WRITE


@contextlib.contextmanager
def metrics_summed_on_read(strategy):
    """While active (inside `strategy`'s scope), the metric variables Keras makes sum over
    the replicas when read, as Keras makes them itself from 3.10 on. Keras 3.8-3.9 mirror
    them on write: each update is then a cross-replica sync, which TensorFlow refuses inside
    the compiled loop over micro-batches ("merge_call called while defining a new graph").
    In those versions a metric's variables are the only non-trainable ones Keras aggregates
    by SUM. A no-op outside tf.distribute and from Keras 3.10 on."""
    default = not tf.distribute.has_strategy() and strategy is tf.distribute.get_strategy()
    if default or _found_by(_probe_metric_sync) == METRICS_ON_READ:
        yield
        return

    def on_read(next_creator, **kwargs):
        if kwargs.get("trainable") is False and kwargs.get("aggregation") == tf.VariableAggregation.SUM:
            kwargs["synchronization"] = tf.VariableSynchronization.ON_READ
        return next_creator(**kwargs)
    # inside the strategy's scope, so that the strategy makes the variable as asked
    with strategy.scope(), tf.variable_creator_scope(on_read):
        yield


BEHAVIOURS = (_probe_activity_penalty, _probe_metric_sync)
