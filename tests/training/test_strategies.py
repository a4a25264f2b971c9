"""Every strategy equals one large batch: the backbone of gradlab."""
import numpy as np
import keras
import pytest
import tensorflow as tf

import gradlab as gl
from gradlab.core.loss_terms import loss_and_grads
from gradlab.studies.data import load_mnist
from gradlab.studies.models import make_model
from common import ACCELERATOR, DEVICES

EXACT = ["host_average", "accumulate", "fused", "towers"]
OPTIMIZERS = {
    "momentum": lambda: keras.optimizers.SGD(0.1, momentum=0.9),
    "adam": lambda: keras.optimizers.Adam(1e-2),
}


def loss_fn():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@pytest.fixture(scope="module")
def batch():
    d = load_mnist()
    return d.x_train[:30], d.y_train[:30]


def train(name, model, optimizer, x, y, accum_steps=1, updates=3, **options):
    s = gl.make_strategy(name, lambda: make_model(model, seed=1), loss_fn(), optimizer,
                         accum_steps=accum_steps, devices=DEVICES, **options)
    losses = [s.step(x, y) for _ in range(updates)]
    return s, losses


def assert_same_update(a, b, rtol=1e-5, atol=1e-6):
    (sa, la), (sb, lb) = a, b
    np.testing.assert_allclose(la, lb, rtol=rtol, atol=atol)
    for va, vb in zip(sa.model.weights, sb.model.weights):  # frozen weights included
        np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=rtol, atol=atol, err_msg=va.path)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["mlp", "embedding"])
@pytest.mark.parametrize("opt", list(OPTIMIZERS))
@pytest.mark.parametrize("name", EXACT)
def test_strategy_equals_large_batch(batch, name, opt, model):
    x, y = batch
    # The embedding's row 0 (blank pixels) sums ~23,000 terms per batch in float32, so the
    # summation order alone moves it by ~1e-5 relative.
    tol = dict(rtol=1e-4, atol=1e-5) if model == "embedding" else {}
    if opt == "adam":
        # Adam divides by sqrt(v): where a gradient is almost zero, rounding in it moves the
        # step by up to ~lr * 1e-3, so the absolute tolerance follows the step size.
        tol = dict(rtol=tol.get("rtol", 1e-5), atol=1e-5)
    ref = train("large_batch", model, OPTIMIZERS[opt], x, y)
    assert_same_update(train(name, model, OPTIMIZERS[opt], x, y, accum_steps=3), ref, **tol)
    # 30 examples in 4 micro-batches: 8, 8, 7, 7, weighted by example count.
    assert_same_update(train(name, model, OPTIMIZERS[opt], x, y, accum_steps=4), ref, **tol)


def test_embedding_model_has_sparse_gradients_and_a_frozen_layer(batch):
    x, y = batch
    s, _ = train("large_batch", "embedding", OPTIMIZERS["adam"], x, y, updates=1)
    frozen = s.model.get_layer("frozen")
    assert not frozen.trainable and frozen.weights
    _, grads = loss_and_grads(s.model, s.loss_fn, x, y)
    assert any(isinstance(g, tf.IndexedSlices) for g in grads)


@pytest.mark.slow
def test_keras_accumulation_is_exact_only_for_equal_micro_batches(batch):
    x, y = batch
    ref = train("large_batch", "mlp", OPTIMIZERS["momentum"], x, y)
    assert_same_update(train("keras", "mlp", OPTIMIZERS["momentum"], x, y, accum_steps=3), ref)
    # With 8, 8, 7, 7 Keras divides the sum of micro-batch means by 4: not the batch mean.
    s, _ = train("keras", "mlp", OPTIMIZERS["momentum"], x, y, accum_steps=4)
    diff = max(np.abs(a.numpy() - b.numpy()).max() for a, b in zip(s.model.weights, ref[0].model.weights))
    assert diff > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["large_batch"] + EXACT)
