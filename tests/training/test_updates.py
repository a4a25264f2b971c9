"""StepUpdate: one strategy's compiled update (`engine.update` with its home and place), against
Keras's own `train_on_batch` on a twin model (the oracle shares no gradlab code)."""
import keras
import numpy as np
import pytest

from gradlab.core import engine
from gradlab.core.homes import Host, Loop, Variables
from gradlab.core.loss_terms import loss_terms
from gradlab.core.places import ONE
from gradlab.training.updates import StepUpdate

LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(2)])


def _data(rows=10):
    rng = np.random.default_rng(2)
    return rng.normal(size=(rows, 3)).astype("float32"), rng.integers(0, 2, rows)


@pytest.mark.parametrize("home", [Loop(), Variables(), Host()], ids=repr)
def test_a_step_update_is_keras_s_train_on_batch_of_the_whole_batch(home):
    x, y = _data(10)  # 3 micro-batches: 4, 3, 3 rows
    model, optimizer = _model(), keras.optimizers.SGD(0.5, momentum=0.9)
    optimizer.build(model.trainable_variables)
    task = engine.Task(lambda p: loss_terms(model, LOSS, p[0], p[1], "examples"),
                       model.trainable_variables, optimizer, 3)
    update = StepUpdate(task, home, ONE)
    twin = _model()
    twin.compile(optimizer=keras.optimizers.SGD(0.5, momentum=0.9), loss=LOSS)
    for k in range(3):
        loss, status = update((x, y))
        keras_loss = twin.train_on_batch(x, y)
        assert int(status) == engine.APPLIED
        if k == 0:  # later calls: Keras 3.8's train_on_batch reports the mean over its calls so far
            assert float(loss) == pytest.approx(keras_loss, rel=1e-5)
        for ours, theirs in zip(model.get_weights(), twin.get_weights()):
            np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert int(optimizer.iterations) == int(twin.optimizer.iterations) == 3


def test_a_loop_update_is_one_compiled_function_and_eager_homes_list_their_calls():
    x, y = _data(6)
    model, optimizer = _model(), keras.optimizers.SGD(0.1)
    optimizer.build(model.trainable_variables)
    task = engine.Task(lambda p: loss_terms(model, LOSS, p[0], p[1], "examples"),
                       model.trainable_variables, optimizer, 2)
    loop = StepUpdate(task, Loop(), ONE)
    assert loop.functions == [loop.fn]
    loop((x, y))
    loop((x, y))
    assert loop.fn.experimental_get_tracing_count() == 1  # one trace for one batch shape
    eager = StepUpdate(task, Variables(), ONE)
    assert eager.fn is None and len(eager.functions) >= 2  # a call per micro-batch, and the apply
