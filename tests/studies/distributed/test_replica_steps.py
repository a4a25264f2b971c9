"""Lesson 15's plumbing: StepBase and with_step, lesson 10's UnrolledStep, weights_path, each_update_miss."""
import keras
import numpy as np

import gradlab as gl
from gradlab.core import distribute
from gradlab.studies.distributed.replica_steps import (UnrolledStep, each_update_miss, weights_path,
                                                      with_step)

DEVICES = gl.tower_devices(2)
X = np.random.default_rng(0).random((50, 20), dtype=np.float32)
Y = np.arange(50) % 10


def _mlp():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((20,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(10)])


def _loss():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _plain(lr=0.1):  # Keras's plain model, compiled
    model = _mlp()
    model.compile(optimizer=keras.optimizers.SGD(lr), loss=_loss(), jit_compile=False)
    return model


def _largest(a, b):
    return max(float(np.max(np.abs(u - v))) for u, v in zip(a, b))


def test_unrolled_step_on_one_device_is_keras_plain_fit_on_uneven_micro_batches():
    plain = _plain()
    plain.fit(X, Y, batch_size=25, epochs=1, shuffle=False, verbose=0)  # two updates of 25: 7, 6, 6, 6 rows
    step = UnrolledStep(_mlp(), accum_steps=4, loss_fn=_loss())
    step.compile(optimizer=keras.optimizers.SGD(0.1), jit_compile=False)
    logged = step.fit(X, Y, batch_size=25, epochs=1, shuffle=False, verbose=0).history["loss"][0]
    assert _largest(step.inner.get_weights(), plain.get_weights()) < 1e-6
    assert abs(logged - plain.history.history["loss"][0]) < 1e-5


def test_with_step_makes_the_function_the_train_step():
    seen = []

    def step(model, data):
        seen.append(model.accum_steps)
        return {"rows": keras.ops.shape(data[0])[0]}

    model = with_step(step)(_mlp(), accum_steps=3, loss_fn=_loss())
    model.compile(optimizer="sgd", jit_compile=False)
    model.fit(X, Y, batch_size=25, epochs=1, shuffle=False, verbose=0)
    assert seen and set(seen) == {3} and model.metrics == [model.loss_tracker]


def test_weights_path_holds_the_weights_before_each_update_and_after_the_last():
    model = _plain()
    start = model.get_weights()
    path = weights_path(model, X, Y, batch_size=20)  # 20, 20, 10: three updates
    assert len(path) == 4 and int(model.optimizer.iterations) == 3
    assert _largest(path[0], start) == 0 and _largest(path[-1], model.get_weights()) == 0
    assert all(_largest(a, b) > 0 for a, b in zip(path, path[1:]))


def test_each_update_miss_is_zero_for_the_reference_and_the_rate_gap_for_another():
    path = weights_path(_plain(), X[:40], Y[:40], batch_size=20)
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        same, double = _plain(), _plain(lr=0.2)
    exact = each_update_miss(same, dist, path, (X[:40], Y[:40]), batch_size=20)
    twice = each_update_miss(double, dist, path, (X[:40], Y[:40]), batch_size=20)
    assert len(exact) == len(twice) == 2 and max(exact) < 1e-5  # even shards: mirrored fit's step is exact
    np.testing.assert_allclose(twice, 1.0, rtol=1e-4)  # twice the rate: the update's own length too long
