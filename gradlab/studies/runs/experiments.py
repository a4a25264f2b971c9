"""Runs and results: does accumulating gradients change what a model learns?

    one update = accum_steps micro-batches of micro_batch examples, applied once
    effective batch B = accum_steps * micro_batch;  same B, same updates => same learning

A `RunConfig` decides a run (`run_config`); `train` runs it (`run_loop`), and `run` and
`run_many`, here, take its `RunResult` (`run_result`) from the cache
(`gradlab.studies.cache`) when it is there. A run can report every few updates (`callback`,
the lab's live curves) and be stopped (`stop`): a stopped run raises `Stopped` and caches
nothing. The settings where accumulation is not a large batch (a schedule, BatchNorm,
clipping, uneven micro-batches) are fields of the config too, so the lab can measure them.
The studies built on runs: `gradlab.studies.runs.table` (accuracy against N, the published
table) and `gradlab.studies.runs.noise_study` (the noise of one update).

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

from tqdm.auto import tqdm

from ..arguments import positive
from ..cache import ResultCache
from ..models import MODELS
from ...classic.optimizers import OPTIMIZERS
from .run_config import RunConfig
from .run_loop import train
from .run_result import cached_result, run_key


def run(config, cache=True, progress=True, bar=None, callback=None, every=10, stop=None):
    """The result of `config`: from the cache if it is there, else trained and stored.

    `bar` (anything with `update(n)`, such as the lab's progress widget) replaces the tqdm
    bar; `callback`, `every` and `stop` are `train`'s (a stopped run stores nothing).

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    return run_many([config], cache, progress, bar, callback, every, stop)[0]


def run_many(configs, cache=True, progress=True, bar=None, callback=None, every=10, stop=None):
    """Results of `configs`, in order; the uncached ones run under one progress bar.

    Args:
        configs: `RunConfig`s.
        cache: True (the default cache), False (neither read nor write), or a `ResultCache`.
        progress: show a tqdm bar (it appears only for work that takes over a second).
        bar: optional progress object with `update(n)`, used instead of tqdm.
        callback, every, stop: passed to `train` (live snapshots; `Stopped` leaves the
            cache without the stopped run).
    """
    configs = list(configs)
    for c in configs:
        if not isinstance(c, RunConfig):
            raise TypeError(f"configs must be RunConfig objects, got {c!r}")
    store = cache if isinstance(cache, ResultCache) else ResultCache(enabled=bool(cache))
    results = [cached_result(store, c) for c in configs]
    todo = [i for i, r in enumerate(results) if r is None]
    with tqdm(total=sum(configs[i].updates for i in todo), unit="update", delay=1.0,
              disable=bar is not None or not progress or not todo, dynamic_ncols=True) as tq:
        for i in todo:
            c = configs[i]
            tq.set_description(f"N={c.accum_steps} b={c.micro_batch} seed={c.seed}")
            results[i], _ = train(c, bar or tq, callback, every, stop)
            store.put(run_key(c), results[i].to_dict())
    return results


# -- the command-line arguments every study of runs takes --------------------------------------

def add_run_arguments(parser):
    """`--lr --optimizer --model --seed --no-cache --no-progress --json` on `parser`."""
    parser.add_argument("--lr", type=positive(float), default=0.5, help="learning rate (0.5)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd", help="(sgd: plain)")
    parser.add_argument("--model", choices=MODELS, default="mlp")
    parser.add_argument("--seed", type=int, default=0, help="first seed (0)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache ($GRADLAB_CACHE, else ~/.cache/gradlab)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
