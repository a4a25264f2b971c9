"""Accumulation under tf.distribute: every replica accumulates locally, one all-reduce per update.

    replica r of R holds n_r of the B examples and splits them into accum_steps micro-batches;
    (S_r, G_r, D_r) = its sums of loss, gradient and normaliser   (loop_sum: no communication)
    g = (G_1 + ... + G_R) / (D_1 + ... + D_R)                      (one all-reduce of the sums)

Keras 3's own `gradient_accumulation_steps` puts its all-reduce inside a conditional and
fails under a strategy ("merge_call called while defining a new graph", keras issue 20582).
Here the micro-batch loop holds no communication at all, and the loss and every gradient
travel in one batch all-reduce, which TensorFlow packs into one collective: one
`CollectiveReduceV2` per replica per update whatever `accum_steps` is, so communication
falls `accum_steps`-fold (`all_reduces_per_update()` of a `mirrored` strategy counts them).

The same code runs on `MirroredStrategy` (towers inside one machine) and on
`MultiWorkerMirroredStrategy` (workers across machines, described by `TF_CONFIG`).

Lesson: notebooks/13-across-replicas.ipynb
"""
from __future__ import annotations

import threading

import tensorflow as tf

from .. import _compat
from .microbatch import batch_size, offsets, split_sizes, take

# Op types that carry an all-reduce: the collective ops (MirroredStrategy's default on CPUs
# and virtual GPUs, MultiWorkerMirroredStrategy everywhere) and NCCL on physical GPUs.
ALL_REDUCE_OPS = ("CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3", "NcclAllReduce")


def make_distribution(devices=None):
    """`tf.distribute.MirroredStrategy(devices)`: one replica (tower) per device.

    TensorFlow chooses the communication: collective all-reduce (RING) when every device
    is a CPU, NCCL when every device is a physical GPU. Each strategy gets collective keys
    of its own, so a notebook can make many.

    Args:
        devices: device names, e.g. `tower_devices(2)`; None for every local GPU (or the CPU).
    Returns:
        a `tf.distribute.MirroredStrategy`.
    """
    return _compat.mirrored_strategy(devices)


def replica_loss_factor(distribution, loss_fn, y, pred):
    """`loss_fn(y, pred)` outside any strategy, divided by the same inside a replica.

    A Keras 3 loss object with a mean reduction divides by `num_replicas_in_sync` inside a
    strategy (so that a SUM all-reduce of equal shards gives the mean): the factor is R for
    it, 1 for a plain function, and in between for a function that adds its own terms to
    a loss object. `mirrored` switches the division off while it traces its step
    (`_compat.losses_not_divided_by_replicas`); this measures it, for the lessons. A fresh thread
    runs outside the strategy, whose scope is per thread.

    Args:
        distribution: the `tf.distribute` strategy the loss will run under.
        loss_fn: `loss_fn(y, pred)`, a Keras loss object or any function.
        y, pred: a few labels and model outputs to measure on.
    Returns:
        float `f` such that `f * loss_fn(...)` inside a replica is the plain mean loss.
    """
    mean = lambda: tf.reduce_mean(tf.cast(loss_fn(y, pred), tf.float32))
    outside = {}
    thread = threading.Thread(target=lambda: outside.update(value=float(mean())))
    thread.start()
    thread.join()
    if "value" not in outside:
        raise RuntimeError("loss_fn failed outside the distribution strategy; call it on "
                           "(y, model(x)) by hand to see why")
    inside = float(distribution.experimental_local_results(distribution.run(mean))[0])
    if inside == 0.0 or outside["value"] == inside:
        return 1.0
    return outside["value"] / inside


def shard(distribution, parts):
    """Per-replica slices of the global batch `parts` (a nest of arrays), on their devices.

    Replica r takes rows `split_sizes(B, R)[r]`; under MultiWorkerMirroredStrategy a worker
    makes only its own replicas' shards (every worker holds the same global batch).
    """
    counts = split_sizes(batch_size(parts[0], parts[1]), distribution.num_replicas_in_sync)
    starts = offsets(counts)
    local = distribution.extended.worker_devices

    def part(ctx):
        r = ctx.replica_id_in_sync_group  # global: worker index * local replicas + i
        with tf.device(local[r % len(local)]):
            return tf.nest.map_structure(tf.convert_to_tensor, take(parts, starts[r], counts[r]))
    return distribution.experimental_distribute_values_from_function(part)


def count_all_reduces(graph):
    """All-reduce ops (`ALL_REDUCE_OPS`) in a traced graph, loop and branch bodies included.

    A graph with R local replicas holds R ops per all-reduce, one on each replica's device.
    Get the graph of a `tf.function` `f` with `f.get_concrete_function(*args).graph`.
    """
    graph_def = graph.as_graph_def()
    nodes = list(graph_def.node)
    for f in graph_def.library.function:  # bodies of while loops and conditionals
        nodes += list(f.node_def)
    return sum(node.op in ALL_REDUCE_OPS for node in nodes)
