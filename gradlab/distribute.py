"""Accumulation under tf.distribute: each replica accumulates, one all-reduce per update.

    replica r of R holds n_r of the B examples, split into accum_steps micro-batches;
    local_r = (n_r / B) * (mean gradient over its n_r examples)      (fused_grads, no communication)
    g       = all_reduce_sum(local_r) = mean gradient over all B examples     (once per update)

Keras 3's own `gradient_accumulation_steps` puts its all-reduce inside a conditional and
fails under a strategy ("merge_call called while defining a new graph", keras issue 20582);
here the loop over micro-batches holds no communication at all, so the number of
collectives per update is one whatever `accum_steps` is: communication falls N-fold.
All gradients (and the loss) travel as one flat vector, so "one all-reduce" is literal:
one `CollectiveReduceV2` per replica in the traced graph (`all_reduce_count`).

The same code runs on `MirroredStrategy` (towers inside one machine) and on
`MultiWorkerMirroredStrategy` (workers across machines, configured by `TF_CONFIG`).

Lesson: notebooks/07-beyond-one-machine.ipynb
"""
from __future__ import annotations

import keras
import tensorflow as tf

from .accumulate import fused_grads
from .gradients import apply_update
import contextlib
MODE='skip'
from .microbatch import offsets, split_sizes

# Op types that move gradients between replicas: CollectiveAllReduce (the default of
# MirroredStrategy on CPUs, RING, and of MultiWorkerMirroredStrategy) and NCCL on GPUs.
ALL_REDUCE_OPS = ("CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3",
                  "NcclAllReduce")
# The reductions for which a Keras 3 loss object divides its result by the number of
# replicas (keras.src.losses.loss.reduce_values -> scale_loss_for_distribution).
_KERAS_MEAN_REDUCTIONS = ("sum_over_batch_size", "mean", "mean_with_sample_weight")


def make_distribution(devices=None):
    """`tf.distribute.MirroredStrategy(devices)`: one replica (tower) per device.

    TensorFlow picks the communication: `CollectiveAllReduce` (RING) when every device is
    a CPU, NCCL when every device is a physical GPU.
    """
    return tf.distribute.MirroredStrategy(devices)


def make_multi_worker(timeout_seconds=None):
    """`tf.distribute.MultiWorkerMirroredStrategy` for the cluster described by `TF_CONFIG`.

    `TF_CONFIG` names every worker and this process's index, e.g.
    `{"cluster": {"worker": ["host0:port", "host1:port"]}, "task": {"type": "worker", "index": 0}}`.
    Every worker must run the same program with the same batches. `timeout_seconds`
    bounds each collective, so a dead peer ends in an error instead of a hang.
    """
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_seconds)
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)


def check_batch(batch, num_replicas, accum_steps):
    """Examples per replica, `split_sizes(batch, num_replicas)`, after checking that every
    replica gets at least `accum_steps` examples (a ValueError, before any TF work)."""
    if batch < num_replicas * accum_steps:
        raise ValueError(
            f"a batch of {batch} examples is too small for {num_replicas} replicas of "
            f"accum_steps={accum_steps} micro-batches; it needs at least "
            f"{num_replicas * accum_steps}")
    return split_sizes(batch, num_replicas)


def unscaled_loss(loss_fn, num_replicas):
    """`loss_fn` made to return the plain mean over the examples it sees, in any context.

    A Keras 3 loss object with a mean reduction divides its result by `num_replicas_in_sync`
    inside a strategy, so that Keras's own SUM all-reduce of per-replica gradients gives a
    mean. gradlab weights each replica by its example count instead (`n_r / B`, exact for
    uneven shards), so that division is undone here, once. A plain function (a mean or
    per-example losses, averaged by `mean_loss`) never divides and is returned as is.
    """
    if (num_replicas > 1 and isinstance(loss_fn, keras.losses.Loss)
            and loss_fn.reduction in _KERAS_MEAN_REDUCTIONS):
        return lambda y, pred: loss_fn(y, pred) * num_replicas
    return loss_fn


