"""fit's arrays reach the update by row index: the same batches as Keras's, one micro-batch's
rows at a time."""
import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.training import fit_rows
from gradlab.training.fit import AccumulatingModel


def small(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((2,)), keras.layers.Dense(3, activation="relu"),
                             keras.layers.Dense(3)])


def pair(accum_steps=2):
    plain, inner = small(), small()
    inner.set_weights(plain.get_weights())
    acc = AccumulatingModel(inner, accum_steps=accum_steps, jit_compile=False)
    for m in (plain, acc):
        m.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return plain, acc


def data(n=10):
    x = np.arange(2 * n, dtype="float64").reshape(n, 2) / (2 * n)  # float64: cast as Keras does
    return x, np.arange(n) % 3


def test_by_index_walkthrough():
    # 5 rows; validation_split=0.4 holds out the last 2; class_weight {1: 2} weighs rows by y
    x, y = np.array([[0.0], [10.0], [20.0], [30.0], [40.0]]), np.array([0, 1, 2, 1, 0])
    arguments = fit_rows.arguments_of(keras.Model.fit, pair()[1], (x, y),
                                      {"validation_split": 0.4, "class_weight": {1: 2.0}})
    tensors, arguments = fit_rows.by_index(pair()[1], arguments)
    assert arguments["x"].tolist() == [0, 1, 2] and arguments["y"] is None
    assert arguments["class_weight"] is None and arguments["validation_split"] == 0.0
    xv, yv = arguments["validation_data"][:2]
    assert xv.tolist() == [[30.0], [40.0]] and yv.tolist() == [1, 0]
    rows = fit_rows.Rows(tensors)
    rows.assign(tensors)
    part = fit_rows.take(rows, tf.constant([2, 0]))
    assert part["x"].numpy().tolist() == [[20.0], [0.0]] and part["x"].dtype == tf.float32
    assert part["y"].numpy().tolist() == [2, 0]
    assert part["sample_weight"].numpy().tolist() == [1.0, 1.0]
    assert fit_rows.take(rows, tf.constant([1]))["sample_weight"].numpy().tolist() == [2.0]
    rows.empty()
    assert rows.count == 0 and [int(tf.shape(v)[0]) for v in tf.nest.flatten(rows.data)] == [0, 0, 0]


def test_not_arrays_keep_kerass_pipeline():
    _, acc = pair()
    x, y = data()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    arguments = fit_rows.arguments_of(keras.Model.fit, acc, (dataset,), {})
    assert fit_rows.by_index(acc, arguments) == (None, arguments)
    # Keras refuses class_weight with sample_weight itself, in its own words
    arguments = fit_rows.arguments_of(keras.Model.fit, acc, (x, y), {"class_weight": {0: 1.0},
                                                                     "sample_weight": np.ones(10)})
    assert fit_rows.by_index(acc, arguments)[0] is None
    with pytest.raises(ValueError, match="class_weight"):
        acc.fit(**{**arguments, "verbose": 0})


