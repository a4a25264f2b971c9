"""What `AccumulatingModel.fit` takes, against Keras's own plain `fit` on an identical twin (issue 31).

Each case once crashed or differed; each is now Keras's `fit` to float rounding (weights within
1e-5 relative, the same logs), or refused before any update with the cause and the way out.
"""
import inspect
import json
import pathlib
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

import gradlab as gl


ROOT = pathlib.Path(__file__).resolve().parents[2]


def _mlp(seed=0, inputs=5):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((inputs,)), keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(3)])


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)).astype(keras.config.floatx()), rng.integers(0, 3, n)


def _ce():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _twins(model_fn=_mlp, loss=None, optimizer=lambda: keras.optimizers.Adam(0.05), accum_steps=3, **compile_args):
    """`(Keras's model, AccumulatingModel)`, compiled alike."""
    oracle = model_fn()
    oracle.compile(optimizer=optimizer(), loss=loss or _ce(), **compile_args)
    acc = gl.AccumulatingModel(model_fn(), accum_steps=accum_steps)
    acc.compile(optimizer=optimizer(), loss=loss or _ce(), **compile_args)
    return oracle, acc


def _assert_same(oracle, acc, history, acc_history, rtol=1e-5, atol=1e-6):
    for a, b in zip(oracle.get_weights(), acc.model.get_weights()):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    for key, values in history.history.items():
        np.testing.assert_allclose(acc_history.history[key], values, rtol=rtol, atol=atol, err_msg=key)


def test_a_float64_model_stays_float64_in_fit(float64):
    # was 1.1e-8 from Keras's float64 fit (sums kept in float32); float64 agrees to ~1e-15
    x, y = _data()
    oracle, acc = _twins()
    kw = dict(batch_size=20, epochs=2, verbose=0, shuffle=False, validation_data=(x[:10], y[:10]))
    history, acc_history = oracle.fit(x, y, **kw), acc.fit(x, y, **kw)
    assert all(v.dtype == "float64" for v in acc.model.get_weights())
    _assert_same(oracle, acc, history, acc_history, rtol=1e-12, atol=1e-14)


def _two_outputs(form):
    def model_fn():
        keras.utils.set_random_seed(0)
        inputs = keras.Input((5,))
        h = keras.layers.Dense(8, activation="tanh")(inputs)
        cls, reg = keras.layers.Dense(3, name="cls")(h), keras.layers.Dense(1, name="reg")(h)
        return keras.Model(inputs, {"cls": cls, "reg": reg} if form == "dict" else [cls, reg])
    return model_fn


@pytest.mark.parametrize("form", ["dict", "list"])
def test_per_output_sample_weight_in_fit_is_keras_own(form):
    # was a crash: "cannot broadcast a non-scalar to a scalar array" (the probe's weights)
    x, labels = _data()
    rng = np.random.default_rng(1)
    as_form = (lambda d: d) if form == "dict" else (lambda d: [d["cls"], d["reg"]])
    y = as_form({"cls": labels, "reg": x[:, :1]})
    # a 0/1 mask on one output (the README's advice for an ignore_class beside other outputs)
    w = as_form({"cls": (labels != 2).astype("float32"), "reg": rng.random(40).astype("float32")})
    head = lambda d: keras.tree.map_structure(lambda a: a[:10], d)
    oracle, acc = _twins(_two_outputs(form), loss=as_form({"cls": _ce(), "reg": keras.losses.MeanSquaredError()}))
    kw = dict(sample_weight=w, batch_size=20, epochs=2, verbose=0, shuffle=False,
              validation_data=(x[:10], head(y), head(w)))
    history, acc_history = oracle.fit(x, y, **kw), acc.fit(x, y, **kw)
    assert {"cls_loss", "reg_loss", "val_cls_loss"} <= set(history.history)
    _assert_same(oracle, acc, history, acc_history)


