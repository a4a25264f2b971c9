"""The strategy contract (gradlab/training/strategy.py): every update exact, or refused with a clear error.

Each case was once silently wrong; each is checked against `large_batch` and against an
oracle that shares no gradlab code (Keras's own `train_on_batch`, or a hand-written tape).
"""
import sys
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from common import DEVICES, ActivationPenalty, activity_refusal

CE = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
ONE_DEVICE = ["large_batch", "host_average", "accumulate", "fused"]


def _mlp(seed=0, classes=3):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(classes)])


def _data(n=13, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)).astype("float32"), rng.integers(0, classes, n)


def _close(a, b, rtol=1e-5, atol=1e-6):
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


def _keras_oracle(model_fn, loss, x, y, updates=2, lr=0.1):
    """Keras's own large batch: compile + train_on_batch, no gradlab code."""
    model = model_fn()
    model.compile(optimizer=keras.optimizers.SGD(lr), loss=loss)
    for _ in range(updates):
        model.train_on_batch(x, y)
    return model.get_weights()


def _run(name, model_fn, loss, x, y, updates=2, lr=0.1, accum_steps=3, **options):
    s = gl.make_strategy(name, model_fn if name == "mirrored" else model_fn(), loss,
                         keras.optimizers.SGD(lr), accum_steps=accum_steps, devices=DEVICES, **options)
    for _ in range(updates):
        s.step(x, y)
    return s


def _assert_refused(s, match, x, y):
    """`s.step(x, y)` raises a ValueError matching `match` and changes no weight or counter."""
    before = s.model.get_weights()
    with pytest.raises(ValueError, match=match):
        s.step(x, y)
    _close(before, s.model.get_weights(), rtol=0, atol=0)
    assert int(s.optimizer.iterations.numpy()) == 0


# -- 1. a finite loss with a non-finite gradient ----------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ONE_DEVICE + ["towers", "mirrored"])
def test_a_finite_loss_with_a_non_finite_gradient_raises_and_changes_nothing(name):
    def norm_penalty(y, p):  # d/dp sqrt(sum (p - p)^2) at 0 is NaN; the loss is finite
        return CE(y, p) + tf.sqrt(tf.reduce_sum(tf.square(p - tf.stop_gradient(p))))
    x, y = _data()
    s = gl.make_strategy(name, _mlp if name == "mirrored" else _mlp(), norm_penalty,
                         keras.optimizers.SGD(0.1), accum_steps=3, devices=DEVICES)
    before = [v.numpy() for v in s.model.weights] + [int(s.optimizer.iterations.numpy())]
    with pytest.raises(FloatingPointError, match=r"loss is finite \(.*\) but the gradient"):
        s.step(x, y)
    after = [v.numpy() for v in s.model.weights] + [int(s.optimizer.iterations.numpy())]
    _close(before, after, rtol=0, atol=0)


