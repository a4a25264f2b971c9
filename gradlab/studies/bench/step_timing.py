"""Timing of `step`: every strategy makes the same updates of the same batch, in rotating order.

    ms/update(s) = median over R rounds of (time of `updates` calls of s.step(x, y)) / updates

after `warmup` untimed updates (the first traces and compiles). In each round every strategy
takes its turn, starting one further along each round, so that noise from the rest of the
machine falls on all strategies alike. `bench.run_bench` adds memory and the ratios.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import os
import time

import keras
import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from ..build import build_strategy
from ..data import load_mnist
from ..models import MODELS
from ...core.microbatch import check_count
from ...core.towers import local_devices
from ...training.strategies import DEVICE_STRATEGIES, STRATEGIES

JIT_STRATEGIES = ("large_batch", "fused")  # "+xla" variants: towers place ops by device
DEFAULT_ORDER = ("large_batch", "fused", "accumulate", "keras", "host_average") + DEVICE_STRATEGIES
# optimizer -> learning rate. Plain SGD as in `python -m gradlab table`; Adam adds the same
# apply cost to every strategy. Built by `gradlab.classic.optimizers`.
LR = {"sgd": 0.1, "momentum": 0.1, "adam": 1e-3}
INPUTS = ("numpy", "tensor")


def default_strategies():
    """Every strategy that can run here: `towers`/`mirrored` only with two or more devices.

    Lesson: notebooks/17-the-lab.ipynb
    """
    many = len(local_devices()[1]) > 1
    return [n for n in DEFAULT_ORDER if many or n not in DEVICE_STRATEGIES]


def make_config(model, accum_steps, micro_batch, rounds=20, updates=5, warmup=3, strategies=None,
                optimizer="sgd", inputs="numpy", memory=True, memory_updates=3, seed=0):
    """One benchmark's settings, checked in plain Python first (a ValueError/TypeError naming
    the bad value); then the devices are read (TensorFlow starts).

    Args:
        as `bench.run_bench`.
    Returns:
        dict: the arguments, `batch` (N * b), the strategy names, and where it runs
        (`device_kind`, `devices`, `gpus`, `cpu_count`, versions).
    """
    for name, value, choices in (("model", model, MODELS), ("optimizer", optimizer, LR),
                                 ("inputs", inputs, INPUTS)):
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")
    counts = {k: check_count(k, v) for k, v in (
        ("accum_steps", accum_steps), ("micro_batch", micro_batch), ("rounds", rounds),
        ("updates", updates), ("warmup", warmup), ("memory_updates", memory_updates))}
    names = None if strategies is None else _check_names(strategies)
    kind, names_of_devices = local_devices()
    if names is None:
        names = default_strategies()
    elif len(names_of_devices) < 2 and any(base_name(n) in DEVICE_STRATEGIES for n in names):
        raise ValueError(f"towers and mirrored need two or more devices, found {names_of_devices}; "
                         "call gradlab.tower_devices(2) first (or pass --towers 2)")
    gpus = [tf.config.experimental.get_device_details(g).get("device_name", g.name)
            for g in tf.config.list_physical_devices("GPU")]
    return dict(model=model, **counts, batch=counts["accum_steps"] * counts["micro_batch"],
                strategies=names, optimizer=optimizer, inputs=inputs, memory=bool(memory),
                seed=int(seed), device_kind=kind, devices=names_of_devices, gpus=gpus,
                cpu_count=os.cpu_count(), tensorflow=tf.__version__, keras=keras.__version__)


def _check_names(strategies):
    if isinstance(strategies, str):
        strategies = [strategies]
    names = list(strategies)
    for name in names:
        base = base_name(name) if isinstance(name, str) else None
        if base not in STRATEGIES or (name.endswith("+xla") and base not in JIT_STRATEGIES):
            raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}, "
                             f"or {' / '.join(s + '+xla' for s in JIT_STRATEGIES)}")
    if not names or len(set(names)) != len(names):
        raise ValueError(f"strategies must name each strategy once, got {names!r}")
    return names


def base_name(name):
    """The strategy of a bench name: `fused+xla` -> `fused`."""
    return name[:-len("+xla")] if name.endswith("+xla") else name


def progress_bar(configs, progress):
    """One tqdm bar over every update (and memory process) of `configs`."""
    total = sum(len(c["strategies"]) * (c["warmup"] + c["rounds"] * c["updates"] + c["memory"])
                for c in configs)
    return tqdm(total=total, unit="update", delay=1.0, disable=not progress, dynamic_ncols=True)


def bench_batch(batch, inputs, seed):
    """`batch` MNIST training examples as `(x, y)`: numpy arrays, or tensors (`inputs`)."""
    d = load_mnist(seed=seed)
    idx = np.arange(batch) % len(d.x_train)  # tiled when the batch exceeds the 4,000 images
    x, y = d.x_train[idx], d.y_train[idx]
    return (tf.constant(x), tf.constant(y)) if inputs == "tensor" else (x, y)


def bench_strategy(name, model, accum_steps, optimizer, seed):
    """The strategy `name` (`+xla`: forced to compile with XLA) on a fresh `model`."""
    return build_strategy(base_name(name), model, optimizer, LR[optimizer], accum_steps, seed,
                          jit_compile=True if name.endswith("+xla") else "auto")


def time_strategies(c, bar):
    """Time every strategy of the config `c` (`make_config`); `bar.update` after each update.

    Returns:
        `(rows, load)`: rows = {name: `ms_median`, `ms_q25`, `ms_q75`, `ms_min`, `ms_max`,
        `ms` (per round), `traces` (during warm-up), `retraces` (during the timed rounds)};
        load = the 1-minute load average before and after.
    """
    bar.set_description(f"{c['model']} N={c['accum_steps']} b={c['micro_batch']}")
    x, y = bench_batch(c["batch"], c["inputs"], c["seed"])
    names = c["strategies"]
    made = {n: bench_strategy(n, c["model"], c["accum_steps"], c["optimizer"], c["seed"])
            for n in names}
    load = [os.getloadavg()[0]]
    for s in made.values():
        for _ in range(c["warmup"]):
            s.step(x, y)
            bar.update()
    traces = {n: s.trace_count() for n, s in made.items()}
    times = {n: [] for n in names}
    for r in range(c["rounds"]):
        for n in names[r % len(names):] + names[:r % len(names)]:  # a rotating start
            s = made[n]
            start = time.perf_counter()
            for _ in range(c["updates"]):
                s.step(x, y)
            times[n].append((time.perf_counter() - start) * 1e3 / c["updates"])
            bar.update(c["updates"])
    load.append(os.getloadavg()[0])
    rows = {n: _stats(times[n]) for n in names}
    for n in names:
        rows[n].update(traces=traces[n], retraces=made[n].trace_count() - traces[n])
    return rows, load


def _stats(ms):
    q25, med, q75 = np.percentile(ms, [25, 50, 75])
    return dict(ms_median=med, ms_q25=q25, ms_q75=q75, ms_min=min(ms), ms_max=max(ms), ms=ms)
