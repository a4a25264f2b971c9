"""The TF1 model, loss and optimizer of the classic graphs, and the checks of their arguments."""
import numpy as np
import pytest
import tensorflow as tf

from gradlab.classic import model as m

v1 = tf.compat.v1


def test_mlp_makes_keras_shaped_variables_and_a_mean_loss():
    graph = tf.Graph()
    with graph.as_default():
        x, y = m.placeholders((28, 28))
        with v1.variable_scope("model", auxiliary_name_scope=False):
            loss = m.mean_loss(lambda x: m.mlp(x, seed=0), x, y)
        shapes = {v.op.name: tuple(v.shape) for v in v1.trainable_variables()}
        init = v1.global_variables_initializer()
    assert shapes == {"model/dense/kernel": (784, 256), "model/dense/bias": (256,),
                      "model/dense_1/kernel": (256, 10), "model/dense_1/bias": (10,)}
    with v1.Session(graph=graph) as sess:
        sess.run(init)
        # Zero images give zero logits (biases start at 0): the loss is log 10 for any label.
        got = sess.run(loss, {x: np.zeros((3, 28, 28), np.float32), y: [0, 4, 9]})
    assert got == pytest.approx(np.log(10), rel=1e-6)


def test_make_optimizer_uses_gradlab_defaults():
    with tf.Graph().as_default():
        assert type(m.make_optimizer("sgd", 0.1)).__name__ == "GradientDescentOptimizer"
        momentum = m.make_optimizer("momentum", 0.1)
        assert type(momentum).__name__ == "MomentumOptimizer" and momentum._momentum == 0.9
        adam = m.make_optimizer("adam", 1e-3)
        assert type(adam).__name__ == "AdamOptimizer" and adam._epsilon == 1e-7  # Keras's, not TF1's 1e-8
        built = v1.train.GradientDescentOptimizer(0.5)
        assert m.make_optimizer(lambda: built, 0.1) is built


def test_check_model_args_returns_a_model_and_a_shape_tuple():
    model_fn, shape = m.check_model_args("mlp", 0.1, "sgd", 0, 4, {})
    assert callable(model_fn) and shape == (4,)
    fn = lambda x: x  # noqa: E731
    assert m.check_model_args(fn, 1, "momentum", 3, [2, 3], {"momentum": 0.5}) == (fn, (2, 3))


@pytest.mark.parametrize("args, error, message", [
    (("cnn", 0.1, "sgd", 0, (2,)), ValueError, "model must be 'mlp' or a callable.*'cnn'"),
    (("mlp", -1, "sgd", 0, (2,)), ValueError, "lr must be a positive number, got -1"),
    (("mlp", True, "sgd", 0, (2,)), ValueError, "lr must be a positive number, got True"),
    (("mlp", 0.1, "rmsprop", 0, (2,)), ValueError, "'rmsprop'"),
    (("mlp", 0.1, "sgd", 1.5, (2,)), TypeError, "seed must be an integer, got 1.5"),
    (("mlp", 0.1, "sgd", 0, (2, 0)), ValueError,
     r"input_shape must be a tuple of positive integers, got \(2, 0\)"),
    (("mlp", 0.1, "sgd", 0, ()), ValueError, r"input_shape .* got \(\)"),
])
def test_check_model_args_names_the_bad_value(args, error, message):
    with pytest.raises(error, match=message):
        m.check_model_args(*args, {})
