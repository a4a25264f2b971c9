"""Runs and results: configs, deterministic runs, paired accumulation = the large batch, and
the cache around runs."""
import dataclasses

import numpy as np
import pytest

from gradlab.studies import experiments as ex, noise
from gradlab.studies.cache import ResultCache, cache_key
from gradlab.studies.data import load_mnist

TINY = dict(updates=6, eval_every=3, sampling="paired")


# -- configs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, error, message", [
    ("strategy", "magic", ValueError, "strategy must be one of .*got 'magic'"),
    ("accum_steps", 0, ValueError, "accum_steps must be an integer >= 1, got 0"),
    ("accum_steps", 2.0, TypeError, r"accum_steps must be a positive integer, got 2.0 \(float\)"),
    ("micro_batch", True, TypeError, "micro_batch must be a positive integer, got True"),
    ("updates", -5, ValueError, "updates must be an integer >= 1, got -5"),
    ("optimizer", "lbfgs", ValueError, "optimizer must be one of sgd, momentum, adam; got 'lbfgs'"),
    ("lr", 0.0, ValueError, "lr must be a positive finite number, got 0.0"),
    ("lr", float("inf"), ValueError, "lr must be a positive finite number, got inf"),
    ("lr", "0.1", TypeError, r"lr must be a positive number, got '0.1' \(str\)"),
    ("model", "resnet", ValueError, "unknown model|model must be one of .*got 'resnet'"),
    ("seed", -1, ValueError, "seed must be an integer >= 0, got -1"),
    ("sampling", "shuffled", ValueError, "sampling must be one of paired, independent; got 'shuffled'"),
    ("eval_every", 0, ValueError, "eval_every must be an integer >= 1, got 0"),
])
def test_config_validation_names_the_field_and_value(field, value, error, message):
    with pytest.raises(error, match=message):
        ex.RunConfig(**{field: value})


def test_config_is_frozen_normalised_and_bounded_by_the_data():
    c = ex.RunConfig(accum_steps=np.int64(5), micro_batch=20, lr=1)
    assert (c.accum_steps, c.effective_batch, c.lr) == (5, 100, 1.0)
    assert type(c.accum_steps) is int and type(c.lr) is float
    assert cache_key(c.to_dict()) == cache_key(ex.RunConfig(accum_steps=5, micro_batch=20, lr=1.0).to_dict())
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.lr = 0.1
    with pytest.raises(ValueError, match="accum_steps\\*micro_batch = 5\\*1000 = 5000 exceeds the 4,000"):
        ex.RunConfig(accum_steps=5, micro_batch=1000)


def test_sample_order_paired_is_shared_independent_is_fresh():
    paired = [ex.sample_order(ex.RunConfig(accum_steps=n, micro_batch=60 // n, updates=100,
                                           sampling="paired")) for n in (1, 3)]
    np.testing.assert_array_equal(paired[0], paired[1])
    assert paired[0].shape == (100, 60)
    np.testing.assert_array_equal(np.sort(paired[0].ravel()[:4000]), np.arange(4000))  # an epoch
    bigger = ex.sample_order(ex.RunConfig(micro_batch=120, updates=10, sampling="paired"))
    np.testing.assert_array_equal(bigger.ravel(), paired[0].ravel()[:1200])  # same stream
    fresh = [ex.sample_order(ex.RunConfig(accum_steps=n, micro_batch=60 // n, updates=100,
                                          sampling="independent")) for n in (1, 3)]
    assert not np.array_equal(fresh[0], fresh[1])
    assert ex._model_seed(ex.RunConfig(accum_steps=3, micro_batch=20)) != ex._model_seed(
        ex.RunConfig(accum_steps=1, micro_batch=60))


# -- runs ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_run_is_deterministic_and_records_everything():
    config = ex.RunConfig(accum_steps=2, micro_batch=10, **TINY)
    a, model = ex.train(config)
    b, _ = ex.train(config)
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
    results = [ex.train(ex.RunConfig(accum_steps=n, micro_batch=40 // n, updates=40,
                                     eval_every=20, sampling="paired"))[0] for n in (1, 4, 8)]
    for r in results[1:]:
        np.testing.assert_allclose(r.losses, results[0].losses, atol=1e-4)
        np.testing.assert_array_equal(r.eval_accuracy, results[0].eval_accuracy)
    assert results[0].losses[-1] < results[0].losses[0] - 0.5  # and it did learn


@pytest.mark.slow
def test_run_is_cached_and_a_corrupt_entry_is_reported_and_recomputed(tmp_path):
    store = ResultCache(tmp_path)
    config = ex.RunConfig(accum_steps=2, micro_batch=5, **TINY)
    fresh = ex.run(config, cache=store, progress=False)
    assert not fresh.cached
    hit = ex.run(config, cache=store, progress=False)
    assert hit.cached and hit.config == config
    np.testing.assert_array_equal(hit.losses, fresh.losses)
    assert (hit.accuracy, hit.seconds) == (fresh.accuracy, fresh.seconds)  # stored, not rerun

    path = store.path(ex._key(config))
    path.write_text(path.read_text()[:50])  # as if cut off mid-write by something else
    with pytest.warns(RuntimeWarning, match=path.name):
        again = ex.run(config, cache=store, progress=False)
    assert not again.cached
    np.testing.assert_array_equal(again.losses, fresh.losses)
    assert ex.run(config, cache=store, progress=False).cached  # the entry was rewritten