def make_update(strategy):
    """The update of a `Mirrored` gradlab strategy: `update(x, y) -> mean loss`.

    `x, y` is the global batch (the same on every worker); replica r takes its shard,
    accumulates it in `accum_steps` micro-batches, and all replicas sum their weighted
    gradients in one all-reduce. The optimizer then applies the reduced gradient once, in
    cross-replica context (see `_DistributedUpdate`).
    """
    return _DistributedUpdate(strategy)


class _DistributedUpdate:
    def __init__(self, strategy):
        self.dist = strategy.distribution
        self.model, self.optimizer = strategy.model, strategy.optimizer
        self.accum_steps, self.clip_norm = strategy.accum_steps, strategy.clip_norm
        self.loss_fn = unscaled_loss(strategy.loss_fn, self.dist.num_replicas_in_sync)
        self._fn = strategy._function(self._update)
        self._last = None

    def __call__(self, x, y):
        inputs = self.shard(x, y)
        self._last = inputs
        return self._fn(*inputs)

    def shard(self, x, y):
        """Per-replica `(x_r, y_r)`: replica r takes `split_sizes(B, R)[r]` examples, placed
        on its device. Under MultiWorkerMirroredStrategy each worker makes only its own."""
        batch, num_replicas = len(x), self.dist.num_replicas_in_sync
        counts = split_sizes(batch, num_replicas)
        starts = offsets(counts)
        local = self.dist.extended.worker_devices

        def part(a):
            def value_fn(ctx):
                r = ctx.replica_id_in_sync_group
                with tf.device(local[r % len(local)]):
                    return tf.convert_to_tensor(a[starts[r]:starts[r] + counts[r]])
            return self.dist.experimental_distribute_values_from_function(value_fn)
        return part(x), part(y), tf.constant(batch, tf.float32)

    def _update(self, x, y, batch):
        if MODE == "keras":
            loss = self.dist.run(self._replica_step, args=(x, y, batch))
        else:
            with _already_reduced(self.optimizer):
                loss = self.dist.run(self._replica_step, args=(x, y, batch))
        return self.dist.experimental_local_results(loss)[0]

    def _replica_step(self, x, y, batch):
        n = x.shape[0]
        loss, grads = fused_grads(self.model, self.loss_fn, x, y, split_sizes(n, self.accum_steps))
        w = tf.cast(n, tf.float32) / batch
        connected = [j for j, g in enumerate(grads) if g is not None]
        # Dense by now (fused_grads densifies): IndexedSlices of different lengths on
        # different replicas could not be all-reduced. One call for the loss and every
        # gradient: TensorFlow packs a batch all-reduce into one collective (concat, reduce, split).
        ctx = tf.distribute.get_replica_context()
        reduced = ctx.all_reduce(tf.distribute.ReduceOp.SUM,
                                 [loss * w] + [grads[j] * w for j in connected])
        for j, g in zip(connected, reduced[1:]):
            grads[j] = g
        apply_update(self.optimizer, grads, self.model.trainable_variables, self.clip_norm)
        return reduced[0]

    def all_reduce_count(self):
        """All-reduce ops per replica in the traced update (after at least one step)."""
        if self._last is None:
            raise RuntimeError("all_reduce_count needs one step first (nothing is traced yet)")
        graph = self._fn.get_concrete_function(*self._last).graph
        ops = list(graph.get_operations())
        for f in graph._functions.values():  # bodies of while loops and conditionals
            ops += list(f.graph.get_operations()) if hasattr(f, "graph") else []
        count = sum(op.type in ALL_REDUCE_OPS for op in ops)
        return count / len(self.dist.extended.worker_devices)


@contextlib.contextmanager
def _already_reduced(optimizer):
    optimizer._all_reduce_sum_gradients = lambda grads_and_vars: list(grads_and_vars)
    try:
        yield
    finally:
        del optimizer._all_reduce_sum_gradients
