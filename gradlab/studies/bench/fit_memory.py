"""The memory of `fit` against accum_steps: plain fit, AccumulatingModel, Keras's accumulation.

    python -m gradlab bench --fit --memory [--model conv|transformer] [--batch B]
                                           [--accum 1,2,4,8,16] [--overlap 1] [--json]
                                           [--limit MB]

    contenders (each in a fresh process, `memory_child`): plain fit at batch B;
        AccumulatingModel(accum_steps=N) at batch B, for each N and each overlap;
        Keras's SGD(gradient_accumulation_steps=N) at batch b = B/N;
        AccumulatingModel with overlap=2 at the largest N (what overlapping buys and costs);
        a control, fit's input alone: plain fit at B of a linear model on the same data
        (`memory_child.input_model`, next to no activations)
    floor(b) = weights + optimizer slots + one gradient-sum buffer + activations(b)
    activations(b) = peak(plain fit at batch b) - weights - slots - one gradient  (measured)
      => floor(b) = peak(plain fit at b) + gradient-sum buffer,  and floor(B) of plain fit
         is its own peak (a ratio of 1 by construction)
    each twice: epoch (`train_mb`: fit's epochs, its input pipeline included) and update
    (`step_mb`: `train_on_batch` on a batch already held and not counted, one call per update,
    N calls of a micro-batch for Keras's accumulation). fit's input pipeline holds batches of the
    rows fit is given: B for plain fit, b for Keras's accumulation, and B row indices for
    AccumulatingModel (each micro-batch gathers its rows: `fit_rows`); the control measures
    what it holds at B.

Every contender trains on the same examples: `updates` effective batches of B examples per
epoch (plain fit at a micro-batch b takes B/b steps for each; its time is per B examples),
one untimed epoch first (tracing: `compile MB` is its peak, reported apart), then `epochs`
measured ones. No contender uses XLA (Keras's fit uses none on a CPU by default):
like is compared with like. The runs go one after another: time per update is measured in
the same process as the memory, and two runs side by side would share the two cores.

With `--limit MB` it runs instead plain fit at B and AccumulatingModel at the largest N,
each in a fresh process whose allocator may hold MB at most (`fit_under_limit`): which of
them runs, and which runs out of memory.

Lesson: notebooks/11-memory-budget.ipynb
"""
from __future__ import annotations

import argparse
import json
import os

import tensorflow as tf
from tqdm.auto import tqdm

from .. import memory
from .options import output_options
from ..cache import jsonable, to_json
from .memory_child import MEMORY_MODELS, main as child_main
from .memory_report import format_bench_memory, format_limit, ratio
from ..arguments import parse_counts
from ...core.microbatch import check_count

BATCH = {"conv": 512, "transformer": 64}  # B: activations dominate at these sizes
CHILD_TIMEOUT = 900  # seconds for one fresh process: import, trace, a few epochs


