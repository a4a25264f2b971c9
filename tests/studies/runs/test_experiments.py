"""`experiments`: runs taken from the cache when they are there, and the names the lessons and
the lab import from here."""
import numpy as np
import pytest

from gradlab.studies.runs import experiments as ex
from gradlab.studies.runs import run_config, run_result
from gradlab.studies.cache import ResultCache

TINY = dict(updates=6, eval_every=3, sampling="paired")


@pytest.mark.slow
def test_run_is_cached_and_a_corrupt_entry_is_reported_and_recomputed(tmp_path):
    store = ResultCache(tmp_path)
    config = run_config.RunConfig(accum_steps=2, micro_batch=5, **TINY)
    fresh = ex.run(config, cache=store, progress=False)
    assert not fresh.cached
    hit = ex.run(config, cache=store, progress=False)
    assert hit.cached and hit.config == config
    np.testing.assert_array_equal(hit.losses, fresh.losses)
    assert (hit.accuracy, hit.seconds) == (fresh.accuracy, fresh.seconds)  # stored, not rerun

    path = store.path(run_result.run_key(config))
    path.write_text(path.read_text()[:50])  # as if cut off mid-write by something else
    with pytest.warns(RuntimeWarning, match=path.name):
        again = ex.run(config, cache=store, progress=False)
    assert not again.cached
    np.testing.assert_array_equal(again.losses, fresh.losses)
    assert ex.run(config, cache=store, progress=False).cached  # the entry was rewritten


def test_run_many_refuses_anything_but_configs():
    with pytest.raises(TypeError, match="configs must be RunConfig objects, got 5"):
        ex.run_many([run_config.RunConfig(), 5], cache=False)
