"""Layers: a tensor's Keras mask (read, set, sliced), a model's sublayers, BatchNormalization's moments.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import contextlib
import inspect

import keras
import tensorflow as tf

from ._probing import _broken, _probed


def _probe_mask():
    from keras.src.backend.common.masking import get_keras_mask
    m = get_keras_mask(keras.layers.Embedding(3, 2, mask_zero=True)(tf.constant([[1, 0]])))
    if m is None or m.numpy().tolist() != [[True, False]]:
        raise _broken("Embedding(mask_zero=True) no longer leaves a Keras mask on its output "
                      "where keras.src.backend.common.masking.get_keras_mask finds it")


@_probed(_probe_mask)
def keras_mask(x):
    """The Keras mask a layer left on tensor `x` (`Embedding(mask_zero=True)`, `Masking`), or None."""
    from keras.src.backend.common.masking import get_keras_mask
    return get_keras_mask(x)


def _probe_set_mask():
    from keras.src.backend.common.masking import get_keras_mask, set_keras_mask
    t = tf.zeros((2, 1))
    set_keras_mask(t, tf.constant([True, False]))
    if get_keras_mask(t) is None:
        raise _broken("keras.src.backend.common.masking.set_keras_mask no longer leaves a mask "
                      "that get_keras_mask finds")


def slice_rows(x, start, stop):
    """`x[start:stop]` with the same rows of its Keras mask, if it has one (Keras's losses
    read the mask from the prediction)."""
    out, mask = x[start:stop], keras_mask(x)
    return out if mask is None else with_keras_mask(out, mask[start:stop])


@_probed(_probe_set_mask)
def with_keras_mask(x, mask):
    """`x` (a tensor no layer has masked) given the Keras mask `mask`, in place; returns `x`."""
    from keras.src.backend.common.masking import set_keras_mask
    set_keras_mask(x, mask)
    return x


def _probe_flatten_layers():
    inner = keras.Sequential([keras.layers.Dense(1, name="leaf")], name="inner")
    outer = keras.Sequential([keras.Input((2,)), inner], name="outer")
    found = [l.name for l in outer._flatten_layers(include_self=False, recursive=True)
             if not isinstance(l, keras.layers.InputLayer)]
    if sorted(found) != ["inner", "leaf"]:
        raise _broken(f"Keras's _flatten_layers(include_self=False, recursive=True) no longer "
                      f"lists the nested layers of a model (got {found})")


@_probed(_probe_flatten_layers)
def sublayers(model):
    """Every layer inside `model`, nested models included (not `model` itself)."""
    return list(model._flatten_layers(include_self=False, recursive=True))


def _probe_moments():
    moments = getattr(keras.layers.BatchNormalization, "_moments", None)
    if not callable(moments) or list(inspect.signature(moments).parameters) != ["self", "inputs", "mask"]:
        raise _broken("BatchNormalization no longer computes its batch statistics in "
                      "_moments(inputs, mask)")
    layer = keras.layers.BatchNormalization()
    seen = []
    object.__setattr__(layer, "_moments", lambda inputs, mask: seen.append(1) or (
        tf.zeros(inputs.shape[-1:]), tf.ones(inputs.shape[-1:])))
    layer(tf.ones((2, 3)), training=True)
    if seen != [1]:
        raise _broken("BatchNormalization(training=True) no longer calls its _moments")


@contextlib.contextmanager
@_probed(_probe_moments)
def batchnorm_moments(layer, record):
    """While active, `layer` (a BatchNormalization) computes its batch moments through
    `record(inputs, mask, moments)`, where `moments` is Keras's own computation."""
    moments = type(layer)._moments.__get__(layer)
    object.__setattr__(layer, "_moments", lambda inputs, mask: record(inputs, mask, moments))
    try:
        yield
    finally:
        del layer.__dict__["_moments"]


PRIVATE_NAMES = {
    "keras.src.backend.common.masking.get_keras_mask": _probe_mask,
    "keras.src.backend.common.masking.set_keras_mask": _probe_set_mask,
    "_flatten_layers": _probe_flatten_layers,
    "_moments": _probe_moments,
}
