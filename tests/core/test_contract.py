"""contract.split_holds by hand: a mean holds, a sum, a fixed normaliser and coupled rows fail."""
import numpy as np
import tensorflow as tf

from gradlab.core import contract

Y = tf.constant([1.0, 2.0, 3.0, 4.0])
P = tf.constant([0.0, 0.0, 0.0, 0.0])
rows = lambda y, p: tf.cast(tf.shape(p)[0], tf.float32)


def holds(loss_of, y=Y, p=P, sw=None):
    return bool(contract.split_holds(loss_of, rows, y, p, sw))


def test_a_mean_holds_by_hand():
    # squared errors 1, 4, 9, 16: mean 7.5; halves 2.5 and 12.5; D*L = 30 = 2*2.5 + 2*12.5;
    # the rows twice: mean 7.5 again, 8 * 7.5 = 60 = 2 * 30
    assert holds(lambda y, p, sw: tf.reduce_mean((y - p) ** 2))


def test_a_sum_fails_the_doubling_and_the_halves():
    # sum 30: 4 * 30 = 120, halves 2 * 5 + 2 * 25 = 60
    assert not holds(lambda y, p, sw: tf.reduce_sum((y - p) ** 2))


def test_a_fixed_global_batch_size_fails():
    assert not holds(lambda y, p, sw: tf.reduce_sum((y - p) ** 2) / 64.0)


def test_rows_coupled_fail_a_penalty_of_the_weights_does_not():
    coupled = lambda y, p, sw: tf.reduce_mean((y - p) ** 2) + tf.math.reduce_std(y)
    assert not holds(coupled)
    assert holds(lambda y, p, sw: tf.reduce_mean((y - p) ** 2) + 0.25)


def test_one_row_is_checked_by_the_doubling_alone():
    y, p = Y[:1], P[:1]
    assert holds(lambda y, p, sw: tf.reduce_mean((y - p) ** 2), y, p)
    assert not holds(lambda y, p, sw: tf.reduce_sum((y - p) ** 2) + 1.0, y, p)


def test_weights_are_sliced_with_the_rows():
    w = tf.constant([1.0, 2.0, 3.0, 4.0])
    weighted_mean = lambda y, p, sw: tf.reduce_mean(sw * (y - p) ** 2)   # Keras's rule
    by_weight_sum = lambda y, p, sw: tf.reduce_sum(sw * (y - p) ** 2) / tf.reduce_sum(sw)
    assert holds(weighted_mean, sw=w)
    assert not holds(by_weight_sum, sw=w)


def test_non_finite_is_left_to_the_guard():
    assert holds(lambda y, p, sw: tf.reduce_sum((y - p) ** 2) * np.inf)


def test_inside_a_traced_function():
    f = tf.function(lambda y, p: contract.split_holds(
        lambda y, p, sw: tf.reduce_sum(y - p), rows, y, p),
        input_signature=[tf.TensorSpec([None]), tf.TensorSpec([None])])
    assert not bool(f(Y, P))
    assert bool(f(Y[:0], P[:0]))  # no rows: nothing to compare