# A notebook re-running its cell: plain tf.distribute.MirroredStrategy objects made one after
# another in one process (devices configured before TensorFlow starts: a fresh process).
TWO_STRATEGIES = textwrap.dedent("""
    import json, numpy as np, tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras, gradlab as gl

    def mlp():
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="tanh"),
                                 keras.layers.Dense(3)])

    def fit(ours, x, y, batch_size):
        with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
            model = gl.AccumulatingModel(mlp(), accum_steps=3) if ours else mlp()
            model.compile(optimizer=keras.optimizers.SGD(0.1),
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=batch_size, epochs=2, verbose=0, shuffle=False,
                            validation_data=(x[:50], y[:50]))
        return model.get_weights(), history.history

    rng = np.random.default_rng(0)
    out = []
    for n, batch_size in [(600, 100), (610, 60)]:  # the second: a short last batch of 10
        x, y = rng.normal(size=(n, 5)).astype("float32"), rng.integers(0, 3, n)
        (kw, kh), (ow, oh) = fit(False, x, y, batch_size), fit(True, x, y, batch_size)
        out.append({"max_dw": max(float(np.abs(a - b).max()) for a, b in zip(kw, ow)),
                    "logs": {k: [kh[k], oh[k]] for k in kh}})
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_plain_mirrored_strategies_made_one_after_another_fit_as_keras_does():
    # was: "Shape mismatch in the collective instance 106" under the second strategy
    done = subprocess.run([sys.executable, "-c", TWO_STRATEGIES], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    for run in json.loads(done.stdout.strip().splitlines()[-1]):
        assert run["max_dw"] < 1e-5
        assert set(run["logs"]) == {"loss", "val_loss"}
        for key, (keras_values, ours) in run["logs"].items():
            np.testing.assert_allclose(ours, keras_values, rtol=1e-5, err_msg=key)


class _Evaluating(keras.callbacks.Callback):
    """Calls `self.model.evaluate` at every epoch's end, on arrays and on a dataset."""

    def __init__(self, x, y):
        super().__init__()
        self.x, self.y, self.seen = x, y, []

    def on_epoch_end(self, epoch, logs=None):
        dataset = tf.data.Dataset.from_tensor_slices((self.x, self.y)).batch(5)
        self.seen.append([self.model.evaluate(self.x, self.y, batch_size=6, verbose=0),
                          self.model.evaluate(dataset, verbose=0)])


def test_a_callback_evaluating_mid_fit_leaves_validation_as_keras_does():
    # was: the next epoch's validation crashed ("In[0] and In[1] has different ndims")
    x, y = _data()
    rng = np.random.default_rng(2)
    xe, ye = rng.normal(size=(12, 5)).astype("float32"), rng.integers(0, 3, 12)
    oracle, acc = _twins(metrics=["accuracy"])
    seen = []
    for model in (oracle, acc):
        callback = _Evaluating(xe, ye)
        seen.append((model.fit(x, y, batch_size=20, epochs=3, verbose=0, shuffle=False,
                               validation_data=(x[:14], y[:14]), callbacks=[callback]), callback.seen))
    _assert_same(oracle, acc, seen[0][0], seen[1][0])
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-5)


def _fitted():
    x, y = _data()
    acc = gl.AccumulatingModel(_mlp(), accum_steps=3)
    acc.compile(optimizer="adam", loss=_ce())
    acc.fit(x, y, batch_size=20, epochs=1, verbose=0)
    return acc, x


def _served(path, x):
    signature = tf.saved_model.load(str(path)).signatures["serving_default"]
    return signature.structured_input_signature, {k: v.numpy() for k, v in signature(tf.constant(x)).items()}


def test_export_and_saved_model_serve_what_the_inner_model_serves(tmp_path):
    # was: "The model provided has never been called" (export); no serving_default (saved_model)
    acc, x = _fitted()
    acc.model.export(tmp_path / "inner_export", verbose=False)
    tf.saved_model.save(acc.model, str(tmp_path / "inner_saved"))
    acc.export(tmp_path / "export", verbose=False)
    tf.saved_model.save(acc, str(tmp_path / "saved"))
    for path in ("export", "saved"):
        inner_signature, inner_out = _served(tmp_path / f"inner_{path}", x[:7])
        signature, out = _served(tmp_path / path, x[:7])
        assert signature == inner_signature, path
        assert len(out) == 1 and len(inner_out) == 1
        np.testing.assert_array_equal(next(iter(out.values())), next(iter(inner_out.values())))


