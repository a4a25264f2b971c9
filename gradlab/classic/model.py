"""The model, loss and optimizer every classic graph builds, and the checks of their arguments.

    logits = relu(x W1 + b1) W2 + b2                 the MLP of gradlab.studies.models "mlp"
    loss   = mean_i CE(softmax(logits_i), y_i)       sparse softmax cross-entropy
    update = tf.compat.v1.train optimizer            'sgd' | 'momentum' | 'adam'

Call these inside a builder's own `tf.Graph`: they make TF1 graph ops, never eager ones.

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-accumulating-in-variables.ipynb
"""
from __future__ import annotations

import numbers

import numpy as np
import tensorflow as tf

from ..core.gradients import densify
from .optimizers import make_optimizer as make_keras_optimizer, settings

v1 = tf.compat.v1


def mlp(x, hidden=256, num_classes=10, seed=0):
    """`logits = relu(x W1 + b1) W2 + b2` with variables `dense/{kernel,bias}`, `dense_1/...`.

    Glorot-uniform kernels and zero biases, like Keras `Dense`; call it inside a
    `variable_scope` so that towers share the variables (`get_variable` with reuse). The same
    variable names and starting weights as the `mlp` lesson 02 writes (its checks compare them);
    later lessons import this one as `gradlab.lessons.tf1_mlp`.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    x = tf.reshape(x, [-1, int(np.prod(x.shape[1:]))])  # Flatten
    h = tf.nn.relu(_dense(x, hidden, "dense", seed))
    return _dense(h, num_classes, "dense_1", seed + 1)


def _dense(x, units, name, seed):
    with v1.variable_scope(name):
        kernel = v1.get_variable("kernel", [x.shape[-1], units],
                                 initializer=v1.glorot_uniform_initializer(seed=seed))
        bias = v1.get_variable("bias", [units], initializer=v1.zeros_initializer())
        return tf.matmul(x, kernel) + bias


def mean_loss(model, x, y, scale=None):
    """`loss = mean_i CE(model(x)_i, y_i)`: the forward pass in name scope `model`, the loss in
    `loss`; with a `scale`, returns `(loss, scale * loss)`.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    with tf.name_scope("model"):
        logits = model(x)
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        return loss if scale is None else (loss, loss * scale)


def make_optimizer(optimizer, lr, **optimizer_args):
    """A `tf.compat.v1.train` optimizer: 'sgd', 'momentum', 'adam', or a zero-argument builder.

    Names and defaults come from `gradlab.classic.optimizers` (momentum 0.9; Adam's `epsilon` is
    Keras's 1e-7, TF1's own default was 1e-8), so a TF1 graph and `keras_optimizer(...)`
    make the same update.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    if callable(optimizer):
        return optimizer()
    kw = settings(optimizer, **optimizer_args)
    if optimizer == "momentum":
        return v1.train.MomentumOptimizer(lr, **kw)
    if optimizer == "adam":
        return v1.train.AdamOptimizer(lr, **kw)
    return v1.train.GradientDescentOptimizer(lr)


def keras_optimizer(optimizer, lr, **optimizer_args):
    """The Keras optimizer that makes the same update as `make_optimizer(optimizer, lr)`:
    `gradlab.classic.optimizers.make_optimizer`.

    Momentum: TF1 keeps `a = m a + g; w -= lr a`, Keras `v = m v - lr g; w += v`
    (`v = -lr a`): the same update while `lr` is constant.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    return make_keras_optimizer(optimizer, lr, **optimizer_args)


def placeholders(input_shape):
    """`x` (float32, `(None, *input_shape)`) and `y` (int32, `(None,)`) in scope `placeholders`."""
    with tf.name_scope("placeholders"):
        return (v1.placeholder(tf.float32, (None, *input_shape), name="x"),
                v1.placeholder(tf.int32, (None,), name="y"))


def single_device(model, input_shape, optimizer, lr, optimizer_args):
    """`x, y, loss, opt, variables, grads` of a one-device graph: `grads = dloss/dvariables`,
    dense, one per variable that has a gradient.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    x, y = placeholders(input_shape)
    opt = make_optimizer(optimizer, lr, **optimizer_args)
    with v1.variable_scope("model", auxiliary_name_scope=False):
        loss = mean_loss(model, x, y)
    variables = v1.trainable_variables()
    pairs = [(g, v) for g, v in opt.compute_gradients(loss, var_list=variables) if g is not None]
    return x, y, loss, opt, [v for _, v in pairs], densify([g for g, _ in pairs])


def check_model_args(model, lr, optimizer, seed, input_shape, optimizer_args):
    """`(model_fn, input_shape)` from a builder's arguments, or ValueError / TypeError naming
    the bad value, before any TensorFlow op is made.

    Args:
        model: 'mlp' or `model(x) -> logits` making its variables with `get_variable`.
        lr: a positive number.
        optimizer, optimizer_args: see `make_optimizer` (names are checked, nothing built).
        seed: an integer, the seed of the MLP's initializers.
        input_shape: a positive integer or a tuple of them, the shape of one example.
    Returns:
        `model_fn(x) -> logits` and `input_shape` as a tuple.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    if model == "mlp":
        model_fn = None
    elif callable(model):
        model_fn = model
    else:
        raise ValueError(f"model must be 'mlp' or a callable model(x) -> logits, got {model!r}")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not lr > 0:
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    if callable(optimizer):
        settings("sgd", **optimizer_args)  # the argument names only
    else:
        settings(optimizer, **optimizer_args)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    if isinstance(input_shape, numbers.Integral):
        input_shape = (input_shape,)
    input_shape = tuple(input_shape)
    if not input_shape or not all(isinstance(d, numbers.Integral) and d > 0 for d in input_shape):
        raise ValueError(f"input_shape must be a tuple of positive integers, got {input_shape!r}")
    if model_fn is None:
        model_fn = lambda x: mlp(x, seed=int(seed))  # noqa: E731
    return model_fn, input_shape
