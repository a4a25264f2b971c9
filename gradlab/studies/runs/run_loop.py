"""The run loop: `config.updates` updates of a fresh strategy, losses and test accuracy recorded.

    update t = strategy.step(x[order[t]], y[order[t]]),   order = sample_order(config)
    paired:  order and initial weights from `seed` alone (any N: the same examples per update)

A run can report every few updates (`callback`, the lab's live curves) and be stopped
(`stop`): a stopped run raises `Stopped`. No cache here: `experiments.run` adds it.

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import time

import keras
import numpy as np

from . import noise
from ..build import parts
from ..data import load_mnist
from ..memory import HighWater
from ..models import accuracy
from .pitfalls import ClipEachMicroBatch
from .run_config import TRAIN_SIZE
from .run_result import RunResult
from ...core.microbatch import check_count
from ...training.strategies import make_strategy


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


def model_seed(config):
    """The seed of the initial weights: `seed` (paired) or drawn from (seed, N, b)."""
    if config.sampling == "paired":
        return config.seed
    return int(np.random.SeedSequence(_stream_seed(config)).generate_state(1)[0] % 2**31)


class Stopped(Exception):
    """A run ended by its `stop` flag after `updates` updates; nothing of it was cached."""

    def __init__(self, config, updates):
        super().__init__(f"stopped after {updates} of {config.updates} updates")
        self.config, self.updates = config, updates


def train(config, bar=None, callback=None, every=10, stop=None, jit_compile="auto"):
    """Run `config` from scratch (no cache): returns `(RunResult, trained model)`.

    Args:
        config: a `RunConfig`.
        jit_compile: the strategy's XLA option (`make_strategy`); not part of the config, as
            it changes only rounding, so a run with another value is never cached.
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
    strategy = run_strategy(config, jit_compile)
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


def run_strategy(config, jit_compile="auto"):
    """The strategy of `config`, from `build.parts`: its schedule, BatchNorm and clipping
    (`jit_compile`: `make_strategy`'s XLA option; clipping each micro-batch has none)."""
    lr = (keras.optimizers.schedules.CosineDecay(config.lr, decay_steps=config.updates)
          if config.schedule == "cosine" else config.lr)
    model, loss_fn, optimizer = parts(config.model, config.optimizer, lr, model_seed(config),
                                      batchnorm=config.batchnorm is not None)
    if config.clip == "micro":
        return ClipEachMicroBatch(model(), loss_fn, optimizer(), config.accum_steps, config.clip_norm)
    options = {} if config.batchnorm is None else {"batchnorm": config.batchnorm}
    return make_strategy(config.strategy, model, loss_fn, optimizer, accum_steps=config.accum_steps,
                         clip_norm=config.clip_norm, jit_compile=jit_compile, **options)
