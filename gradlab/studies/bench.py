"""Every strategy on the same work, side by side: milliseconds per update, ratios, memory.

    python -m gradlab bench [--accum N] [--micro-batch b] [--model mlp|conv|embedding]
                            [--rounds R] [--strategies S ...] [--optimizer sgd|momentum|adam]
                            [--inputs numpy|tensor] [--towers K] [--no-memory]
                            [--sweep 1,2,4,8,16] [--json]

    ms/update   median over R rounds, after warm-up; in each round every strategy makes
                `updates` updates of the same batch, in rotating order, so that noise from
                the rest of the machine falls on all strategies alike
    x large     median(s) / median(large_batch)      (time ratio: 2.0 means twice as slow)
    x keras     median(s) / median(keras)            (0.25 means four times faster)
    train MB    training memory: the TensorFlow allocator's peak during the steady updates
                above what it held before them (activations, gradients, accumulators), each
                strategy in a fresh process, after its first update
    compile MB  the resident-set high-water mark during the first update (tracing, XLA
                compilation, the first run) above its value once the model is built: paid
                once per shape, not per update, so reported apart

Without `--model` the command runs two workloads beside each other: the `mlp`, whose memory
is its parameters (where accumulation costs speed and saves nothing), and the `conv`,
whose activations dominate (where accumulating small micro-batches saves memory).

`fused+xla` and `large_batch+xla` are the same strategies forced to compile with XLA
(`jit_compile=True`); plain `fused` uses its default, `"auto"` (XLA unless the model has
convolutions). `towers` and `mirrored` run when there is more than one device
(GPUs, or `--towers K` logical devices). `run_bench` and `run_sweep` return the same
numbers as dicts for notebooks; `gradlab.studies.plots.plot_bench` draws a sweep.

Lesson: notebooks/05-the-lab.ipynb
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import sys
import time

import keras
import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from . import memory
from .build import build_strategy
from .cache import jsonable, to_json
from .data import load_mnist
from ..core.microbatch import check_count, parse_counts
from .models import MODELS
from ..core.optimizers import describe
from ..training.strategies import DEVICE_STRATEGIES, STRATEGIES
from ..core.towers import local_devices, tower_devices

JIT_STRATEGIES = ("large_batch", "fused")  # "+xla" variants: towers place ops by device
DEFAULT_ORDER = ("large_batch", "fused", "accumulate", "keras", "host_average") + DEVICE_STRATEGIES
# optimizer -> learning rate. Plain SGD as in `python -m gradlab table`; Adam adds the same
# apply cost to every strategy. Built by `gradlab.core.optimizers`.
LR = {"sgd": 0.1, "momentum": 0.1, "adam": 1e-3}
INPUTS = ("numpy", "tensor")
MEMORY_TIMEOUT = 600  # seconds for one memory process: import, build, trace, a few updates


def default_strategies():
    """Every strategy that can run here: `towers`/`mirrored` only with two or more devices."""
    many = len(local_devices()[1]) > 1
    return [n for n in DEFAULT_ORDER if many or n not in DEVICE_STRATEGIES]


def run_bench(model="mlp", accum_steps=10, micro_batch=10, rounds=20, updates=5, warmup=3,
              strategies=None, optimizer="sgd", inputs="numpy", memory=True, memory_updates=3,
              seed=0, progress=True):
    """Time every strategy on the same batch of `accum_steps * micro_batch` MNIST examples.

    Args:
        model: one of `gradlab.studies.models.MODELS`.
        accum_steps, micro_batch: N micro-batches of b examples per update.
        rounds, updates, warmup: R rounds of `updates` timed updates each, after `warmup`
            untimed ones (the first traces and compiles).
        strategies: names (see `default_strategies()`), optionally `+xla`.
        optimizer: "sgd" (`SGD(0.1)`) or "adam" (`Adam(1e-3)`).
        inputs: "numpy" arrays (as notebooks pass them) or "tensor" (as from tf.data).
        memory: also measure memory, one fresh process per strategy.
        memory_updates: updates each memory process makes after its first one.
        seed: model weights and batch.
        progress: show a progress bar.
    Returns:
        dict: `config`, and `strategies` = {name: `ms_median`, `ms_q25`, `ms_q75`, `ms_min`,
        `ms_max`, `ms` (per round), `vs_large_batch`, `vs_keras`, `traces`, `retraces`,
        and with memory the fields of `measure_memory` (`peak_mb`: training memory;
        `compile_mb`: the first update, apart) and their ratios to large_batch,
        `peak_vs_large_batch`, `tf_peak_vs_large_batch`, `compile_vs_large_batch`}.
    """
    config = _config(model=model, accum_steps=accum_steps, micro_batch=micro_batch,
                     rounds=rounds, updates=updates, warmup=warmup, strategies=strategies,
                     optimizer=optimizer, inputs=inputs, memory=memory,
                     memory_updates=memory_updates, seed=seed)
    with _bar([config], progress) as bar:
        return _run(config, bar)


def run_sweep(accum=(1, 2, 4, 8, 16), model="mlp", micro_batch=10, progress=True, **options):
    """`run_bench` for every N in `accum` at a fixed micro-batch: time and memory against N.

    Args:
        accum: the N values; the other arguments as in `run_bench`.
    Returns:
        dict: `config`, `accum_steps` (the N values), `runs` (one `run_bench` dict each) and
        `strategies` = {name: {field: [value per N]}} for the fields of `run_bench`.
    """
    if isinstance(accum, (str, int, np.integer)) or not accum:
        raise ValueError(f"accum must be a non-empty list of accumulation counts, got {accum!r}")
    accum = [check_count("accum_steps", n) for n in accum]
    configs = [_config(model=model, accum_steps=n, micro_batch=micro_batch, **options) for n in accum]
    with _bar(configs, progress) as bar:
        runs = [_run(c, bar) for c in configs]
    names = configs[0]["strategies"]
    fields = [k for k in runs[0]["strategies"][names[0]] if k != "ms"]
    return {"config": dict(runs[0]["config"], accum=accum), "accum_steps": accum, "runs": runs,
            "strategies": {n: {f: [r["strategies"][n].get(f) for r in runs] for f in fields}
                           for n in names}}


# -- running --------------------------------------------------------------------------------

def _config(model, accum_steps, micro_batch, rounds=20, updates=5, warmup=3, strategies=None,
            optimizer="sgd", inputs="numpy", memory=True, memory_updates=3, seed=0):
    """Everything checked in plain Python first; then the devices (TensorFlow starts)."""
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
    elif len(names_of_devices) < 2 and any(_base(n) in DEVICE_STRATEGIES for n in names):
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
        base = _base(name) if isinstance(name, str) else None
        if base not in STRATEGIES or (name.endswith("+xla") and base not in JIT_STRATEGIES):
            raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}, "
                             f"or {' / '.join(s + '+xla' for s in JIT_STRATEGIES)}")
    if not names or len(set(names)) != len(names):
        raise ValueError(f"strategies must name each strategy once, got {names!r}")
    return names


def _base(name):
    return name[:-len("+xla")] if name.endswith("+xla") else name


def _bar(configs, progress):
    total = sum(len(c["strategies"]) * (c["warmup"] + c["rounds"] * c["updates"] + c["memory"])
                for c in configs)
    return tqdm(total=total, unit="update", delay=1.0, disable=not progress, dynamic_ncols=True)


def _batch(batch, inputs, seed):
    d = load_mnist(seed=seed)
    idx = np.arange(batch) % len(d.x_train)  # tiled when the batch exceeds the 4,000 images
    x, y = d.x_train[idx], d.y_train[idx]
    return (tf.constant(x), tf.constant(y)) if inputs == "tensor" else (x, y)


def _make(name, model, accum_steps, optimizer, seed):
    return build_strategy(_base(name), model, optimizer, LR[optimizer], accum_steps, seed,
                          jit_compile=True if name.endswith("+xla") else "auto")


def _run(c, bar):
    bar.set_description(f"{c['model']} N={c['accum_steps']} b={c['micro_batch']}")
    x, y = _batch(c["batch"], c["inputs"], c["seed"])
    names = c["strategies"]
    made = {n: _make(n, c["model"], c["accum_steps"], c["optimizer"], c["seed"]) for n in names}
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
    out = {n: _stats(times[n]) for n in names}
    for n in names:
        out[n].update(traces=traces[n], retraces=made[n].trace_count() - traces[n])
    del made
    if c["memory"]:
        for n, m in zip(names, _memory_all(c, bar)):
            out[n].update(m)
    for n in names:
        for ref in ("large_batch", "keras"):
            out[n][f"vs_{ref}"] = _ratio(out[n]["ms_median"], out.get(ref, {}).get("ms_median"))
        if c["memory"]:
            for f in ("peak_mb", "tf_peak_mb", "compile_mb"):
                out[n][f.replace("_mb", "_vs_large_batch")] = _ratio(
                    out[n][f], out.get("large_batch", {}).get(f))
    return jsonable({"config": dict(c, load_average=load), "strategies": out})


def _stats(ms):
    q25, med, q75 = np.percentile(ms, [25, 50, 75])
    return dict(ms_median=med, ms_q25=q25, ms_q75=q75, ms_min=min(ms), ms_max=max(ms), ms=ms)


def _ratio(a, b):
    return None if a is None or not b else a / b


# -- memory: one fresh process per strategy --------------------------------------------------

def _memory_all(c, bar):
    def one(name):
        try:
            towers = len(c["devices"]) if _base(name) in DEVICE_STRATEGIES else 1
            return measure_memory(name, c["model"], c["accum_steps"], c["micro_batch"],
                                  c["optimizer"], c["inputs"], c["memory_updates"], c["seed"], towers)
        finally:
            bar.update()
    # Two at a time: a fresh TensorFlow process spends seconds importing; peaks are per process.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, c["strategies"]))


def measure_memory(name, model="mlp", accum_steps=10, micro_batch=10, optimizer="sgd",
                   inputs="numpy", updates=3, seed=0, towers=1):
    """`gradlab.studies.memory.measure` of strategy `name` in a fresh process, once the model is
    built: its first update (compiling) apart from `updates` more (training). With `towers`
    > 1, logical devices are made first, for `towers` and `mirrored`.

    The child runs with `TF_CPU_ALLOCATOR_USE_BFC=true`: TensorFlow's default CPU allocator
    keeps no statistics, its BFC allocator does.

    Returns:
        the dict of `memory.measure` (`peak_mb`, `tf_peak_mb`, `rss_mb`, `compile_mb`,
        `rss_reset`) and `memory_device`; on failure the same keys as None and
        `memory_error`.
    """
    spec = dict(name=name, model=model, accum_steps=accum_steps, micro_batch=micro_batch,
                optimizer=optimizer, inputs=inputs, updates=updates, seed=seed, towers=towers)
    failed = dict(peak_mb=None, tf_peak_mb=None, rss_mb=None, compile_mb=None,
                  rss_reset=None, memory_device=None)
    result = memory.in_fresh_process(["gradlab", "bench", "--memory-child", json.dumps(spec)],
                                     MEMORY_TIMEOUT)
    return dict(failed, memory_error=result["error"]) if "error" in result else result


def _memory_child(spec):
    if spec["towers"] > 1:
        tower_devices(spec["towers"])  # before TensorFlow starts, as in the parent
    else:
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)  # or TF takes it all at once
    x, y = _batch(spec["accum_steps"] * spec["micro_batch"], spec["inputs"], spec["seed"])
    s = _make(spec["name"], spec["model"], spec["accum_steps"], spec["optimizer"], spec["seed"])
    kind, names = local_devices()
    many = kind == "GPU" and _base(spec["name"]) in DEVICE_STRATEGIES
    used = [n.replace("/device:", "") for n in (names if many else names[:1])]
    result = memory.measure(lambda: s.step(x, y), spec["updates"], used)
    print(json.dumps(dict(result, memory_device=", ".join(used))))


# -- text -----------------------------------------------------------------------------------

def format_bench(result, verdict=True):
    """The table of one `run_bench` result, with (if `verdict`) the `headline` for `fused`."""
    c, rows = result["config"], result["strategies"]
    where = ", ".join(c["gpus"]) if c["gpus"] else f"CPU ({c['cpu_count']} cores)"
    lines = [f"gradlab bench: model {c['model']}, N={c['accum_steps']} micro-batches of "
             f"{c['micro_batch']} (effective batch {c['batch']}), "
             f"{describe(c['optimizer'], LR[c['optimizer']])}, {c['inputs']} inputs, "
             f"{c['rounds']} rounds x {c['updates']} updates after {c['warmup']} warm-up",
             f"on {where}; devices {len(c['devices'])}; load average "
             f"{c['load_average'][0]:.1f} -> {c['load_average'][1]:.1f}; TF {c['tensorflow']}",
             "",
             f"{'strategy':<16}{'ms/update':>10}  {'IQR':>13}{'x large':>9}{'x keras':>9}"
             + (f"{'train MB':>10}{'x large':>9}{'compile MB':>12}" if c["memory"] else "")
             + f"{'traces':>8}"]
    for name, r in rows.items():
        line = (f"{name:<16}{r['ms_median']:>10.2f}  {r['ms_q25']:>6.2f}-{r['ms_q75']:<6.2f}"
                f"{_num(r['vs_large_batch'], 9)}{_num(r['vs_keras'], 9)}")
        if c["memory"]:
            line += (f"{_num(r['peak_mb'], 10, '.1f')}{_num(r['peak_vs_large_batch'], 9)}"
                     f"{_num(r['compile_mb'], 12, '.1f')}")
        lines.append(line + f"{r['traces']:>6}+{r['retraces']}")
    errors = [f"  {n}: memory not measured ({r['memory_error']})" for n, r in rows.items()
              if r.get("memory_error")]
    return "\n".join(lines + errors + ([""] + headline([result]) if verdict else []))


def headline(results, strategy="fused"):
    """One line per workload: `strategy`'s time and training memory against `large_batch`,
    its compilation memory apart (paid once, not per update)."""
    lines = []
    for result in results:
        c, r = result["config"], result["strategies"].get(strategy)
        large = result["strategies"].get("large_batch")
        if r is None:
            continue
        parts = []
        if r["vs_keras"]:
            parts.append(f"{1 / r['vs_keras']:.1f}x faster than keras" if r["vs_keras"] < 1
                         else f"{r['vs_keras']:.2f}x the time of keras")
        if r["vs_large_batch"]:
            parts.append(f"{r['vs_large_batch']:.2f}x the time of large_batch")
        if r.get("peak_vs_large_batch"):
            parts.append(f"{r['peak_vs_large_batch']:.2f}x its training memory "
                         f"({r['peak_mb']:.1f} vs {large['peak_mb']:.1f} MB)")
        if r.get("compile_mb") is not None and large and large.get("compile_mb") is not None:
            parts.append(f"compiling took {r['compile_mb']:.0f} MB once "
                         f"(large_batch {large['compile_mb']:.0f} MB)")
        if parts:
            lines.append(f"{strategy} on {c['model']} (N={c['accum_steps']}, "
                         f"b={c['micro_batch']}): " + ", ".join(parts))
    return lines


def format_sweep(sweep):
    """ms/update, x keras and memory against N, one row per strategy."""
    c, ns, rows = sweep["config"], sweep["accum_steps"], sweep["strategies"]
    head = f"{'strategy':<16}" + "".join(f"{'N=' + str(n):>9}" for n in ns)
    out = [f"gradlab bench sweep: model {c['model']}, micro-batch {c['micro_batch']}, "
           f"{describe(c['optimizer'], LR[c['optimizer']])}, {c['rounds']} rounds x "
           f"{c['updates']} updates"]
    tables = [("ms/update (median)", "ms_median", ".2f"), ("x keras (time ratio)", "vs_keras", ".2f"),
              ("x large_batch (time ratio)", "vs_large_batch", ".2f")]
    if c["memory"]:
        tables += [("train MB (TF allocator peak of an update)", "peak_mb", ".1f"),
                   ("compile MB (first update, once)", "compile_mb", ".1f")]
    for title, field, fmt in tables:
        out += ["", title, head] + [f"{n:<16}" + "".join(_num(v, 9, fmt) for v in r[field])
                                    for n, r in rows.items()]
    return "\n".join(out)


def _num(v, width, fmt=".2f"):
    return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"


# -- command line ---------------------------------------------------------------------------

WORKLOADS = ("mlp", "conv")  # parameters dominate; activations dominate


def parser():
    """The arguments of `python -m gradlab bench` (other modes add theirs to it)."""
    p = argparse.ArgumentParser(prog="python -m gradlab bench", description=(
        "Every strategy on the same work: ms/update (median, IQR), ratios to large_batch "
        "and keras, training memory and compilation memory apart (each strategy in a fresh "
        "process). Without --model: the mlp and the conv workloads, side by side."))
    p.add_argument("--accum", type=int, default=10, help="N, micro-batches per update (10)")
    p.add_argument("--micro-batch", type=int, default=10, help="b, examples per micro-batch (10)")
    p.add_argument("--model", choices=MODELS, default=None,
                   help=f"one workload (default: {' and '.join(WORKLOADS)})")
    p.add_argument("--rounds", type=int, default=20, help="timed rounds (20)")
    p.add_argument("--updates", type=int, default=5, help="updates per strategy per round (5)")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (3)")
    p.add_argument("--optimizer", choices=LR, default="sgd", help="(sgd: SGD(0.1))")
    p.add_argument("--inputs", choices=INPUTS, default="numpy",
                   help="numpy arrays (default, as notebooks pass them) or tensors")
    p.add_argument("--strategies", nargs="+", default=None, metavar="S",
                   help="default: all that can run here; add fused+xla or large_batch+xla for XLA")
    p.add_argument("--sweep", type=parse_counts, default=None, metavar="N,N,...",
                   help="run for every N at the fixed micro-batch, e.g. 1,2,4,8,16")
    p.add_argument("--towers", type=int, default=None, metavar="K",
                   help="make K logical devices first (tower_devices), so towers and mirrored run")
    p.add_argument("--no-memory", action="store_true", help="skip the memory processes")
    p.add_argument("--memory-updates", type=int, default=3, help="updates per memory process (3)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    return p


def cli(argv=None):
    """`python -m gradlab bench`: the tables (or a sweep over N); with `--json` one JSON object
    instead, as `table --json` does, so the output parses as it is: one `run_bench` (or
    `run_sweep`) result with `--model`, else `{"workloads": [one per model]}`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--fit" in argv:  # `bench --fit`: model.fit itself timed, with its own options
        argv = [a for a in argv if a != "--fit"]
        if "--memory" in argv:  # `bench --fit --memory`: fit's memory against accum_steps
            from .bench_memory import cli as memory_cli
            return memory_cli([a for a in argv if a != "--memory"])
        from .bench_fit import cli as fit_cli
        return fit_cli(argv)
    p = parser()
    args = p.parse_args(argv)
    if args.memory_child:
        _memory_child(json.loads(args.memory_child))
        return 0
    models = [args.model] if args.model else list(WORKLOADS)
    options = dict(micro_batch=args.micro_batch, rounds=args.rounds, updates=args.updates,
                   warmup=args.warmup, strategies=args.strategies, optimizer=args.optimizer,
                   inputs=args.inputs, memory=not args.no_memory,
                   memory_updates=args.memory_updates)
    try:  # the arguments only: a ValueError from inside TensorFlow is no usage error
        if args.towers is not None:
            tower_devices(args.towers)
        for n in args.sweep or [args.accum]:
            _config(model=models[0], accum_steps=n, **options)
    except (ValueError, TypeError) as e:
        p.error(str(e))
    progress = not args.no_progress
    if args.sweep:
        results = [run_sweep(args.sweep, model=m, progress=progress, **options) for m in models]
        text = "\n\n".join(map(format_sweep, results))
    else:
        results = [run_bench(model=m, accum_steps=args.accum, progress=progress, **options)
                   for m in models]
        text = "\n\n".join(format_bench(r, verdict=len(results) == 1) for r in results)
        if len(results) > 1:
            text += ("\n\nwhere accumulation costs speed, and where it saves memory:\n"
                     + "\n".join(headline(results)))
    print(to_json(results[0] if len(results) == 1 else {"workloads": results})
          if args.json else text)
    return 0
