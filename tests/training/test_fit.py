"""`AccumulatingModel.fit` equals Keras's own plain `fit` at the same (effective) batch_size.

The oracle shares no code with gradlab: a clone of the model with the same initial weights,
compiled with the same arguments, fitted by Keras at the large batch with `shuffle=False`.
Tolerances: float32 sums taken in another order differ by ~1e-7 relative per update; after
a few dozen SGD updates weights agree to ~1e-6, so SGD cases assert atol 1e-5. Adam divides
by sqrt(v): where a gradient is tiny its rounding is amplified, so Adam cases assert 1e-4
(still two orders below one update's size, lr 1e-3).
"""
import math
import sys
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl
from gradlab.core import distribute
from gradlab.studies.data import load_mnist
from gradlab.training import fit_step
from gradlab.training.fit import AccumulatingModel
from common import DEVICES, ActivationPenalty, activity_refusal

N = 611          # 10 batches of 60 and a short last batch of 11
BATCH = 60


def mnist(n=N):
    data = load_mnist(flatten=True)
    return np.array(data.x_train[:n]), np.array(data.y_train[:n]).astype("int64")


def validation():
    data = load_mnist(flatten=True)
    return np.array(data.x_test[:180]), np.array(data.y_test[:180]).astype("int64")  # 3 x 60: one shape


def mlp(seed=0, regularizer=None):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((784,)),
                             keras.layers.Dense(32, activation="relu", kernel_regularizer=regularizer),
                             keras.layers.Dense(10)])


def twins(build, accum_steps=4, optimizer=lambda: keras.optimizers.SGD(0.1), jit_compile=False,
          **compile_kw):
    """`(plain, acc)`: the same initial weights, compiled alike (each with its own optimizer).

    XLA compiles once per batch shape, seconds each: most cases run without it, and the
    ones marked `jit_compile="auto"` run the default (XLA here, as the benchmark does)."""
    plain, inner = build(), build()
    inner.set_weights(plain.get_weights())
    acc = AccumulatingModel(inner, accum_steps=accum_steps, jit_compile=jit_compile)
    compile_kw.setdefault("loss", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    for m in (plain, acc):
        kw = dict(compile_kw)
        kw["loss"] = keras.losses.deserialize(keras.losses.serialize(kw["loss"])) \
            if isinstance(kw["loss"], keras.losses.Loss) else kw["loss"]
        if isinstance(kw.get("metrics"), list):  # a metric object holds state: one each
            kw["metrics"] = [keras.metrics.deserialize(keras.metrics.serialize(m))
                             if isinstance(m, keras.metrics.Metric) else m for m in kw["metrics"]]
        m.compile(optimizer=optimizer(), **kw)
    return plain, acc


def fit_both(plain, acc, x, y, batch_size=BATCH, epochs=2, **kw):
    h_plain = plain.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0, **kw)
    h_acc = acc.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0, **kw)
    return h_plain.history, h_acc.history


def max_abs_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) for u, v in zip(a, b))


def assert_same(plain, acc, h_plain, h_acc, atol=1e-5, rtol=1e-5):
    assert int(acc.optimizer.iterations) == int(plain.optimizer.iterations)
    for wp, wa in zip(plain.get_weights(), acc.get_weights()):
        np.testing.assert_allclose(wa, wp, rtol=rtol, atol=atol)
    for key, values in h_plain.items():
        np.testing.assert_allclose(h_acc[key], values, rtol=rtol, atol=atol, err_msg=key)


def assert_fit_refused(acc, match, x, y):
    """`acc.fit(x, y)` raises a ValueError matching `match` and changes no weight or counter."""
    before = acc.get_weights()
    with pytest.raises(ValueError, match=match):
        acc.fit(x, y, batch_size=BATCH, verbose=0)
    assert int(acc.optimizer.iterations) == 0
    for a, b in zip(acc.get_weights(), before):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- the large batch, exactly
# 16: the last batch (11) has fewer rows than micro-batches. "auto": XLA, the default here.
@pytest.mark.slow
@pytest.mark.parametrize("accum_steps, jit_compile", [(4, "auto"), (16, False)])
def test_mlp_sgd_short_last_batch_and_validation(accum_steps, jit_compile):
    x, y = mnist()
    plain, acc = twins(mlp, accum_steps, metrics=["accuracy"], jit_compile=jit_compile)
    hp, ha = fit_both(plain, acc, x, y, validation_data=validation())
    assert acc.jit_compile == (jit_compile == "auto")
    assert set(hp) <= set(ha) and {"val_loss", "val_accuracy", "accuracy"} <= set(ha)
    assert acc.accum_steps == accum_steps and int(acc.optimizer.iterations) == 2 * math.ceil(N / BATCH)
    assert_same(plain, acc, hp, ha)
    # the wrapped model's own variables trained (shared, not copied)
    np.testing.assert_array_equal(acc.model.get_weights()[0], acc.get_weights()[0])


