"""Keras's own accumulation probed on a lone weight, against numbers worked out by hand."""
import keras
import numpy as np
import pytest

from gradlab.studies import keras_accumulation as ka
from gradlab.studies.keras_accumulation import PerUpdate, applied_rates, probe


def test_keras_divides_the_sum_by_n_and_counts_updates_publicly():
    calls = probe((1.0, 2.0, 3.0, 4.0))
    # SGD(1.0): the weight stands still for three calls, then moves by -(1+2+3+4)/4
    assert [c["weight"] for c in calls] == [0.0, 0.0, 0.0, -2.5]
    assert [c["iterations"] for c in calls] == [0, 0, 0, 1]
    assert [c["micro_steps"] for c in calls] == [1, 2, 3, 4]


def test_a_schedule_in_updates_wrapped_in_per_update_applies_the_meant_rates():
    decay = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    meant = [0.1, 0.05, 0.025]  # by hand: 0.1 * 0.5 ** k
    np.testing.assert_allclose(applied_rates(decay), meant, rtol=1e-6)
    np.testing.assert_allclose(applied_rates(PerUpdate(decay, 4), 4), meant, rtol=1e-6)
    # unwrapped, Keras reads it at micro-step 3 of the first update: 0.1 * 0.5 ** 3
    assert applied_rates(decay, 4)[0] == pytest.approx(0.0125, rel=1e-6)
    # a smooth schedule (no staircase) is exact too
    cosine = keras.optimizers.schedules.CosineDecay(0.1, decay_steps=10)
    np.testing.assert_allclose(applied_rates(PerUpdate(cosine, 3), 3), applied_rates(cosine), rtol=1e-6)


def test_per_update_survives_serialization():
    decay = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(PerUpdate(decay, 4)))
    assert again.accum_steps == 4 and float(again(7)) == pytest.approx(0.1 * 0.5 ** 1)


@pytest.mark.parametrize("args, error", [((None, 4), TypeError), ((lambda s: 0.1, 0), ValueError),
                                         ((lambda s: 0.1, 2.0), ValueError), ((lambda s: 0.1, True), ValueError)])
def test_per_update_refuses_bad_input(args, error):
    with pytest.raises(error, match="schedule|accum_steps"):
        PerUpdate(*args)


def test_probe_and_rates_refuse_bad_input():
    with pytest.raises(ValueError, match=r"\(1.0,\)"):
        probe((1.0,))
    with pytest.raises(ValueError, match="accum_steps"):
        applied_rates(lambda s: 0.1, accum_steps=1)


def test_micro_steps_counts_every_apply_where_iterations_counts_updates():
    w = keras.Variable(np.zeros(1, np.float32))
    opt = keras.optimizers.SGD(1.0, gradient_accumulation_steps=3)
    for _ in range(7):
        opt.apply_gradients([(np.ones(1, np.float32), w)])
    assert ka.micro_steps(opt) == 7 and int(opt.iterations.numpy()) == 7 // 3


def test_under_strategy_compiled_fit_raises_before_any_update_and_eager_fit_trains():
    import gradlab as gl
    from gradlab.core import distribute
    dist = distribute.make_distribution(gl.tower_devices(2))
    x = np.random.default_rng(0).random((64, 8), dtype=np.float32)
    y = np.arange(64) % 10

    def model_fn():
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((8,)), keras.layers.Dense(10)])

    updates, moved, error = ka.under_strategy(dist, model_fn, x, y, jit_compile=False)
    assert (updates, moved) == (0, 0.0) and "merge_call" in error and "\x1b" not in error
    updates, moved, error = ka.under_strategy(dist, model_fn, x, y, run_eagerly=True)
    assert updates == 64 // (16 * 4) and moved > 0 and error == "none"
