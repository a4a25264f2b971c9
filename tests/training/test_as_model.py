"""`AccumulatingModel` answers as the model it wraps (`gradlab/training/as_model.py`).

The oracle is Keras on a plain twin: the same layers and initial weights, compiled alike,
asked the same question (its layers, `get_layer`, its summary, its weight files) or trained
by Keras's own `fit` at the same batch. SGD with momentum (optimizer state that a weights
file carries) over a few updates agrees to float rounding: weights within 1e-6.
"""
import keras
import numpy as np
import pytest

from gradlab.core import distribute
from gradlab.training.fit import AccumulatingModel
from common import DEVICES

BATCH = 32
ATOL = 1e-6


def data(n=96):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 8)).astype("float32"), rng.integers(0, 3, size=n).astype("int64")


def mlp(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((8,)),
                             keras.layers.Dense(16, activation="relu", name="d1"),
                             keras.layers.Dense(8, activation="relu", name="d2"),
                             keras.layers.Dense(3, name="out")])


@keras.saving.register_keras_serializable(package="gradlab_tests")
class Subclassed(keras.Model):
    """Keras names a subclassed model's weights by its attributes, not by `layers`, and
    files the model's own variable (`scale`) under the model itself."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d1 = keras.layers.Dense(16, activation="relu", name="d1")
        self.out = keras.layers.Dense(3, name="out")
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")

    def call(self, x):
        return self.out(self.d1(x)) * self.scale


def subclassed(seed=0):
    keras.utils.set_random_seed(seed)
    model = Subclassed()
    model(np.zeros((1, 8), "float32"))
    return model


def compile_(model):
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def twins(build=mlp, compiled=True):
    """`(plain, acc)` with the same initial weights, each with its own optimizer."""
    plain, inner = build(), build()
    inner.set_weights(plain.get_weights())
    acc = AccumulatingModel(inner, accum_steps=4, jit_compile=False)
    if compiled:
        compile_(plain), compile_(acc)
    return plain, acc


def fit(model, x, y, **kw):
    kw.setdefault("epochs", 1)
    return model.fit(x, y, batch_size=BATCH, shuffle=False, verbose=0, **kw).history


def max_abs_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) for u, v in zip(a, b))


def optimizer_state(model):
    return [v.numpy() for v in model.optimizer.variables]


def test_layers_get_layer_and_weights_are_the_models():
    _, acc = twins()
    inner = acc.model
    assert len(acc.layers) == 3 and all(a is b for a, b in zip(acc.layers, inner.layers))
    assert acc.get_layer("d2") is inner.get_layer("d2")
    assert acc.get_layer(index=2) is inner.layers[2]
    for kwargs in ({"name": "nope"}, {"index": 7}, {"name": "d1", "index": 0}, {}):
        with pytest.raises(ValueError) as from_inner:
            inner.get_layer(**kwargs)
        with pytest.raises(ValueError, match="layer") as from_acc:
            acc.get_layer(**kwargs)
        assert str(from_acc.value) == str(from_inner.value)
    # each variable once, in the model's order
    assert [v.path for v in acc.weights] == [v.path for v in inner.weights]
    assert len(acc.weights) == 6
    with pytest.raises(AttributeError, match="reserved"):
        acc.layers = []


def test_freezing_through_layers_then_recompiling_trains_what_keras_trains():
    x, y = data()
    plain, acc = twins()
    fit(plain, x, y), fit(acc, x, y)
    for model in (plain, acc):  # the transfer-learning cell, as written for any Keras model
        for layer in model.layers[:-1]:
            layer.trainable = False
        compile_(model)
    assert [v.path for v in acc.trainable_weights] == [v.path for v in acc.model.layers[-1].weights]
    assert len(acc.non_trainable_weights) == len(plain.non_trainable_weights) == 4
    frozen = [v.numpy() for v in acc.non_trainable_weights]
    fit(plain, x, y, epochs=2), fit(acc, x, y, epochs=2)
    assert max_abs_diff([v.numpy() for v in acc.non_trainable_weights], frozen) == 0.0
    assert max_abs_diff(acc.get_weights(), plain.get_weights()) < ATOL
    assert int(acc.optimizer.iterations) == int(plain.optimizer.iterations) == 6


class Recorder(keras.callbacks.Callback):
    """What a user's callback reads of the model mid-fit, by name and by position."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_batch_end(self, batch, logs=None):
        kernel = self.model.get_layer("d1").kernel.numpy()
        self.seen.append((self.model.layers[1].name, len(self.model.layers),
                          float(np.linalg.norm(self.model.layers[2].weights[0].numpy())),
                          kernel.copy()))


