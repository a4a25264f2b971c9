"""gradlab.classic.optimizers: one table of names and defaults, checked before TensorFlow work."""
import numpy as np
import pytest
import tensorflow as tf

from gradlab.classic.optimizers import OPTIMIZERS, describe, make_optimizer, settings


def test_settings_defaults_and_overrides():
    assert settings("sgd") == {}
    assert settings("momentum") == {"momentum": 0.9}
    assert settings("adam") == {"epsilon": 1e-7}
    assert settings("momentum", momentum=0.5, epsilon=1e-3) == {"momentum": 0.5}


def test_momentum_two_steps_by_hand():
    # v1 = -lr g = -0.1;  w1 = 0.9.  v2 = 0.9 v1 - lr g = -0.19;  w2 = 0.71
    v = tf.Variable([1.0])
    opt = make_optimizer("momentum", 0.1)
    for _ in range(2):
        opt.apply_gradients([(tf.constant([1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [0.71], rtol=1e-6)


def test_adam_first_step_by_hand():
    # Adam's first step is lr * g / (|g| + eps') = about lr, whatever g's size.
    v = tf.Variable([0.0])
    make_optimizer("adam", 0.01).apply_gradients([(tf.constant([3.0]), v)])
    np.testing.assert_allclose(v.numpy(), [-0.01], rtol=1e-5)
    assert make_optimizer("adam", 0.01).epsilon == OPTIMIZERS["adam"]["epsilon"]


def test_describe():
    assert describe("sgd", 0.1) == "SGD(0.1)"
    assert describe("momentum", 0.1) == "SGD(0.1, momentum=0.9)"


@pytest.mark.parametrize("name, lr, kw, error", [
    ("rmsprop", 0.1, {}, ValueError), (None, 0.1, {}, ValueError), ("sgd", 0, {}, ValueError),
    ("sgd", float("nan"), {}, ValueError), ("sgd", "0.1", {}, TypeError),
    ("sgd", True, {}, TypeError), ("sgd", 0.1, {"beta": 0.9}, TypeError)])
def test_bad_input_is_named(name, lr, kw, error):
    with pytest.raises(error, match="optimizer|lr"):
        make_optimizer(name, lr, **kw)


def test_a_schedule_is_a_learning_rate_too():
    # CosineDecay(0.1, 2): lr 0.1 at step 0, 0.05 at step 1.  w = 1 - 0.1 - 0.05 = 0.85
    import keras
    v = tf.Variable([1.0])
    opt = make_optimizer("sgd", keras.optimizers.schedules.CosineDecay(0.1, decay_steps=2))
    for _ in range(2):
        opt.apply_gradients([(tf.constant([1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [0.85], rtol=1e-6)