def plan(model="conv", batch=None, accum=(1, 2, 4, 8, 16), overlaps=(1,), updates=3, epochs=1,
         seed=0):
    """The runs of one benchmark, checked before any TensorFlow work.

    Returns:
        a list of child specs (`memory_child.measure_fit`), each with a `label`.
    """
    if not isinstance(model, str) or model not in MEMORY_MODELS:
        raise ValueError(f"model must be one of {', '.join(MEMORY_MODELS)}, got {model!r}")
    batch = check_count("batch", BATCH[model] if batch is None else batch)
    counts = _counts("accum", accum)
    overlaps = _counts("overlap", overlaps)
    for n in counts:
        if batch % n:
            raise ValueError(f"batch {batch} must divide by every accum_steps; got accum_steps {n}")
    base = dict(model=model, updates=check_count("updates", updates), examples=updates * batch,
                epochs=check_count("epochs", epochs), seed=check_count("seed", seed, minimum=0))
    run = lambda contender, b, n=1, k=1: dict(base, contender=contender, batch=b, accum_steps=n,
                                              overlap=k, label=_label(contender, n, k))
    runs = [run("plain", batch)]
    runs += [run("plain", batch // n) for n in counts if n > 1]  # the floor's activations(b)
    for n in counts:
        runs += [run("accumulating", batch, n, k) for k in overlaps]
        if n > 1:  # Keras's accumulation needs 2 steps or more
            runs.append(run("keras", batch // n, n))
    if 2 not in overlaps:
        runs.append(run("accumulating", batch, max(counts), 2))
    return runs + [run("input", batch)]


def run_bench_memory(model="conv", batch=None, accum=(1, 2, 4, 8, 16), overlaps=(1,), updates=3,
                     epochs=1, seed=0, progress=True):
    """Every run of `plan(...)` in a fresh process, with its floor and ratios.

    Returns:
        a JSON-ready dict: `config`, `rows` (one per run: its spec, the child's measurement
        (`peak_mb`, `compile_peak_mb`, `ms_update`, ...) or `error`, and `micro_batch`,
        `floor_mb`, `vs_floor`, `vs_plain` (train / plain fit's at B), `step_floor_mb`,
        `step_vs_floor`) and `ratios` (`accumulating_vs_keras`, `accumulating_vs_plain`,
        `step_accumulating_vs_keras` at the largest N, overlap 1; `overlap2_time`,
        `overlap2_memory`: overlap=2 over overlap=1 there).
    """
    runs = plan(model, batch, accum, overlaps, updates, epochs, seed)
    rows, load = [], [os.getloadavg()[0]]
    for spec in tqdm(runs, desc=f"memory of fit, {model}", unit="process", disable=not progress):
        rows.append(dict(spec, **measure_in_child(spec)))
    load.append(os.getloadavg()[0])  # times from a shared machine are read beside it
    gpus = [g.name for g in tf.config.list_physical_devices("GPU")]
    config = dict(model=model, batch=runs[0]["batch"], accum=list(accum), overlaps=list(overlaps),
                  updates=updates, epochs=epochs, seed=seed, cpu_count=os.cpu_count(), gpus=gpus,
                  load_average=load,
                  tensorflow=tf.__version__)
    return jsonable({"config": config, "rows": add_floors(rows),
                     "ratios": ratios(rows, max(accum))})


def measure_in_child(spec, env=None):
    """`memory_child.measure_fit(spec)` in a fresh process with TensorFlow's BFC allocator
    (and `env`'s variables); on failure `{"error": why}`."""
    child = {k: v for k, v in spec.items() if k != "label"}
    return memory.in_fresh_process(["gradlab", "bench", "memory", "--child",
                                    json.dumps(child)], CHILD_TIMEOUT, env)


def fit_under_limit(contender, limit_mb=None, model="conv", batch=None, accum_steps=16,
                    updates=1, epochs=1, seed=0, weights=False):
    """Fit one contender in a fresh process whose allocator may hold `limit_mb` MB at most:
    did it run, or run out of memory?

    Args:
        contender: "plain" (fit at batch B) or "accumulating" (AccumulatingModel(accum_steps)
            at batch B).
        limit_mb: the MB the allocator may hold; None: no limit, the same kernels otherwise
            (a reference peak).
        model, batch (B, default `BATCH[model]`), accum_steps, updates, epochs, seed: as in
            `plan` (one untimed epoch, then `epochs` measured ones).
        weights: True: the result holds the trained weights too (`weights`, as lists), to
            compare two runs weight by weight.
    Returns:
        dict `outcome` ("ran", "out of memory" or "failed"), `limit_mb`, `error` (the OOM
        line, or why it failed; None when it ran) and, when it ran, the child's measurement
        (`peak_mb`, `losses`, `finite`, ...).

    On a CPU the limit is TensorFlow's BFC allocator's own (`TF_CPU_BFC_MEM_LIMIT_IN_MB`,
    read when TensorFlow starts) and oneDNN's kernels are off (`TF_ENABLE_ONEDNN_OPTS=0`):
    in TensorFlow 2.21 a oneDNN convolution refused its output reports the OOM, then the
    process dies of a segmentation fault; TensorFlow's own kernels raise
    ResourceExhaustedError. On a GPU the limit is a logical device's `memory_limit`.
    """
    if contender not in ("plain", "accumulating"):
        raise ValueError(f"contender must be 'plain' or 'accumulating', got {contender!r}")
    if limit_mb is not None:
        limit_mb = check_count("limit_mb", limit_mb)
    n = accum_steps if contender == "accumulating" else 1
    spec = next(r for r in plan(model, batch, [n], [1], updates, epochs, seed)
                if r["contender"] == contender and r["accum_steps"] == n)
    env = {"TF_ENABLE_ONEDNN_OPTS": "0"}
    if limit_mb is not None and not tf.config.list_physical_devices("GPU"):
        env["TF_CPU_BFC_MEM_LIMIT_IN_MB"] = str(limit_mb)
    got = measure_in_child(dict(spec, limit_mb=limit_mb, weights=bool(weights)), env)
    outcome = ("out of memory" if "out_of_memory" in got else "failed" if "error" in got else "ran")
    return dict(spec, **got) | dict(outcome=outcome, limit_mb=limit_mb,
                                    error=got.get("out_of_memory", got.get("error")))


def add_floors(rows):
    """Each row with `micro_batch` b, `floor_mb`, `vs_floor`, `vs_plain`, `step_floor_mb` and
    `step_vs_floor` (None where a run it needs failed).

        floor      = train(plain at b) + (trainable weights' bytes if it accumulates else 0)
        step_floor = step(plain at b)  + (the same)
        train = peak - base   (memory_child: the allocator's peak above what it held at the start)
    """
    plain = {r["batch"]: r for r in rows if r["contender"] == "plain" and "train_mb" in r}
    top = max(r["batch"] for r in rows if r["contender"] == "plain")
    for r in rows:
        b = r["batch"] // r["accum_steps"] if r["contender"] == "accumulating" else r["batch"]
        ref = plain.get(b) if r["contender"] != "input" else None  # the control has no floor
        measured = "train_mb" in r
        r["micro_batch"] = b
        extra = ref["trainable_mb"] if ref and r["contender"] != "plain" else 0.0
        for key, floor in (("train_mb", "floor_mb"), ("step_mb", "step_floor_mb")):
            r[floor] = None if ref is None or not measured or ref.get(key) is None else ref[key] + extra
        r["vs_floor"] = ratio(r.get("train_mb"), r["floor_mb"])
        r["step_vs_floor"] = ratio(r.get("step_mb"), r["step_floor_mb"])
        r["vs_plain"] = ratio(r.get("train_mb"), plain.get(top, {}).get("train_mb"))
    return rows


def ratios(rows, n):
    """The issue's ratios at N = `n`: AccumulatingModel (overlap 1) over Keras's accumulation
    (train and step) and over plain fit (train), and overlap=2 over overlap=1 (time, train)."""
    def find(contender, k=1):
        return next((r for r in rows if r["contender"] == contender and r["overlap"] == k
                     and (r["accum_steps"] == n if contender != "plain" else r["batch"] == top)), {})
    top = max(r["batch"] for r in rows if r["contender"] == "plain")
    ours, two = find("accumulating"), find("accumulating", 2)
    return {"accum_steps": n,
            "accumulating_vs_keras": ratio(ours.get("train_mb"), find("keras").get("train_mb")),
            "accumulating_vs_plain": ratio(ours.get("train_mb"), find("plain").get("train_mb")),
            "step_accumulating_vs_keras": ratio(ours.get("step_mb"), find("keras").get("step_mb")),
            "overlap2_time": ratio(two.get("ms_update"), ours.get("ms_update")),
            "overlap2_memory": ratio(two.get("train_mb"), ours.get("train_mb"))}


def _label(contender, n, k):
    if contender == "plain":
        return "plain fit"
    if contender == "keras":
        return "Keras gradient_accumulation"
    if contender == "input":
        return "fit's input alone (linear)"
    return "AccumulatingModel" + (f" overlap={k}" if k > 1 else "")


def _counts(name, values):
    if isinstance(values, (str, int)) or not values:
        raise ValueError(f"{name} must be a non-empty list of positive integers, got {values!r}")
    return [check_count(name, v) for v in values]


def cli(argv=None):
    """`python -m gradlab bench memory` (or `bench --fit --memory`): the table for each model; with `--json` one
    JSON object, as `bench --json` prints: one result with `--model`, else
    `{"workloads": [one per model]}`."""
    p = argparse.ArgumentParser(prog="python -m gradlab bench memory", parents=[output_options()],
                                description="the allocator peak and time per update of plain fit, "
                                "AccumulatingModel and Keras's accumulation, each in a fresh process")
    p.add_argument("--model", choices=MEMORY_MODELS, default=None, help="one model (default: both)")
    p.add_argument("--batch", type=int, default=None,
                   help=f"B, the effective batch (default {', '.join(f'{k} {v}' for k, v in BATCH.items())})")
    p.add_argument("--accum", type=parse_counts, default=[1, 2, 4, 8, 16], metavar="N,N,...",
                   help="accum_steps to measure (1,2,4,8,16)")
    p.add_argument("--overlap", type=parse_counts, default=[1], metavar="K,...",
                   help="AccumulatingModel's overlapped micro-batches, at every N (1); "
                        "overlap=2 is measured at the largest N anyway")
    p.add_argument("--updates", type=int, default=3, help="optimizer updates per epoch (3)")
    p.add_argument("--epochs", type=int, default=1, help="measured epochs after the untimed one (1)")
    p.add_argument("--limit", type=int, default=None, metavar="MB",
                   help="instead: plain fit and AccumulatingModel at the largest N, each under "
                        "an allocator limit of MB: which runs")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child_main(args.child)
        return 0
    models = [args.model] if args.model else list(MEMORY_MODELS)
    options = dict(batch=args.batch, accum=args.accum, overlaps=args.overlap,
                   updates=args.updates, epochs=args.epochs)
    try:  # the arguments only: nothing has run yet
        for m in models:
            plan(m, **options)
        if args.limit is not None:
            check_count("limit", args.limit)
    except (ValueError, TypeError) as e:
        p.error(str(e))
    if args.limit is not None:
        results = [[fit_under_limit(c, args.limit, m, args.batch, max(args.accum), args.updates,
                                    args.epochs) for c in ("plain", "accumulating")] for m in models]
        formatter = format_limit
    else:
        results = [run_bench_memory(m, progress=not args.no_progress, **options) for m in models]
        formatter = format_bench_memory
    print(to_json(results[0] if len(results) == 1 else {"workloads": results}) if args.json
          else "\n\n".join(map(formatter, results)))
    return 0
