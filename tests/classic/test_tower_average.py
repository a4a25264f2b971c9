"""gradlab.classic.tower_average: the TF1 recipe's mean over towers, weighted by example count."""
import numpy as np
import pytest
import tensorflow as tf

from gradlab.classic.tower_average import average_gradients


def _pairs(*grads):
    v = tf.Variable(tf.zeros(np.shape(grads[0])), name="v")
    return [[(tf.constant(g, tf.float32), v)] for g in grads]


def test_average_is_the_mean_per_variable():
    (g, v), = average_gradients(_pairs([1.0, 2.0], [3.0, 6.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    assert v.name.startswith("v")


def test_counts_weight_unequal_towers():
    # g = (n_1 g_1 + n_2 g_2) / (n_1 + n_2) = (1*[1, 2] + 3*[3, 6]) / 4
    (g, _), = average_gradients(_pairs([1.0, 2.0], [3.0, 6.0]), counts=[1, 3])
    np.testing.assert_allclose(g.numpy(), [2.5, 5.0])


def test_none_stays_none_and_variable_from_first_tower():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    towers = [[(None, a), (tf.constant(1.0), b)], [(None, a), (tf.constant(3.0), b)]]
    (g0, v0), (g1, v1) = average_gradients(towers)
    assert g0 is None and v0 is a and v1 is b
    assert float(g1) == 2.0


def test_indexed_slices_average_to_the_dense_mean():
    v = tf.Variable(tf.zeros((4, 2)))
    s1 = tf.IndexedSlices(tf.constant([[1.0, 1.0], [2.0, 2.0]]), tf.constant([0, 0]), tf.constant([4, 2]))
    s2 = tf.IndexedSlices(tf.constant([[4.0, 4.0]]), tf.constant([3]), tf.constant([4, 2]))
    (g, _), = average_gradients([[(s1, v)], [(s2, v)]])
    assert isinstance(g, tf.IndexedSlices)
    dense = (tf.convert_to_tensor(s1) + tf.convert_to_tensor(s2)) / 2
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), dense.numpy())


def test_works_in_tf_function_and_tf1_graph():
    towers = _pairs([1.0], [3.0])
    f = tf.function(lambda: average_gradients(towers)[0][0])
    assert float(f()[0]) == 2.0
    with tf.Graph().as_default():
        v = tf.compat.v1.get_variable("w", initializer=tf.zeros([1]))
        (g, _), = average_gradients([[(tf.constant([1.0]), v)], [(tf.constant([5.0]), v)]])
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(g), [3.0])


def test_bad_towers():
    v = tf.Variable(0.0)
    with pytest.raises(ValueError, match="at least one tower, got \\[\\]"):
        average_gradients([])
    with pytest.raises(ValueError, match="different numbers of gradients: \\[1, 2\\]"):
        average_gradients([[(1.0, v)], [(1.0, v), (2.0, v)]])
    with pytest.raises(ValueError, match="counts"):
        average_gradients(_pairs([1.0], [2.0]), counts=[1])
