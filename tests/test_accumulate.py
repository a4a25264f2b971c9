import numpy as np
import keras
import tensorflow as tf

from gradlab.accumulate import Accumulators, fused_grads
from gradlab.gradients import loss_and_grads


def _linear():
    # pred = x @ w with w = 0; loss = mean(pred), so d loss / d w = mean(x): easy by hand.
    model = keras.Sequential([keras.Input((1,)),
                              keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")])
    return model, lambda y, pred: tf.reduce_mean(pred)


def test_walk_through_accumulator_values():
    model, loss_fn = _linear()
    acc = Accumulators(model.trainable_variables)
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(6, 1)  # B = 6, three micro-batches of 2
    expected = [(1 + 2) / 6, (1 + 2 + 3 + 4) / 6, 21 / 6]   # running sum of (n_i/B) mean(x_i)
    for i, want in enumerate(expected):
        _, grads = loss_and_grads(model, loss_fn, x[2 * i:2 * i + 2], x[2 * i:2 * i + 2], 2 / 6)
        acc.accumulate(grads)
        np.testing.assert_allclose(acc.variables[0].numpy(), [[want]], rtol=1e-6)
    np.testing.assert_allclose(acc.values()[0].numpy(), [[3.5]])  # = mean(x), the large batch
    acc.reset()
    np.testing.assert_allclose(acc.variables[0].numpy(), [[0.0]])
    assert not acc.variables[0].trainable


def test_accumulator_of_an_untouched_variable_reports_none():
    model, loss_fn = _linear()
    unused = tf.Variable(1.0)
    acc = Accumulators(model.trainable_variables + [unused])
    acc.accumulate([tf.ones((1, 1)), None])
    assert acc.values()[1] is None


def test_fused_grads_equal_the_large_batch_gradient_for_uneven_micro_batches():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(2)])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(11, 3)).astype("float32"), rng.integers(0, 2, 11)
    big_loss, big = loss_and_grads(model, loss_fn, x, y)
    loss, grads = tf.function(lambda x, y: fused_grads(model, loss_fn, x, y, [4, 4, 3]))(x, y)
    np.testing.assert_allclose(float(loss), float(big_loss), rtol=1e-6)
    for g, b in zip(grads, big):
        np.testing.assert_allclose(g.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    # Sizes as a constant tensor (as gradlab.noise passes them) are read at trace time.
    sizes = tf.constant([4, 4, 3])
    loss, grads = tf.function(lambda x, y: fused_grads(model, loss_fn, x, y, sizes))(x, y)
    np.testing.assert_allclose(float(loss), float(big_loss), rtol=1e-6)
