"""K worker processes on loopback, each accumulating its shard; one large batch for reference.

    python -m gradlab multiworker --workers 2 --accum-steps 4 [--updates 3] [--batch 64] [--json]

Worker k of K is its own process with `TF_CONFIG = {"cluster": {"worker": [...]},
"task": {"type": "worker", "index": k}}`; all run `Mirrored` on a
`MultiWorkerMirroredStrategy` over the same global batches of real MNIST, take their
shard (`split_sizes(B, K)[k]` examples), accumulate it in `accum_steps` micro-batches,
and all-reduce once per update over gRPC. The parent trains the same updates with
`large_batch` in one process and reports the largest weight difference.

Every process is bounded: workers by `--timeout` (an alarm, and the same bound on every
collective), the parent by a deadline; on any exit (success, a failed worker, timeout,
Ctrl-C) the parent kills every worker's process group before it returns.

This module is the comparison and its report; `loopback_cluster` starts, waits for and
stops the processes, and `cluster_worker` is what each of them runs.

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

import argparse
import json
import math
import numbers
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import loopback_cluster as cluster
from .cluster_worker import LR, MODEL, OPTIMIZER, SEED, command, global_batch, training_data
from ..data import NUM_CLASSES, TRAIN_PER_CLASS
from .loopback_cluster import WorkerError  # re-exported: raised by `run`, caught by callers
from ...core.microbatch import check_count

TRAIN_EXAMPLES = TRAIN_PER_CLASS * NUM_CLASSES  # load_mnist()'s shipped training split
MAX_WORKERS = 16       # each worker is a whole TensorFlow process
MAX_TIMEOUT = 86_400   # one day: signal.alarm needs a finite whole number of seconds


def check_args(workers, accum_steps, updates, batch, timeout, fail_worker=None):
    """ValueError/TypeError naming the bad argument, before any process or TF work."""
    workers = check_count("workers", workers)
    if workers > MAX_WORKERS:
        raise ValueError(f"workers must be at most {MAX_WORKERS} (each is a whole TensorFlow "
                         f"process), got {workers}")
    accum_steps = check_count("accum_steps", accum_steps)
    updates = check_count("updates", updates)
    batch = check_count("batch", batch)
    if batch < workers * accum_steps:
        raise ValueError(f"batch must be at least workers * accum_steps = {workers * accum_steps} "
                         f"(every worker needs accum_steps non-empty micro-batches), got {batch}")
    if updates * batch > TRAIN_EXAMPLES:
        raise ValueError(f"updates * batch must be at most {TRAIN_EXAMPLES} (the shipped MNIST "
                         f"training examples), got {updates} * {batch} = {updates * batch}")
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout must be a number of seconds, got {timeout!r} "
                        f"({type(timeout).__name__})")
    if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):
        raise ValueError(f"timeout must be a positive number of seconds, at most {MAX_TIMEOUT}, "
                         f"got {timeout!r}")
    if fail_worker is not None:
        if isinstance(fail_worker, bool) or not isinstance(fail_worker, numbers.Integral):
            raise TypeError(f"fail_worker must be a worker index or None, got {fail_worker!r} "
                            f"({type(fail_worker).__name__})")
        if not 0 <= fail_worker < workers:
            raise ValueError(f"fail_worker must be a worker index in 0..{workers - 1}, "
                             f"got {fail_worker!r}")


def run(workers, accum_steps, updates=3, batch=64, timeout=120.0, fail_worker=None, fit=False):
    """Train `updates` updates on `workers` processes and in one large batch; compare.

    Args:
        workers, accum_steps: worker processes, micro-batches per worker per update.
        updates, batch: updates to train, global examples per update.
        timeout: seconds for the whole run; every worker is killed after it.
        fail_worker: for testing, the index of a worker that raises after its first update.
        fit: workers run `AccumulatingModel.fit` for one epoch of the `updates` batches, the
            reference is Keras's plain `fit` (`multiworker_fit`); the losses compared are
            the running means Keras logs after each batch.
    Returns:
        dict with workers, accum_steps, updates, batch, shards (examples per worker per
        update), all_reduces_per_update, max_loss_diff (the global mean loss each worker
        reports, vs large_batch), max_abs_diff (weights, any worker vs large_batch) and
        seconds (the multi-worker run, start-up included).
    Raises:
        WorkerError: a worker exited non-zero (its index and stderr tail) or time ran out.
    """
    check_args(workers, accum_steps, updates, batch, timeout, fail_worker)
    start = time.monotonic()
    addresses = [f"127.0.0.1:{port}" for port in cluster.free_ports(workers)]
    with tempfile.TemporaryDirectory(prefix="gradlab-multiworker-") as tmp:
        procs, logs = [], []
        try:
            for k in range(workers):
                logs.append(open(Path(tmp) / f"worker{k}.log", "wb"))
                procs.append(cluster.start(
                    command(k, accum_steps, updates, batch, timeout, tmp, k == fail_worker, fit),
                    cluster.worker_env(addresses, k), logs[-1]))
            reference_of = _fit_reference if fit else _large_batch
            reference, reference_losses = reference_of(updates, batch)  # while workers start
            cluster.wait(procs, logs, start + timeout, timeout)
            seconds = time.monotonic() - start
            results = [dict(np.load(Path(tmp) / f"worker{k}.npz")) for k in range(workers)]
        finally:
            cluster.stop(procs)
            for log in logs:
                log.close()
    diffs = [max(float(np.max(np.abs(r[f"w{j}"] - w))) for j, w in enumerate(reference))
             for r in results]
    loss_diffs = [float(np.max(np.abs(r["losses"] - reference_losses))) for r in results]
    return {"workers": workers, "accum_steps": accum_steps, "updates": updates, "batch": batch,
            "shards": [int(r["examples"]) for r in results],
            "all_reduces_per_update": float(results[0]["all_reduces"]),
            "max_loss_diff": max(loss_diffs), "max_abs_diff": max(diffs),
            "seconds": round(seconds, 2)}


def cli(argv=None):
    """`python -m gradlab multiworker ...`: run, print a report (or JSON as the last line)."""
    parser = argparse.ArgumentParser(
        prog="python -m gradlab multiworker",
        description="K worker processes on 127.0.0.1 (MultiWorkerMirroredStrategy, TF_CONFIG), "
                    "each accumulating its shard of every global batch of MNIST, against one "
                    "large batch in one process.")
    parser.add_argument("--workers", type=int, required=True, help="worker processes (K >= 1)")
    parser.add_argument("--accum-steps", type=int, required=True,
                        help="micro-batches per worker per update (N >= 1)")
    parser.add_argument("--updates", type=int, default=3, help="optimizer updates (default 3)")
    parser.add_argument("--batch", type=int, default=64,
                        help="global examples per update (default 64)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds before every process is stopped (default 120)")
    parser.add_argument("--fail-worker", type=int, default=None, metavar="K",
                        help="testing: worker K raises after its first update")
    parser.add_argument("--fit", action="store_true",
                        help="workers run AccumulatingModel.fit, against Keras's plain fit")
    parser.add_argument("--json", action="store_true", help="print the result as JSON, last line")
    args = parser.parse_args(argv)
    try:
        check_args(args.workers, args.accum_steps, args.updates, args.batch, args.timeout,
                   args.fail_worker)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    previous = signal.signal(signal.SIGTERM, cluster.exit_on_sigterm)  # so `finally` stops the workers
    try:
        result = run(args.workers, args.accum_steps, args.updates, args.batch, args.timeout,
                     args.fail_worker, args.fit)
    except WorkerError as e:
        print(f"error: {e}", file=sys.stderr)
        if e.stderr_tail:
            print(e.stderr_tail, file=sys.stderr)
        if args.json:
            print(json.dumps({"workers": args.workers, "accum_steps": args.accum_steps,
                              "error": str(e), "failed_worker": e.worker}))
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(json.dumps(result) if args.json else format_result(result, args.fit))
    return 0


def format_result(result, fit=False):
    """The report of one `run` result: the shards, all-reduces per update and the largest
    weight difference from the reference (`large_batch`, or plain fit with `fit`).

    Lesson: notebooks/14-communication.ipynb
    """
    return (f"{'AccumulatingModel.fit, ' if fit else ''}"
            f"{result['workers']} workers x accum_steps={result['accum_steps']}: "
            f"{result['updates']} updates of {result['batch']} MNIST examples, shards "
            f"{'+'.join(map(str, result['shards']))}, "
            f"all-reduces per update: {result['all_reduces_per_update']:g}\n"
            f"max |weights(workers) - weights({'plain fit' if fit else 'large_batch'})| "
            f"= {result['max_abs_diff']:.3g}"
            f"   ({result['seconds']:.1f} s)")


# -- the references: the same updates in this process -----------------------------------

def _large_batch(updates, batch):
    from ..build import build_strategy
    s = build_strategy("large_batch", MODEL, OPTIMIZER, LR, seed=SEED)
    data = training_data()
    losses = [s.step(*global_batch(data, u, batch)) for u in range(updates)]
    return [w.numpy() for w in s.model.trainable_variables], np.array(losses)


def _fit_reference(updates, batch):
    from .multiworker_fit import reference
    return reference(MODEL, OPTIMIZER, LR, SEED, updates, batch)
