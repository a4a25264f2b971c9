"""What every built classic graph offers: a session, weights in and out, a summary."""
import keras
import numpy as np
import pytest

from gradlab.classic.host_graph import build_host_average
from gradlab.studies.models import make_model
from classic_reference import batches


def test_copy_from_keras_gives_the_same_loss():
    model = make_model("mlp", seed=3)
    x, y = batches()[0]
    keras_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, model(x))
    parts = build_host_average(optimizer="momentum")
    sess = parts.session()
    try:
        parts.copy_from_keras(sess, model)
        for w, k in zip(parts.get_weights(sess), model.get_weights(), strict=True):
            np.testing.assert_array_equal(w, k)
        np.testing.assert_allclose(sess.run(parts.loss, {parts.x: x, parts.y: y}), keras_loss, rtol=1e-6)
        with parts.graph.as_default(), pytest.raises(RuntimeError, match="outside that block"):
            parts.copy_from_keras(sess, model)  # `with sess:` makes the TF1 graph the default
    finally:
        sess.close()


def test_set_weights_checks_every_shape_before_assigning():
    parts = build_host_average()
    with parts.session() as sess:
        before = parts.get_weights(sess)
        with pytest.raises(ValueError, match=r"shapes \[\(784, 256\), \(256,\), \(256, 10\), \(10,\)\]"):
            parts.set_weights(sess, [np.ones_like(w) for w in before[:2]])
        for w, w0 in zip(parts.get_weights(sess), before):
            np.testing.assert_array_equal(w, w0)
        parts.set_weights(sess, [np.full_like(w, 0.25) for w in before])
        assert all((w == 0.25).all() for w in parts.get_weights(sess))
    # Assigning feeds the initializers: the graph gains no op.
    assert len(parts.graph.get_operations()) == len(build_host_average().graph.get_operations())


def test_repr_names_kind_variables_and_optimizer():
    parts = build_host_average(optimizer="adam")
    assert repr(parts) == (
        f"<HostAverageGraph 'host_average': {len(parts.graph.get_operations())} ops, variables "
        "[model/dense/kernel, model/dense/bias, model/dense_1/kernel, model/dense_1/bias], "
        "optimizer AdamOptimizer>")
