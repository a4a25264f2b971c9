"""The contract inside the update, fit's face, against Keras's own plain fit on a twin."""
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl

RNG = np.random.default_rng(0)
X = RNG.normal(size=(48, 4)).astype("float32")
Y = RNG.integers(0, 3, 48)
LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def twins(*layers, seed=0):
    def make():
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.Input((4,)), *[l() for l in layers], keras.layers.Dense(3)])
    a, b = make(), make()
    b.set_weights(a.get_weights())
    return a, b


def gap(a, b):
    return max(float(np.abs(u - v).max()) for u, v in zip(a.get_weights(), b.get_weights()))


def compiled(acc, plain, loss=LOSS):
    acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    plain.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)


@pytest.mark.parametrize("accum_steps", [1, 4])
def test_a_seeded_reshuffling_pipeline_is_read_as_keras_reads_it(accum_steps):
    # The pipeline's seed advances with each iterator made: one read more than Keras's (the
    # old first-batch probe) trained on other batches (max|dw| 7.8e-3 at accum_steps=1).
    ds = lambda: tf.data.Dataset.from_tensor_slices((X, Y)).shuffle(48, seed=1).map(
        lambda x, y: (x + tf.random.stateless_normal([4], seed=[1, 2]) * 0.0, y)).batch(12)
    a, b = twins(lambda: keras.layers.Dense(8, activation="relu"))
    acc = gl.AccumulatingModel(a, accum_steps=accum_steps)
    compiled(acc, b)
    ours = acc.fit(ds(), epochs=3, verbose=0).history["loss"]
    keras_ = b.fit(ds(), epochs=3, verbose=0).history["loss"]
    assert gap(a, b) < 1e-5
    np.testing.assert_allclose(ours, keras_, rtol=1e-5)
    assert int(acc.optimizer.iterations.numpy()) == int(b.optimizer.iterations.numpy()) == 12


class CallCounter(keras.layers.Layer):
    """Counts its calls in training and inference (a stand-in for MixUp-like state)."""

    def build(self, shape):
        self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False, name="calls")

    def call(self, x, training=None):
        self.calls.assign_add(1.0)
        return x


def test_one_forward_pass_per_update_moves_state_as_keras_does():
    a, b = twins(CallCounter)
    acc = gl.AccumulatingModel(a, accum_steps=1)
    compiled(acc, b)
    acc.fit(X, Y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    b.fit(X, Y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    assert float(a.layers[0].calls.numpy()) == float(b.layers[0].calls.numpy()) == 3.0
    assert gap(a, b) < 1e-6


def test_state_written_by_the_forward_pass_is_named_in_a_warning():
    a, _ = twins(CallCounter)
    acc = gl.AccumulatingModel(a, accum_steps=4)
    acc.compile(optimizer="sgd", loss=LOSS)
    with pytest.warns(UserWarning, match=r"writes '.*calls' \(layer 'call_counter.*4 times"):
        acc.fit(X, Y, batch_size=16, epochs=1, verbose=0)
    assert float(a.layers[0].calls.numpy()) == 12.0  # what the warning says: 4 per update


def test_a_plain_model_warns_nothing():
    a, _ = twins(lambda: keras.layers.Dense(8, activation="relu"))
    acc = gl.AccumulatingModel(a, accum_steps=4)
    acc.compile(optimizer="sgd", loss=LOSS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        acc.fit(X, Y, batch_size=16, epochs=1, verbose=0)


@pytest.mark.parametrize("loss", [
    lambda y, p: tf.reduce_sum(keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True)),
    lambda y, p: tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True))
    + tf.math.reduce_std(p),
], ids=["sum", "coupled"])
def test_a_loss_that_is_not_a_mean_is_refused_before_any_update(loss):
    a, _ = twins(lambda: keras.layers.Dense(8))
    before = [w.copy() for w in a.get_weights()]
    acc = gl.AccumulatingModel(a, accum_steps=4)
    acc.compile(optimizer="adam", loss=loss)
    with pytest.raises(ValueError, match="cannot accumulate this loss exactly"):
        acc.fit(X, Y, batch_size=16, epochs=1, verbose=0)
    assert int(acc.optimizer.iterations.numpy()) == 0
    assert all(np.array_equal(u, v) for u, v in zip(before, a.get_weights()))


