"""Runs and results: does accumulating gradients change what a model learns?

    one update = accum_steps micro-batches of micro_batch examples, applied once
    effective batch B = accum_steps * micro_batch;  same B, same updates => same learning

A `RunConfig` decides a run; `train` runs it, `run` and `run_many` take it from the cache
(`gradlab.studies.cache`) when it is there. A run can report every few updates (`callback`, the
lab's live curves) and be stopped (`stop`): a stopped run raises `Stopped` and caches
nothing. The settings where accumulation is not a large batch (a schedule, BatchNorm,
clipping, uneven micro-batches) are fields of the config too, so the lab can measure them. The studies built on runs: `gradlab.studies.table` (accuracy
against N, the published table) and `gradlab.studies.noise_study` (the noise of one update).

Lesson: notebooks/03-host-averaging.ipynb
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import time
import warnings

import keras
import numpy as np
from tqdm.auto import tqdm

from . import noise
from .build import parts
from .cache import ResultCache, jsonable
from .data import NUM_CLASSES, TRAIN_PER_CLASS, load_mnist
from ..core.gradients import check_clip_norm
from .memory import HighWater
from ..core.microbatch import check_count
from .models import MODELS, accuracy
from ..core.optimizers import OPTIMIZERS, check_lr
from .pitfalls import ClipEachMicroBatch
from ..training.strategies import STRATEGIES, make_strategy

REFERENCE_BATCH = 100  # the published experiment's examples per update
SAMPLINGS = ("paired", "independent")
SCHEDULES = ("constant", "cosine")
BATCHNORMS = (None, "micro", "window")
CLIPS = ("update", "micro")
TRAIN_SIZE = TRAIN_PER_CLASS * NUM_CLASSES  # the shipped subset: 4,000 training images


# -- one run ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run: `updates` updates of B = accum_steps * micro_batch
    examples each, applied by `make_strategy(strategy, ...)`. Equal configs give equal
    results and share a cache entry; bad fields raise ValueError/TypeError naming them.

    Plain SGD at lr=0.5 reaches the reference's ~95% on the 4,000-image subset in 1,000
    updates of 100 examples (measured: 0.1 gives 93%, 0.2 gives 94%).

    sampling: `paired` draws the example order from `seed` alone (epochs of permutations,
    update t takes examples [t*B, (t+1)*B) of it), so for any N the effective batch of
    update t is the same examples and the initial weights are the same: accumulation then
    equals the large batch up to float rounding. `independent` draws the order and the
    initial weights afresh for each (seed, accum_steps, micro_batch), as the reference did.

    The settings where accumulation can differ from a large batch (lesson 6), measured by
    the lab (at their defaults a config is what it was before they existed, cache key too):
    - `schedule`: "constant", or "cosine" (`CosineDecay(lr, decay_steps=updates)`: lr falls
      to 0 over the run, if the optimizer counts updates).
    - `batchnorm`: None (the model has none), or a BatchNorm model with its statistics
      moved per micro-batch ("micro") or once per update ("window", `make_strategy`'s option).
    - `clip_norm`, `clip`: clip the global gradient norm to `clip_norm`, once per update
      ("update", `make_strategy`'s option) or each micro-batch, the naive way ("micro",
      `pitfalls.ClipEachMicroBatch`, with strategy "accumulate", whose loop it copies).
    - `short_by`: take this many examples (fewer than N) off each update, so that many
      micro-batches hold b - 1 examples (`microbatch.split_sizes`): uneven micro-batches.

    Lesson: notebooks/03-host-averaging.ipynb (the settings: notebooks/05-the-lab.ipynb)
    """
    strategy: str = "fused"
    accum_steps: int = 1
    micro_batch: int = 100
    updates: int = 1000
    optimizer: str = "sgd"
    lr: float = 0.5
    model: str = "mlp"
    seed: int = 0
    sampling: str = "independent"
    eval_every: int = 100
    schedule: str = "constant"
    batchnorm: str | None = None
    clip_norm: float | None = None
    clip: str = "update"
    short_by: int = 0

    def __post_init__(self):
        for name, options in (("strategy", STRATEGIES), ("optimizer", OPTIMIZERS),
                              ("model", MODELS), ("sampling", SAMPLINGS)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in options:
                raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
        for name in ("accum_steps", "micro_batch", "updates", "eval_every"):
            object.__setattr__(self, name, check_count(name, getattr(self, name)))
        object.__setattr__(self, "seed", check_count("seed", self.seed, minimum=0))
        object.__setattr__(self, "lr", check_lr(self.lr))  # lr=1 and lr=1.0 share a cache key
        self._check_setting()
        if self.effective_batch > TRAIN_SIZE:
            raise ValueError(f"the effective batch accum_steps*micro_batch = {self.accum_steps}"
                             f"*{self.micro_batch} = {self.effective_batch} exceeds the "
                             f"{TRAIN_SIZE:,} training images")

    def _check_setting(self):
        for name, options in (("schedule", SCHEDULES), ("batchnorm", BATCHNORMS), ("clip", CLIPS)):
            if getattr(self, name) not in options:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; "
                                 f"got {getattr(self, name)!r}")
        c = check_clip_norm(self.clip_norm)
        object.__setattr__(self, "clip_norm", c)
        if self.clip == "micro" and (c is None or self.strategy != "accumulate"):
            raise ValueError(f"clip='micro' (the naive per-micro-batch clipping) needs a clip_norm "
                             f"and strategy 'accumulate'; got clip_norm={c!r}, strategy={self.strategy!r}")
        short = check_count("short_by", self.short_by, minimum=0)
        object.__setattr__(self, "short_by", short)
        if short and not (short < self.accum_steps and self.micro_batch >= 2):
            raise ValueError(f"short_by must be smaller than accum_steps ({self.accum_steps}), with "
                             f"micro_batch >= 2, so that every micro-batch keeps an example; "
                             f"got short_by={short}, micro_batch={self.micro_batch}")

    @property
    def effective_batch(self):
        return self.accum_steps * self.micro_batch - self.short_by

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class RunResult:
    """What one run recorded. `losses[t]` is the mean training loss of update t's effective
    batch (before the update); `eval_accuracy[k]` the test accuracy after `eval_updates[k]`
    updates; `accuracy` the final one; `loss_noise` is `noise.loss_noise(losses)` as a dict."""
    config: RunConfig
    losses: np.ndarray
    eval_updates: np.ndarray
    eval_accuracy: np.ndarray
    accuracy: float
    seconds_per_update: float  # steady state: the first (tracing) update excluded
    seconds: float             # the whole run: data, model, tracing, evaluation
    loss_noise: dict
    cached: bool = False
    peak_mb: float | None = None  # resident memory the run added at its peak (Linux), MB

    def to_dict(self):
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
             if f.name not in ("config", "cached")}
        if d["peak_mb"] is None:
            del d["peak_mb"]
        return jsonable(d)

    @classmethod
    def from_dict(cls, config, d, cached=False):
        arrays = {k: np.asarray(d[k], dtype=np.float64) for k in ("losses", "eval_accuracy")}
        return cls(config, arrays["losses"], np.asarray(d["eval_updates"], dtype=np.int64),
                   arrays["eval_accuracy"], float(d["accuracy"]), float(d["seconds_per_update"]),
                   float(d["seconds"]), _nan_for_null(d["loss_noise"]), cached,
                   None if d.get("peak_mb") is None else float(d["peak_mb"]))