# -- 2. a frozen BatchNormalization under batchnorm="window" ----------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("jit_compile", [False, True])
def test_window_leaves_a_frozen_batchnorm_alone_and_matches_the_large_batch(jit_compile):
    def model_fn():
        keras.utils.set_random_seed(0)
        frozen = keras.layers.BatchNormalization(name="frozen")
        frozen.trainable = False
        return keras.Sequential([keras.Input((5,)), frozen, keras.layers.Dense(8),
                                 keras.layers.BatchNormalization(name="live"), keras.layers.Dense(3)])
    x, y = _data(n=16)  # N = 4 equal micro-batches: the tf.while_loop path
    # One update: later updates differ, because each micro-batch normalises with its own
    # statistics (a gradient difference the window cannot remove; lesson 17 measures it).
    window = _run("fused", model_fn, CE, x, y, updates=1, accum_steps=4, batchnorm="window",
                  jit_compile=jit_compile)
    large = _run("large_batch", model_fn, CE, x, y, updates=1)
    frozen = window.model.get_layer("frozen")
    np.testing.assert_array_equal(frozen.moving_variance.numpy(), np.ones(5, "float32"))
    np.testing.assert_array_equal(frozen.moving_mean.numpy(), np.zeros(5, "float32"))
    live, ref = window.model.get_layer("live"), large.model.get_layer("live")
    # Moving statistics once per update, from all 16 examples: the large batch's.
    np.testing.assert_allclose(live.moving_mean.numpy(), ref.moving_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(live.moving_variance.numpy(), ref.moving_variance.numpy(), rtol=1e-5, atol=1e-6)


# -- 3. masked outputs, through a loss object or a function the type check cannot see -------------
def _masked_model():
    keras.utils.set_random_seed(0)
    tokens = keras.Input((6,), dtype="int32")
    h = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    return keras.Model(tokens, keras.layers.Dense(5)(keras.layers.LSTM(4, return_sequences=True)(h)))


def _tokens(n=12, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 10, size=(n, 6))
    lengths = rng.integers(1, 7, size=n)  # every sequence padded with zeros after its length
    x[np.arange(6)[None, :] >= lengths[:, None]] = 0
    return x.astype("int32"), rng.integers(0, 5, size=(n, 6))


@pytest.mark.slow
@pytest.mark.parametrize("loss", [CE, lambda y, p: CE(y, p)], ids=["loss object", "function"])
@pytest.mark.parametrize("name", ONE_DEVICE + ["towers", "mirrored"])
def test_masked_outputs_are_exact_for_every_split(name, loss):
    x, y = _tokens()
    oracle = _keras_oracle(_masked_model, CE, x, y)
    s = _run(name, _masked_model, loss, x, y, accum_steps=3)
    assert s.rule == "entries"
    _close(s.model.get_weights(), oracle, rtol=1e-5, atol=1e-6)


def test_a_loss_that_sums_is_refused_before_any_update():
    x, y = _data()
    summed = lambda y, p: tf.reduce_sum(keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True))
    s = gl.make_strategy("fused", _mlp(), summed, "sgd", accum_steps=3)
    _assert_refused(s, "cannot accumulate this loss exactly.*adds up the rows. losses", x, y)


@pytest.mark.slow
def test_the_step_is_traced_without_autograph_as_keras_traces_fit():
    # The user's loss runs as written in every strategy's compiled step (Keras's fit does not
    # convert its step either); under autograph it would run from generated source, and the
    # MLP's first fused step took 2.4 s where it now takes 0.9 s (measured).
    files = []

    def loss(y, p):
        files.append(sys._getframe().f_code.co_filename)
        return CE(y, p)
    x, y = _data()
    for name in ONE_DEVICE:
        _run(name, _mlp, loss, x, y, updates=1)
    assert len(files) > len(ONE_DEVICE) and set(files) == {__file__}


def test_several_masked_outputs_are_refused():
    keras.utils.set_random_seed(0)
    tokens = keras.Input((6,), dtype="int32")
    h = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    model = keras.Model(tokens, [keras.layers.Dense(5)(h), keras.layers.Dense(5)(h)])
    x, y = _tokens()
    s = gl.make_strategy("fused", model, lambda y, p: CE(y[0], p[0]) + CE(y[1], p[1]), "sgd", accum_steps=2)
    with pytest.raises(ValueError, match="2 of the model.s 2 outputs carry a Keras mask"):
        s.step(x, [y, y])


def test_a_masked_output_with_an_activity_regulariser_is_refused():
    keras.utils.set_random_seed(0)
    tokens = keras.Input((6,), dtype="int32")
    h = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    h = keras.layers.Dense(4, activity_regularizer="l2", name="penalised")(h)
    s = gl.make_strategy("fused", keras.Model(tokens, keras.layers.Dense(5)(h)), CE, "sgd", accum_steps=3)
    x, y = _tokens()
    _assert_refused(s, activity_refusal("penalised"), x, y)


def test_a_masked_output_with_an_add_loss_from_its_inputs_is_refused():
    keras.utils.set_random_seed(0)
    tokens = keras.Input((6,), dtype="int32")
    h = ActivationPenalty()(keras.layers.Embedding(10, 4, mask_zero=True)(tokens))
    s = gl.make_strategy("fused", keras.Model(tokens, keras.layers.Dense(5)(h)), CE, "sgd", accum_steps=3)
    x, y = _tokens()
    _assert_refused(s, "add_loss", x, y)


@pytest.mark.parametrize("name", ONE_DEVICE + ["towers", "mirrored"])
def test_ignore_class_divides_by_the_other_entries_as_keras_does(name):
    # Keras averages over the targets not equal to ignore_class: each micro-batch counts its own
    x, y = _tokens()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    oracle = _keras_oracle(_masked_model, loss, x, y)
    s = _run(name, _masked_model, loss, x, y, accum_steps=3)
    assert s.rule == "entries"
    _close(s.model.get_weights(), oracle, rtol=1e-5, atol=1e-6)


