"""BatchNorm under accumulation: moving statistics updated once per update, from the window.

Each micro-batch i of n_i examples normalises with its own mean m_i and variance v_i (that
cannot change without a second pass), and Keras would also move the moving averages after
every micro-batch: N times per update, from statistics of n_i examples. With
`batchnorm='window'` the micro-batch moments are combined instead, weighted by counts::

    mean = sum_i n_i m_i / B
    var  = sum_i n_i (v_i + (m_i - mean)^2) / B          (the variance of all B examples)
    moving <- momentum * moving + (1 - momentum) * window      (once per update)

so after one update the moving statistics are those of one large batch. The combination
runs as Chan's pairwise update, one micro-batch at a time, so no m_i has to be kept.
GroupNormalization and LayerNormalization have no batch statistics at all: with them,
accumulation is exact.

Which mode to keep: neither makes the forward pass exact (each micro-batch still normalises
with its own n_i examples). `'window'` gives the large batch's moving statistics, to compare
with a large-batch run. `'micro'` (the default, Keras's) moves them towards the statistics
the network normalised with in training, the micro-batches'. For an exact forward pass use
GroupNormalization or LayerNormalization, or freeze BatchNorm.

Lesson: notebooks/09-moving-averages.ipynb
"""
from __future__ import annotations

import contextlib

import keras
import tensorflow as tf

from .. import _compat

BATCHNORM_MODES = ("micro", "window")


def check_mode(batchnorm):
    """`batchnorm` if it is one of `BATCHNORM_MODES`, else ValueError naming it."""
    if not isinstance(batchnorm, str) or batchnorm not in BATCHNORM_MODES:
        raise ValueError(f"batchnorm must be one of {', '.join(map(repr, BATCHNORM_MODES))}, "
                         f"got {batchnorm!r}")
    return batchnorm


def batchnorm_layers(model):
    """Every `keras.layers.BatchNormalization` inside `model`, nested models included."""
    return [l for l in _compat.sublayers(model) if isinstance(l, keras.layers.BatchNormalization)]


def check_window(model):
    """Raise ValueError if `batchnorm='window'` cannot serve `model` (BatchNorm with renorm).

    Returns:
        the model's BatchNormalization layers.
    """
    layers = batchnorm_layers(model)
    for layer in layers:
        if getattr(layer, "renorm", False):  # Keras 3.9 added renorm; 3.8's layer has no such attribute
            raise ValueError(f"batchnorm='window' does not support BatchNormalization "
                             f"with renorm=True (layer {layer.name!r})")
    return layers


class WindowMoments:
    """Running `(count, mean, M2)` per BatchNorm layer over the micro-batches of one update.

    `recording()` is entered around the forward passes of the micro-batches (while a
    `tf.function` traces them); `update()` moves the moving statistics once and empties
    the window; `reset()` empties it without updating (a failed step). Only trainable layers
    record: a frozen BatchNormalization (`trainable=False`, as in fine-tuning) runs in
    inference mode and keeps its statistics, as Keras's own.
    """

    def __init__(self, model):
        self.layers = [layer for layer in check_window(model) if layer.trainable]
        self._state = [
            tuple(tf.Variable(tf.zeros(shape, "float32"), trainable=False,
                              name=f"{layer.name}_window_{what}")
                  for what, shape in (("count", ()), ("mean", layer.moving_mean.shape),
                                      ("m2", layer.moving_mean.shape)))
            for layer in self.layers
        ]

    @contextlib.contextmanager
    def recording(self):
        """While active, BatchNorm layers normalise as usual but add their moments to the
        window instead of moving their statistics (momentum 1 makes Keras's own update a
        no-op). Patches the layers only for the duration of the `with` block."""
        with contextlib.ExitStack() as stack:
            for layer, state in zip(self.layers, self._state):
                stack.enter_context(_compat.batchnorm_moments(layer, self._recorder(state)))
                stack.callback(object.__setattr__, layer, "momentum", layer.momentum)
                object.__setattr__(layer, "momentum", 1.0)
            yield self

    @staticmethod
    def _recorder(state):
        count, mean, m2 = state

        def record(inputs, mask, moments):
            if mask is not None:
                raise NotImplementedError("batchnorm='window' does not support masked inputs")
            m_b, v_b = moments(inputs, mask)
            # Chan et al.: merge (count, mean, m2) with a micro-batch of n_b rows.
            n_b = tf.cast(tf.shape(inputs)[0], tf.float32)
            n_a, n = count.read_value(), count + n_b
            delta = tf.stop_gradient(tf.cast(m_b, tf.float32)) - mean
            m2.assign_add(tf.stop_gradient(tf.cast(v_b, tf.float32)) * n_b
                          + tf.square(delta) * (n_a * n_b / n))
            mean.assign_add(delta * (n_b / n))
            count.assign(n)
            return m_b, v_b
        return record

    def window(self):
        """`[(mean, var), ...]` of the examples recorded so far, one pair per layer."""
        return [(mean.read_value(), m2 / tf.maximum(count, 1.0)) for count, mean, m2 in self._state]

    def update(self):
        """`moving <- momentum * moving + (1 - momentum) * window`, once; then `reset()`.
        A layer that recorded nothing (not called in training mode) keeps its statistics."""
        for layer, (count, _, _), (mean, var) in zip(self.layers, self._state, self.window()):
            # 1 - momentum is formed in Python, as Keras's own update forms it: float32's 1 - 0.99
            # is 0.0099999905, which put the window 17 spacings off the large batch's statistics.
            rho = tf.where(count > 0, layer.momentum, 1.0)
            one_minus_rho = tf.where(count > 0, 1.0 - layer.momentum, 0.0)
            for moving, value in ((layer.moving_mean, mean), (layer.moving_variance, var)):
                value = tf.where(count > 0, tf.cast(value, tf.float32), 0.0)
                moving.assign(moving * tf.cast(rho, moving.dtype) + tf.cast(value * one_minus_rho, moving.dtype))
        self.reset()

    def reset(self):
        for state in self._state:
            for v in state:
                v.assign(tf.zeros_like(v))


class NoWindow:
    """`batchnorm='micro'`: Keras's own behaviour, one moving-statistics update per micro-batch."""

    def recording(self):
        return contextlib.nullcontext(self)

    def update(self):
        pass

    def reset(self):
        pass


NO_WINDOW = NoWindow()