def test_a_callback_reads_layers_by_name_and_position_mid_fit():
    x, y = data()
    plain, acc = twins()
    by_plain, by_acc = Recorder(), Recorder()
    fit(plain, x, y, epochs=2, callbacks=[by_plain])
    fit(acc, x, y, epochs=2, callbacks=[by_acc])
    assert len(by_acc.seen) == len(by_plain.seen) == 6
    for (name_a, n_a, norm_a, k_a), (name_p, n_p, norm_p, k_p) in zip(by_acc.seen, by_plain.seen):
        assert (name_a, n_a) == (name_p, n_p) == ("d2", 3)
        assert abs(norm_a - norm_p) < ATOL
        assert np.max(np.abs(k_a - k_p)) < ATOL


def test_get_layer_set_weights_and_a_users_loop_over_layers():
    x, y = data()
    plain, acc = twins()
    for model in (plain, acc):
        model.get_layer("d1").set_weights([w * 0.5 for w in model.get_layer("d1").get_weights()])
        for layer in model.layers:  # a user's loop: rescale each layer with a kernel
            if getattr(layer, "kernel", None) is not None:
                layer.kernel.assign(layer.kernel * 1.5)
    assert max_abs_diff(acc.model.get_weights(), plain.get_weights()) == 0.0
    fit(plain, x, y), fit(acc, x, y)
    assert max_abs_diff(acc.get_weights(), plain.get_weights()) < ATOL


@pytest.mark.parametrize("build", [mlp, subclassed], ids=["sequential", "subclassed"])
def test_weights_files_are_interchangeable_with_the_models(tmp_path, build):
    x, y = data()
    plain, acc = twins(build)
    from_acc, from_plain = str(tmp_path / "acc.weights.h5"), str(tmp_path / "plain.weights.h5")
    fit(acc, x, y, callbacks=[keras.callbacks.ModelCheckpoint(from_acc, save_weights_only=True)])
    fit(plain, x, y, callbacks=[keras.callbacks.ModelCheckpoint(from_plain, save_weights_only=True)])

    inner_twin = compile_(build(seed=1))  # other weights, an optimizer built to receive state
    inner_twin.optimizer.build(inner_twin.trainable_variables)
    inner_twin.load_weights(from_acc)
    assert max_abs_diff(inner_twin.get_weights(), acc.get_weights()) == 0.0
    assert max_abs_diff(optimizer_state(inner_twin), optimizer_state(acc)) == 0.0

    acc_twin = AccumulatingModel(build(seed=1), accum_steps=4, jit_compile=False)
    compile_(acc_twin).optimizer.build(acc_twin.trainable_variables)
    acc_twin.load_weights(from_plain)
    assert max_abs_diff(acc_twin.get_weights(), plain.get_weights()) == 0.0
    assert max_abs_diff(optimizer_state(acc_twin), optimizer_state(plain)) == 0.0
    # the momentum travelled: one more epoch on each stays equal
    fit(plain, x, y), fit(acc_twin, x, y)
    assert max_abs_diff(acc_twin.get_weights(), plain.get_weights()) < ATOL


def test_lending_the_optimizer_leaves_the_model_as_it_was(tmp_path):
    _, acc = twins()
    acc.save_weights(str(tmp_path / "a.weights.h5"))
    assert not hasattr(acc.model, "optimizer")  # never compiled: still no optimizer
    own = compile_(acc.model).optimizer
    acc.save_weights(str(tmp_path / "a.weights.h5"))
    acc.summary(print_fn=lambda *a, **k: None)
    assert acc.model.optimizer is own and acc.optimizer is not own


