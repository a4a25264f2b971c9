"""all_reduces_per_update counts the all-reduces one fit update traces, per replica."""
import keras
import numpy as np
import tensorflow as tf

import gradlab as gl
from gradlab.core import distribute
from gradlab.studies.distributed.fit_collectives import all_reduces_per_update

DEVICES = gl.tower_devices(2)
X = np.random.default_rng(0).random((24, 784), dtype=np.float32)
Y = np.arange(24) % 10


def _mlp():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((784,)), keras.layers.Dense(8, activation="relu"),
                             keras.layers.Dense(10)])


class TwoAllReduces(keras.Model):
    """The oracle: a hand-written step with exactly two all-reduces (the rows, twice)."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(10)

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, _ = data
        ctx = tf.distribute.get_replica_context()
        rows = ctx.all_reduce("sum", tf.cast(tf.shape(x)[0], tf.float32))
        return {"rows": ctx.all_reduce("sum", rows)}


def test_a_hand_written_step_with_two_all_reduces_counts_two():
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        model = TwoAllReduces()
        model(X[:1])
        model.compile(optimizer="sgd")
    assert all_reduces_per_update(model, dist, X, Y) == 2


def test_accumulating_model_packs_grads_loss_metrics_and_rows_in_one():
    dist = distribute.make_distribution(DEVICES)
    with dist.scope():
        acc = gl.AccumulatingModel(_mlp(), accum_steps=4, jit_compile=False)
        acc.compile(optimizer=keras.optimizers.SGD(0.1), metrics=["accuracy"],
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        acc.fit(X, Y, batch_size=12, epochs=1, shuffle=False, verbose=0)
    before = [w.copy() for w in acc.get_weights()]
    assert all_reduces_per_update(acc, dist, X, Y) == 1
    assert all(np.array_equal(a, b) for a, b in zip(before, acc.get_weights()))  # traced only
