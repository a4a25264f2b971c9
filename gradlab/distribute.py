"""Accumulation under tf.distribute: every replica accumulates locally, one all-reduce per update.

    replica r of R holds n_r of the B examples and splits them into accum_steps micro-batches;
    local_r = (n_r / B) * mean gradient over its n_r examples      (fused_grads: no communication)
    g       = local_1 + ... + local_R = mean gradient over all B examples   (one all-reduce)

Keras 3's own `gradient_accumulation_steps` puts its all-reduce inside a conditional and
fails under a strategy ("merge_call called while defining a new graph", keras issue 20582).
Here the micro-batch loop holds no communication at all, and the loss and every gradient
travel in one batch all-reduce, which TensorFlow packs into one collective: one
`CollectiveReduceV2` per replica per update whatever `accum_steps` is, so communication
falls `accum_steps`-fold (`Mirrored.all_reduces_per_update()` counts them in the graph).

The same code runs on `MirroredStrategy` (towers inside one machine) and on
`MultiWorkerMirroredStrategy` (workers across machines, described by `TF_CONFIG`).

Lesson: notebooks/07-beyond-one-machine.ipynb
"""
from __future__ import annotations

import contextlib
import itertools
import threading

import tensorflow as tf
from keras.src.losses import loss as _keras_loss

from .accumulate import fused_grads
from .gradients import apply_update
from .microbatch import batch_size, offsets, split_sizes, take

# Op types that carry an all-reduce: the collective ops (MirroredStrategy's default on CPUs
# and virtual GPUs, MultiWorkerMirroredStrategy everywhere) and NCCL on physical GPUs.
ALL_REDUCE_OPS = ("CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3", "NcclAllReduce")
_made = itertools.count(1)


def make_distribution(devices=None):
    """`tf.distribute.MirroredStrategy(devices)`: one replica (tower) per device.

    TensorFlow chooses the communication: collective all-reduce (RING) when every device
    is a CPU, NCCL when every device is a physical GPU.

    Args:
        devices: device names, e.g. `tower_devices(2)`; None for every local GPU (or the CPU).
    Returns:
        a `tf.distribute.MirroredStrategy` with collective keys of its own.
    """
    # Every MirroredStrategy numbers its collectives from the same keys (group 1, instance
    # 100, ...), and the runtime remembers a key's shape for the whole process: a second
    # strategy whose all-reduce has another shape fails with "Shape mismatch in the
    # collective instance 100" and aborts all collectives until a restart. A fresh key
    # range per strategy, as TensorFlow's own tests do, lets a notebook make many.
    cls = tf.distribute.MirroredStrategy
    saved = cls._collective_key_base
    cls._collective_key_base = saved + 100_000 * next(_made)
    try:
        return cls(devices)
    finally:
        cls._collective_key_base = saved


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

    Lesson: notebooks/07-beyond-one-machine.ipynb
    """
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_seconds)
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)


def replica_loss_factor(distribution, loss_fn, y, pred):
    """`loss_fn(y, pred)` outside any strategy, divided by the same inside a replica.

    A Keras 3 loss object with a mean reduction divides by `num_replicas_in_sync` inside a
    strategy (so that a SUM all-reduce of equal shards gives the mean): the factor is R for
    it, 1 for a plain function, and in between for a function that adds its own terms to
    a loss object. `mirrored` switches the division off while it traces its step
    (`_losses_not_divided_by_replicas`); this measures it, for the lessons. A fresh thread
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


def make_update(strategy):
    """`update(x, y) -> mean loss` for a `Mirrored` gradlab strategy (model already built).

    `(x, y)` is the global batch, the same on every worker: replica r takes its shard
    `split_sizes(B, R)[r]`, accumulates it in `accum_steps` micro-batches, and the replicas
    add up their weighted gradients in one all-reduce; the optimizer applies the sum once.

    Args:
        strategy: a built `gradlab.strategies.Mirrored` (its `distribution`, `model`,
            `optimizer`, `loss_fn`, `accum_steps`, `clip_norm`).
    Returns:
        a callable `update(x, y)` returning the mean loss over the global batch as a tensor;
        `update.all_reduce_count()` counts the all-reduces per replica in its traced graph.

    Lesson: notebooks/07-beyond-one-machine.ipynb
    """
    return _Update(strategy)