def test_schedule_and_counter_advance_once_per_update(batch, name):
    x, y = batch
    schedule = keras.optimizers.schedules.ExponentialDecay(1.0, decay_steps=1, decay_rate=0.5)
    s, _ = train(name, "mlp", lambda: keras.optimizers.SGD(schedule), x, y, accum_steps=2, updates=2)
    assert int(s.optimizer.iterations.numpy()) == 2
    np.testing.assert_allclose(float(s.optimizer.learning_rate), 0.25)


def test_keras_advances_the_schedule_per_micro_batch(batch):
    x, y = batch
    schedule = keras.optimizers.schedules.ExponentialDecay(1.0, decay_steps=1, decay_rate=0.5)
    s, _ = train("keras", "mlp", lambda: keras.optimizers.SGD(schedule), x, y, accum_steps=2, updates=2)
    np.testing.assert_allclose(float(s.optimizer.learning_rate), 0.0625)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["large_batch", "accumulate", "fused", "towers"])
def test_clip_norm_clips_the_whole_update_once(batch, name):
    x, y = batch
    ref = train("large_batch", "mlp", lambda: keras.optimizers.SGD(1.0), x, y, clip_norm=0.1)
    assert_same_update(train(name, "mlp", lambda: keras.optimizers.SGD(1.0), x, y,
                             accum_steps=3, clip_norm=0.1), ref)


def test_fused_uses_xla_automatically_unless_the_model_convolves_on_a_cpu():
    dense = gl.make_strategy("fused", make_model("mlp"), loss_fn(), "sgd", accum_steps=2)
    conv = gl.make_strategy("fused", make_model("conv"), loss_fn(), "sgd", accum_steps=2)
    forced = gl.make_strategy("fused", make_model("conv"), loss_fn(), "sgd", jit_compile=True)
    assert (dense.jit(), conv.jit(), forced.jit()) == (True, ACCELERATOR, True)
    nested = keras.Sequential([keras.Input((28, 28)), keras.layers.Reshape((28, 28, 1)),
                               keras.Sequential([keras.layers.Conv2D(2, 3)]), keras.layers.Flatten()])
    assert gl.make_strategy("fused", nested, loss_fn(), "sgd").jit() == ACCELERATOR


def two_inputs_two_outputs():
    keras.utils.set_random_seed(0)
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    h = keras.layers.Dense(8, activation="tanh")(keras.layers.Concatenate()([a, b]))
    return keras.Model({"a": a, "b": b}, [keras.layers.Dense(1)(h), keras.layers.Dense(3)(h)])


@pytest.mark.slow
@pytest.mark.parametrize("name", EXACT + ["mirrored"])
def test_models_with_several_inputs_and_outputs(name):
    rng = np.random.default_rng(0)
    x = {"a": rng.normal(size=(17, 4)).astype("f4"), "b": rng.normal(size=(17, 3)).astype("f4")}
    y = [rng.normal(size=(17, 1)).astype("f4"), rng.integers(0, 3, 17)]
    mse, ce = keras.losses.MeanSquaredError(), loss_fn()
    both = lambda y, pred: mse(y[0], pred[0]) + ce(y[1], pred[1])  # noqa: E731
    runs = [gl.make_strategy(n, two_inputs_two_outputs, both, OPTIMIZERS["adam"], accum_steps=k,
                             devices=DEVICES) for n, k in (("large_batch", 1), (name, 3))]
    losses = [[s.step(x, y) for _ in range(2)] for s in runs]
    assert_same_update(*zip(runs, losses), atol=1e-5)


@pytest.mark.slow
def test_no_retracing_across_steps(batch):
    x, y = batch
    for name in ["large_batch", "fused", "towers", "accumulate"]:
        s, _ = train(name, "mlp", OPTIMIZERS["adam"], x, y, accum_steps=3, updates=4)
        traces = s.trace_count()
        s.step(x, y)
        assert s.trace_count() == traces, name


