"""Losses under a distribution strategy: Keras's division by the replicas, switched off while a
step is traced.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import contextlib

import keras
import tensorflow as tf

from ._probing import _broken, _probed, _patch_lock


_undivided = 0  # contexts in any thread that want Keras's losses undivided: patched while > 0
_divisions = None  # Keras's own two functions, put back when the last context leaves


def _probe_loss_division():
    from keras.src.losses import loss as keras_loss
    with _patch_lock:
        saved = keras_loss.scale_loss_for_distribution
        keras_loss.scale_loss_for_distribution = lambda value: value * 0.0
        try:
            routed = float(keras.losses.MeanSquaredError()(tf.zeros((2, 1)), tf.ones((2, 1)))) == 0.0
        finally:
            keras_loss.scale_loss_for_distribution = saved
    if not routed:
        raise _broken("Keras loss objects no longer divide by the replicas through "
                      "keras.src.losses.loss.scale_loss_for_distribution")
    from keras.src.trainers import compile_utils
    if compile_utils.loss_module is not keras_loss or \
            not callable(keras_loss.unscale_loss_for_distribution):
        raise _broken("Keras's per-output loss trackers no longer undo the division through "
                      "keras.src.losses.loss.unscale_loss_for_distribution")


@contextlib.contextmanager
@_probed(_probe_loss_division)
def _no_loss_division():
    # Counted, not saved per context: Keras runs replica steps in threads of their own, and a
    # context that left first must not put Keras's division back under one still active.
    global _undivided, _divisions
    from keras.src.losses import loss as keras_loss
    with _patch_lock:
        if _undivided == 0:
            _divisions = keras_loss.scale_loss_for_distribution, keras_loss.unscale_loss_for_distribution
            keras_loss.scale_loss_for_distribution = keras_loss.unscale_loss_for_distribution = \
                lambda value: value
        _undivided += 1
    try:
        yield
    finally:
        with _patch_lock:
            _undivided -= 1
            if _undivided == 0:
                keras_loss.scale_loss_for_distribution, keras_loss.unscale_loss_for_distribution = _divisions


def losses_not_divided_by_replicas():
    """While active (while a replica step is traced), Keras loss objects return plain means.

    Inside a strategy a Keras 3 loss object divides its mean by `num_replicas_in_sync`, so
    that a SUM all-reduce of equal shards gives the mean (and Keras's per-output loss
    trackers multiply it back: not while this is active either). gradlab sums unnormalised losses
    and normalisers over replicas instead (exact for uneven shards), and a user's loss may
    add terms of its own that Keras does not divide: no factor applied afterwards undoes a
    division of one term only (measured: 8e-3 off after 3 updates). So: no division.
    """
    return _no_loss_division()


PRIVATE_NAMES = {
    "keras.src.losses.loss": _probe_loss_division,
    "keras.src.losses.loss.scale_loss_for_distribution": _probe_loss_division,
    "keras.src.losses.loss.unscale_loss_for_distribution": _probe_loss_division,
    "keras.src.trainers.compile_utils.loss_module": _probe_loss_division,
}
