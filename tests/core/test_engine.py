"""`engine.update` with every home of the sum and every place of the batch, against a
hand-written GradientTape of the large batch (the oracle shares no gradlab code)."""
import numpy as np
import keras
import pytest
import tensorflow as tf

from common import DEVICES
from gradlab.core import engine
from gradlab.core.homes import Host, KerasOptimizer, Loop, Variables
from gradlab.core.loss_terms import loss_terms
from gradlab.core.places import ONE, Replicas, Towers

LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(5, activation="tanh"),
                             keras.layers.Dense(2)])


def _data(rows=11):
    rng = np.random.default_rng(1)
    return rng.normal(size=(rows, 3)).astype("float32"), rng.integers(0, 2, rows)


def _large_batch(x, y, optimizer, updates=2):
    """The oracle: `updates` plain updates of the mean loss over all rows."""
    model = _model()
    for _ in range(updates):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply(grads, model.trainable_variables)
    return model, float(loss)


def _task(model, optimizer, accum_steps, **kwargs):
    micro = lambda part: loss_terms(model, LOSS, part[0], part[1], "examples")
    optimizer.build(model.trainable_variables)
    return engine.Task(micro, model.trainable_variables, optimizer, accum_steps, **kwargs)


def _close(a, b, tol=2e-6):
    for u, v in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(u, v, atol=tol * max(1.0, np.abs(v).max()))


@pytest.mark.parametrize("home", [Loop(), Loop(overlap=2), Variables(), Host()], ids=repr)
def test_every_exact_home_equals_the_large_batch_on_uneven_micro_batches(home):
    x, y = _data(11)  # 3 micro-batches of 4, 4, 3
    model, optimizer = _model(), keras.optimizers.Adam(0.05)
    task = _task(model, optimizer, 3)
    run = tf.function(lambda p: engine.update(task, p, home, ONE), autograph=False) if home.in_graph \
        else lambda p: engine.update(task, p, home.bind(task), ONE)
    for _ in range(2):
        loss, status = run((x, y))
        assert int(status) == engine.APPLIED
    want, want_loss = _large_batch(x, y, keras.optimizers.Adam(0.05))
    _close(model, want)
    assert abs(float(loss) - want_loss) < 1e-5
    assert int(optimizer.iterations) == 2


def test_towers_sum_each_device_part_and_apply_once():
    x, y = _data(12)
    model, optimizer = _model(), keras.optimizers.SGD(0.5)
    task = _task(model, optimizer, 2)
    run = tf.function(lambda p: engine.update(task, p, Loop(), Towers(DEVICES)), autograph=False)
    run((tf.constant(x), tf.constant(y)))
    _close(model, _large_batch(x, y, keras.optimizers.SGD(0.5), updates=1)[0])
    assert int(optimizer.iterations) == 1


def test_keras_optimizer_home_is_keras_own_accumulation_exact_only_for_equal_micro_batches():
    def run(rows):
        x, y = _data(rows)
        model = _model()
        optimizer = KerasOptimizer.make_optimizer(keras.optimizers.SGD(0.5), 3, None)
        home = KerasOptimizer(model, LOSS)
        task = _task(model, optimizer, 3, guard=False)
        engine.update(task, (x, y), home.bind(task), ONE)
        # its oracle: Keras's own fit of one batch with gradient_accumulation_steps, one
        # micro-batch per step (Keras divides the summed gradient by the steps)
        twin = _model()
        twin.compile(KerasOptimizer.make_optimizer(keras.optimizers.SGD(0.5), 3, None), LOSS)
        sizes = [len(a) for a in np.array_split(np.arange(rows), 3)]
        for start, n in zip(np.cumsum([0] + sizes[:-1]), sizes):
            twin.train_on_batch(x[start:start + n], y[start:start + n])
        _close(model, twin)
        assert int(optimizer.iterations) == int(twin.optimizer.iterations)
        return model, _large_batch(x, y, keras.optimizers.SGD(0.5), updates=1)[0]
    _close(*run(12))  # equal micro-batches: the large batch
    model, large = run(11)
    assert max(np.abs(a - b).max() for a, b in zip(model.get_weights(), large.get_weights())) > 1e-4


@pytest.mark.parametrize("home", [Loop(), Variables(), Host()], ids=repr)
def test_a_non_finite_loss_is_skipped_by_the_guard_in_every_home(home):
    x, y = _data(6)
    x[4, 0] = np.nan
    model, optimizer = _model(), keras.optimizers.SGD(0.5)
    before = [w.copy() for w in model.get_weights()]
    skipped = []
    task = _task(model, optimizer, 2, on_skip=skipped.append)
    if home.in_graph:
        _, status = tf.function(lambda p: engine.update(task, p, home), autograph=False)((x, y))
    else:
        _, status = engine.update(task, (x, y), home.bind(task))
    assert int(status) == engine.LOSS_NOT_FINITE and skipped
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)
    assert int(optimizer.iterations) == 0


def test_an_eager_home_on_towers_or_replicas_is_refused_before_any_work():
    model, optimizer = _model(), keras.optimizers.SGD(0.5)
    task = _task(model, optimizer, 2)
    for place in (Towers(DEVICES), Replicas()):
        with pytest.raises(TypeError, match="Variables()"):
            engine.update(task, _data(4), Variables(), place)
    home = Host().bind(task)
    with pytest.raises(ValueError, match="another task"):
        home.bind(task._replace(accum_steps=3))
