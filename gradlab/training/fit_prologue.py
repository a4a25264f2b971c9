"""Before `AccumulatingModel`'s updates: the checks that need no data, and arming the one that does.

    once per compile: Keras's hooks still there; the layers only training uses built (traced
        from the data's shapes, nothing run); variables the optimizer does not know, state a
        split cannot reproduce (`overwrite_with_gradient`, stateful RNNs) refused; Dropout,
        BatchNormalization and loss-scale warnings (by layer type)
    each fit: the contract's check armed for the first update (`contract`, inside the update)

Nothing here reads the user's data or runs the model: a seeded pipeline is iterated exactly as
Keras iterates it, and no layer's state or random generator moves.

Lesson: notebooks/12-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from .. import _compat
from ..core import contract, normaliser, state_writes
from . import trainables


def prepare(acc, x, arm):
    """Run the once-per-compile checks of `acc` (an `AccumulatingModel`) and arm the
    contract's check: for this call's first update if `arm` (each fit), else only if no
    update has been checked since compile (train_on_batch)."""
    if not acc.compiled:
        return
    if not getattr(acc, "_prologue_done", False):
        _compat.check_fit_hooks()  # Keras still calls the private methods the wrapper overrides
        passes = acc.forward_passes()
        state_writes.check_splittable(acc.model, passes)
        spec = input_spec(x)
        with acc.distribute_strategy.scope():
            if spec is not None:
                trainables.build_for_training(acc.model, spec)
            trainables.check_known(acc.optimizer, acc.model, acc.model.trainable_variables)
        normaliser.warn_if_split_changes(acc.model, passes, acc.optimizer)
        acc.built = acc.model.built
        acc._prologue_done, acc._checked = True, False
    if acc.forward_passes() > 1 and (arm or acc.check == "every" or not acc._checked):
        acc._check_now.assign(True)
        acc._refused.assign(False)
        acc._checking = True  # its Python mirror: an update not checked reads no variable


def after_call(acc):
    """After a train function call: raise `contract.REFUSAL` (ValueError) if its update was
    refused (weights and optimizer untouched, metrics reset), else disarm the check once it
    has run ("first")."""
    if not acc._checking:
        return
    if bool(acc._refused.numpy()):
        acc._refused.assign(False)
        acc.reset_metrics()
        raise ValueError(contract.REFUSAL)
    acc._checked = True
    if acc.check == "first":
        acc._check_now.assign(False)
        acc._checking = False


def input_spec(x):
    """TensorSpecs of the model inputs in `x` (arrays, tensors or a tf.data.Dataset), batch
    dimension None; None for data whose shapes cannot be known without reading it."""
    if isinstance(x, tf.data.Dataset):
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(x.element_spec)
        if not all(isinstance(s, tf.TensorSpec) for s in tf.nest.flatten(inputs)):
            return None  # sparse or ragged inputs: Keras builds the model itself
        return tf.nest.map_structure(lambda s: tf.TensorSpec([None] + list(s.shape[1:]), s.dtype), inputs)
    flat = tf.nest.flatten(x)
    if not flat or not all(isinstance(a, (np.ndarray, tf.Tensor)) and len(np.shape(a)) >= 1 for a in flat):
        return None
    return tf.nest.map_structure(
        lambda a: tf.TensorSpec([None] + list(np.shape(a)[1:]), tf.convert_to_tensor(a[:1]).dtype), x)