def test_a_loss_coupling_rows_only_later_is_caught_by_check_every():
    # couples rows only once the step counter passes 2: the first update's check passes
    step = tf.Variable(0.0)

    def late(y, p):
        l = keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True)
        return tf.reduce_mean(l) + tf.cast(step > 2, tf.float32) * tf.math.reduce_std(p)

    class Tick(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            step.assign_add(1.0)
    a, _ = twins(lambda: keras.layers.Dense(8))
    first = gl.AccumulatingModel(a, accum_steps=2)
    first.compile(optimizer="sgd", loss=late)
    first.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[Tick()])  # not seen
    step.assign(0.0)
    every = gl.AccumulatingModel(twins(lambda: keras.layers.Dense(8))[0], accum_steps=2, check="every")
    every.compile(optimizer="sgd", loss=late)
    with pytest.raises(ValueError, match="cannot accumulate"):
        every.fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[Tick()])
    assert int(every.optimizer.iterations.numpy()) == 3  # updates 1-3 applied, the 4th refused


def test_a_model_trained_only_by_add_loss_matches_keras():
    class Penalised(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = keras.layers.Dense(2, kernel_initializer=keras.initializers.GlorotUniform(seed=3))

        def call(self, x):
            out = self.d(x)
            self.add_loss(tf.reduce_mean((out - 1.0) ** 2))
            return out
    a, b = Penalised(), Penalised()
    acc = gl.AccumulatingModel(a, accum_steps=2)
    acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=None)
    b.compile(optimizer=keras.optimizers.SGD(0.1), loss=None)
    ours = acc.fit(X, batch_size=16, epochs=2, verbose=0, shuffle=False).history["loss"]
    keras_ = b.fit(X, batch_size=16, epochs=2, verbose=0, shuffle=False).history["loss"]
    assert gap(a, b) < 1e-6
    np.testing.assert_allclose(ours, keras_, rtol=1e-5)


def test_a_stateful_rnn_is_refused_naming_the_layer():
    m = keras.Sequential([keras.Input((3, 4), batch_size=8), keras.layers.LSTM(2, stateful=True, name="lstm_s"),
                          keras.layers.Dense(3)])
    acc = gl.AccumulatingModel(m, accum_steps=2)
    acc.compile(optimizer="sgd", loss=LOSS)
    with pytest.raises(ValueError, match="'lstm_s'.*stateful"):
        acc.fit(np.zeros((16, 3, 4), "float32"), np.zeros(16), batch_size=8, verbose=0)


def test_overwrite_with_gradient_variables_are_refused():
    a, _ = twins(lambda: keras.layers.Dense(8))
    a.layers[0].kernel.overwrite_with_gradient = True
    acc = gl.AccumulatingModel(a, accum_steps=2)
    acc.compile(optimizer="sgd", loss=LOSS)
    with pytest.raises(ValueError, match="overwrite_with_gradient"):
        acc.fit(X, Y, batch_size=16, verbose=0)
    assert int(acc.optimizer.iterations.numpy()) == 0


def test_step_names_the_same_state_in_the_same_words():
    m = keras.Sequential([keras.Input((4,)), CallCounter(), keras.layers.Dense(3)])
    s = gl.make_strategy("fused", m, LOSS, "sgd", accum_steps=4)
    with pytest.warns(UserWarning, match=r"writes '.*calls' \(layer 'call_counter.*4 times"):
        s.step(X[:16], Y[:16])


class Jitter(keras.layers.Layer):
    """Draws random numbers in every call, training or not (as MixUp-like layers do)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.generator = keras.random.SeedGenerator(1)

    def call(self, x, training=None):
        return x + 0.1 * keras.random.normal(tf.shape(x), seed=self.generator)


def test_a_layer_drawing_randomness_matches_keras_at_one_micro_batch():
    # No extra forward pass moves its generator, and "auto" takes no XLA (whose random
    # numbers from the same seed differ from Keras's: 5.9e-3 apart before).
    a, b = twins(Jitter)
    acc = gl.AccumulatingModel(a, accum_steps=1)
    compiled(acc, b)
    acc.fit(X, Y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    b.fit(X, Y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    assert gap(a, b) < 1e-6