def test_fit_feeds_row_indices_and_equals_kerass_fit():
    # the oracle: Keras's plain fit at the same batch, validation split and float64 input
    plain, acc = pair(accum_steps=3)
    x, y = data(23)
    seen = []
    step = acc.train_step
    acc.train_step = lambda batch: seen.append(batch) or step(batch)
    kw = dict(batch_size=8, epochs=2, shuffle=False, verbose=0, validation_split=0.25)
    h_plain, h_acc = plain.fit(x, y, **kw).history, acc.fit(x, y, **kw).history
    (index,) = tf.nest.flatten(seen[0])
    assert index.dtype == tf.int64 and index.shape.rank == 1  # row indices, not rows
    for a, b in zip(acc.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h_acc["val_loss"], h_plain["val_loss"], rtol=1e-6)
    assert int(acc.optimizer.iterations) == int(plain.optimizer.iterations) == 6
    # released after the fit; a whole batch then trains as Keras's train_on_batch does
    assert acc._feeds.train.count == 0
    assert all(int(tf.shape(v)[0]) == 0 for v in tf.nest.flatten(acc._feeds.train.data) if v is not None)
    loss_plain = plain.train_on_batch(x[:6], y[:6])
    loss_acc, skipped = acc.train_on_batch(x[:6], y[:6])
    np.testing.assert_allclose(loss_acc, loss_plain, rtol=1e-6)
    assert skipped == 0
    for a, b in zip(acc.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    # and a fit of arrays after it reads them by index again
    seen.clear()
    plain.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    acc.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert tf.nest.flatten(seen[-1])[0].dtype == tf.int64
    for a, b in zip(acc.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


class MaxRows(keras.metrics.Metric):
    """The most rows one update_state call has seen: how many rows ran through the model at once."""

    def __init__(self, name="max_rows"):
        super().__init__(name=name)
        self.rows = self.add_variable(shape=(), initializer="zeros", name="rows")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.rows.assign(tf.maximum(self.rows, tf.cast(tf.shape(y_pred)[0], "float32")))

    def result(self):
        return self.rows


def test_validation_runs_in_micro_batches_and_reports_kerass_numbers():
    # B = 8 in 3 micro-batches (3, 3, 2): training and validation each see at most 3 rows at
    # once; the oracle is Keras's plain fit at 8, whose validation runs 8 rows at once
    plain, acc = pair(accum_steps=3)
    for m in (plain, acc):
        m.compile(optimizer=keras.optimizers.SGD(0.1), metrics=[MaxRows(), "accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = data(23)
    seen = []
    step = acc.test_step
    acc.test_step = lambda batch: seen.append(tf.nest.flatten(batch)[0].dtype) or step(batch)
    kw = dict(batch_size=8, epochs=2, shuffle=False, verbose=0, validation_data=(x[:13], y[:13]))
    h_plain, h_acc = plain.fit(x, y, **kw).history, acc.fit(x, y, **kw).history
    assert seen == [tf.int64]  # validation arrays by row index too (traced once)
    assert h_plain["max_rows"] == [8.0, 8.0] and h_plain["val_max_rows"] == [8.0, 8.0]
    assert h_acc["max_rows"] == [3.0, 3.0] and h_acc["val_max_rows"] == [3.0, 3.0]
    for name in ("val_loss", "val_accuracy", "loss", "accuracy"):
        np.testing.assert_allclose(h_acc[name], h_plain[name], rtol=1e-6, err_msg=name)
    loss_plain, _, acc_plain = plain.evaluate(x, y, batch_size=8, verbose=0)
    loss_acc, rows_acc, acc_acc = acc.evaluate(x, y, batch_size=8, verbose=0)
    np.testing.assert_allclose([loss_acc, acc_acc], [loss_plain, acc_plain], rtol=1e-6)
    assert rows_acc == 3.0 and seen == [tf.int64]  # the same traced test step
    # a dataset is not arrays: whole batches, traced anew, the same numbers
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    np.testing.assert_allclose(acc.evaluate(dataset, verbose=0), [loss_acc, rows_acc, acc_acc], rtol=1e-6)
    assert seen == [tf.int64, tf.float64]  # the dataset's own rows
    assert acc._feeds.test is None


def test_shuffled_fit_draws_kerass_batches():
    # Keras shuffles the row indices as it would the rows: under one seed the same batches,
    # so the same weights as Keras's plain fit; under another seed, other batches
    x, y = data(23)
    weights = {}
    for seed, name in ((7, "plain"), (7, "acc"), (8, "plain 8")):
        plain, acc = pair(accum_steps=3)
        model = acc if name == "acc" else plain
        keras.utils.set_random_seed(seed)
        model.fit(x, y, batch_size=8, epochs=2, shuffle=True, verbose=0)
        weights[name] = model.get_weights()
    diff = lambda a, b: max(float(np.max(np.abs(u - v))) for u, v in zip(weights[a], weights[b]))
    assert diff("acc", "plain") < 1e-6 < 1e-4 < diff("acc", "plain 8")