@pytest.mark.slow
def test_model_and_optimizer_objects_strings_and_per_example_losses(batch):
    x, y = batch
    model = make_model("mlp", seed=1)
    per_example = lambda y, p: keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True)
    s = gl.make_strategy("fused", model, per_example, "sgd", accum_steps=3)
    assert s.model is model
    ref = gl.make_strategy("large_batch", make_model("mlp", seed=1), loss_fn(), keras.optimizers.SGD())
    np.testing.assert_allclose(s.step(x, y), ref.step(x, y), rtol=1e-6)
    np.testing.assert_allclose(s.model.weights[0].numpy(), ref.model.weights[0].numpy(), atol=1e-6)


# -- bad input: a clear error before any TensorFlow work, and nothing changed ----------

def test_bad_arguments():
    model = make_model("mlp")
    with pytest.raises(ValueError, match="unknown strategy 'bogus'; choose one of large_batch"):
        gl.make_strategy("bogus", model, loss_fn(), "sgd")
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises((ValueError, TypeError), match="accum_steps") as info:
            gl.make_strategy("fused", model, loss_fn(), "sgd", accum_steps=bad)
        assert repr(bad) in str(info.value)
    with pytest.raises(TypeError, match="loss_fn must be callable"):
        gl.make_strategy("fused", model, 3, "sgd")
    with pytest.raises(TypeError, match="model must be a Model"):
        gl.make_strategy("fused", "mlp", loss_fn(), "sgd")
    with pytest.raises(TypeError, match="builder must return a Optimizer"):
        gl.make_strategy("fused", model, loss_fn(), lambda: 3)
    with pytest.raises(TypeError, match="unknown option"):
        gl.make_strategy("fused", model, loss_fn(), "sgd", clipnorm=1)
    with pytest.raises(ValueError, match="clip_norm must be a positive number or None, got -1"):
        gl.make_strategy("fused", model, loss_fn(), "sgd", clip_norm=-1)
    with pytest.raises(ValueError, match="jit_compile must be True, False or 'auto', got 1"):
        gl.make_strategy("fused", model, loss_fn(), "sgd", jit_compile=1)
    with pytest.raises(TypeError, match="devices must be a list"):
        gl.make_strategy("towers", model, loss_fn(), "sgd", devices="/CPU:0")
    for name in ("towers", "mirrored"):
        with pytest.raises(TypeError, match="devices must be a list of device name strings, got 5"):
            gl.make_strategy(name, lambda: model, loss_fn(), "sgd", devices=5)


def test_a_loss_that_does_not_average_over_examples_is_refused_up_front():
    # MSE with reduction="sum", B=6, accum_steps=2 used to give a different update from the
    # large batch, silently: every strategy needs a per-example mean.
    built = []
    model = lambda: built.append(1) or make_model("mlp")
    for name in gl.STRATEGIES:
        with pytest.raises(ValueError, match="cannot accumulate this loss exactly: MeanSquaredError has reduction 'sum'"):
            gl.make_strategy(name, model, keras.losses.MeanSquaredError(reduction="sum"), "sgd",
                             devices=DEVICES)
    assert built == []


def test_bad_model_or_optimizer_fails_before_a_distribution_is_made(monkeypatch):
    made, built = [], []
    monkeypatch.setattr(gl.core.distribute, "make_distribution", lambda *args: made.append(args))
    model = lambda: built.append(1) or make_model("mlp")
    for bad in ("mlp", keras.layers.Dense(3)):
        with pytest.raises(TypeError, match="model must be a Model or a zero-argument callable") as info:
            gl.make_strategy("mirrored", bad, loss_fn(), "sgd", devices=DEVICES)
        assert repr(bad) in str(info.value)
    with pytest.raises(TypeError, match="optimizer must be a Optimizer .*got 3"):
        gl.make_strategy("mirrored", model, loss_fn(), 3, devices=DEVICES)
    assert made == [] and built == []