def test_adam_with_schedule_counts_updates():
    x, y = mnist()
    schedule = lambda: keras.optimizers.schedules.PiecewiseConstantDecay([5, 15], [3e-3, 1e-3, 3e-4])
    plain, acc = twins(mlp, 4, optimizer=lambda: keras.optimizers.Adam(schedule()),
                       metrics=["accuracy"])
    hp, ha = fit_both(plain, acc, x, y)
    assert int(acc.optimizer.iterations) == 22  # one per update, not per micro-batch
    assert_same(plain, acc, hp, ha, atol=1e-4)


@pytest.mark.slow
def test_sample_weight_and_class_weight():
    x, y = mnist()
    w = np.random.default_rng(0).uniform(0.0, 2.0, len(x)).astype("float32")
    plain, acc = twins(mlp, 4, metrics=["accuracy"], weighted_metrics=["accuracy"])
    assert_same(plain, acc, *fit_both(plain, acc, x, y, sample_weight=w))
    plain, acc = twins(mlp, 3, metrics=["accuracy"])
    assert_same(plain, acc, *fit_both(plain, acc, x, y, class_weight={i: 0.5 + i / 5 for i in range(10)}))


def two_heads(seed=0):
    keras.utils.set_random_seed(seed)
    pixels, extra = keras.Input((784,), name="pixels"), keras.Input((3,), name="extra")
    h = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()([pixels, extra]))
    return keras.Model({"pixels": pixels, "extra": extra},
                       {"digit": keras.layers.Dense(10, name="digit")(h),
                        "ink": keras.layers.Dense(1, name="ink")(h)})


def test_dict_inputs_and_outputs_two_losses():
    x, y = mnist()
    rng = np.random.default_rng(1)
    inputs = {"pixels": x, "extra": rng.normal(size=(len(x), 3)).astype("float32")}
    targets = {"digit": y, "ink": x.mean(axis=1, keepdims=True)}
    plain, acc = twins(two_heads, 4, loss={"digit": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                                           "ink": "mse"},
                       loss_weights={"digit": 1.0, "ink": 3.0}, metrics={"digit": ["accuracy"]})
    hp, ha = fit_both(plain, acc, inputs, targets)
    # the per-output "*_loss" entries too: Keras's are a plain mean of batches (611 rows:
    # the short last batch of 11 counts as much as the others), and so are these
    assert {"digit_loss", "ink_loss"} <= set(ha)
    assert_same(plain, acc, hp, ha)


@pytest.mark.slow
def test_list_outputs_named_as_keras_names_them():
    # Keras names per-output logs by the model's output names (digit_loss, ink_mae), not by
    # the loss functions; the same metric on both outputs must not collapse into one key
    x, y = mnist()

    def heads(seed=0):
        keras.utils.set_random_seed(seed)
        inputs = keras.Input((784,))
        h = keras.layers.Dense(16, activation="relu")(inputs)
        return keras.Model(inputs, [keras.layers.Dense(10, name="digit")(h),
                                    keras.layers.Dense(1, name="ink")(h)])
    plain, acc = twins(heads, 4, loss=["mse", "mse"], metrics=[["mae"], ["mae"]])
    targets = [keras.utils.to_categorical(y, 10), x.mean(axis=1, keepdims=True)]
    hp, ha = fit_both(plain, acc, x, targets, validation_data=(x[:120], [t[:120] for t in targets]))
    assert set(ha) - {"skipped_updates"} == set(hp)
    assert {"digit_loss", "ink_loss", "digit_mae", "ink_mae", "val_ink_mae"} <= set(hp)
    assert_same(plain, acc, hp, ha)


def embedding_model(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((28,), dtype="int32"), keras.layers.Embedding(16, 8),
                             keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(10)])


def tokens(x):
    """Row 14 of each digit as 28 tokens: pixel intensity in 16 buckets (0 = background)."""
    return np.minimum((x.reshape(-1, 28, 28)[:, 14] * 16).astype("int32"), 15)


def test_embedding_sgd():
    # SGD: Keras applies IndexedSlices with duplicate rows by scatter-add, which is the dense
    # sum. (Keras's Adam on IndexedSlices with duplicates differs from the dense mean
    # gradient, which is what any accumulation adds up; so SGD is the oracle here.)
    x, y = mnist()
    plain, acc = twins(embedding_model, 4, optimizer=lambda: keras.optimizers.SGD(0.5))
    assert_same(plain, acc, *fit_both(plain, acc, tokens(x), y))


@pytest.mark.slow
def test_tf_data_dataset_with_weights():
    x, y = mnist()
    w = np.linspace(0.2, 2.0, len(x)).astype("float32")
    data = tf.data.Dataset.from_tensor_slices((x, y, w)).batch(BATCH)
    plain, acc = twins(mlp, 4, metrics=["accuracy"])
    hp = plain.fit(data, epochs=2, verbose=0, shuffle=False).history
    ha = acc.fit(data, epochs=2, verbose=0, shuffle=False).history
    assert_same(plain, acc, hp, ha)


