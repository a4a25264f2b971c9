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

Lesson: notebooks/07-beyond-one-machine.ipynb
"""
from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .data import NUM_CLASSES, TRAIN_PER_CLASS
from ..core.microbatch import check_count

TRAIN_EXAMPLES = TRAIN_PER_CLASS * NUM_CLASSES  # load_mnist()'s shipped training split
MAX_WORKERS = 16       # each worker is a whole TensorFlow process
MAX_TIMEOUT = 86_400   # one day: signal.alarm needs a finite whole number of seconds
MODEL, OPTIMIZER, LR, SEED = "mlp", "momentum", 0.1, 0  # SGD(0.1, momentum=0.9) on the MLP


class WorkerError(RuntimeError):
    """A worker failed or timed out; `worker` is its index (None: several, on timeout)."""

    def __init__(self, message, worker=None, stderr_tail=""):
        super().__init__(message)
        self.worker, self.stderr_tail = worker, stderr_tail


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
    addresses = [f"127.0.0.1:{port}" for port in _free_ports(workers)]
    with tempfile.TemporaryDirectory(prefix="gradlab-multiworker-") as tmp:
        procs, logs = [], []
        try:
            for k in range(workers):
                log = open(Path(tmp) / f"worker{k}.log", "wb")
                logs.append(log)
                cmd = [sys.executable, "-m", "gradlab.studies.multiworker", "--worker", str(k),
                       "--accum-steps", str(accum_steps),
                       "--updates", str(updates), "--batch", str(batch),
                       "--timeout", str(timeout), "--out", tmp]
                if k == fail_worker:
                    cmd.append("--fail")
                if fit:
                    cmd.append("--fit")
                # Own session: the whole process group can be killed, and Ctrl-C in a
                # terminal reaches only the parent, which then stops the workers itself.
                procs.append(subprocess.Popen(
                    cmd, env=_worker_env(addresses, k), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True))
            reference_of = _fit_reference if fit else _large_batch
            reference, reference_losses = reference_of(updates, batch)  # while workers start
            _wait(procs, logs, start + timeout, timeout)
            seconds = time.monotonic() - start
            results = [dict(np.load(Path(tmp) / f"worker{k}.npz")) for k in range(workers)]
        finally:
            _stop(procs)
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
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)  # so `finally` stops the workers
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
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{'AccumulatingModel.fit, ' if args.fit else ''}"
              f"{result['workers']} workers x accum_steps={result['accum_steps']}: "
              f"{result['updates']} updates of {result['batch']} MNIST examples, shards "
              f"{'+'.join(map(str, result['shards']))}, "
              f"all-reduces per update: {result['all_reduces_per_update']:g}\n"
              f"max |weights(workers) - weights({'plain fit' if args.fit else 'large_batch'})| "
              f"= {result['max_abs_diff']:.3g}"
              f"   ({result['seconds']:.1f} s)")
    return 0


# -- the parent's side ------------------------------------------------------------------
def _free_ports(n):
    """`n` distinct free TCP ports on 127.0.0.1 (all held open until all are chosen)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _worker_env(addresses, k):
    env = dict(os.environ)
    env["TF_CONFIG"] = json.dumps({"cluster": {"worker": addresses},
                                   "task": {"type": "worker", "index": k}})
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["CUDA_VISIBLE_DEVICES"] = ""  # K processes sharing one GPU would fight over its memory
    return env


def _wait(procs, logs, deadline, timeout):
    """Until every worker exits 0; a WorkerError as soon as one fails or time runs out.

    When one worker dies, its peers fail too, blocked in an all-reduce with it: a watcher
    thread per worker records exit times, so the report names the worker that failed first.
    """
    exits = {}  # worker index -> (time of exit, exit code)

    def watch(k, p):
        code = p.wait()
        exits[k] = (time.monotonic(), code)

    for k, p in enumerate(procs):
        threading.Thread(target=watch, args=(k, p), daemon=True).start()
    while True:
        if any(code != 0 for _, code in list(exits.values())):
            time.sleep(0.2)  # peers failing in consequence: recorded, not reported as first
            failed = sorted((t, k, code) for k, (t, code) in list(exits.items()) if code != 0)
            _, k, code = failed[0]
            then = [j for _, j, _ in failed[1:]]
            also = f" (then worker(s) {then} too)" if then else ""
            raise WorkerError(f"worker {k} of {len(procs)} failed with exit code {code}{also}",
                              k, _tail(logs[k]))
        if len(exits) == len(procs):
            return
        if time.monotonic() > deadline:
            running = [k for k in range(len(procs)) if k not in exits]
            tails = [f"worker {k}:\n{_tail(logs[k])}" for k in running if _tail(logs[k])]
            raise WorkerError(f"timed out after {timeout:g} s: worker(s) {running} still running",
                              running[0] if len(running) == 1 else None, "\n".join(tails))
        time.sleep(0.05)