# -- 4. the trainable set changes between steps -------------------------------------------------
@pytest.mark.slow
def test_freezing_is_followed_and_unfreezing_names_the_layer():
    x, y = _data()
    runs = {}
    for name in ("large_batch", "fused", "accumulate"):
        model = _mlp()
        s = gl.make_strategy(name, model, CE, keras.optimizers.SGD(0.1), accum_steps=3)
        s.step(x, y)
        model.layers[0].trainable = False
        frozen = model.layers[0].get_weights()
        s.step(x, y)
        _close(frozen, model.layers[0].get_weights(), rtol=0, atol=0)
        runs[name] = model.get_weights()
    _close(runs["fused"], runs["large_batch"])
    _close(runs["accumulate"], runs["large_batch"])

    model = _mlp()
    model.layers[0].trainable = False
    s = gl.make_strategy("fused", model, CE, "sgd", accum_steps=3)
    s.step(x, y)
    model.layers[0].trainable = True
    with pytest.raises(ValueError, match=f"{model.layers[0].name!r} have trainable variables the optimizer was not built for"):
        s.step(x, y)


# -- 5. jit_compile="auto" on a model XLA cannot compile -------------------------------------------
@pytest.mark.slow
def test_auto_xla_skips_lookup_tables_and_falls_back_once_where_xla_cannot_compile():
    def lookup():
        keras.utils.set_random_seed(0)
        ids = keras.Input((3,), dtype="int64")
        h = keras.layers.IntegerLookup(vocabulary=[10, 20, 30, 40])(ids)
        h = keras.layers.Flatten()(keras.layers.Embedding(6, 4)(h))
        return keras.Model(ids, keras.layers.Dense(3)(h))
    rng = np.random.default_rng(0)
    x, y = rng.choice([10, 20, 30, 40, 50], size=(12, 3)).astype("int64"), rng.integers(0, 3, 12)
    s = gl.make_strategy("fused", lookup(), CE, keras.optimizers.SGD(0.1), accum_steps=3)
    assert not s.jit()  # IntegerLookup says supports_jit=False: no XLA, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step(x, y), s.step(x, y)
    _close(s.model.get_weights(), _keras_oracle(lookup, CE, x, y))

    def sine(t):  # a numpy function: no XLA kernel, though the Lambda layer claims supports_jit
        out = tf.numpy_function(lambda a: np.sin(a).astype("float32"), [t], tf.float32)
        out.set_shape(t.shape)
        return out

    def numpy_layer():
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((5,)), keras.layers.Lambda(sine, output_shape=(5,)),
                                 keras.layers.Dense(3)])
    x, y = _data()
    s = gl.make_strategy("fused", numpy_layer(), CE, keras.optimizers.SGD(0.1), accum_steps=3)
    assert s.jit()
    with pytest.warns(RuntimeWarning, match="XLA cannot compile"):
        s.step(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step(x, y)  # no second warning
    assert not s.jit()
    _close(s.model.get_weights(), _keras_oracle(numpy_layer, CE, x, y))


# -- batches smaller than accum_steps; mixed precision; an independent oracle ---------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ONE_DEVICE + ["towers", "mirrored"])
def test_a_batch_smaller_than_accum_steps_is_exact(name):
    x, y = _data(n=3)
    s = _run(name, _mlp, CE, x, y, accum_steps=8)
    _close(s.model.get_weights(), _keras_oracle(_mlp, CE, x, y))


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_matches_the_large_batch(policy):
    x, y = _data(n=16)
    keras.mixed_precision.set_global_policy(policy)
    try:
        weights = {}
        for name in ("large_batch", "fused", "accumulate"):
            opt = keras.optimizers.SGD(0.1)
            if policy == "mixed_float16":
                opt = keras.optimizers.LossScaleOptimizer(opt)
            s = gl.make_strategy(name, _mlp(), CE, opt, accum_steps=4)
            for _ in range(3):
                s.step(x, y)
            weights[name] = s.model.get_weights()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    # float16 activations round to 1e-3; bfloat16 to 1e-2: the split changes the rounding only.
    tol = 2e-3 if policy == "mixed_float16" else 2e-2
    _close(weights["fused"], weights["large_batch"], rtol=tol, atol=tol)
    _close(weights["accumulate"], weights["large_batch"], rtol=tol, atol=tol)


@pytest.mark.slow
def test_mixed_float16_with_loss_scaling_skips_no_more_than_keras():
    # The float16 gradient of S_i = D_i * L_i would overflow at Keras's initial scale (32768)
    # where the large batch does not; gradlab measures sums in units of the first batch.
    x, y = _data(n=256)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        keras_model = _mlp()
        keras_model.compile(optimizer=keras.optimizers.SGD(0.1), loss=CE)  # Keras wraps it in a LossScaleOptimizer
        s = gl.make_strategy("fused", _mlp(), CE, keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1)),
                             accum_steps=4)
        for _ in range(3):
            keras_model.train_on_batch(x, y)
            s.step(x, y)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert float(s.optimizer.dynamic_scale) == float(keras_model.optimizer.dynamic_scale)
    assert int(s.optimizer.iterations) == int(keras_model.optimizer.iterations) == 3
    _close(s.model.get_weights(), keras_model.get_weights(), rtol=2e-3, atol=2e-3)


