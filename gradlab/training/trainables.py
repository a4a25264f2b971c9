"""The variables an update trains, found before the optimizer is built.

A layer that only the training branch of `call` uses (`if training: ...`) has no variables
until a training-mode forward pass builds it, and a Keras optimizer cannot take variables it
was not built with. So both faces trace one training-mode forward pass (nothing runs) before
building the optimizer, and refuse, naming the layers, variables an already built optimizer
does not know.
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat


def build_for_training(model, x):
    """Create every variable `model(x, training=True)` uses, by tracing it (no update, no
    BatchNorm statistics or seeds move). `x`: the inputs, or their `tf.TensorSpec`s."""
    spec = tf.nest.map_structure(
        lambda a: a if isinstance(a, tf.TensorSpec) else
        tf.TensorSpec([None] + list(tf.convert_to_tensor(a).shape[1:]), tf.convert_to_tensor(a).dtype), x)
    tf.function(lambda x: model(x, training=True), autograph=False).get_concrete_function(spec)


def check_known(optimizer, model, variables):
    """ValueError naming the layers whose `variables` a built `optimizer` does not know."""
    if not optimizer.built:
        return
    inner = _compat.optimizer_chain(optimizer)[-1]
    unknown = [v for v in variables if not _compat.optimizer_knows(inner, v)]
    if unknown:
        raise ValueError(
            f"layer(s) {owners(model, unknown)} have trainable variables the optimizer was not "
            "built for (they became trainable, or were first built, after it was), and a Keras "
            "optimizer cannot take new ones: use a fresh optimizer (as Keras asks you to "
            "recompile after unfreezing)")


def owners(model, variables):
    """The names of the innermost layers that own `variables`."""
    names = [layer.name for layer in _compat.sublayers(model)
             if any(w is v for w in layer.trainable_weights for v in variables)
             and not getattr(layer, "layers", None)]
    return ", ".join(repr(n) for n in names) or ", ".join(v.path for v in variables)
