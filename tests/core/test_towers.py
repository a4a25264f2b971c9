import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from common import DEVICES


def _pairs(*grads):
    v = tf.Variable(tf.zeros(np.shape(grads[0])), name="v")
    return [[(tf.constant(g, tf.float32), v)] for g in grads]


def test_average_is_the_mean_per_variable():
    (g, v), = gl.average_gradients(_pairs([1.0, 2.0], [3.0, 6.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert v.name.startswith("v")


def test_counts_weight_unequal_towers():
    # g = (n_1 g_1 + n_2 g_2) / (n_1 + n_2) = (1*[1, 2] + 3*[3, 6]) / 4
    (g, _), = gl.average_gradients(_pairs([1.0, 2.0], [3.0, 6.0]), counts=[1, 3])
    np.testing.assert_allclose(g.numpy(), [2.5, 5.0])


def test_none_stays_none_and_variable_from_first_tower():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    towers = [[(None, a), (tf.constant(1.0), b)], [(None, a), (tf.constant(3.0), b)]]
    (g0, v0), (g1, v1) = gl.average_gradients(towers)
    assert g0 is None and v0 is a and v1 is b
    assert float(g1) == 2.0


def test_indexed_slices_average_to_the_dense_mean():
    v = tf.Variable(tf.zeros((4, 2)))
    s1 = tf.IndexedSlices(tf.constant([[1.0, 1.0], [2.0, 2.0]]), tf.constant([0, 0]), tf.constant([4, 2]))
    s2 = tf.IndexedSlices(tf.constant([[4.0, 4.0]]), tf.constant([3]), tf.constant([4, 2]))
    (g, _), = gl.average_gradients([[(s1, v)], [(s2, v)]])
    assert isinstance(g, tf.IndexedSlices)
    dense = (tf.convert_to_tensor(s1) + tf.convert_to_tensor(s2)) / 2
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), dense.numpy())


def test_works_in_tf_function_and_tf1_graph():
    towers = _pairs([1.0], [3.0])
    f = tf.function(lambda: gl.average_gradients(towers)[0][0])
    assert float(f()[0]) == 2.0
    with tf.Graph().as_default():
        v = tf.compat.v1.get_variable("w", initializer=tf.zeros([1]))
        (g, _), = gl.average_gradients([[(tf.constant([1.0]), v)], [(tf.constant([5.0]), v)]])
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(g), [3.0])


def test_bad_towers():
    v = tf.Variable(0.0)
    with pytest.raises(ValueError, match="at least one tower, got \\[\\]"):
        gl.average_gradients([])
    with pytest.raises(ValueError, match="different numbers of gradients: \\[1, 2\\]"):
        gl.average_gradients([[(1.0, v)], [(1.0, v), (2.0, v)]])
    with pytest.raises(ValueError, match="counts"):
        gl.average_gradients(_pairs([1.0], [2.0]), counts=[1])


def test_tower_devices_reuses_existing_devices_or_asks_for_a_restart():
    assert gl.tower_devices(2) == DEVICES
    assert gl.tower_devices(1) == DEVICES[:1]
    with pytest.raises(RuntimeError, match="Restart the kernel"):
        gl.tower_devices(3)
    with pytest.raises(ValueError, match="num_towers"):
        gl.tower_devices(0)


@pytest.mark.slow
def test_tower_devices_splits_the_cpu_in_a_fresh_process():
    import subprocess, sys
    code = "import gradlab as gl; print(gl.tower_devices(3))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['/device:CPU:0', '/device:CPU:1', '/device:CPU:2']", out.stderr


@pytest.mark.gpu("make_strategy('towers') on two GPUs (or GPU 0 split in two): each tower "
                 "allocates on its own GPU, and 3 updates equal Keras's train_on_batch at the large batch")
def test_towers_on_gpus_equal_keras_large_batch():
    assert all("GPU" in d for d in DEVICES), DEVICES  # tests/common.py: GPUs where there are any
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def mlp():
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((12,)), keras.layers.Dense(32, activation="relu"),
                                 keras.layers.Dense(4)])
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 12)).astype("float32"), rng.integers(0, 4, size=30)
    oracle = mlp()
    oracle.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss=ce)
    s = gl.make_strategy("towers", mlp(), ce, keras.optimizers.SGD(0.1, momentum=0.9),
                         accum_steps=4, devices=DEVICES)  # 15 rows a tower, in micro-batches
    names = [d.split("device:")[-1] for d in DEVICES]
    for name in names:
        tf.config.experimental.reset_memory_stats(name)
    for _ in range(3):
        oracle.reset_metrics()
        expected = float(oracle.train_on_batch(x, y))
        assert float(s.step(x, y)) == pytest.approx(expected, rel=1e-5)
    for name in names:
        assert tf.config.experimental.get_memory_info(name)["peak"] > 0, name
    for a, b in zip(s.model.get_weights(), oracle.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
