"""The one prologue of both faces (gradlab/training/prologue.py): checks before any data."""
import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from gradlab.training import prologue


def _dropout_mlp():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(8), keras.layers.Dropout(0.5, name="drop"),
                             keras.layers.Dense(3)])


def _data(n=8):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 5)).astype("float32"), rng.integers(0, 3, n)


def test_both_faces_warn_in_the_same_words_at_the_users_own_call():
    x, y = _data()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    s = gl.make_strategy("accumulate", _dropout_mlp(), loss, keras.optimizers.SGD(0.1), accum_steps=2)
    with pytest.warns(UserWarning, match="'drop': each of the 2 micro-batches") as by_step:
        s.step(x, y)
    acc = gl.AccumulatingModel(_dropout_mlp(), accum_steps=2)
    acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    with pytest.warns(UserWarning, match="'drop': each of the 2 micro-batches") as by_fit:
        acc.fit(x, y, batch_size=8, epochs=1, verbose=0)
    warned = lambda record: [w for w in record if "micro-batches runs its own" in str(w.message)]
    (step_warning,), (fit_warning,) = warned(by_step), warned(by_fit)
    assert str(step_warning.message) == str(fit_warning.message)
    assert step_warning.filename == fit_warning.filename == __file__  # not gradlab's own lines


def test_a_training_only_layer_is_built_without_running_the_model():
    class OnlyInTraining(keras.Model):
        def __init__(self):
            super().__init__()
            self.out, self.extra = keras.layers.Dense(3), keras.layers.Dense(3)

        def call(self, x, training=None):
            return self.out(x) + self.extra(x) if training else self.out(x)

    model = OnlyInTraining()
    model(np.zeros((1, 5), "float32"))
    assert len(model.trainable_variables) == 2  # inference built `out` only
    before = [v.numpy().copy() for v in model.weights]
    optimizer = keras.optimizers.SGD(0.1)
    prologue.check(model, optimizer, 2, prologue.input_spec(np.zeros((4, 5), "float32")))
    assert len(model.trainable_variables) == 4  # the training branch's Dense, built by tracing
    assert all(np.array_equal(a, b.numpy()) for a, b in zip(before, model.weights))
    assert prologue.input_spec(tf.data.Dataset.from_tensors(([1.0], 0)).batch(1)).shape.as_list() == [None, 1]