@pytest.mark.slow
def test_steps_per_execution():
    x, y = mnist()
    plain, acc = twins(mlp, 4, metrics=["accuracy"], steps_per_execution=4)
    assert_same(plain, acc, *fit_both(plain, acc, x, y))


def test_regularised_layer():
    x, y = mnist()
    plain, acc = twins(lambda: mlp(regularizer=keras.regularizers.L2(1e-2)), 4)
    hp, ha = fit_both(plain, acc, x, y)
    assert_same(plain, acc, hp, ha)


def binary_mlp(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((784,)),
                             keras.layers.Dense(32, activation="relu",
                                                activity_regularizer=keras.regularizers.L2(1e-3)),
                             keras.layers.Dense(1)])


@pytest.mark.slow
@pytest.mark.skipif(not gl._compat.activity_penalty_is_a_mean(),
                    reason="Keras before 3.14 sums an activity regulariser over the rows: refused")
def test_threshold_metrics_and_activity_regulariser_on_short_last_batch():
    # 611 rows: the last batch of 11 runs as micro-batches of 3, 3, 3 and 2. AUC, Precision
    # and Recall count every row they see, and an activity regulariser sums over rows: with
    # the zero rows of a padded split (3, 3, 3, 2 + 1) all three were off.
    x, y = mnist()
    big = (y >= 5).astype("float32")[:, None]
    plain, acc = twins(binary_mlp, 4, loss=keras.losses.BinaryCrossentropy(from_logits=True),
                       metrics=[keras.metrics.AUC(from_logits=True), keras.metrics.Precision(thresholds=0.0),
                                keras.metrics.Recall(thresholds=0.0)])
    hp, ha = fit_both(plain, acc, x, big, validation_data=(validation()[0], (validation()[1] >= 5)[:, None]))
    assert_same(plain, acc, hp, ha)


def sequence_model(seed=0):
    """Next-row tokens from this row's tokens; background tokens (0) masked out of the loss."""
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((28,), dtype="int32")
    h = keras.layers.Embedding(16, 8, mask_zero=True)(inputs)
    return keras.Model(inputs, keras.layers.Dense(16)(h))


@pytest.mark.slow
def test_masked_per_token_loss():
    # atol 1e-5: Keras applies the Embedding's IndexedSlices one occurrence at a time (a
    # token appears ~1,000 times a batch), rounding each; plain fit against itself at
    # accum_steps=1 already differs by 6e-6 from the dense sum applied once.
    x, _ = mnist()
    rows = np.minimum((x.reshape(-1, 28, 28) * 16).astype("int32"), 15)
    # 14 and 15: unmasked counts vary from digit to digit, so micro-batches hold unequal counts
    plain, acc = twins(sequence_model, 4, optimizer=lambda: keras.optimizers.SGD(0.5))
    hp, ha = fit_both(plain, acc, rows[:, 14], rows[:, 15])
    assert_same(plain, acc, hp, ha)


@pytest.mark.slow
def test_ignore_class_divides_by_the_other_entries():
    # Keras's SparseCategoricalCrossentropy(ignore_class=0) averages over the targets of
    # other classes (here 52-100% of a row's 28 pixels): each micro-batch counts its own
    # (measured before: 2.7e-3 off at accum_steps=4, as it weighed micro-batches by rows)
    x, _ = mnist()
    rows = x.reshape(-1, 28, 28)
    tokens = np.minimum((rows[:, 15] * 16).astype("int32"), 15)

    def per_pixel(seed=0):
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.Input((28, 1)), keras.layers.Dense(8, activation="relu"),
                                 keras.layers.Dense(16)])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    plain, acc = twins(per_pixel, 4, optimizer=lambda: keras.optimizers.SGD(0.5), loss=loss)
    assert_same(plain, acc, *fit_both(plain, acc, rows[:, 14, :, None], tokens))


def test_masked_output_with_an_add_loss_from_its_inputs_refused():
    # the same mismatch as an activity regulariser, from a layer's own add_loss (measured
    # 1.3e-5 off in float64 before it was refused); a kernel regulariser stays exact
    keras.utils.set_random_seed(0)
    inputs = keras.Input((28,), dtype="int32")
    h = ActivationPenalty()(keras.layers.Embedding(16, 8, mask_zero=True)(inputs))
    acc = AccumulatingModel(keras.Model(inputs, keras.layers.Dense(16)(h)), accum_steps=4, jit_compile=False)
    acc.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rows = np.minimum((mnist(60)[0].reshape(-1, 28, 28) * 16).astype("int32"), 15)
    assert_fit_refused(acc, "add_loss", rows[:, 14], rows[:, 15])

    def regularised(seed=0):
        keras.utils.set_random_seed(seed)
        inputs = keras.Input((28,), dtype="int32")
        h = keras.layers.Embedding(16, 8, mask_zero=True)(inputs)
        return keras.Model(inputs, keras.layers.Dense(16, kernel_regularizer=keras.regularizers.L2(1e-2))(h))
    plain, acc = twins(regularised, 4, optimizer=lambda: keras.optimizers.SGD(0.5))
    assert_same(plain, acc, *fit_both(plain, acc, rows[:, 14], rows[:, 15]))


