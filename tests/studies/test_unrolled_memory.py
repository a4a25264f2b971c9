"""The three updates of `unrolled_memory` are the same update (against Keras's train_on_batch),
and their peaks, each in a fresh process, order as lesson 12 says."""
import keras
import numpy as np
import pytest

from gradlab.studies import unrolled_memory

SMALL = dict(accum_steps=3, rows=48, hidden=16)


@pytest.mark.parametrize("kind", unrolled_memory.KINDS)
def test_each_kind_makes_keras_large_batch_update(kind):
    step, model = unrolled_memory._step(kind, **SMALL)
    step()
    # the oracle: Keras's own train_on_batch from the same seed on the same rows
    keras.utils.set_random_seed(0)
    ref = keras.Sequential([keras.Input((784,)), keras.layers.Dense(16, activation="relu"),
                            keras.layers.Dense(16, activation="relu"), keras.layers.Dense(10)])
    ref.compile(optimizer=keras.optimizers.SGD(0.01),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.default_rng(0).standard_normal((48, 784)).astype(np.float32)
    before = [w.copy() for w in ref.get_weights()]
    ref.train_on_batch(x, np.random.default_rng(1).integers(0, 10, 48))
    got = [np.asarray(v) for v in model.trainable_variables]
    assert max(np.abs(a - b).max() for a, b in zip(ref.get_weights(), before)) > 1e-4  # it moved
    assert max(np.abs(a - b).max() for a, b in zip(got, ref.get_weights())) < 1e-6


def test_an_unknown_kind_is_refused():
    with pytest.raises(SystemExit, match="kind must be one of"):
        unrolled_memory._main(["bogus", "4", "64", "8", "1"])


@pytest.mark.slow
def test_peaks_order_as_the_lesson_says():
    got = unrolled_memory.peaks(updates=1)
    peak = {k: got[k]["peak_mb"] for k in unrolled_memory.KINDS}
    activations = 4096 * 2 * 1024 * 4 / 2**20  # the two hidden layers' outputs, 32 MiB
    assert peak["large batch"] > activations
    assert peak["AccumulatingModel"] < peak["unrolled loop"] < peak["large batch"], peak
