"""Before a face's first update: the checks that need no data, one prologue for `step` and `fit`.

    check(model, optimizer, passes, inputs, scope, window):
        state a split of `passes` forward passes cannot give refused   (`state_writes`:
            overwrite_with_gradient variables, stateful RNNs...)
        the layers only training uses built: one training-mode forward pass traced from
            `inputs`' shapes, nothing run                                (`trainables`)
        batchnorm="window": a model built only now checked for renorm  (`batchnorm`)
        trainable variables the optimizer does not know refused         (`trainables`)
        Dropout, BatchNormalization and loss-scale warnings (by layer type)  (`normaliser`)
    xla_refused(function, parts, who):
        jit_compile="auto": `function(parts)` lowered to XLA once (nothing runs); if XLA refuses,
        the one warning naming the reason, and the face runs without XLA from then on

Nothing here reads the user's data or runs the model: a seeded pipeline is iterated exactly as
Keras iterates it, and no layer's state or random generator moves. The contract itself is
checked inside the update (`contract`, armed by `check_state`). Each face keeps its own glue:
`Strategy` runs this at its first batch and follows trainable changes by retracing;
`AccumulatingModel` runs it once per `compile`, before `fit` or `train_on_batch`.

Lessons: notebooks/07-pitfalls-what-to-count.ipynb, notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import contextlib

import keras
import numpy as np
import tensorflow as tf

from ..core import normaliser, state_writes
from ..core.batchnorm import check_window
from . import trainables, xla

# frames from `warnings.warn` to the user's call: normaliser, check, the face's method, the face
_STACKLEVEL = 5


def check(model, optimizer, passes, inputs, scope=None, window=False):
    """The first-batch checks above, before `model`'s first update by `optimizer`.

    Args:
        model, optimizer: what the face trains, and with what.
        passes: forward passes per update (micro-batches times towers or replicas).
        inputs: the inputs or their `tf.TensorSpec`s (`input_spec`); None where their shapes
            cannot be known without reading the data (Keras then builds the model itself).
        scope: the context the variables are made in (a tf.distribute scope), if any.
        window: batchnorm="window" (its renorm check, on a model this call builds).
    Raises:
        ValueError naming the layer or variable, before any update.
    """
    built = model.built
    state_writes.check_splittable(model, passes)
    with scope if scope is not None else contextlib.nullcontext():
        if inputs is not None:
            trainables.build_for_training(model, inputs)
        if window and not built:
            check_window(model)
        trainables.check_known(optimizer, model, model.trainable_variables)
    normaliser.warn_if_split_changes(model, passes, optimizer, stacklevel=_STACKLEVEL)


def xla_refused(function, parts, who):
    """Whether XLA refuses to lower `function(parts)` (an op without an XLA kernel): if so,
    the one warning both faces give (`xla.warn_refused`, naming `who` and XLA's reason)."""
    reason = xla.refusal(function, parts)
    if reason is None:
        return False
    xla.warn_refused(reason, who, stacklevel=_STACKLEVEL)
    return True


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