@pytest.mark.slow
@pytest.mark.oldest
@pytest.mark.parametrize("name", ONE_DEVICE + ["towers", "mirrored"])
def test_every_strategy_equals_keras_train_on_batch_with_uneven_micro_batches(name):
    x, y = _data(n=31)  # 31 = 11 + 10 + 10; towers and replicas: 16 + 15, each split in 3
    s = _run(name, _mlp, CE, x, y, updates=3, accum_steps=3)
    _close(s.model.get_weights(), _keras_oracle(_mlp, CE, x, y, updates=3))


# -- every strategy against Keras's own train_on_batch: Adam, a mask, weights, two outputs ---------
def _two_outputs():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((5,))
    h = keras.layers.Dense(8, activation="tanh")(inputs)
    return keras.Model(inputs, [keras.layers.Dense(3, name="cls")(h), keras.layers.Dense(1, name="reg")(h)])


def _case(case):
    """`(model_fn, step loss, Keras compile loss, optimizer_fn, x, y, sample_weight)`."""
    x, y = _data(n=31)
    adam = lambda: keras.optimizers.Adam(1e-2)
    if case == "adam":
        return _mlp, CE, CE, adam, x, y, None
    if case == "embedding and mask":  # SGD: Keras's Adam takes an Embedding's rows sparsely
        tokens, labels = _tokens(n=31)
        return _masked_model, CE, CE, lambda: keras.optimizers.SGD(0.5), tokens, labels, None
    if case == "sample_weight":
        w = np.random.default_rng(3).integers(0, 4, 31).astype("float32")
        return _mlp, CE, CE, adam, x, y, w
    mse = keras.losses.MeanSquaredError()
    target = [y, x[:, :1]]
    return _two_outputs, lambda t, p: CE(t[0], p[0]) + mse(t[1], p[1]), [CE, mse], adam, x, target, None


@pytest.mark.slow
@pytest.mark.parametrize("case", ["adam", "embedding and mask", "sample_weight", "two outputs"])
@pytest.mark.parametrize("name", ONE_DEVICE + ["towers", "mirrored"])
def test_every_strategy_equals_keras_own_train_on_batch(name, case):
    model_fn, loss, keras_loss, optimizer, x, y, w = _case(case)
    oracle = model_fn()
    oracle.compile(optimizer=optimizer(), loss=keras_loss)
    # both divide sum_j w_j l_j by the rows (the loss's "sum_over_batch_size")
    keras_w = w
    s = gl.make_strategy(name, model_fn if name == "mirrored" else model_fn(), loss, optimizer(),
                         accum_steps=3, devices=DEVICES)
    for _ in range(3):
        oracle.reset_metrics()  # Keras 3.8's train_on_batch reports a running mean; 3.15 resets
        keras_loss_value = oracle.train_on_batch(x, y, sample_weight=keras_w)
        loss_value = s.step(x, y, sample_weight=w)
    np.testing.assert_allclose(loss_value, np.ravel(keras_loss_value)[0], rtol=1e-5)
    _close(s.model.get_weights(), oracle.get_weights(), rtol=1e-4, atol=1e-5)