def per_example_of_sequence(y, pred):
    """A plain function: one loss per example from a sequence output."""
    return keras.ops.mean(keras.losses.sparse_categorical_crossentropy(y, pred, from_logits=True), axis=-1)


@pytest.mark.slow
@pytest.mark.parametrize("loss", [keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                                  per_example_of_sequence], ids=["per-token", "per-example"])
def test_sequence_output_without_mask(loss):
    x, _ = mnist()
    rows = x.reshape(-1, 28, 28)
    tokens = np.minimum((rows[:, 15] * 16).astype("int32"), 15)

    def per_pixel(seed=0):  # row 14's pixels -> row 15's tokens, position by position
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.Input((28, 1)), keras.layers.Dense(8, activation="relu"),
                                 keras.layers.Dense(16)])
    plain, acc = twins(per_pixel, 4, optimizer=lambda: keras.optimizers.SGD(0.5), loss=loss,
                       metrics=["accuracy"])
    assert_same(plain, acc, *fit_both(plain, acc, rows[:, 14, :, None], tokens))


def test_two_masked_outputs_refused_at_the_first_batch():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((28,), dtype="int32")
    h = keras.layers.Embedding(16, 8, mask_zero=True)(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(16)(h), keras.layers.Dense(16)(h)])
    acc = AccumulatingModel(model, accum_steps=4, jit_compile=False)
    acc.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rows = np.minimum((mnist(60)[0].reshape(-1, 28, 28) * 16).astype("int32"), 15)
    assert_fit_refused(acc, "2 of the model's 2 outputs carry a Keras mask",
                       rows[:, 14], [rows[:, 15], rows[:, 13]])


def test_masked_output_with_an_activity_regulariser_refused_at_the_first_batch():
    # Keras divides the penalty by rows and the masked loss by unmasked entries: no one
    # normaliser splits both (measured 7e-5 off after one update before it was refused)
    keras.utils.set_random_seed(0)
    inputs = keras.Input((28,), dtype="int32")
    h = keras.layers.Embedding(16, 8, mask_zero=True)(inputs)
    h = keras.layers.Dense(8, activity_regularizer=keras.regularizers.L2(1e-2), name="penalised")(h)
    acc = AccumulatingModel(keras.Model(inputs, keras.layers.Dense(16)(h)), accum_steps=4, jit_compile=False)
    acc.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rows = np.minimum((mnist(60)[0].reshape(-1, 28, 28) * 16).astype("int32"), 15)
    assert_fit_refused(acc, activity_refusal("penalised"), rows[:, 14], rows[:, 15])


