"""Groups: one configuration over its seeds, and the lab's list of them, by value."""
import dataclasses

import numpy as np

from gradlab.lab.groups import PALETTE, Group, Groups
from gradlab.studies.runs import experiments, run_config
from gradlab.studies.cache import ResultCache

from lab_stubs import stub_train

TINY = dict(updates=20, eval_every=10, sampling="paired")


def result(seed=0, strategy="fused", n=4, b=5, updates=20, **setting):
    config = run_config.RunConfig(strategy=strategy, accum_steps=n, micro_batch=b, seed=seed,
                                   lr=0.1, updates=20, eval_every=10, sampling="paired", **setting)
    r, _ = stub_train(config)
    return r if updates == 20 else dataclasses.replace(r, losses=r.losses[:updates])


def test_a_group_keeps_one_result_per_seed_in_seed_order():
    g = Group(result(seed=2).config, "#000000")
    for seed in (2, 0, 1, 0):
        g.put(result(seed=seed))
    assert g.seeds == [0, 1, 2]
    assert g.label == "fused N=4 b=5 lr=0.1 (3 seeds)" and g.short == "fused N=4 b=5"
    np.testing.assert_allclose(g.losses, np.mean([result(seed=s).losses for s in (0, 1, 2)], axis=0))
    assert g.accuracy == np.mean([0.5, 0.51, 0.52]) and g.peak_mb is None
    cosine = Group(result(schedule="cosine").config, "#000000")
    assert cosine.label == "fused N=4 b=5 lr=0.1, cosine lr"


def test_each_new_configuration_gets_a_free_colour():
    groups = Groups(ResultCache(enabled=False))
    a = groups.for_config(result(n=1).config)
    b = groups.for_config(result(n=2).config)
    assert (a.color, b.color) == tuple(PALETTE[:2]) and groups.current is b
    assert groups.for_config(result(n=1).config) is a and groups.current is a
    groups.remove(a)
    assert groups.all == [b] and groups.current is None
    assert groups.for_config(result(n=3).config).color == PALETTE[0]


def test_stopped_seeds_are_forgotten():
    groups = Groups(ResultCache(enabled=False))
    g = groups.for_config(result().config)
    g.put(result(seed=0))
    g.put(result(seed=1, updates=6))
    lone = groups.for_config(result(n=2).config)
    lone.put(result(n=2, updates=6))
    groups.forget_partial()
    assert groups.all == [g] and g.seeds == [0] and groups.current is None


def test_references_come_from_the_groups_else_the_cache(tmp_path, stub):
    cache = ResultCache(tmp_path)
    groups = Groups(cache)
    accumulated = groups.for_config(result().config)
    accumulated.put(result())
    groups.link_references()
    assert accumulated.reference == {} and accumulated.difference() is None

    twin = result(strategy="large_batch", n=1, b=20)
    large = groups.for_config(twin.config)
    large.put(twin)
    groups.link_references()
    assert accumulated.reference == {0: twin} and large.reference == {}
    delta, worst, acc = accumulated.difference()
    assert worst == 0.0 and acc == 0.0 and len(delta) == 20

    # The twin of seed 1 was only ever run into the cache.
    experiments.run(dataclasses.replace(twin.config, seed=1), cache, progress=False)
    accumulated.put(result(seed=1))
    groups.link_references()
    assert sorted(accumulated.reference) == [0, 1] and accumulated.reference[1].cached
