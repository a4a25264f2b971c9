"""One set of rules for both faces: `step` and `fit` accept, refuse and warn alike.

Each case of issue 21's table is run through `make_strategy(...).step` and through
`AccumulatingModel.fit`, against Keras's own `fit`/`train_on_batch` at the large batch (no
gradlab code) where it is exact, or asserting gradlab's refusal before any update.
"""
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from gradlab.core import contract
from gradlab.core import normaliser
from common import DEVICES

ACCUMULATING = ["host_average", "accumulate", "fused", "towers", "mirrored"]


def _mlp(seed=0, dropout=None):
    keras.utils.set_random_seed(seed)
    layers = [keras.Input((5,)), keras.layers.Dense(8, activation="tanh")]
    layers += [keras.layers.Dropout(dropout)] if dropout else []
    return keras.Sequential(layers + [keras.layers.Dense(3)])


def _data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)).astype("float32"), rng.normal(size=(n, 3)).astype("float32")


def _close(a, b, tol=1e-5):
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


def _step_error(name, loss, x, y):
    s = gl.make_strategy(name, _mlp if name == "mirrored" else _mlp(), loss, keras.optimizers.SGD(0.1),
                         accum_steps=4, devices=DEVICES)
    with pytest.raises(ValueError) as e:
        s.step(x, y)
    assert int(s.optimizer.iterations.numpy()) == 0
    return str(e.value)


def _fit_error(loss, x, y):
    acc = gl.AccumulatingModel(_mlp(), accum_steps=4)
    acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    before = acc.get_weights()
    with pytest.raises(ValueError) as e:
        acc.fit(x, y, batch_size=12, verbose=0)
    assert int(acc.optimizer.iterations) == 0
    _close(acc.get_weights(), before, tol=0)
    return str(e.value)


class InfoNCE(keras.losses.Loss):
    """In-batch contrastive loss: row j's positive is itself, the other rows its negatives."""

    def call(self, y_true, z):
        z = tf.math.l2_normalize(z, axis=-1)
        logits = tf.matmul(z, z, transpose_b=True) / 0.1
        labels = tf.range(tf.shape(z)[0])
        return keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)


SUMMED = lambda t, p: tf.reduce_sum(tf.square(t - p))
GLOBAL_BATCH = lambda t, p: tf.nn.compute_average_loss(tf.reduce_mean(tf.square(t - p), -1), global_batch_size=64)


@pytest.mark.parametrize("loss, why", [
    (SUMMED, "adds up the rows' losses"),
    (GLOBAL_BATCH, "adds up the rows' losses"),
    (InfoNCE(), "couples the rows of a batch"),
], ids=["sum", "global_batch_size", "in-batch contrastive"])
@pytest.mark.slow
def test_losses_that_cannot_be_split_are_refused_in_the_same_words_by_both_faces(loss, why):
    x, y = _data()
    messages = [_step_error(name, loss, x, y) for name in ("fused", "accumulate", "mirrored")]
    messages.append(_fit_error(loss, x, y))
    # one sentence, from inside the update, in both faces
    assert all(m == contract.REFUSAL for m in messages)
    assert why in contract.REFUSAL


@pytest.mark.slow
def test_dropout_warns_in_both_faces():
    x, y = _data()
    for name in ACCUMULATING:
        s = gl.make_strategy(name, (lambda: _mlp(dropout=0.3)) if name == "mirrored" else _mlp(dropout=0.3),
                             "mse", "sgd", accum_steps=4, devices=DEVICES)
        with pytest.warns(UserWarning, match="micro-batches runs its own forward pass"):
            s.step(x, y)
    acc = gl.AccumulatingModel(_mlp(dropout=0.3), accum_steps=4)
    acc.compile(optimizer="sgd", loss="mse")
    with pytest.warns(UserWarning, match="each of the 4 micro-batches runs its own forward pass"):
        acc.fit(x, y, batch_size=12, verbose=0)
    plain = gl.AccumulatingModel(_mlp(dropout=0.3), accum_steps=1)  # one micro-batch: exact, silent
    plain.compile(optimizer="sgd", loss="mse")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        plain.fit(x, y, batch_size=12, verbose=0)


