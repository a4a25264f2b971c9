"""Every strategy on the same work, side by side: milliseconds per update, ratios, memory.

    python -m gradlab bench [--accum N] [--micro-batch b] [--model mlp|conv|embedding]
                            [--rounds R] [--strategies S ...] [--optimizer sgd|adam]
                            [--inputs numpy|tensor] [--towers K] [--no-memory]
                            [--sweep 1,2,4,8,16] [--json]

    ms/update   median over R rounds, after warm-up; in each round every strategy makes
                `updates` updates of the same batch, in rotating order, so that noise from
                the rest of the machine falls on all strategies alike
    x large     median(s) / median(large_batch)      (time ratio: 2.0 means twice as slow)
    x keras     median(s) / median(keras)            (0.25 means four times faster)
    peak MB     memory of one update, each strategy in a fresh process: on a CPU the
                resident-set high-water mark (VmHWM, else ru_maxrss) minus its value once
                the model is built; on a GPU the allocator's peak above what it held before
    TF peak MB  the TensorFlow allocator's peak during an update above what it held before
                (the activations and gradients of one update, without tracing or imports)

`fused+xla` and `large_batch+xla` are the same strategies forced to compile with XLA
(`jit_compile=True`); plain `fused` uses its default, `"auto"` (XLA unless the model has
convolutions). `towers` and `mirrored` run when there is more than one device
(GPUs, or `--towers K` logical devices). `run_bench` and `run_sweep` return the same
numbers as dicts for notebooks; `gradlab.plots.plot_bench` draws a sweep.

Lesson: notebooks/05-the-lab.ipynb
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import resource
import subprocess
import sys
import time

import keras
import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from .cache import jsonable
from .data import load_mnist
from .microbatch import check_count, parse_counts
from .models import MODELS, make_model
from .strategies import STRATEGIES, make_strategy
from .towers import tower_devices

DEVICE_STRATEGIES = ("towers", "mirrored")
JIT_STRATEGIES = ("large_batch", "fused")  # "+xla" variants: towers place ops by device
DEFAULT_ORDER = ("large_batch", "fused", "accumulate", "keras", "host_average") + DEVICE_STRATEGIES
# Plain SGD as in `python -m gradlab table`; Adam adds the same apply cost to every strategy.
OPTIMIZERS = {"sgd": ("SGD(0.1)", lambda: keras.optimizers.SGD(0.1)),
              "adam": ("Adam(1e-3)", lambda: keras.optimizers.Adam(1e-3))}
INPUTS = ("numpy", "tensor")
MEMORY_TIMEOUT = 600  # seconds for one memory process: import, build, trace, a few updates


def devices():
    """`(kind, names)`: the logical GPUs if there are any, else the logical CPUs."""
    gpus = tf.config.list_logical_devices("GPU")
    return ("GPU", [d.name for d in gpus]) if gpus else \
        ("CPU", [d.name for d in tf.config.list_logical_devices("CPU")])


def default_strategies():
    """Every strategy that can run here: `towers`/`mirrored` only with two or more devices."""
    many = len(devices()[1]) > 1
    return [n for n in DEFAULT_ORDER if many or n not in DEVICE_STRATEGIES]


def run_bench(model="mlp", accum_steps=10, micro_batch=10, rounds=20, updates=5, warmup=3,
              strategies=None, optimizer="sgd", inputs="numpy", memory=True, memory_updates=3,
              seed=0, progress=True):
    """Time every strategy on the same batch of `accum_steps * micro_batch` MNIST examples.

    Args:
        model: one of `gradlab.models.MODELS`.
        accum_steps, micro_batch: N micro-batches of b examples per update.
        rounds, updates, warmup: R rounds of `updates` timed updates each, after `warmup`
            untimed ones (the first traces and compiles).
        strategies: names (see `default_strategies()`), optionally `+xla`.
        optimizer: "sgd" (`SGD(0.1)`) or "adam" (`Adam(1e-3)`).
        inputs: "numpy" arrays (as notebooks pass them) or "tensor" (as from tf.data).
        memory: also measure peak memory, one fresh process per strategy.
        memory_updates: updates each memory process makes after its first one.
        seed: model weights and batch.
        progress: show a progress bar.
    Returns:
        dict: `config`, and `strategies` = {name: `ms_median`, `ms_q25`, `ms_q75`, `ms_min`,
        `ms_max`, `ms` (per round), `vs_large_batch`, `vs_keras`, `traces`, `retraces`,
        and with memory `peak_mb`, `tf_peak_mb`, `rss_mb`, `peak_vs_large_batch`,
        `tf_peak_vs_large_batch`}.
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
    for name, value, choices in (("model", model, MODELS), ("optimizer", optimizer, OPTIMIZERS),
                                 ("inputs", inputs, INPUTS)):
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")
    counts = {k: check_count(k, v) for k, v in (
        ("accum_steps", accum_steps), ("micro_batch", micro_batch), ("rounds", rounds),
        ("updates", updates), ("warmup", warmup), ("memory_updates", memory_updates))}
    names = None if strategies is None else _check_names(strategies)
    kind, names_of_devices = devices()
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
    # Builders, not objects: `mirrored` makes its variables inside its own scope.
    return make_strategy(_base(name), lambda: make_model(model, seed=seed),
                         keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                         OPTIMIZERS[optimizer][1], accum_steps=accum_steps,
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
            for f in ("peak_mb", "tf_peak_mb"):
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
    """Peak memory of `updates` updates of strategy `name`, measured in a fresh process
    (with `towers` > 1 logical devices made first, for `towers` and `mirrored`).

    Returns:
        dict `peak_mb` (CPU: the RSS high-water mark above its value once the model is
        built, tracing included; GPU: `tf_peak_mb`), `tf_peak_mb` (the TensorFlow
        allocator's peak during the updates above what it held before them, on every
        device used), `rss_mb`, `memory_device`; on failure the same keys as None and
        `memory_error`.
    """
    spec = dict(name=name, model=model, accum_steps=accum_steps, micro_batch=micro_batch,
                optimizer=optimizer, inputs=inputs, updates=updates, seed=seed, towers=towers)
    failed = dict(peak_mb=None, tf_peak_mb=None, rss_mb=None, memory_device=None)
    try:
        proc = subprocess.run([sys.executable, "-m", "gradlab", "bench", "--memory-child",
                               json.dumps(spec)], capture_output=True, text=True,
                              timeout=MEMORY_TIMEOUT)
    except subprocess.TimeoutExpired:  # run() has killed the child
        return dict(failed, memory_error=f"timed out after {MEMORY_TIMEOUT} s")
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return dict(failed, memory_error=f"exit {proc.returncode}: {tail}")
    return json.loads(lines[-1])


def _memory_child(spec):
    if spec["towers"] > 1:
        tower_devices(spec["towers"])  # before TensorFlow starts, as in the parent
    else:
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)  # or TF takes it all at once
    x, y = _batch(spec["accum_steps"] * spec["micro_batch"], spec["inputs"], spec["seed"])
    s = _make(spec["name"], spec["model"], spec["accum_steps"], spec["optimizer"], spec["seed"])
    base = _maxrss_mb()
    s.step(x, y)  # trace, compile and run once
    kind, names = devices()
    many = kind == "GPU" and _base(spec["name"]) in DEVICE_STRATEGIES
    used = [n.replace("/device:", "") for n in (names if many else names[:1])]
    try:
        for d in used:
            tf.config.experimental.reset_memory_stats(d)
        before = sum(tf.config.experimental.get_memory_info(d)["current"] for d in used)
        for _ in range(spec["updates"]):
            s.step(x, y)
        tf_peak = (sum(tf.config.experimental.get_memory_info(d)["peak"] for d in used) - before) / 2**20
    except (ValueError, tf.errors.OpError):  # allocator statistics not available here
        tf_peak = None
        for _ in range(spec["updates"]):
            s.step(x, y)
    rss = _maxrss_mb() - base
    print(json.dumps(dict(peak_mb=tf_peak if kind == "GPU" else rss, tf_peak_mb=tf_peak,
                          rss_mb=rss, memory_device=", ".join(used))))


