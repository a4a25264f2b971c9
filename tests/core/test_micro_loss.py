"""`MicroLoss`, the one per-micro-batch loss builder of both faces, against Keras's own loss."""
import numpy as np
import keras
import tensorflow as tf

from gradlab.core.loss_terms import reduced_loss
from gradlab.core.micro_loss import MicroLoss


def _masked_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((5,)), keras.layers.Embedding(7, 4, mask_zero=True),
                             keras.layers.Dense(3)])


def _builder(model, loss, check=True):
    loss_of = lambda x, y, p, w: reduced_loss(loss, y, p, w, model.losses)
    return MicroLoss(model, loss, loss_of, tf.Variable(check))


def test_terms_are_keras_own_mean_times_its_normaliser_on_a_masked_output():
    model = _masked_model()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x = np.array([[1, 2, 0, 0, 0], [3, 1, 4, 0, 0], [5, 6, 1, 2, 3]])
    y = np.random.default_rng(0).integers(0, 3, (3, 5))
    micro = _builder(model, loss)
    (s, d, holds), pred = tf.function(lambda x, y: micro(x, y), autograph=False)(x, y)
    want = float(loss(y, model(x)))  # Keras's own: the mean over the 10 unmasked entries
    assert float(d) == 10.0
    np.testing.assert_allclose(float(s) / float(d), want, rtol=1e-6)
    assert bool(holds) and pred.shape == (3, 5, 3)


def test_the_check_refuses_a_sum_and_is_skipped_when_disarmed():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    total = lambda y, p: tf.reduce_sum(keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True))
    x, y = np.random.default_rng(1).normal(size=(6, 3)).astype("float32"), np.arange(6) % 2
    armed, disarmed = _builder(model, total), _builder(model, total, check=False)
    (_, _, holds), _ = tf.function(lambda x, y: armed(x, y), autograph=False)(x, y)
    assert not bool(holds)
    (_, _, holds), _ = tf.function(lambda x, y: disarmed(x, y), autograph=False)(x, y)
    assert bool(holds)
    (s, d), _ = _builder(model, total)(x, y, training=False)  # evaluation: terms only
    assert float(d) == 6.0
