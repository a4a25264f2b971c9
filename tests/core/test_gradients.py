import numpy as np
import keras
import tensorflow as tf

from gradlab.core.gradients import apply_update, densify
from gradlab.core.loss_terms import loss_and_grads, mean_loss


def test_per_example_and_mean_losses_agree_and_regularisation_counts_once():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(
        1, kernel_regularizer=keras.regularizers.L2(0.5), kernel_initializer="ones")])
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    per_example = mean_loss(model, lambda y, p: tf.reduce_sum((p - y) ** 2, axis=-1), x, y)
    mean = mean_loss(model, keras.losses.MeanSquaredError(), x, y)
    # (x.w)^2 = 4 per example, plus 0.5 * |w|^2 = 1 once.
    np.testing.assert_allclose([float(per_example), float(mean)], [5.0, 5.0])


def test_weight_scales_the_gradient_not_the_reported_loss():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, kernel_initializer="ones")])
    x, y = np.ones((2, 1), "float32"), np.zeros((2, 1), "float32")
    loss, grads = loss_and_grads(model, keras.losses.MeanSquaredError(), x, y, weight=0.25)
    full_loss, full = loss_and_grads(model, keras.losses.MeanSquaredError(), x, y)
    assert float(loss) == float(full_loss)
    np.testing.assert_allclose(grads[0].numpy(), 0.25 * full[0].numpy())


def test_densify_and_clip_once():
    s = tf.IndexedSlices(tf.constant([[1.0], [1.0]]), tf.constant([0, 0]), tf.constant([2, 1]))
    np.testing.assert_allclose(densify([s, None])[0].numpy(), [[2.0], [0.0]])
    v = tf.Variable([0.0, 0.0])
    apply_update(keras.optimizers.SGD(1.0), [tf.constant([3.0, 4.0])], [v], clip_norm=1.0)
    np.testing.assert_allclose(v.numpy(), [-0.6, -0.8], rtol=1e-6)
