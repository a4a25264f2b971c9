import keras
import numpy as np

import gradlab as gl


def _model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((20,)), keras.layers.Dense(64), keras.layers.BatchNormalization(momentum=0.9),
                             keras.layers.ReLU(), keras.layers.Dense(10)])


def test_window_moves_the_statistics_as_keras_moves_them_on_the_large_batch():
    # oracle: Keras's own train_on_batch on all 100 rows, moving <- 0.9 moving + (1 - 0.9) batch moments,
    # with 1 - 0.9 formed in Python; the window merges 4 micro-batches' moments and moves once. A 1 - rho
    # formed in float32 (0.100000024) put the moving mean 4 spacings off at its largest entry.
    rng = np.random.default_rng(0)
    x = (3 * rng.normal(size=(100, 20)) + 1).astype("float32")
    y = rng.integers(0, 10, 100)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    large = _model()
    large.compile(keras.optimizers.SGD(0.1), loss)
    large.train_on_batch(x, y)
    window = _model()
    gl.make_strategy("accumulate", window, loss, keras.optimizers.SGD(0.1), accum_steps=4,
                     batchnorm="window").step(x, y)
    for want, got in zip(large.layers[1].non_trainable_weights, window.layers[1].non_trainable_weights):
        want, got = np.asarray(want), np.asarray(got)
        spacing = np.spacing(np.abs(want).max())
        assert np.abs(want - got).max() <= 2 * spacing, (want.shape, np.abs(want - got).max() / spacing)