def _tail(log, lines=15):
    log.flush()
    text = Path(log.name).read_text(errors="replace").strip().splitlines()
    return "\n".join(f"  | {line}" for line in text[-lines:])


def _stop(procs):
    """SIGTERM every worker's process group still running, then SIGKILL after 3 s."""
    alive = [p for p in procs if p.poll() is None]
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        for p in alive:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + grace
        for p in alive:
            try:
                p.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        alive = [p for p in alive if p.poll() is None]
        if not alive:
            return


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def _large_batch(updates, batch):
    from .build import build_strategy
    s = build_strategy("large_batch", MODEL, OPTIMIZER, LR, seed=SEED)
    data = _data()
    losses = [s.step(*_global_batch(data, u, batch)) for u in range(updates)]
    return [w.numpy() for w in s.model.trainable_variables], np.array(losses)


def _fit_reference(updates, batch):
    from .multiworker_fit import reference
    return reference(MODEL, OPTIMIZER, LR, SEED, updates, batch)


# -- the worker's side: `python -m gradlab.studies.multiworker --worker K ...` -------------------
def _data():
    from .data import load_mnist
    return load_mnist()


def _global_batch(data, u, batch):
    return data.x_train[u * batch:(u + 1) * batch], data.y_train[u * batch:(u + 1) * batch]


def _worker(argv):
    parser = argparse.ArgumentParser(prog="python -m gradlab.studies.multiworker --worker K")
    parser.add_argument("--worker", type=int, required=True)
    parser.add_argument("--accum-steps", type=int, required=True)
    parser.add_argument("--updates", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--fail", action="store_true")
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args(argv)
    # Bounded even if the parent is killed outright: SIGALRM's default action ends us.
    signal.alarm(int(args.timeout) + 5)

    from ..core import distribute
    from .build import build_strategy
    dist = distribute.make_multi_worker(timeout_seconds=args.timeout)
    if args.fit:
        from .multiworker_fit import worker
        r = worker(dist, MODEL, OPTIMIZER, LR, SEED, args.accum_steps, args.updates, args.batch,
                   args.fail)
        return _save(args, r["losses"], r["examples"], r["all_reduces"], r["weights"])
    s = build_strategy("mirrored", MODEL, OPTIMIZER, LR, args.accum_steps, SEED, distribution=dist)
    data = _data()
    losses = []
    for u in range(args.updates):
        if args.fail and u == 1:
            raise RuntimeError(f"worker {args.worker}: failing on purpose after update 1 (--fail)")
        losses.append(s.step(*_global_batch(data, u, args.batch)))
    shards = distribute.shard(dist, _global_batch(data, 0, args.batch))
    local = [int(x.shape[0]) for x, _ in dist.experimental_local_results(shards)]
    return _save(args, losses, sum(local), s.all_reduces_per_update(),
                 [w.numpy() for w in s.model.trainable_variables])


def _save(args, losses, examples, all_reduces, weights):
    out = Path(args.out) / f"worker{args.worker}.npz"
    tmp = out.with_suffix(".tmp.npz")
    np.savez(tmp, losses=np.array(losses), examples=examples, all_reduces=all_reduces,
             **{f"w{j}": w for j, w in enumerate(weights)})
    os.replace(tmp, out)  # the parent never reads a half-written file
    return 0


def _worker_main(argv):
    try:
        code = _worker(argv)
    except BaseException:  # SystemExit from argparse included
        import traceback
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a TensorFlow worker whose peers are blocked in a collective
    # can take many seconds to shut its gRPC server down, and nothing is left to clean.
    os._exit(code)


if __name__ == "__main__":
    _worker_main(sys.argv[1:])
