"""What `AccumulatingModel.fit` takes, against Keras's own plain `fit` on an identical twin (issue 31).

Each case once crashed or differed; each is now Keras's `fit` to float rounding (weights within
1e-5 relative, the same logs), or refused before any update with the cause and the way out.
"""
import keras
import numpy as np
import pytest

import gradlab as gl


def _mlp(seed=0, inputs=5):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((inputs,)), keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(3)])


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)).astype(keras.config.floatx()), rng.integers(0, 3, n)


def _ce():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _twins(model_fn=_mlp, loss=None, optimizer=lambda: keras.optimizers.Adam(0.05), accum_steps=3, **compile_args):
    """`(Keras's model, AccumulatingModel)`, compiled alike."""
    oracle = model_fn()
    oracle.compile(optimizer=optimizer(), loss=loss or _ce(), **compile_args)
    acc = gl.AccumulatingModel(model_fn(), accum_steps=accum_steps)
    acc.compile(optimizer=optimizer(), loss=loss or _ce(), **compile_args)
    return oracle, acc


def _assert_same(oracle, acc, history, acc_history, rtol=1e-5, atol=1e-6):
    for a, b in zip(oracle.get_weights(), acc.model.get_weights()):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    for key, values in history.history.items():
        np.testing.assert_allclose(acc_history.history[key], values, rtol=rtol, atol=atol, err_msg=key)


def test_a_float64_model_stays_float64_in_fit(float64):
    # was 1.1e-8 from Keras's float64 fit (sums kept in float32); float64 agrees to ~1e-15
    x, y = _data()
    oracle, acc = _twins()
    kw = dict(batch_size=20, epochs=2, verbose=0, shuffle=False, validation_data=(x[:10], y[:10]))
    history, acc_history = oracle.fit(x, y, **kw), acc.fit(x, y, **kw)
    assert all(v.dtype == "float64" for v in acc.model.get_weights())
    _assert_same(oracle, acc, history, acc_history, rtol=1e-12, atol=1e-14)


def _two_outputs(form):
    def model_fn():
        keras.utils.set_random_seed(0)
        inputs = keras.Input((5,))
        h = keras.layers.Dense(8, activation="tanh")(inputs)
        cls, reg = keras.layers.Dense(3, name="cls")(h), keras.layers.Dense(1, name="reg")(h)
        return keras.Model(inputs, {"cls": cls, "reg": reg} if form == "dict" else [cls, reg])
    return model_fn


@pytest.mark.parametrize("form", ["dict", "list"])
def test_per_output_sample_weight_in_fit_is_keras_own(form):
    # was a crash: "cannot broadcast a non-scalar to a scalar array" (the probe's weights)
    x, labels = _data()
    rng = np.random.default_rng(1)
    as_form = (lambda d: d) if form == "dict" else (lambda d: [d["cls"], d["reg"]])
    y = as_form({"cls": labels, "reg": x[:, :1]})
    # a 0/1 mask on one output (the README's advice for an ignore_class beside other outputs)
    w = as_form({"cls": (labels != 2).astype("float32"), "reg": rng.random(40).astype("float32")})
    head = lambda d: keras.tree.map_structure(lambda a: a[:10], d)
    oracle, acc = _twins(_two_outputs(form), loss=as_form({"cls": _ce(), "reg": keras.losses.MeanSquaredError()}))
    kw = dict(sample_weight=w, batch_size=20, epochs=2, verbose=0, shuffle=False,
              validation_data=(x[:10], head(y), head(w)))
    history, acc_history = oracle.fit(x, y, **kw), acc.fit(x, y, **kw)
    assert {"cls_loss", "reg_loss", "val_cls_loss"} <= set(history.history)
    _assert_same(oracle, acc, history, acc_history)