# -- all entries masked: Keras makes a zero-gradient update, and so does gradlab -------------------
def _masked_model():
    keras.utils.set_random_seed(0)
    tokens = keras.Input((6,), dtype="int32")
    h = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    return keras.Model(tokens, keras.layers.Dense(5)(h))


def _tokens(n=12, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 10, size=(n, 6)).astype("int32"), rng.integers(0, 5, size=(n, 6))


def test_an_all_masked_batch_is_a_zero_gradient_update_as_in_keras():
    x, y = _tokens(24)
    x[12:] = 0  # the second batch of 12 is all padding
    momentum = lambda: keras.optimizers.SGD(0.1, momentum=0.9)
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    plain = _masked_model()
    plain.compile(optimizer=momentum(), loss=ce)
    h_plain = plain.fit(x, y, batch_size=12, epochs=2, shuffle=False, verbose=0).history
    acc = gl.AccumulatingModel(_masked_model(), accum_steps=4)
    acc.compile(optimizer=momentum(), loss=ce)
    h_acc = acc.fit(x, y, batch_size=12, epochs=2, shuffle=False, verbose=0).history
    assert int(acc.optimizer.iterations) == int(plain.optimizer.iterations) == 4
    assert h_acc["skipped_updates"] == [0.0, 0.0]
    np.testing.assert_allclose(h_acc["loss"], h_plain["loss"], rtol=1e-5)
    _close(acc.get_weights(), plain.get_weights())

    keras_model = _masked_model()
    keras_model.compile(optimizer=momentum(), loss=ce)
    s = gl.make_strategy("fused", _masked_model(), ce, momentum(), accum_steps=4)
    for part in (slice(0, 12), slice(12, 24)):
        keras_model.reset_metrics()  # Keras 3.8's train_on_batch reports a running mean; 3.15 resets
        keras_loss = float(keras_model.train_on_batch(x[part], y[part]))
        assert s.step(x[part], y[part]) == pytest.approx(keras_loss, rel=1e-5, abs=1e-7)
    assert int(s.optimizer.iterations) == 2
    _close(s.model.get_weights(), keras_model.get_weights())


# -- a layer only the training branch uses ----------------------------------------------------------
class TrainingOnly(keras.Model):
    """A subclassed model whose `call(training=True)` adds a layer inference never builds."""

    def __init__(self):
        super().__init__()
        init = lambda seed: keras.initializers.GlorotUniform(seed=seed)
        self.body = keras.layers.Dense(8, activation="tanh", kernel_initializer=init(1))
        self.noise = keras.layers.Dense(8, kernel_initializer=init(2))
        self.head = keras.layers.Dense(3, kernel_initializer=init(3))

    def call(self, x, training=False):
        h = self.body(x)
        if training:
            h = h + 0.1 * self.noise(h)
        return self.head(h)


def _inference_built(x):
    model = TrainingOnly()
    model(x[:1])  # built through inference: `noise` has no variables yet
    return model


@pytest.mark.slow
def test_a_layer_only_training_uses_is_trained_in_both_faces():
    x, y = _data()
    plain = _inference_built(x)
    plain.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    plain.fit(x, y, batch_size=12, epochs=2, shuffle=False, verbose=0)
    acc = gl.AccumulatingModel(_inference_built(x), accum_steps=4)
    acc.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    acc.fit(x, y, batch_size=12, epochs=2, shuffle=False, verbose=0)
    assert len(acc.model.noise.weights) == 2
    _close(acc.get_weights(), plain.get_weights())

    keras_model = _inference_built(x)
    keras_model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    keras_model.train_on_batch(x, y)
    s = gl.make_strategy("fused", _inference_built(x), "mse", keras.optimizers.SGD(0.1), accum_steps=4)
    s.step(x, y)
    _close(s.model.get_weights(), keras_model.get_weights())