def test_clip_norm_once_per_update_is_keras_global_clipnorm():
    x, y = mnist()
    x, y = x[:300], y[:300]
    plain = mlp()
    plain.compile(optimizer=keras.optimizers.SGD(0.5, global_clipnorm=0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    inner = mlp()
    inner.set_weights(plain.get_weights())
    acc = AccumulatingModel(inner, accum_steps=4, clip_norm=0.05, jit_compile=False)
    acc.compile(optimizer=keras.optimizers.SGD(0.5),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert_same(plain, acc, *fit_both(plain, acc, x, y, epochs=1))


def batchnorm_mlp(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((784,)), keras.layers.Dense(32), keras.layers.BatchNormalization(),
                             keras.layers.Activation("relu"), keras.layers.Dense(10)])


@pytest.mark.slow
def test_batchnorm_window_moves_statistics_once_from_the_whole_batch():
    x, y = mnist(BATCH - 1)  # one update of 59 = micro-batches of 15, 15, 15 and 14
    stats = {}
    for mode in ("micro", "window"):
        plain, acc = twins(batchnorm_mlp, 4)
        acc = AccumulatingModel(acc.model, accum_steps=4, batchnorm=mode, jit_compile=False)
        acc.compile(optimizer=keras.optimizers.SGD(0.1),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        fit_both(plain, acc, x, y, epochs=1)
        bn = lambda m: [np.asarray(v) for v in m.layers[1].non_trainable_weights]  # moving mean, var
        stats[mode] = max_abs_diff(bn(acc.model), bn(plain))
    # The first update's statistics come from the initial weights: window = the large batch.
    assert stats["window"] < 1e-6, stats
    # Keras's own (micro): moved 4 times, from 15 examples each
    assert stats["micro"] > 1e-3, stats


@pytest.mark.slow
def test_mixed_float16_loss_scale_optimizer():
    # float16 rounds at 1e-3 and its matmuls sum micro-batches of other sizes than the
    # large batch: 2e-3 is float16 rounding. Differentiating S_i = D_i * L_i directly put
    # D_i into every float16 gradient on top of the loss scale and was 9e-3 off.
    x, y = mnist(250)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        plain, acc = twins(mlp, 5)
        hp, ha = fit_both(plain, acc, x, y, batch_size=48)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert isinstance(acc.optimizer, keras.optimizers.LossScaleOptimizer)
    assert "skipped_updates" not in ha  # the LossScaleOptimizer does its own skipping
    assert float(acc.optimizer.dynamic_scale) == float(plain.optimizer.dynamic_scale)
    assert_same(plain, acc, hp, ha, atol=2e-3, rtol=2e-3)


# ---------------------------------------------------------------- tf.distribute
def _fit_mirrored(x, y, initial, optimizer, accum_steps, epochs, metrics=None):
    """`mlp()` from `initial`, built, compiled and fitted on DEVICES: Keras's own mirrored fit
    (accum_steps None) or AccumulatingModel's; returns the model and its history."""
    with distribute.make_distribution(DEVICES).scope():
        model = mlp()
        model.set_weights(initial)
        if accum_steps is not None:
            model = AccumulatingModel(model, accum_steps=accum_steps)
        model.compile(optimizer=optimizer(), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=metrics)
        history = model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0).history
    return model, history


@pytest.mark.slow
@pytest.mark.oldest
def test_mirrored_uneven_split_is_exact_where_keras_is_not():
    x, y = mnist()
    sgd = lambda: keras.optimizers.SGD(0.5)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    single = mlp()
    single.compile(optimizer=sgd(), loss=loss, metrics=["accuracy"])
    initial = single.get_weights()
    single_history = single.fit(x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0).history

    results = {}
    for name, accum_steps in (("keras", None), ("gradlab", 4)):
        model, history = _fit_mirrored(x, y, initial, sgd, accum_steps, epochs=2, metrics=["accuracy"])
        results[name] = (max_abs_diff(model.get_weights(), single.get_weights()), history)
    # Keras's own mirrored fit averages the replicas' means: the last batch (11 = 6 + 5)
    # is off. If a Keras release fixes this, this assertion says so.
    assert results["keras"][0] > 1e-3, results
    assert results["gradlab"][0] < 1e-5, results
    # the history is the synced metrics', not the last step's replica average
    history = results["gradlab"][1]
    assert history["skipped_updates"] == [0.0, 0.0]
    # (measured: equal on one machine, 1.8e-7 relative on another, where oneDNN sums in
    # another order; the last step's replica average was 1.1e-6 off, 5.7e-7 relative)
    for key in ("loss", "accuracy"):
        np.testing.assert_allclose(history[key], single_history[key], rtol=4e-7, err_msg=key)


@pytest.mark.slow
@pytest.mark.parametrize("clip", ["clipnorm", "global_clipnorm"])
def test_mirrored_optimizer_clipping_clips_the_all_reduced_gradient(clip):
    # Keras's own mirrored fit clips each replica's gradient before the all-reduce (lesson 13);
    # AccumulatingModel all-reduces first, so the optimizer clips the large batch's gradient once
    x, y = mnist()
    sgd = lambda: keras.optimizers.SGD(0.5, **{clip: 0.05})
    loss = lambda: keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    single = mlp()
    single.compile(optimizer=sgd(), loss=loss())
    initial = single.get_weights()
    single.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    gaps = {}
    for name, accum_steps in (("keras", None), ("gradlab", 3)):
        model, _ = _fit_mirrored(x, y, initial, sgd, accum_steps, epochs=1)
        gaps[name] = max_abs_diff(model.get_weights(), single.get_weights())
    assert gaps["keras"] > 1e-3, gaps  # if a Keras release clips after the all-reduce, this says so
    assert gaps["gradlab"] < 1e-5, gaps


@pytest.mark.slow
def test_mirrored_batch_smaller_than_replicas():
    # batches 5, 5, 1 on 2 replicas: the first splits 3 + 2 (Keras's own build averaged the
    # replicas' parts and failed on it), the last leaves one replica with no rows at all
    x, y = mnist(11)
    single = mlp()
    single.compile(optimizer=keras.optimizers.SGD(0.5),
                   loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    initial = single.get_weights()
    single.fit(x, y, batch_size=5, epochs=1, shuffle=False, verbose=0)
    with distribute.make_distribution(DEVICES).scope():
        inner = mlp()
        inner.set_weights(initial)
        acc = AccumulatingModel(inner, accum_steps=3)
        acc.compile(optimizer=keras.optimizers.SGD(0.5),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        acc.fit(x, y, batch_size=5, epochs=1, shuffle=False, verbose=0)
    assert int(acc.optimizer.iterations.numpy()) == 3
    assert max_abs_diff(acc.get_weights(), single.get_weights()) < 1e-5


@pytest.mark.slow
def test_mirrored_empty_shard_with_batchnorm_still_updates():
    # the last batch (1 row) leaves one replica nothing: it runs no micro-batch (its
    # BatchNormalization moments of no rows were NaN, and the whole update was skipped)
    x, y = mnist(11)
    with distribute.make_distribution(DEVICES).scope():
        keras.utils.set_random_seed(0)
        inner = keras.Sequential([keras.Input((784,)), keras.layers.Dense(8),
                                  keras.layers.BatchNormalization(), keras.layers.Dense(10)])
        acc = AccumulatingModel(inner, accum_steps=2)
        acc.compile(optimizer=keras.optimizers.SGD(0.5),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = acc.fit(x, y, batch_size=5, epochs=1, shuffle=False, verbose=0).history
    assert history["skipped_updates"] == [0.0] and int(acc.optimizer.iterations.numpy()) == 3
    assert all(np.isfinite(w).all() for w in acc.get_weights())


@pytest.mark.slow
@pytest.mark.oldest
def test_mirrored_per_output_losses_are_the_global_batch_means():
    # Keras's per-output trackers multiply a replica's loss back by the replicas (which it
    # no longer divides by here) and weigh replicas equally: measured 2x the loss, and
    # val_*_loss 5e-3 off on uneven shards, before both were fixed
    x, y = mnist()
    rng = np.random.default_rng(1)
    inputs = {"pixels": x, "extra": rng.normal(size=(len(x), 3)).astype("float32")}
    targets = {"digit": y, "ink": x.mean(axis=1, keepdims=True)}
    val = ({k: v[:131] for k, v in inputs.items()}, {k: v[:131] for k, v in targets.items()})
    compile_kw = lambda: dict(loss={"digit": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                                    "ink": "mse"}, loss_weights={"digit": 1.0, "ink": 3.0})
    single = two_heads()
    single.compile(optimizer=keras.optimizers.SGD(0.1), **compile_kw())
    initial = single.get_weights()
    expected = single.fit(inputs, targets, batch_size=BATCH, epochs=1, shuffle=False, verbose=0,
                          validation_data=val).history
    with distribute.make_distribution(DEVICES).scope():
        inner = two_heads()
        inner.set_weights(initial)
        acc = AccumulatingModel(inner, accum_steps=3)
        acc.compile(optimizer=keras.optimizers.SGD(0.1), **compile_kw())
        history = acc.fit(inputs, targets, batch_size=BATCH, epochs=1, shuffle=False, verbose=0,
                          validation_data=val).history
    assert max_abs_diff(acc.get_weights(), single.get_weights()) < 1e-5
    for key in ("digit_loss", "ink_loss", "loss", "val_digit_loss", "val_ink_loss", "val_loss"):
        np.testing.assert_allclose(history[key], expected[key], rtol=1e-5, err_msg=key)


@pytest.mark.slow
def test_multi_worker_fit_two_processes():
    # 2 worker processes on 127.0.0.1 with MultiWorkerMirroredStrategy, batches of 31 split
    # 16 + 15; the reference is Keras's plain fit in this process.
    from gradlab.studies.distributed import multiworker
    result = multiworker.run(workers=2, accum_steps=3, updates=2, batch=31, timeout=300, fit=True)
    assert result["shards"] == [16, 15] and result["all_reduces_per_update"] == 1.0, result
    assert result["max_abs_diff"] < 1e-6 and result["max_loss_diff"] < 1e-5, result


# ---------------------------------------------------------------- the rest of Keras's API
@pytest.mark.slow
def test_save_load_evaluate_predict(tmp_path):
    x, y = mnist()
    plain, acc = twins(mlp, 3, metrics=["accuracy"])
    np.testing.assert_allclose(acc.evaluate(x, y, verbose=0), plain.evaluate(x, y, verbose=0), rtol=1e-6)
    np.testing.assert_allclose(acc.predict(x, verbose=0), plain.predict(x, verbose=0), atol=1e-6)

    path = str(tmp_path / "acc.keras")
    acc = AccumulatingModel(mlp(), accum_steps=3, clip_norm=2.5, batchnorm="window", jit_compile=False)
    acc.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    acc.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
    acc.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, AccumulatingModel)
    assert (loaded.accum_steps, loaded.clip_norm, loaded.batchnorm, loaded.jit_compile_option) == \
        (3, 2.5, "window", False)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), acc.predict(x, verbose=0))
    # the optimizer state travels too: one more epoch on each stays equal
    h_loaded = loaded.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False).history
    h_acc = acc.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False).history
    assert int(loaded.optimizer.iterations) == int(acc.optimizer.iterations) == 22
    assert max_abs_diff(loaded.get_weights(), acc.get_weights()) < 1e-6
    assert h_loaded == h_acc