def _nan_for_null(loss_noise):
    """The cache stores a NaN loss noise (a run too short to measure it) as null."""
    return {k: math.nan if v is None else v for k, v in loss_noise.items()}


def sample_order(config, n=TRAIN_SIZE):
    """Example indices of every update: an int array (updates, effective_batch).

    Epochs of permutations of range(n) from `np.random.default_rng`, cut into batches of B.
    """
    rng = np.random.default_rng(_stream_seed(config))
    B, total = config.effective_batch, config.updates * config.effective_batch
    stream = np.concatenate([rng.permutation(n) for _ in range(-(-total // n))])
    return stream[:total].reshape(config.updates, B)


def _stream_seed(config):
    if config.sampling == "paired":
        return config.seed
    return [config.seed, config.accum_steps, config.micro_batch]


def _model_seed(config):
    if config.sampling == "paired":
        return config.seed
    return int(np.random.SeedSequence(_stream_seed(config)).generate_state(1)[0] % 2**31)


class Stopped(Exception):
    """A run ended by its `stop` flag after `updates` updates; nothing of it was cached."""

    def __init__(self, config, updates):
        super().__init__(f"stopped after {updates} of {config.updates} updates")
        self.config, self.updates = config, updates


def train(config, bar=None, callback=None, every=10, stop=None):
    """Run `config` from scratch (no cache): returns `(RunResult, trained model)`.

    Args:
        config: a `RunConfig`.
        bar: anything with `update(n)`, called once per update.
        callback: called every `every` updates (and after the last) with a `RunResult` of
            the updates so far: the lab's live curves.
        stop: anything with `is_set()` (a `threading.Event`): checked after each update;
            when set, the run raises `Stopped`.
    """
    every = check_count("every", every)
    start = time.perf_counter()
    data = load_mnist()
    peak = HighWater()
    strategy = _strategy(config)
    model = strategy.model
    order = sample_order(config, len(data.x_train))
    losses = np.empty(config.updates)
    evals, accs, step_seconds = [0], [accuracy(model, data.x_test, data.y_test)], []

    def result(t):
        steady = step_seconds[1:] or step_seconds
        return RunResult(config, losses[:t].copy(), np.asarray(evals), np.asarray(accs), accs[-1],
                         float(np.mean(steady)), time.perf_counter() - start,
                         noise.loss_noise(losses[:t])._asdict(), peak_mb=peak.mb() if peak.resets else None)

    for t, idx in enumerate(order):
        tick = time.perf_counter()
        losses[t] = strategy.step(data.x_train[idx], data.y_train[idx])
        step_seconds.append(time.perf_counter() - tick)
        if (t + 1) % config.eval_every == 0 or t + 1 == config.updates:
            evals.append(t + 1)
            accs.append(accuracy(model, data.x_test, data.y_test))
        if bar is not None:
            bar.update(1)
        if stop is not None and stop.is_set() and t + 1 < config.updates:
            raise Stopped(config, t + 1)
        if callback is not None and ((t + 1) % every == 0 or t + 1 == config.updates):
            callback(result(t + 1))
    return result(config.updates), model


def _strategy(config):
    """The strategy of `config`, from `build.parts`: its schedule, BatchNorm and clipping."""
    lr = (keras.optimizers.schedules.CosineDecay(config.lr, decay_steps=config.updates)
          if config.schedule == "cosine" else config.lr)
    model, loss_fn, optimizer = parts(config.model, config.optimizer, lr, _model_seed(config),
                                      batchnorm=config.batchnorm is not None)
    if config.clip == "micro":
        return ClipEachMicroBatch(model(), loss_fn, optimizer(), config.accum_steps, config.clip_norm)
    options = {} if config.batchnorm is None else {"batchnorm": config.batchnorm}
    return make_strategy(config.strategy, model, loss_fn, optimizer, accum_steps=config.accum_steps,
                         clip_norm=config.clip_norm, **options)


def run(config, cache=True, progress=True, bar=None, callback=None, every=10, stop=None):
    """The result of `config`: from the cache if it is there, else trained and stored.

    `bar` (anything with `update(n)`, such as the lab's progress widget) replaces the tqdm
    bar; `callback`, `every` and `stop` are `train`'s (a stopped run stores nothing).

    Lesson: notebooks/03-host-averaging.ipynb
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
            store.put(_key(c), results[i].to_dict())
    return results


def _key(config):
    # Settings at their defaults are left out: a config keeps the key it had before they existed.
    d = config.to_dict()
    for f in dataclasses.fields(RunConfig):
        if f.name in _SETTINGS and d[f.name] == f.default:
            del d[f.name]
    return {"kind": "run", **d}


_SETTINGS = ("schedule", "batchnorm", "clip_norm", "clip", "short_by")


def cached_result(store, config):
    """The `RunResult` of `config` in the `ResultCache` `store`, or None (a malformed entry is
    reported and treated as missing, so it is recomputed)."""
    entry = store.get(_key(config))
    if entry is None:
        return None
    try:
        return RunResult.from_dict(config, entry, cached=True)
    except (KeyError, TypeError, ValueError) as e:
        warnings.warn(f"discarding malformed cached result for {config} ({type(e).__name__}: "
                      f"{e}); it will be recomputed", RuntimeWarning, stacklevel=3)
        return None


# -- the command-line arguments every study of runs takes --------------------------------------

def positive(kind):
    """An `argparse` type: `kind(text)`, refused (naming the text) unless it is positive."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return parse


def add_run_arguments(parser):
    """`--lr --optimizer --model --seed --no-cache --no-progress --json` on `parser`."""
    parser.add_argument("--lr", type=positive(float), default=0.5, help="learning rate (0.5)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd", help="(sgd: plain)")
    parser.add_argument("--model", choices=MODELS, default="mlp")
    parser.add_argument("--seed", type=int, default=0, help="first seed (0)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache ($GRADLAB_CACHE, else ~/.cache/gradlab)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
