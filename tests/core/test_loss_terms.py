"""loss_terms: one micro-batch's (S_i, D_i); summed over micro-batches and divided once, Keras's
own large-batch loss and gradient (the oracle: Keras's loss object on the whole batch)."""
import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.core.loss_terms import loss_terms, normalize_sample_weight


def test_a_masked_output_counts_each_micro_batch_s_own_entries_by_hand():
    # token 1 embeds to w = 2, token 0 is padding (masked); per-entry squared error against 0
    model = keras.Sequential([keras.Input((3,), dtype="int32"), keras.layers.Embedding(2, 1, mask_zero=True)])
    model.layers[0].embeddings.assign([[0.0], [2.0]])
    x = np.array([[1, 0, 0], [1, 1, 1]], np.int32)  # 1 unmasked entry, then 3
    y = np.zeros((2, 3, 1), np.float32)
    loss_fn = keras.losses.MeanSquaredError()
    terms = [loss_terms(model, loss_fn, x[i:i + 1], y[i:i + 1]) for i in range(2)]
    # by hand: each unmasked entry's loss is 2^2 = 4; D counts the unmasked entries
    np.testing.assert_allclose([(float(s), float(d)) for s, d in terms], [(4.0, 1.0), (12.0, 3.0)], rtol=1e-6)
    table = model.layers[0].embeddings
    with tf.GradientTape() as tape:
        s = tf.add_n([loss_terms(model, loss_fn, x[i:i + 1], y[i:i + 1])[0] for i in range(2)])
    ours = tf.convert_to_tensor(tape.gradient(s, table)) / 4.0
    with tf.GradientTape() as tape:  # Keras's own masked loss of the whole batch
        keras_loss = loss_fn(y, model(x))
    np.testing.assert_allclose(ours, tf.convert_to_tensor(tape.gradient(keras_loss, table)), rtol=1e-6)
    np.testing.assert_allclose(ours, [[0.0], [4.0]])  # d/dw of mean(w^2) over the 4 entries = 2 w


def test_unequal_micro_batches_give_keras_s_large_batch_gradient():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((7, 5)).astype(np.float32), rng.integers(0, 3, 7)
    with tf.GradientTape() as tape:
        parts = [loss_terms(model, loss_fn, x[a:b], y[a:b]) for a, b in ((0, 4), (4, 6), (6, 7))]
        s = tf.add_n([p[0] for p in parts])
    d = sum(float(p[1]) for p in parts)
    ours = [g / d for g in tape.gradient(s, model.trainable_variables)]
    with tf.GradientTape() as tape:
        keras_loss = loss_fn(y, model(x))
    for a, b in zip(ours, tape.gradient(keras_loss, model.trainable_variables)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert d == 7.0


def test_normalize_sample_weight_by_hand_and_its_refusals():
    np.testing.assert_array_equal(normalize_sample_weight([1, 3], 2), [1, 3])  # Keras divides by rows
    np.testing.assert_allclose(normalize_sample_weight([1, 3], 2, over_weights=True), [0.5, 1.5])  # w * 2 / 4
    with pytest.raises(ValueError, match="one entry per example"):
        normalize_sample_weight([1, 2, 3], 2)
    with pytest.raises(ValueError, match="non-negative"):
        normalize_sample_weight([1, -1], 2)
    with pytest.raises(ValueError, match="sums to 0"):
        normalize_sample_weight([0, 0], 2, over_weights=True)