LOAD_WITHOUT_GRADLAB = textwrap.dedent("""
    import sys, keras
    try:
        keras.models.load_model(sys.argv[1])
    except TypeError as e:
        print("refused", "gradlab" in str(e), "gradlab" in sys.modules)
    import gradlab
    print(type(keras.models.load_model(sys.argv[1])).__name__)
""")


@pytest.mark.slow
def test_load_model_without_gradlab_names_the_module_to_import(tmp_path):
    acc, _ = _fitted()
    acc.save(tmp_path / "m.keras")
    done = subprocess.run([sys.executable, "-c", LOAD_WITHOUT_GRADLAB, str(tmp_path / "m.keras")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    # Keras's message: "Could not locate class 'AccumulatingModel' ... {'module': 'gradlab.training.fit', ..."
    assert done.stdout.split() == ["refused", "True", "False", "AccumulatingModel"]


@pytest.mark.parametrize("jit_compile", ["auto", True, False])
def test_a_label_out_of_range_stops_fit_as_keras_does(jit_compile):
    # was (XLA): a NaN update, skipped, and training went on (skipped_updates 1)
    x, y = _data()
    y[30] = 5  # past the rows anything reads before the update
    oracle, acc = _twins(jit_compile=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Received a label value of 5"):
        oracle.fit(x, y, batch_size=20, verbose=0, shuffle=False)
    acc = gl.AccumulatingModel(_mlp(), accum_steps=3, jit_compile=jit_compile)
    acc.compile(optimizer="sgd", loss=_ce())
    before = acc.model.get_weights()
    # under XLA refused before any update, in TensorFlow's words; without, TensorFlow's own error
    error = ValueError if acc.jit_compile else tf.errors.InvalidArgumentError
    with pytest.raises(error, match="Received a label value of 5 which is outside the valid range of \\[0, 3\\)"):
        acc.fit(x, y, batch_size=20, verbose=0, shuffle=False)
    if acc.jit_compile:
        assert int(acc.optimizer.iterations) == 0
        for a, b in zip(before, acc.model.get_weights()):
            np.testing.assert_array_equal(a, b)


def _correct(y_true, y_pred):
    labels = keras.ops.cast(keras.ops.reshape(y_true, [-1]), "int64")
    return keras.ops.cast(keras.ops.cast(keras.ops.argmax(y_pred, -1), "int64") == labels, "float32")


class _LastBatch(keras.metrics.Metric):
    """Assigns the batch's accuracy: its value is the last update_state call's."""

    def __init__(self, name="last", **kwargs):
        super().__init__(name=name, **kwargs)
        self.value = self.add_variable(shape=(), initializer="zeros", name="value")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.value.assign(keras.ops.mean(_correct(y_true, y_pred)))

    def result(self):
        return self.value


class _Summing(keras.metrics.Metric):
    """Adds to sums and counts, as Keras's metrics do: any split gives the batch's value."""

    def __init__(self, name="summing", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        correct = _correct(y_true, y_pred)
        self.total.assign_add(keras.ops.sum(correct))
        self.count.assign_add(keras.ops.cast(keras.ops.shape(correct)[0], "float32"))

    def result(self):
        return self.total / self.count


def test_a_metric_of_your_own_that_assigns_is_warned_and_one_that_adds_is_exact():
    # an assigning metric reports the last micro-batch's value (here 0.333 where Keras's 0.3)
    x, y = _data()
    oracle, acc = _twins(metrics=[_LastBatch(), _Summing()])
    acc.compile(optimizer=keras.optimizers.Adam(0.05), loss=_ce(), metrics=[_LastBatch(), _Summing()])
    kw = dict(batch_size=20, epochs=2, verbose=0, shuffle=False)
    history = oracle.fit(x, y, **kw)
    with pytest.warns(UserWarning, match=r"metric\(s\) last \(.*\) of your own is not additive") as caught:
        acc_history = acc.fit(x, y, **kw)
    assert not any("summing" in str(w.message) for w in caught)
    np.testing.assert_allclose(acc_history.history["summing"], history.history["summing"], rtol=1e-6)
    for a, b in zip(oracle.get_weights(), acc.model.get_weights()):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_zero_rows_do_what_keras_plain_fit_does():
    # was: "Exception encountered when calling Sequential.call()" (row indices read as rows)
    x, y = _data()
    empty_x, empty_y = x[:0], y[:0]
    # SGD: Keras's plain fit (no XLA) still counts one optimizer iteration per empty epoch
    oracle, acc = _twins(metrics=["accuracy"], optimizer=lambda: keras.optimizers.SGD(0.1))
    before = acc.model.get_weights()
    for model in (oracle, acc):
        assert model.fit(empty_x, empty_y, batch_size=20, epochs=2, verbose=0).history == {}
        assert model.evaluate(empty_x, empty_y, verbose=0) == []
    for a, b in zip(before, acc.model.get_weights()):
        np.testing.assert_array_equal(a, b)
    kw = dict(batch_size=20, epochs=1, verbose=0, shuffle=False, validation_data=(empty_x, empty_y))
    history, acc_history = oracle.fit(x, y, **kw), acc.fit(x, y, **kw)
    assert "val_loss" not in history.history
    _assert_same(oracle, acc, history, acc_history)


def _sparse_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((6,), sparse=True)
    return keras.Model(inputs, keras.layers.Dense(3)(inputs))


def _ragged_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((None,), ragged=True, dtype="int32")
    pooled = keras.layers.Lambda(lambda t: tf.reduce_mean(tf.cast(t, "float32"), axis=1, keepdims=True))(inputs)
    return keras.Model(inputs, keras.layers.Dense(3)(pooled))


def _sparse_and_ragged():
    rng = np.random.default_rng(0)
    dense = ((rng.random((40, 6)) < 0.3) * rng.normal(size=(40, 6))).astype("float32")
    return [(_sparse_model, tf.sparse.from_dense(dense)),
            (_ragged_model, tf.ragged.constant([list(range(1 + i % 4)) for i in range(40)]))]


@pytest.mark.parametrize("case", [0, 1], ids=["SparseTensor", "RaggedTensor"])
def test_sparse_and_ragged_inputs_are_refused_before_any_update(case):
    # was: "'SparseTensor' object is not subscriptable", "object of type 'RaggedTensor' has no len()"
    if case == 1 and "ragged" not in inspect.signature(keras.Input).parameters:
        pytest.skip(f"Keras {keras.__version__} has no Input(ragged=True)")
    model_fn, x = _sparse_and_ragged()[case]
    y = np.arange(40) % 3
    kind = type(x).__name__
    model, keras_model = model_fn(), model_fn()  # Keras's plain fit takes them
    keras_model.compile(optimizer="sgd", loss=_ce())
    keras_model.fit(x, y, batch_size=20, verbose=0)
    acc = gl.AccumulatingModel(model, accum_steps=3)
    acc.compile(optimizer="sgd", loss=_ce())
    before = model.get_weights()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(20)
    s = gl.make_strategy("fused", model, _ce(), keras.optimizers.SGD(0.1), accum_steps=3)
    for call in (lambda: acc.fit(x, y, batch_size=20, verbose=0), lambda: acc.fit(dataset, verbose=0),
                 lambda: acc.evaluate(x, y, verbose=0), lambda: acc.train_on_batch(x, y),
                 lambda: s.step(x, y)):
        with pytest.raises(TypeError, match=f"does not do for {kind} inputs yet: pass them dense"):
            call()
    assert int(acc.optimizer.iterations) == 0 and s.trace_count() == 0
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
