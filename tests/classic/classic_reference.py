"""What every classic graph is checked against: TF2 `large_batch` on the same batches, and a
linear model small enough to compute its gradients by hand."""
import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.classic.model import keras_optimizer
from gradlab.studies.data import load_mnist
from gradlab.studies.models import make_model
from gradlab.training.strategies import make_strategy

# Adam's step m / (sqrt(v) + eps) turns a rounding difference dg in a gradient near eps into
# about lr / (4 eps) * dg: TF1 against Keras differ by < 1e-6 at lr=1e-3, ~3e-5 at lr=1e-2.
LR = {"momentum": 0.1, "adam": 1e-3}
SIZES = (32, 30, 31)  # three updates; in 4 micro-batches 8+8+8+8, 8+8+7+7, 8+8+8+7; towers 15+15, 16+15


@functools.cache
def batches():
    d = load_mnist()
    starts = np.cumsum((0,) + SIZES)
    return tuple((d.x_train[s:s + n], d.y_train[s:s + n]) for s, n in zip(starts, SIZES))


@functools.cache
def keras_large_batch(opt):
    """`(initial weights, losses, final weights)` of TF2 large_batch on `batches()`."""
    model = make_model("mlp", seed=1)
    init = [w.numpy() for w in model.trainable_weights]
    s = make_strategy("large_batch", model, keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      keras_optimizer(opt, LR[opt]))
    losses = [s.step(x, y) for x, y in batches()]
    return init, losses, [w.numpy() for w in model.trainable_weights]


def train(parts, init, accum_steps):
    """`(losses, final weights)` of `parts.run_update` on `batches()` from the weights `init`."""
    with parts.session() as sess:
        parts.set_weights(sess, init)
        losses = [parts.run_update(sess, x, y, accum_steps) for x, y in batches()]
        return losses, parts.get_weights(sess)


def assert_same(a, b, rtol=1e-5, atol=1e-5):
    (losses_a, weights_a), (losses_b, weights_b) = a, b
    np.testing.assert_allclose(losses_a, losses_b, rtol=rtol, atol=atol)
    for wa, wb in zip(weights_a, weights_b, strict=True):
        np.testing.assert_allclose(wa, wb, rtol=rtol, atol=atol)


def assert_equals_large_batch(parts, reference, opt, accum_steps):
    """`parts` makes the updates of `reference` (the same construction, one part per update)
    and of Keras's large batch, and moves the weights."""
    init, keras_losses, keras_weights = keras_large_batch(opt)
    got = train(parts, init, accum_steps)
    assert_same(got, train(reference, init, accum_steps=1))
    assert_same(got, (keras_losses, keras_weights))
    assert max(np.abs(w - w0).max() for w, w0 in zip(got[1], init)) > 1e-3  # it did train


def linear(x):
    """logits = x w + b, starting from zero: every softmax is (1/2, 1/2)."""
    w = tf.compat.v1.get_variable("w", [2, 2], initializer=tf.compat.v1.zeros_initializer())
    b = tf.compat.v1.get_variable("b", [2], initializer=tf.compat.v1.zeros_initializer())
    return tf.matmul(x, w) + b


# At w = 0 the logit gradient of one example is p - onehot(y) = (-1/2, 1/2) for y = 0 and
# (1/2, -1/2) for y = 1, so its w-gradient is the outer product x (p - onehot(y)):
#   x=(1,2),y=0: [[-.5,.5],[-1,1]]   x=(3,4),y=1: [[1.5,-1.5],[2,-2]]
#   x=(2,0),y=0: [[-1,1],[0,0]]      x=(0,4),y=1: [[0,0],[2,-2]]
# Their mean, the large batch's w-gradient, is [[0,0],[.75,-.75]] (b: (0,0)); SGD with lr=1
# moves w from 0 to minus that. The loss at w = 0 is log 2 for every example.
WALK_X = np.array([[1, 2], [3, 4], [2, 0], [0, 4]], np.float32)
WALK_Y = np.array([0, 1, 0, 1], np.int32)
WALK_GRAD_W = [[0.0, 0.0], [0.75, -0.75]]
WALK_W_AFTER = [[0.0, 0.0], [-0.75, 0.75]]


def very_uneven_case(batch, sizes):
    """`(x, y, keras model, loss, large-batch gradient)` for the first `batch` examples, after
    checking that the plain mean of the parts' gradients (parts of `sizes`) is not that gradient.

    Oracle: the mean-loss gradient of the whole batch, by tf.GradientTape on a Keras model.
    """
    x, y = batches()[0][0][:batch], batches()[0][1][:batch]
    model = make_model("mlp", seed=2)
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tf.GradientTape() as tape:
        loss = ce(y, model(x))
    large = [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]
    parts_grads = []
    for start, n in zip(np.cumsum([0] + sizes[:-1]), sizes):
        with tf.GradientTape() as tape:
            part = ce(y[start:start + n], model(x[start:start + n]))
        parts_grads.append([g.numpy() for g in tape.gradient(part, model.trainable_variables)])
    naive = [np.mean(gs, axis=0) for gs in zip(*parts_grads)]
    assert max(np.abs(a - b).max() for a, b in zip(naive, large)) > 1e-3  # the split matters here
    return x, y, model, float(loss), large


def assert_applies(parts, case, accum_steps):
    """One `run_update` with SGD(lr=1) from the case's Keras weights returns its loss and moves
    the weights by exactly its large-batch gradient."""
    x, y, model, loss, large = case
    sess = parts.session()
    try:
        parts.set_weights(sess, [w.numpy() for w in model.trainable_weights])
        before = parts.get_weights(sess)
        got_loss = parts.run_update(sess, x, y, accum_steps)
        applied = [b - a for b, a in zip(before, parts.get_weights(sess))]
    finally:
        sess.close()
    assert got_loss == pytest.approx(loss, rel=1e-5)
    for a, g in zip(applied, large, strict=True):
        np.testing.assert_allclose(a, g, rtol=1e-4, atol=1e-6)


def assert_bad_batch_changes_nothing(parts, steps):
    """x and y of different lengths raise ValueError naming both, before any weight moves."""
    x, y = batches()[0]
    with parts.session() as sess:
        before = parts.get_weights(sess)
        with pytest.raises(ValueError, match="same number of examples, got 32 and 31"):
            parts.run_update(sess, x, y[:31], steps)
        for w, w0 in zip(parts.get_weights(sess), before):
            np.testing.assert_array_equal(w, w0)
    return before