# -- test_step and predict_step of the user's model --------------------------------------------------
class Decides(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(3)

    def call(self, x):
        return self.dense(x)

    def predict_step(self, data):
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        return tf.argmax(self(x), axis=-1)


class Margin(Decides):
    def test_step(self, data):
        return {"margin": 1.0}


def test_predict_step_is_the_models_and_a_test_step_of_its_own_is_refused():
    x, _ = _data()
    model = Decides()
    acc = gl.AccumulatingModel(model, accum_steps=4)
    np.testing.assert_array_equal(acc.predict(x, verbose=0), model.predict(x, verbose=0))
    assert acc.predict(x, verbose=0).dtype == np.int64
    with pytest.raises(ValueError, match="overrides test_step"):
        gl.AccumulatingModel(Margin(), accum_steps=4)


# -- mixed float16: gradients at Keras's scale, so the loss scale skips what Keras's skips -------------
def _block(seed=0):
    keras.utils.set_random_seed(seed)
    tokens = keras.Input((16,), dtype="int32")
    h = keras.layers.Embedding(50, 32)(tokens)
    h = keras.layers.LayerNormalization()(h + keras.layers.MultiHeadAttention(2, 16)(h, h))
    h = keras.layers.Dense(64, activation="relu")(h)
    return keras.Model(tokens, keras.layers.Dense(5)(keras.layers.GlobalAveragePooling1D()(h)))


def test_the_loss_scale_warning_is_for_models_that_compute_in_float16():
    # the warning names float16's limit: a float32 or bfloat16 model under a LossScaleOptimizer gets none
    lso = lambda: keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1))
    models = {"float32": _mlp()}
    for policy in ("mixed_float16", "mixed_bfloat16"):
        keras.mixed_precision.set_global_policy(policy)
        try:
            models[policy] = _mlp()
        finally:
            keras.mixed_precision.set_global_policy("float32")
    assert {p: normaliser.computes_in_float16(m) for p, m in models.items()} == {
        "float32": False, "mixed_float16": True, "mixed_bfloat16": False}
    with pytest.warns(UserWarning, match="LossScaleOptimizer: each micro-batch"):
        normaliser.warn_if_split_changes(models["mixed_float16"], 4, lso())
    for policy in ("float32", "mixed_bfloat16"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            normaliser.warn_if_split_changes(models[policy], 4, lso())
    x, y = _data(n=8)  # through a strategy's first step: a float32 model, N = 2, silent
    s = gl.make_strategy("fused", _mlp(), "mse", lso(), accum_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        s.step(x, y)


@pytest.mark.slow
def test_mixed_float16_transformer_skips_the_updates_keras_skips():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 50, size=(480, 16)).astype("int32"), rng.integers(0, 5, 480)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        plain = _block()
        acc = gl.AccumulatingModel(_block(), accum_steps=4)
        for m in (plain, acc):
            m.compile(optimizer=keras.optimizers.SGD(0.05),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            if m is acc:  # said, not silent: near float16's limit the skips can differ
                with pytest.warns(UserWarning, match="LossScaleOptimizer: each micro-batch"):
                    m.fit(x, y, batch_size=48, epochs=1, shuffle=False, verbose=0)
            else:
                m.fit(x, y, batch_size=48, epochs=1, shuffle=False, verbose=0)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert int(acc.optimizer.iterations) == int(plain.optimizer.iterations)
    assert float(acc.optimizer.dynamic_scale) == float(plain.optimizer.dynamic_scale)
    # float16 activations round at ~1e-3 per op: the split changes only that rounding
    _close(acc.get_weights(), plain.get_weights(), tol=1e-2)


# -- held-out cases: coupling over more than two rows, weights, noise layers, all masked in numpy ----
def triplet(y_true, z):
    """Hardest in-batch negative: a row's loss uses every other row of its batch."""
    labels = tf.cast(y_true[:, 0] > 0, tf.int32)
    d = tf.reduce_sum(tf.square(z[:, None] - z[None]), -1)
    same = tf.equal(labels[:, None], labels[None])
    hardest = tf.reduce_min(tf.where(same, 1e9, d), axis=1)
    farthest = tf.reduce_max(tf.where(same, d, 0.0), axis=1)
    return tf.nn.relu(farthest - hardest + 0.2)


class BatchMean(keras.losses.Loss):
    """A batch mean inside `call`: Keras then weighs it by the mean weight, not row by row."""

    def call(self, y_true, y_pred):
        return tf.reduce_mean(tf.square(y_true - y_pred))


def test_a_loss_coupling_more_than_two_rows_is_refused():
    x, y = _data(n=32)
    assert "couples the rows" in _step_error("fused", triplet, x, y)
    assert "couples the rows" in _fit_error(triplet, x, y)


def test_a_loss_that_does_not_weigh_row_by_row_is_refused_when_weighted():
    x, y = _data(n=24)
    w = np.ones(24, "float32")
    w[8:] = np.arange(16) % 3 + 1  # the first rows all weigh 1: the probe weighs its own
    s = gl.make_strategy("fused", _mlp(), BatchMean(), keras.optimizers.SGD(0.1), accum_steps=4)
    with pytest.raises(ValueError, match="cannot accumulate this loss exactly"):
        s.step(x, y, sample_weight=w)
    for weights in (dict(sample_weight=w), dict(class_weight={0: 1.0, 1: 3.0})):
        acc = gl.AccumulatingModel(_mlp(), accum_steps=4)
        acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=BatchMean())
        target = y if "sample_weight" in weights else (y[:, :1] > 0).astype("int64")  # class ids
        with pytest.raises(ValueError, match="cannot accumulate this loss exactly"):
            acc.fit(x, target, batch_size=12, verbose=0, **weights)
        assert int(acc.optimizer.iterations) == 0
    unweighted = gl.AccumulatingModel(_mlp(), accum_steps=4)  # without weights it is a mean: exact
    unweighted.compile(optimizer="sgd", loss=BatchMean())
    unweighted.fit(x, y, batch_size=12, verbose=0)


def test_noise_layers_warn_and_a_rate_of_zero_does_not():
    keras.utils.set_random_seed(0)
    noisy = keras.Sequential([keras.Input((5,)), keras.layers.GaussianNoise(0.5), keras.layers.Dense(3)])
    assert "each of the 4 micro-batches" in normaliser.split_warning(noisy, 4)
    silent = keras.Sequential([keras.Input((5,)), keras.layers.Dropout(0.0), keras.layers.Dense(3)])
    assert normaliser.split_warning(silent, 4) is None


def test_host_average_makes_keras_zero_gradient_update_on_an_all_masked_batch():
    x, y = _tokens(12)
    x[:] = 0
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    keras_model = _masked_model()
    keras_model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss=ce)
    keras_loss = float(keras_model.train_on_batch(x, y))
    s = gl.make_strategy("host_average", _masked_model(), ce, keras.optimizers.SGD(0.1, momentum=0.9), accum_steps=3)
    assert s.step(x, y) == keras_loss == 0.0
    assert int(s.optimizer.iterations) == 1


class MixesWhenTraining(keras.Model):
    """Row by row in inference; each row mixed with its batch's mean when training."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(3, kernel_initializer=keras.initializers.GlorotUniform(seed=1))

    def call(self, x, training=False):
        h = self.dense(x)
        return h + 0.5 * tf.reduce_mean(h, axis=0, keepdims=True) if training else h


def test_a_training_pass_that_is_not_row_by_row_warns_in_both_faces_and_a_plain_one_does_not():
    x, y = _data()
    match = "training forward pass .* is not row by row"
    s = gl.make_strategy("fused", MixesWhenTraining(), "mse", "sgd", accum_steps=4)
    with pytest.warns(UserWarning, match=match):
        s.step(x, y)
    acc = gl.AccumulatingModel(MixesWhenTraining(), accum_steps=4)
    acc.compile(optimizer="sgd", loss="mse")
    with pytest.warns(UserWarning, match=match):
        acc.fit(x, y, batch_size=12, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        gl.make_strategy("fused", _mlp(), "mse", "sgd", accum_steps=4).step(x, y)
        plain = gl.AccumulatingModel(_mlp(), accum_steps=4)
        plain.compile(optimizer="sgd", loss="mse")
        plain.fit(x, y, batch_size=12, verbose=0)