def _maxrss_mb():
    """This process's resident-set high-water mark in MB.

    On Linux `ru_maxrss` keeps, across fork and exec, the parent's size at the fork (here a
    TensorFlow process of a gigabyte or more), which would hide the child's own peak;
    VmHWM in /proc/self/status is the high-water mark of this process's memory alone.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024  # bytes there, KiB on Linux


# -- text -----------------------------------------------------------------------------------

def format_bench(result):
    """The table of one `run_bench` result, with a one-line verdict for `fused`."""
    c, rows = result["config"], result["strategies"]
    where = ", ".join(c["gpus"]) if c["gpus"] else f"CPU ({c['cpu_count']} cores)"
    lines = [f"gradlab bench: model {c['model']}, N={c['accum_steps']} micro-batches of "
             f"{c['micro_batch']} (effective batch {c['batch']}), {OPTIMIZERS[c['optimizer']][0]}, "
             f"{c['inputs']} inputs, {c['rounds']} rounds x {c['updates']} updates after "
             f"{c['warmup']} warm-up",
             f"on {where}; devices {len(c['devices'])}; load average "
             f"{c['load_average'][0]:.1f} -> {c['load_average'][1]:.1f}; TF {c['tensorflow']}",
             "",
             f"{'strategy':<16}{'ms/update':>10}  {'IQR':>13}{'x large':>9}{'x keras':>9}"
             + (f"{'peak MB':>9}{'x large':>9}{'TF peak MB':>12}{'x large':>9}" if c["memory"] else "")
             + f"{'traces':>8}"]
    for name, r in rows.items():
        line = (f"{name:<16}{r['ms_median']:>10.2f}  {r['ms_q25']:>6.2f}-{r['ms_q75']:<6.2f}"
                f"{_num(r['vs_large_batch'], 9)}{_num(r['vs_keras'], 9)}")
        if c["memory"]:
            line += (f"{_num(r['peak_mb'], 9, '.1f')}{_num(r['peak_vs_large_batch'], 9)}"
                     f"{_num(r['tf_peak_mb'], 12, '.1f')}{_num(r['tf_peak_vs_large_batch'], 9)}")
        lines.append(line + f"{r['traces']:>6}+{r['retraces']}")
    errors = [f"  {n}: memory not measured ({r['memory_error']})" for n, r in rows.items()
              if r.get("memory_error")]
    return "\n".join(lines + errors + _verdict(rows))


def format_sweep(sweep):
    """ms/update, x keras and peak memory against N, one row per strategy."""
    c, ns, rows = sweep["config"], sweep["accum_steps"], sweep["strategies"]
    head = f"{'strategy':<16}" + "".join(f"{'N=' + str(n):>9}" for n in ns)
    out = [f"gradlab bench sweep: model {c['model']}, micro-batch {c['micro_batch']}, "
           f"{OPTIMIZERS[c['optimizer']][0]}, {c['rounds']} rounds x {c['updates']} updates"]
    tables = [("ms/update (median)", "ms_median", ".2f"), ("x keras (time ratio)", "vs_keras", ".2f"),
              ("x large_batch (time ratio)", "vs_large_batch", ".2f")]
    if c["memory"]:
        tables += [("peak MB", "peak_mb", ".1f"), ("TF peak MB", "tf_peak_mb", ".1f")]
    for title, field, fmt in tables:
        out += ["", title, head] + [f"{n:<16}" + "".join(_num(v, 9, fmt) for v in r[field])
                                    for n, r in rows.items()]
    return "\n".join(out)


def _verdict(rows):
    lines = []
    for name in [n for n in rows if _base(n) == "fused"]:
        r = rows[name]
        parts = []
        if r["vs_keras"]:
            parts.append(f"{1 / r['vs_keras']:.1f}x faster than keras")
        if r["vs_large_batch"]:
            parts.append(f"{r['vs_large_batch']:.2f}x the time of large_batch")
        if r.get("peak_vs_large_batch"):
            parts.append(f"{r['peak_vs_large_batch']:.2f}x its peak memory "
                         f"({r['tf_peak_vs_large_batch'] or float('nan'):.2f}x by the TF allocator)")
        if parts:
            lines.append(f"{name}: " + ", ".join(parts))
    return [""] + lines if lines else []


def _num(v, width, fmt=".2f"):
    return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"


# -- command line ---------------------------------------------------------------------------

def cli(argv=None):
    """`python -m gradlab bench`: the table (or a sweep over N); with `--json` one JSON object
    instead, as `table --json` does, so the output parses as it is."""
    parser = argparse.ArgumentParser(prog="python -m gradlab bench", description=(
        "Every strategy on the same work: ms/update (median, IQR), ratios to large_batch "
        "and keras, peak memory (each strategy in a fresh process)."))
    parser.add_argument("--accum", type=int, default=10, help="N, micro-batches per update (10)")
    parser.add_argument("--micro-batch", type=int, default=10, help="b, examples per micro-batch (10)")
    parser.add_argument("--model", choices=MODELS, default="mlp")
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds (20)")
    parser.add_argument("--updates", type=int, default=5, help="updates per strategy per round (5)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed updates first (3)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd", help="(sgd: SGD(0.1))")
    parser.add_argument("--inputs", choices=INPUTS, default="numpy",
                        help="numpy arrays (default, as notebooks pass them) or tensors")
    parser.add_argument("--strategies", nargs="+", default=None, metavar="S",
                        help="default: all that can run here; add fused+xla or large_batch+xla for XLA")
    parser.add_argument("--sweep", type=parse_counts, default=None, metavar="N,N,...",
                        help="run for every N at the fixed micro-batch, e.g. 1,2,4,8,16")
    parser.add_argument("--towers", type=int, default=None, metavar="K",
                        help="make K logical devices first (tower_devices), so towers and mirrored run")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory processes")
    parser.add_argument("--memory-updates", type=int, default=3, help="updates per memory process (3)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--fit" in argv:  # `bench --fit`: model.fit itself timed, with its own options
        from .bench_fit import cli as fit_cli
        return fit_cli([a for a in argv if a != "--fit"])
    args = parser.parse_args(argv)
    if args.memory_child:
        _memory_child(json.loads(args.memory_child))
        return 0
    options = dict(model=args.model, micro_batch=args.micro_batch, rounds=args.rounds,
                   updates=args.updates, warmup=args.warmup, strategies=args.strategies,
                   optimizer=args.optimizer, inputs=args.inputs, memory=not args.no_memory,
                   memory_updates=args.memory_updates)
    try:  # the arguments only: a ValueError from inside TensorFlow is no usage error
        if args.towers is not None:
            tower_devices(args.towers)
        for n in args.sweep or [args.accum]:
            _config(accum_steps=n, **options)
    except (ValueError, TypeError) as e:
        parser.error(str(e))
    if args.sweep:
        result = run_sweep(args.sweep, progress=not args.no_progress, **options)
        text = format_sweep(result)
    else:
        result = run_bench(accum_steps=args.accum, progress=not args.no_progress, **options)
        text = format_bench(result)
    print(json.dumps(result, allow_nan=False) if args.json else text)
    return 0
