"""Lesson 15's plumbing: StepBase and with_step, lesson 10's UnrolledStep and WhileStep, weights_path, each_update_miss."""
import keras
import tensorflow as tf
import numpy as np

import gradlab as gl
from gradlab.core import distribute
from gradlab.studies.distributed.replica_steps import (UnrolledStep, WhileStep, each_update_miss, weights_path,
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


def _fits_like_plain(step_class):
    """Fit `step_class` and Keras's plain model on the same two updates; assert equal weights and loss."""
    plain = _plain()
    plain.fit(X, Y, batch_size=25, epochs=1, shuffle=False, verbose=0)  # two updates of 25: 7, 6, 6, 6 rows
    step = step_class(_mlp(), accum_steps=4, loss_fn=_loss())
    step.compile(optimizer=keras.optimizers.SGD(0.1), jit_compile=False)
    logged = step.fit(X, Y, batch_size=25, epochs=1, shuffle=False, verbose=0).history["loss"][0]
    assert _largest(step.inner.get_weights(), plain.get_weights()) < 1e-6
    assert abs(logged - plain.history.history["loss"][0]) < 1e-5
    return step


def test_unrolled_step_on_one_device_is_keras_plain_fit_on_uneven_micro_batches():
    _fits_like_plain(UnrolledStep)


def test_while_step_is_keras_plain_fit_and_loops_one_micro_batch_at_a_time():
    step = _fits_like_plain(WhileStep)
    step.train_on_batch(X[:25], Y[:25])  # train_on_batch hands (x, y, sample_weight): the step takes the first two
    assert int(step.optimizer.iterations) == 3
    graph = tf.function(step.train_step).get_concrete_function(
        (tf.TensorSpec([None, 20]), tf.TensorSpec([None], "int64"))).graph  # as fit traces it: rows unknown
    loops = [op for op in graph.get_operations() if op.type in ("While", "StatelessWhile")]
    assert [op.get_attr("parallel_iterations") for op in loops] == [1]
    assert not [op for op in graph.get_operations() if op.type == "MatMul"]  # the passes are in the loop's body


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


# The shared pieces of lessons 15 and 16 (oracles: one tape on the whole batch, numpy, Keras on one device)
from gradlab.studies.distributed.replica_steps import (  # noqa: E402
    StepBase, mlp, penalty_grads, plain_fit, summed_grads, token_misses, unclipped_step)
from gradlab.studies.yardstick import ROUNDING, spacings  # noqa: E402  the course's yardstick: <= 10 is rounding


def test_mlp_repeats_its_weights_and_plain_fit_is_keras_fit():
    assert spacings(mlp(inputs=20).get_weights(), mlp(inputs=20).get_weights()) == 0
    assert len(mlp(l2=0.01, inputs=20).losses) == 2  # a penalty on each kernel
    model = mlp(inputs=20)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=_loss(), jit_compile=False)
    model.fit(X, Y, batch_size=20, epochs=1, shuffle=False, verbose=0)
    assert spacings(plain_fit(X, Y, batch_size=20).get_weights(), model.get_weights()) == 0


def test_summed_grads_is_one_tape_on_the_summed_loss():
    model = StepBase(mlp(inputs=20), accum_steps=3, loss_fn=_loss())  # 10 rows: micro-batches of 4, 3, 3
    per_row = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    with tf.GradientTape() as tape:
        whole = tf.reduce_sum(per_row(Y[:10], model(X[:10], training=True)))
    want = tape.gradient(whole, model.trainable_variables)
    S, n, grads = summed_grads(model, tf.constant(X[:10]), tf.constant(Y[:10]))
    assert float(n) == 10 and abs(float(S) - float(whole)) < 1e-5 * float(whole)
    assert spacings([g.numpy() for g in grads], [w.numpy() for w in want]) <= ROUNDING


def test_penalty_grads_is_the_l2_penalty_and_its_gradient():
    model = mlp(l2=0.01, inputs=20)
    kernels = [v.numpy() for v in model.trainable_variables if v.ndim == 2]
    penalty, grads = penalty_grads(model, lambda p: p / 2)
    assert abs(float(penalty) - 0.01 * sum(float(np.sum(k ** 2)) for k in kernels) / 2) < 1e-6
    kernel_grads = [g.numpy() for g, v in zip(grads, model.trainable_variables) if v.ndim == 2]
    assert spacings(kernel_grads, [0.01 * k for k in kernels]) <= ROUNDING  # d(l2 k^2 / 2) = l2 k
    assert [g is None for g in grads] == [v.ndim == 1 for v in model.trainable_variables]  # biases: unused


def test_unclipped_step_on_two_replicas_is_the_large_batch_an_empty_shard_included():
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        model = with_step(unclipped_step)(mlp(l2=0.01, inputs=20), accum_steps=2, loss_fn=_loss())
        model.compile(optimizer=keras.optimizers.SGD(0.1), jit_compile=False)
        model.fit(X[:41], Y[:41], batch_size=20, shuffle=False, verbose=0)  # last batch: 1 row, shards [1, 0]
    assert spacings(model.inner.get_weights(), plain_fit(X[:41], Y[:41], l2=0.01, batch_size=20).get_weights()) <= ROUNDING


def test_token_misses_mirrored_fit_misses_on_uneven_tokens_and_the_token_step_does_not():
    dist = distribute.make_distribution(DEVICES)
    uneven = np.tile(np.r_[np.full(10, 1.0), np.full(10, 3.0)], 2).astype("float32")  # shard 0: 10 tokens, 1: 30
    got = token_misses(dist, X[:40], Y[:40], uneven, batch_size=20)
    assert got["uneven batches"] == 2 and min(got["mirrored fit"]) > 0.01
    assert 0 <= got["token step"] <= ROUNDING  # in spacings: the token step is one device's run, up to rounding
    one = plain_fit(X[:40], Y[:40], batch_size=20, sample_weight=uneven,  # one device, a mean per token
                    loss=keras.losses.SparseCategoricalCrossentropy(True, reduction="mean_with_sample_weight"))
    assert spacings(got["one device"], one.get_weights()) == 0
    even = token_misses(dist, X[:40], Y[:40], np.ones(40, "float32"), batch_size=20)
    assert even["uneven batches"] == 0 and max(even["mirrored fit"]) < 1e-5