@pytest.mark.slow
def test_traced_once_for_every_batch_size():
    x, y = mnist()
    _, acc = twins(mlp, 4)
    traces = []
    step = acc.train_step
    acc.train_step = lambda data: traces.append(1) or step(data)
    acc.fit(x[:131], y[:131], batch_size=BATCH, epochs=2, verbose=0, shuffle=False)  # 60, 60, 11
    acc.fit(x[:100], y[:100], batch_size=33, epochs=1, verbose=0, shuffle=False)     # 33, 33, 33, 1
    assert len(traces) == 1


# ---------------------------------------------------------------- no silent failure
@pytest.mark.slow
def test_non_finite_update_is_skipped_and_counted():
    x, y = mnist(120)
    x[70] = np.nan  # the second batch of 60
    _, acc = twins(mlp, 4)
    before = acc.get_weights()
    history = acc.fit(x[60:], y[60:], batch_size=BATCH, epochs=1, verbose=0, shuffle=False).history
    assert history["skipped_updates"] == [1.0]
    assert int(acc.optimizer.iterations) == 0
    for a, b in zip(acc.get_weights(), before):
        np.testing.assert_array_equal(a, b)
    # a finite batch after it trains normally
    history = acc.fit(x[:60], y[:60], batch_size=BATCH, epochs=1, verbose=0, shuffle=False).history
    assert history["skipped_updates"] == [0.0] and int(acc.optimizer.iterations) == 1


