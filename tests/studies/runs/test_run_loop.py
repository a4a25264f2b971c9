"""The run loop: sample orders, deterministic runs, and paired accumulation equal to the large
batch; a stopped run says where it stopped."""
import threading

import numpy as np
import pytest

from gradlab.studies.runs import noise
from gradlab.studies.runs import run_loop as rl
from gradlab.studies.data import load_mnist
from gradlab.studies.runs.run_config import RunConfig

TINY = dict(updates=6, eval_every=3, sampling="paired")


def test_sample_order_paired_is_shared_independent_is_fresh():
    paired = [rl.sample_order(RunConfig(accum_steps=n, micro_batch=60 // n, updates=100,
                                           sampling="paired")) for n in (1, 3)]
    np.testing.assert_array_equal(paired[0], paired[1])
    assert paired[0].shape == (100, 60)
    np.testing.assert_array_equal(np.sort(paired[0].ravel()[:4000]), np.arange(4000))  # an epoch
    bigger = rl.sample_order(RunConfig(micro_batch=120, updates=10, sampling="paired"))
    np.testing.assert_array_equal(bigger.ravel(), paired[0].ravel()[:1200])  # same stream
    fresh = [rl.sample_order(RunConfig(accum_steps=n, micro_batch=60 // n, updates=100,
                                          sampling="independent")) for n in (1, 3)]
    assert not np.array_equal(fresh[0], fresh[1])
    assert rl.model_seed(RunConfig(accum_steps=3, micro_batch=20)) != rl.model_seed(
        RunConfig(accum_steps=1, micro_batch=60))


# -- runs ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_run_is_deterministic_and_records_everything():
    config = RunConfig(accum_steps=2, micro_batch=10, **TINY)
    a, model = rl.train(config)
    b, _ = rl.train(config)
    np.testing.assert_array_equal(a.losses, b.losses)
    np.testing.assert_array_equal(a.eval_accuracy, b.eval_accuracy)
    assert a.losses.shape == (6,) and np.all(np.isfinite(a.losses))
    assert a.eval_updates.tolist() == [0, 3, 6]
    data = load_mnist()
    logits = model.predict(data.x_test, batch_size=1000, verbose=0)
    assert a.accuracy == a.eval_accuracy[-1] == pytest.approx(np.mean(logits.argmax(-1) == data.y_test))
    assert a.loss_noise == noise.loss_noise(a.losses)._asdict()


@pytest.mark.slow
def test_paired_accumulation_is_the_large_batch():
    results = [rl.train(RunConfig(accum_steps=n, micro_batch=40 // n, updates=40,
                                     eval_every=20, sampling="paired"))[0] for n in (1, 4, 8)]
    for r in results[1:]:
        np.testing.assert_allclose(r.losses, results[0].losses, atol=1e-4)
        np.testing.assert_array_equal(r.eval_accuracy, results[0].eval_accuracy)
    assert results[0].losses[-1] < results[0].losses[0] - 0.5  # and it did learn


@pytest.mark.slow  # a model built and traced: ~4 s on 2 cores
def test_a_stopped_run_raises_after_the_update_it_was_stopped_at():
    stop, seen = threading.Event(), []

    def callback(result):
        seen.append(len(result.losses))
        stop.set()  # asked to stop after the second update's snapshot
    with pytest.raises(rl.Stopped, match="stopped after 3 of 6 updates") as stopped:
        rl.train(RunConfig(accum_steps=2, micro_batch=5, **TINY), callback=callback, every=2,
                 stop=stop)
    assert seen == [2] and stopped.value.updates == 3


def test_a_run_takes_the_strategys_xla_option_beside_its_config():
    # fused compiles an MLP under XLA by default ("auto"); the lab's lesson 17 reruns it without
    config = RunConfig(accum_steps=2, micro_batch=10, clip_norm=1.0, **TINY)
    assert rl.run_strategy(config).options.jit_compile == "auto"
    assert rl.run_strategy(config, jit_compile=False).options.jit_compile is False
    with pytest.raises(ValueError, match="jit_compile"):
        rl.run_strategy(config, jit_compile="sometimes")