def test_a_mirrored_wrappers_weights_file_is_the_plain_models(tmp_path):
    x, y = data()
    plain, _ = twins()
    with distribute.make_distribution(DEVICES).scope():
        acc = AccumulatingModel(mlp(), accum_steps=4, jit_compile=False)
        acc.set_weights(plain.get_weights())
        compile_(acc)
    path = str(tmp_path / "acc.weights.h5")
    fit(plain, x, y), fit(acc, x, y, callbacks=[keras.callbacks.ModelCheckpoint(path, save_weights_only=True)])
    loaded = compile_(mlp(seed=1))  # one device
    loaded.optimizer.build(loaded.trainable_variables)
    loaded.load_weights(path)
    assert max_abs_diff(loaded.get_weights(), acc.get_weights()) == 0.0
    assert max_abs_diff(optimizer_state(loaded), optimizer_state(acc)) == 0.0
    assert max_abs_diff(loaded.get_weights(), plain.get_weights()) < ATOL


class Interrupt(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        if epoch == 2:
            raise RuntimeError("interrupted")


def test_backup_and_restore_resumes_as_keras_does(tmp_path):
    x, y = data()
    plain, acc = twins()
    histories = {}
    for name, model in (("plain", plain), ("acc", acc)):
        backup = keras.callbacks.BackupAndRestore(str(tmp_path / name))
        with pytest.raises(RuntimeError, match="interrupted"):
            fit(model, x, y, epochs=4, callbacks=[backup, Interrupt()])
        histories[name] = fit(model, x, y, epochs=4, callbacks=[backup])
    assert len(histories["acc"]["loss"]) == len(histories["plain"]["loss"]) == 2  # epochs 3 and 4
    np.testing.assert_allclose(histories["acc"]["loss"], histories["plain"]["loss"], rtol=1e-6)
    assert int(acc.optimizer.iterations) == int(plain.optimizer.iterations) == 12
    assert max_abs_diff(acc.get_weights(), plain.get_weights()) < ATOL


def test_summary_is_the_models_counting_the_wrappers_optimizer():
    x, y = data()
    plain, acc = twins()
    fit(plain, x, y), fit(acc, x, y)
    lines = {"plain": [], "acc": []}
    plain.summary(print_fn=lambda line, **kw: lines["plain"].append(line))
    acc.summary(print_fn=lambda line, **kw: lines["acc"].append(line))
    text = "\n".join(lines["acc"])
    assert all(f"{name} (Dense)" in text for name in ("d1", "d2", "out"))
    assert "Optimizer params" in text
    assert text.replace(acc.model.name, plain.name) == "\n".join(lines["plain"])


@pytest.mark.parametrize("build", [mlp, subclassed], ids=["sequential", "subclassed"])
def test_a_full_save_of_the_wrapper_still_loads_as_the_wrapper(tmp_path, build):
    x, y = data()
    plain, acc = twins(build)
    fit(plain, x, y), fit(acc, x, y)
    acc.save(str(tmp_path / "acc.keras"))
    plain.save(str(tmp_path / "plain.keras"))
    loaded = keras.saving.load_model(str(tmp_path / "acc.keras"))
    assert isinstance(loaded, AccumulatingModel) and loaded.accum_steps == 4
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in plain.layers]
    assert max_abs_diff(loaded.get_weights(), acc.get_weights()) == 0.0
    assert max_abs_diff(optimizer_state(loaded), optimizer_state(acc)) == 0.0
    # load_weights reads either kind of archive
    _, other = twins(build)
    other.optimizer.build(other.trainable_variables)
    other.load_weights(str(tmp_path / "plain.keras"))
    assert max_abs_diff(other.get_weights(), plain.get_weights()) == 0.0
    other.load_weights(str(tmp_path / "acc.keras"))
    assert max_abs_diff(other.get_weights(), acc.get_weights()) == 0.0