@pytest.mark.slow
def test_non_finite_update_is_skipped_and_counted_under_mirrored():
    # batches of 60: the second holds a NaN on one replica's shard only; after the one
    # all-reduce every replica sees it, so all skip together (Keras's own plain mirrored fit
    # would write NaN into every weight)
    x, y = mnist(180)
    x[95] = np.nan
    mirrored = distribute.make_distribution(DEVICES)
    with mirrored.scope():
        acc = AccumulatingModel(mlp(), accum_steps=4)
        acc.compile(optimizer=keras.optimizers.Adam(1e-3),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        acc.fit(x[:60], y[:60], batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
        before = [v.numpy() for v in acc.variables]
        history = acc.fit(x[60:120], y[60:120], batch_size=BATCH, epochs=1, verbose=0, shuffle=False).history
    assert history["skipped_updates"] == [1.0]
    assert int(acc.optimizer.iterations.numpy()) == 1
    for a, b in zip(acc.variables, before):  # weights and Adam's moments
        np.testing.assert_array_equal(a.numpy(), b)
    with mirrored.scope():
        history = acc.fit(x[120:], y[120:], batch_size=BATCH, epochs=1, verbose=0, shuffle=False).history
    assert history["skipped_updates"] == [0.0] and int(acc.optimizer.iterations.numpy()) == 2
    assert all(np.isfinite(w).all() for w in acc.get_weights())


def test_a_loss_coupling_rows_is_refused_under_mirrored_as_on_one_device():
    # each row's loss depends on the batch's mean logits; the contract's check finds it on
    # every replica, and fit's unknown batch size takes the path that once dropped the
    # verdict: trained 11 updates silently (lesson 15 found it). 130 rows: a last batch of
    # 10, so Keras traces the step with an unknown batch size
    x, y = mnist(130)

    def centred(y_true, logits):
        return keras.losses.sparse_categorical_crossentropy(
            y_true, logits - tf.reduce_mean(logits, axis=0), from_logits=True)
    with distribute.make_distribution(DEVICES).scope():
        acc = AccumulatingModel(mlp(), accum_steps=4)
        acc.compile(optimizer=keras.optimizers.SGD(0.1), loss=centred)
        before = acc.get_weights()
        with pytest.raises(ValueError, match="cannot accumulate this loss exactly"):
            acc.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
    assert int(acc.optimizer.iterations.numpy()) == 0
    assert all(np.array_equal(a, b) for a, b in zip(before, acc.get_weights()))


def test_terminate_on_nan_still_works():
    x, y = mnist(240)
    # a NaN weight, not a NaN pixel: oneDNN's fused MatMul+Relu (graph mode, some CPUs) maps
    # relu(NaN) to 0, so a NaN pixel gives a finite loss and only a NaN gradient
    weights = np.ones(len(x), "float32")
    weights[130] = np.nan  # batch 3 of 4
    _, acc = twins(mlp, 4)
    history = acc.fit(x, y, sample_weight=weights, batch_size=BATCH, epochs=3, verbose=0,
                      shuffle=False, callbacks=[keras.callbacks.TerminateOnNaN()]).history
    assert len(history["loss"]) == 1 and acc.stop_training
    assert int(acc.optimizer.iterations) == 2  # batches 1 and 2 applied, batch 3 skipped


@pytest.mark.slow
def test_auto_falls_back_once_where_xla_cannot_compile():
    def sine(t):  # a numpy function: no XLA kernel, though the Lambda layer claims supports_jit
        out = tf.numpy_function(lambda a: np.sin(a).astype("float32"), [t], tf.float32)
        out.set_shape(t.shape)
        return out

    def build(seed=0):
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.Input((784,)), keras.layers.Lambda(sine, output_shape=(784,)),
                                 keras.layers.Dense(10)])
    x, y = mnist(131)
    plain, acc = twins(build, 4, jit_compile="auto")
    assert acc.jit_compile
    with pytest.warns(RuntimeWarning, match="XLA cannot compile.*PyFunc"):
        hp, ha = fit_both(plain, acc, x, y)
    assert not acc.jit_compile
    assert_same(plain, acc, hp, ha)


