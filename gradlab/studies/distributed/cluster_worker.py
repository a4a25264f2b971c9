"""One worker of `multiworker`: `python -m gradlab.studies.distributed.cluster_worker --worker K ...`.

    every worker: Mirrored(MultiWorkerMirroredStrategy, accum_steps) on the same global batches
                  (its shard: split_sizes(B, K)[k] examples), one all-reduce per update
    writes:       OUT/worker{K}.npz = losses, examples, all_reduces, w0, w1, ...

With `--fit` it runs `multiworker_fit.worker` (`AccumulatingModel.fit`) instead. The worker
bounds itself (an alarm of `--timeout` + 5 s, the same bound on every collective), so it
ends even if the parent is killed outright. `MODEL`, `OPTIMIZER`, `LR`, `SEED` and
`global_batch` are what the parent's reference trains too.

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

import numpy as np

from .loopback_cluster import say_failed

MODEL, OPTIMIZER, LR, SEED = "mlp", "momentum", 0.1, 0  # SGD(0.1, momentum=0.9) on the MLP


def command(k, accum_steps, updates, batch, timeout, out, fail=False, fit=False):
    """The argv that starts worker `k`, writing its result in the directory `out`."""
    cmd = [sys.executable, "-m", "gradlab.studies.distributed.cluster_worker", "--worker", str(k),
           "--accum-steps", str(accum_steps),
           "--updates", str(updates), "--batch", str(batch), "--timeout", str(timeout),
           "--out", str(out)]
    return cmd + (["--fail"] if fail else []) + (["--fit"] if fit else [])


def training_data():
    """The shipped MNIST, which every worker and the reference read alike."""
    from ..data import load_mnist
    return load_mnist()


def global_batch(data, u, batch):
    """Update `u`'s global batch: examples [u * batch, (u + 1) * batch) of the training set."""
    return data.x_train[u * batch:(u + 1) * batch], data.y_train[u * batch:(u + 1) * batch]


def make_multi_worker(timeout_seconds=None):
    """`tf.distribute.MultiWorkerMirroredStrategy` for the cluster that `TF_CONFIG` describes.

        TF_CONFIG = {"cluster": {"worker": ["host0:port", "host1:port"]},
                     "task": {"type": "worker", "index": 0}}      # this process: worker 0

    Every worker runs the same program on the same global batches; each takes its shard.
    On CPUs each worker is one replica; on GPUs, one replica per local GPU.

    Args:
        timeout_seconds: bound on every collective, so that a dead peer ends in an error
            instead of a hang; None waits forever.
    Returns:
        a `tf.distribute.MultiWorkerMirroredStrategy` (call once per process, first thing).

    Lesson: notebooks/14-communication.ipynb
    """
    import tensorflow as tf

    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_seconds)
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)


def train(argv):
    """Parse the worker's arguments, train its updates, save its result; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m gradlab.studies.distributed.cluster_worker --worker K")
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

    from ...core import distribute
    from ..build import build_strategy
    dist = make_multi_worker(timeout_seconds=args.timeout)
    if args.fit:
        from .multiworker_fit import worker
        r = worker(dist, MODEL, OPTIMIZER, LR, SEED, args.accum_steps, args.updates, args.batch,
                   args.fail)
        return save(args, r["losses"], r["examples"], r["all_reduces"], r["weights"])
    s = build_strategy("mirrored", MODEL, OPTIMIZER, LR, args.accum_steps, SEED, distribution=dist)
    data = training_data()
    losses = []
    for u in range(args.updates):
        if args.fail and u == 1:
            raise RuntimeError(f"worker {args.worker}: failing on purpose after update 1 (--fail)")
        losses.append(s.step(*global_batch(data, u, args.batch)))
    shards = distribute.shard(dist, global_batch(data, 0, args.batch))
    local = [int(x.shape[0]) for x, _ in dist.experimental_local_results(shards)]
    return save(args, losses, sum(local), s.all_reduces_per_update(),
                [w.numpy() for w in s.model.trainable_variables])


def save(args, losses, examples, all_reduces, weights):
    """Write `worker{K}.npz` in `args.out` whole (renamed into place); returns 0."""
    out = Path(args.out) / f"worker{args.worker}.npz"
    tmp = out.with_suffix(".tmp.npz")
    np.savez(tmp, losses=np.array(losses), examples=examples, all_reduces=all_reduces,
             **{f"w{j}": w for j, w in enumerate(weights)})
    os.replace(tmp, out)  # the parent never reads a half-written file
    return 0


def main(argv):
    """`train(argv)`, its traceback printed on any failure; exits without teardown."""
    try:
        code = train(argv)
    except BaseException:  # SystemExit from argparse included
        import traceback
        say_failed(sys.stderr)  # before a peer, blocked with this worker, fails in turn
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a TensorFlow worker whose peers are blocked in a collective
    # can take many seconds to shut its gRPC server down, and nothing is left to clean.
    os._exit(code)


if __name__ == "__main__":
    from ..._quiet import quiet
    quiet()  # the parent reads this process's stderr
    main(sys.argv[1:])
