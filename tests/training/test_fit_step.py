"""fit_step: one `fit` step of AccumulatingModel (train_step, test_step), against Keras's own
`train_on_batch` / `test_on_batch` of the whole batch on a twin model."""
import keras
import numpy as np
import pytest

import gradlab as gl


def _model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"), keras.layers.Dense(3)])


def _compile(model):
    model.compile(optimizer=keras.optimizers.Adam(0.05), metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_train_step_and_test_step_equal_keras_on_an_uneven_weighted_batch():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(11, 4)).astype("float32"), rng.integers(0, 3, 11)
    w = rng.uniform(0.5, 2.0, 11).astype("float32")
    acc = _compile(gl.AccumulatingModel(_model(), accum_steps=3, jit_compile=False))  # 4 + 4 + 3 rows
    twin = _compile(_model())
    for _ in range(3):
        ours = acc.train_on_batch(x, y, sample_weight=w, return_dict=True)
        theirs = twin.train_on_batch(x, y, sample_weight=w, return_dict=True)
        assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-5)
        assert ours["accuracy"] == pytest.approx(theirs["accuracy"])
    for a, b in zip(acc.get_weights(), twin.get_weights()):
        np.testing.assert_allclose(a, b, atol=2e-6)
    assert int(acc.optimizer.iterations) == int(twin.optimizer.iterations) == 3
    ours = acc.test_on_batch(x, y, sample_weight=w, return_dict=True)
    theirs = twin.test_on_batch(x, y, sample_weight=w, return_dict=True)
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-5)
    assert ours["accuracy"] == pytest.approx(theirs["accuracy"])


def test_a_non_finite_update_is_skipped_and_counted():
    x = np.ones((6, 4), "float32")
    x[2, 0] = np.nan  # one bad row: the whole update is skipped, not only its micro-batch
    y = np.zeros(6, "int64")
    acc = _compile(gl.AccumulatingModel(_model(), accum_steps=2, jit_compile=False))
    before = acc.get_weights()
    logs = acc.train_on_batch(x, y, return_dict=True)
    assert logs["skipped_updates"] == 1.0 and int(acc.optimizer.iterations) == 0
    for a, b in zip(acc.get_weights(), before):
        np.testing.assert_array_equal(a, b)