def _state(s):
    return [v.numpy().copy() for v in s.model.weights + s.optimizer.variables]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["large_batch", "host_average", "accumulate", "fused", "towers", "keras"])
def test_bad_batches_change_nothing(batch, name):
    x, y = batch
    s = gl.make_strategy(name, make_model("mlp", seed=1), loss_fn(), keras.optimizers.Adam(),
                         accum_steps=4, devices=DEVICES)
    s.step(x, y)
    before = _state(s)
    with pytest.raises(ValueError, match="same number of examples, got 30 and 29"):
        s.step(x, y[:29])
    with pytest.raises(ValueError, match="empty"):
        s.step(x[:0], y[:0])
    if name == "towers":
        with pytest.raises(ValueError, match="batch of 1 examples is too small for 2 replicas"):
            s.step(x[:1], y[:1])
    # A failure inside TensorFlow (wrong image size) half-way through leaves no trace either.
    with pytest.raises(Exception):
        s.step(np.zeros((30, 27, 27), "float32"), y)
    for a, b in zip(before, _state(s)):
        np.testing.assert_array_equal(a, b)
    s.step(x, y)  # and the strategy still works, equal to a clean run
    clean = gl.make_strategy(name, make_model("mlp", seed=1), loss_fn(), keras.optimizers.Adam(),
                             accum_steps=4, devices=DEVICES)
    clean.step(x, y), clean.step(x, y)
    for a, b in zip(_state(s), _state(clean)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["large_batch", "host_average", "accumulate", "fused", "towers"])
def test_a_step_that_fails_at_run_time_leaves_no_trace(batch, name):
    # Labels out of range fail inside the compiled step (or, under XLA, give a NaN loss):
    # the counter and the BatchNorm statistics, which TensorFlow updates anyway, go back too.
    x, y = batch
    s = gl.make_strategy(name, lambda: make_model("mlp", seed=1, batchnorm=True), loss_fn(),
                         OPTIMIZERS["adam"], accum_steps=3, devices=DEVICES)
    s.step(x, y)
    before = _state(s)
    with pytest.raises((tf.errors.InvalidArgumentError, FloatingPointError)):
        s.step(x, y + 10)
    for a, b in zip(before, _state(s)):
        np.testing.assert_array_equal(a, b)
    assert int(s.optimizer.iterations.numpy()) == 1


def test_a_non_finite_update_is_skipped_with_a_clear_error(batch):
    x, y = batch
    s = gl.make_strategy("fused", make_model("mlp", seed=1), loss_fn(), "sgd", accum_steps=3)
    s.step(x, y)
    before = _state(s)
    with pytest.raises(FloatingPointError, match="loss of this update is not finite, so the update was skipped"):
        s.step(np.full_like(x, np.nan), y)
    for a, b in zip(before, _state(s)):
        np.testing.assert_array_equal(a, b)


def test_mirrored_needs_builders():
    with pytest.raises(TypeError, match="mirrored.*builder"):
        gl.make_strategy("mirrored", make_model("mlp"), loss_fn(), "sgd", devices=DEVICES)


def test_towers_need_one_example_per_tower_and_split_fewer_than_accum_steps_per_example(batch):
    x, y = batch
    s = gl.make_strategy("towers", make_model("mlp"), loss_fn(), "sgd", accum_steps=4, devices=DEVICES)
    with pytest.raises(ValueError, match="batch of 1 examples is too small for 2 replicas"):
        s.step(x[:1], y[:1])
    ref = gl.make_strategy("large_batch", make_model("mlp"), loss_fn(), "sgd")
    for strategy in (s, ref):
        strategy.step(x[:5], y[:5])  # towers of 3 and 2 examples: 3 and 2 micro-batches of 1
    for a, b in zip(s.model.get_weights(), ref.model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