@pytest.mark.slow
def test_auto_probes_xla_as_keras_traces_the_step_without_autograph(monkeypatch):
    # Keras traces its step with autograph off (do_not_convert). The XLA probe traces it the
    # same way: converted by autograph, the step's code would run from generated source, and
    # the MLP's first fit took 3.2 s where it now takes 1.3 s (measured).
    files = []
    micro_sums = fit_step.micro_sums

    def recording(*args):
        files.append(sys._getframe().f_code.co_filename)
        return micro_sums(*args)

    monkeypatch.setattr(fit_step, "micro_sums", recording)
    acc = AccumulatingModel(mlp(), accum_steps=4)
    acc.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    x, y = mnist(64)
    acc.fit(x, y, batch_size=32, epochs=1, verbose=0)
    assert not acc._xla_probe.pending and acc.jit_compile
    assert len(files) >= 4 and set(files) == {__file__}  # probe and Keras's trace alike


# ---------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("kwargs, error, word", [
    (dict(model="mlp"), TypeError, "'mlp'"),
    (dict(accum_steps=0), ValueError, "0"),
    (dict(accum_steps=2.5), TypeError, "2.5"),
    (dict(accum_steps=True), TypeError, "True"),
    (dict(accum_steps=2**32), ValueError, "4294967296"),  # would wrap around in int32
    (dict(clip_norm=-1.0), ValueError, "-1.0"),
    (dict(clip_norm="big"), TypeError, "'big'"),
    (dict(batchnorm="global"), ValueError, "'global'"),
    (dict(jit_compile="yes"), ValueError, "'yes'"),
])
def test_bad_arguments_at_construction(kwargs, error, word):
    kwargs = {"model": mlp(), "accum_steps": 4, **kwargs}
    with pytest.raises(error, match=word):
        AccumulatingModel(**kwargs)


@pytest.mark.slow
def test_unbuilt_model_is_built_from_the_first_batch(tmp_path):
    # a Sequential without an Input: Keras builds it while tracing its step; the wrapper is
    # built before, so that callbacks asking model.built (BackupAndRestore) accept it
    x, y = mnist()

    def unbuilt(seed=0):
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.layers.Dense(32, activation="relu"), keras.layers.Dense(10)])
    keras.utils.set_random_seed(0)
    plain = unbuilt()
    plain.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    acc = AccumulatingModel(unbuilt(), accum_steps=4, jit_compile=False)
    acc.compile(optimizer=keras.optimizers.SGD(0.1),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert not acc.built
    hp, ha = fit_both(plain, acc, x, y, epochs=1)  # same seed, same initial weights
    assert acc.built
    assert_same(plain, acc, hp, ha)
    backup = keras.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    acc.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[backup])


def test_a_model_overriding_compute_loss_refused():
    class Custom(keras.Model):
        def compute_loss(self, *args, **kwargs):
            return super().compute_loss(*args, **kwargs) * 2.0

    inputs = keras.Input((4,))
    with pytest.raises(ValueError, match="overrides compute_loss"):
        AccumulatingModel(Custom(inputs, keras.layers.Dense(2)(inputs)), accum_steps=2)


def test_summing_loss_refused_before_any_update():
    x, y = mnist(120)
    acc = AccumulatingModel(mlp(), accum_steps=4)
    before = acc.get_weights()
    with pytest.raises(ValueError, match="'sum'"):
        acc.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="sum"))
    assert not acc.compiled
    for a, b in zip(acc.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_exported_as_gradlab_accumulating_model():
    assert gl.AccumulatingModel is AccumulatingModel


@pytest.mark.gpu("AccumulatingModel(jit_compile=True) fitting a conv net on GPU:0 under XLA "
                 "(no fallback), equal to Keras's own fit at the large batch")
def test_xla_conv_net_on_the_gpu_equals_keras_fit():
    x, y = mnist(480)

    def conv():
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((784,)), keras.layers.Reshape((28, 28, 1)),
                                 keras.layers.Conv2D(16, 3, activation="relu"),
                                 keras.layers.Conv2D(16, 3, activation="relu"),
                                 keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)])
    plain, acc = twins(conv, accum_steps=4, jit_compile=True, metrics=["accuracy"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a step XLA refused would fall back, warning
        h_plain, h_acc = fit_both(plain, acc, x, y, batch_size=120)
    assert acc.jit_compile is True
    assert "GPU" in acc.model.weights[0].value.device
    assert_same(plain, acc, h_plain, h_acc, atol=1e-5, rtol=1e-4)