class _Update:
    def __init__(self, strategy):
        self.dist = strategy.distribution
        self.model, self.optimizer = strategy.model, strategy.optimizer
        self.accum_steps, self.clip_norm = strategy.accum_steps, strategy.clip_norm
        self.loss_fn = strategy.loss_fn
        self._check_keras()
        self._fn = strategy._function(self._update)
        self._last = None

    def __call__(self, x, y):
        self._last = self.shard(x, y)
        return self._fn(*self._last)

    def shard(self, x, y):
        """Per-replica `(x_r, y_r)` on the replicas' devices, and B. Under
        MultiWorkerMirroredStrategy a worker makes only its own replicas' shards."""
        batch = batch_size(x, y)
        counts = split_sizes(batch, self.dist.num_replicas_in_sync)
        starts = offsets(counts)
        local = self.dist.extended.worker_devices

        def value_fn(a):
            def part(ctx):
                r = ctx.replica_id_in_sync_group  # global: worker index * local replicas + i
                with tf.device(local[r % len(local)]):
                    return tf.nest.map_structure(tf.convert_to_tensor, take(a, starts[r], counts[r]))
            return part
        distribute = self.dist.experimental_distribute_values_from_function
        return distribute(value_fn(x)), distribute(value_fn(y)), tf.constant(batch, tf.float32)

    def _update(self, x, y, batch):
        with gradients_already_reduced(self.optimizer), _losses_not_divided_by_replicas():
            loss = self.dist.run(self._replica_step, args=(x, y, batch))
        return self.dist.experimental_local_results(loss)[0]

    def _replica_step(self, x, y, batch):
        n = batch_size(x, y)
        loss, grads = fused_grads(self.model, self.loss_fn, x, y, split_sizes(n, self.accum_steps),
                                  None, self.optimizer.scale_loss)
        w = tf.cast(n, tf.float32) / batch
        connected = [j for j, g in enumerate(grads) if g is not None]
        # fused_grads has densified: IndexedSlices have as many rows as the replica saw
        # lookups, and slices of different lengths cannot be all-reduced.
        summed = tf.distribute.get_replica_context().all_reduce(
            tf.distribute.ReduceOp.SUM, [loss * w] + [grads[j] * w for j in connected])
        for j, g in zip(connected, summed[1:]):
            grads[j] = g
        # Every replica now holds the same global gradient; clip_norm clips it, once.
        apply_update(self.optimizer, grads, self.model.trainable_variables, self.clip_norm)
        return summed[0]

    def _check_keras(self):
        if not callable(getattr(_keras_loss, "scale_loss_for_distribution", None)):
            raise RuntimeError(
                "keras.src.losses.loss has no scale_loss_for_distribution: this Keras version "
                "scales losses under a strategy differently, and gradlab cannot make sure each "
                "replica's loss is divided exactly once")
        for opt in optimizer_chain(self.optimizer):
            if not callable(getattr(opt, "_all_reduce_sum_gradients", None)):
                raise RuntimeError(
                    f"{type(opt).__name__} has no _all_reduce_sum_gradients: this Keras version "
                    "reduces gradients differently, and gradlab cannot make sure the update "
                    "is all-reduced exactly once")

    def all_reduce_count(self):
        if self._last is None:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        graph = self._fn.get_concrete_function(*self._last).graph
        return count_all_reduces(graph) / len(self.dist.extended.worker_devices)


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


@contextlib.contextmanager
def gradients_already_reduced(optimizer):
    """While the update is traced, `apply_gradients` does not all-reduce again.

    Keras 3's TensorFlow optimizer SUM-all-reduces the gradients it gets in a replica
    context (`_all_reduce_sum_gradients`), and it cannot be called in cross-replica
    context (its merge_call needs a replica). Ours are summed already: a second all-reduce
    would be a second collective and multiply the update by R (measured: 2.0 on two
    replicas). Keras 2 skipped it with `apply_gradients(experimental_aggregate_gradients=
    False)`; Keras 3 has no switch, so this passes the gradients through, as that did.
    """
    chain = optimizer_chain(optimizer)
    for opt in chain:
        opt._all_reduce_sum_gradients = list
    try:
        yield
    finally:
        for opt in chain:
            del opt._all_reduce_sum_gradients


@contextlib.contextmanager
def _losses_not_divided_by_replicas():
    """While the replica step is traced, Keras loss objects return plain means.

    Inside a strategy a Keras 3 loss object divides its mean by `num_replicas_in_sync`
    (`keras.src.losses.loss.scale_loss_for_distribution`), so that a SUM all-reduce of equal
    shards gives the mean. gradlab weights replica r by `n_r / B` instead (exact for uneven
    shards), and a user's loss may add its own terms to a loss object, which Keras does not
    divide: no factor applied afterwards undoes a division of one term only (measured: a
    cross-entropy plus a penalty was off by 8e-3 after 3 updates). So there is no division.
    """
    saved = _keras_loss.scale_loss_for_distribution
    _keras_loss.scale_loss_for_distribution = lambda value: value
    try:
        yield
    finally:
        _keras_loss.scale_loss_for_distribution = saved


def optimizer_chain(optimizer):
    """The optimizer and any it wraps (a LossScaleOptimizer's inner_optimizer)."""
    chain = [optimizer]
    while getattr(chain[-1], "inner_optimizer", None) is not None:
        chain.append(chain[-1].inner_optimizer)
    return chain
