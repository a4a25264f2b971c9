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
numbers as dicts for notebooks; `gradlab.studies.figures.plots.plot_bench` draws a sweep.

This module is the command and the two runs; the parts live beside it: `step_timing` (the
rounds), `step_memory` (one fresh process per strategy), `bench_report` (the tables).
`bench --fit` (`bench_fit`) and `bench --fit --memory` (`bench_memory`) take their common
options from `shared_options` and `output_options` here.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .options import shared_options
from .step_report import format_bench, format_sweep, headline
from ..cache import jsonable, to_json
from ..models import MODELS
from .step_memory import measure_all
from .step_timing import INPUTS, LR, make_config, progress_bar, time_strategies
from ..arguments import parse_counts
from ...core.microbatch import check_count
from ...core.towers import tower_devices

WORKLOADS = ("mlp", "conv")  # parameters dominate; activations dominate


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

    Lesson: notebooks/17-the-lab.ipynb
    """
    config = make_config(model=model, accum_steps=accum_steps, micro_batch=micro_batch,
                         rounds=rounds, updates=updates, warmup=warmup, strategies=strategies,
                         optimizer=optimizer, inputs=inputs, memory=memory,
                         memory_updates=memory_updates, seed=seed)
    with progress_bar([config], progress) as bar:
        return _run(config, bar)


def run_sweep(accum=(1, 2, 4, 8, 16), model="mlp", micro_batch=10, progress=True, **options):
    """`run_bench` for every N in `accum` at a fixed micro-batch: time and memory against N.

    Args:
        accum: the N values; the other arguments as in `run_bench`.
    Returns:
        dict: `config`, `accum_steps` (the N values), `runs` (one `run_bench` dict each) and
        `strategies` = {name: {field: [value per N]}} for the fields of `run_bench`.

    Lesson: notebooks/17-the-lab.ipynb
    """
    if isinstance(accum, (str, int, np.integer)) or not accum:
        raise ValueError(f"accum must be a non-empty list of accumulation counts, got {accum!r}")
    accum = [check_count("accum_steps", n) for n in accum]
    configs = [make_config(model=model, accum_steps=n, micro_batch=micro_batch, **options)
               for n in accum]
    with progress_bar(configs, progress) as bar:
        runs = [_run(c, bar) for c in configs]
    names = configs[0]["strategies"]
    fields = [k for k in runs[0]["strategies"][names[0]] if k != "ms"]
    return {"config": dict(runs[0]["config"], accum=accum), "accum_steps": accum, "runs": runs,
            "strategies": {n: {f: [r["strategies"][n].get(f) for r in runs] for f in fields}
                           for n in names}}


def _run(c, bar):
    """The timed rounds, then (the timed strategies freed) the memory processes, then the
    ratios of every row to large_batch and keras."""
    out, load = time_strategies(c, bar)
    names = c["strategies"]
    if c["memory"]:
        for n, m in zip(names, measure_all(c, bar)):
            out[n].update(m)
    for n in names:
        for ref in ("large_batch", "keras"):
            out[n][f"vs_{ref}"] = _ratio(out[n]["ms_median"], out.get(ref, {}).get("ms_median"))
        if c["memory"]:
            for f in ("peak_mb", "tf_peak_mb", "compile_mb"):
                out[n][f.replace("_mb", "_vs_large_batch")] = _ratio(
                    out[n][f], out.get("large_batch", {}).get(f))
    return jsonable({"config": dict(c, load_average=load), "strategies": out})


def _ratio(a, b):
    return None if a is None or not b else a / b


# -- command line: `bench step` (and plain `bench`) ---------------------------------------

def parser():
    """The arguments of `python -m gradlab bench`."""
    p = argparse.ArgumentParser(prog="python -m gradlab bench step", parents=[
        shared_options(20, "timed rounds")], description=(
        "Every strategy on the same work: ms/update (median, IQR), ratios to large_batch "
        "and keras, training memory and compilation memory apart (each strategy in a fresh "
        "process). Without --model: the mlp and the conv workloads, side by side. "
        "`bench fit`: model.fit timed; `bench memory`: fit's memory against N."))
    p.add_argument("--model", choices=MODELS, default=None,
                   help=f"one workload (default: {' and '.join(WORKLOADS)})")
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
    return p


def cli(argv=None):
    """`python -m gradlab bench [step]`: the tables (or a sweep over N); with `--json` one JSON object
    instead, as `table --json` does, so the output parses as it is: one `run_bench` (or
    `run_sweep`) result with `--model`, else `{"workloads": [one per model]}`.

    Lesson: notebooks/17-the-lab.ipynb
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser()
    args = p.parse_args(argv)
    models = [args.model] if args.model else list(WORKLOADS)
    options = dict(micro_batch=args.micro_batch, rounds=args.rounds, updates=args.updates,
                   warmup=args.warmup, strategies=args.strategies, optimizer=args.optimizer,
                   inputs=args.inputs, memory=not args.no_memory,
                   memory_updates=args.memory_updates)
    try:  # the arguments only: a ValueError from inside TensorFlow is no usage error
        if args.towers is not None:
            tower_devices(args.towers)
        for n in args.sweep or [args.accum]:
            make_config(model=models[0], accum_steps=n, **options)
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
