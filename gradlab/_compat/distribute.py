"""tf.distribute and the runtime: MirroredStrategy's collective keys (and a user's strategy's instance keys), multi-worker mode,
whether TensorFlow has started.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import inspect
import weakref

import keras
import tensorflow as tf

from ._probing import _broken, _probed, _made, _patch_lock


def _probe_collective_keys():
    cls = tf.distribute.MirroredStrategy
    base = getattr(cls, "_collective_key_base", None)
    if not isinstance(base, int):
        raise _broken("MirroredStrategy has no integer _collective_key_base")
    with _patch_lock:
        cls._collective_key_base = base + 7
        try:
            made = cls(["/cpu:0"])
        finally:
            cls._collective_key_base = base
    if getattr(made.extended, "_collective_key_base", None) != base + 7:
        raise _broken("MirroredStrategy no longer numbers its collectives from the class's "
                      "_collective_key_base when it is made")


@_probed(_probe_collective_keys)
def mirrored_strategy(devices=None):
    """`tf.distribute.MirroredStrategy(devices)` with collective keys of its own.

    Every MirroredStrategy numbers its collectives from the same keys, and the runtime
    remembers a key's shape for the whole process: a second strategy whose all-reduce has
    another shape fails with "Shape mismatch in the collective instance 100" and aborts all
    collectives until a restart. A fresh key range per strategy (as TensorFlow's own tests
    do) lets a notebook make many.
    """
    cls = tf.distribute.MirroredStrategy
    with _patch_lock:
        saved = cls._collective_key_base
        cls._collective_key_base = saved + 100_000 * next(_made)
        try:
            return cls(devices)
        finally:
            cls._collective_key_base = saved


def _probe_multi_worker_mode():
    # The strategy's own override: one single-worker MultiWorkerMirroredStrategy would start
    # collectives in this process to show it.
    source = inspect.getsource(inspect.getmodule(tf.distribute.MultiWorkerMirroredStrategy))
    if "def _in_multi_worker_mode(self)" not in source or \
            tf.distribute.get_strategy().extended._in_multi_worker_mode() is not False:
        raise _broken("tf.distribute strategies no longer say whether they span workers "
                      "through extended._in_multi_worker_mode()")


@_probed(_probe_multi_worker_mode)
def reducible_by_keras(logs, strategy):
    """Under MultiWorkerMirroredStrategy, Keras's fit reduces the logs of a step with
    `strategy.reduce("MEAN", value, axis=0)`, which fails on scalars, and every metric
    result is one (keras 3.15, `reduce_per_replica`): give them a leading axis of 1."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and \
            strategy.extended._in_multi_worker_mode():
        return {k: tf.reshape(v, [1]) for k, v in logs.items()}
    return logs


def _probe_context_handle():
    # Must not start the runtime itself: tower_devices asks before making logical devices.
    from tensorflow.python.eager import context
    ctx = context.context()
    if "_context_handle" not in vars(ctx) or (ctx._context_handle is not None) != ctx._initialized:
        raise _broken("TensorFlow's eager context no longer holds the runtime's handle in "
                      "_context_handle (None until it starts)")


@_probed(_probe_context_handle)
def tf_initialised():
    """Whether TensorFlow's runtime has started (logical devices can no longer be made)."""
    from tensorflow.python.eager import context
    return context.context()._context_handle is not None


def _probe_run_metadata():
    from tensorflow.python.eager import context
    ctx = context.context()
    missing = [name for name in ("enable_run_metadata", "disable_run_metadata", "enable_graph_collection",
                                 "disable_graph_collection", "export_run_metadata")
               if not callable(getattr(ctx, name, None))]
    if missing:
        raise _broken(f"TensorFlow's eager context no longer collects functions' partition graphs ({missing})")


@_probed(_probe_context_handle)
@_probed(_probe_run_metadata)
def device_sends(fn, *args):
    """Call a fresh trace of `fn(*args)` once and return `(partitions, sends)`: how many per-device
    graphs TensorFlow cut that one step into, and `[(source device, tensor), ...]`, one per
    `_Send` op, the copies it inserted. TensorFlow has no public call for a function's partition
    graphs (TF1 has `RunOptions(output_partition_graphs=True)`); lesson 02 prints them for a TF2 step.

    `fn` is a `tf.function` (or a plain callable that traces a new function when called). A
    `tf.function` is re-wrapped, `tf.function(fn.python_function)`, so the step is traced and cut
    anew whether or not `fn` ran before: every call reads one step's graphs, the same count each
    time. The call runs the step once (an update, for a training step). Graphs the runtime
    collected before the call (it can keep collecting after a first `device_sends`) are drained
    first, so earlier steps' copies are not counted.
    """
    from tensorflow.python.eager import context
    python_function = getattr(fn, "python_function", None)
    if callable(python_function):  # a tf.function: a fresh one, traced and partitioned by this call
        fn = tf.function(python_function)
    ctx = context.context()
    ctx.enable_run_metadata()
    ctx.enable_graph_collection()  # before the first call: partitioning happens once, then
    try:
        ctx.export_run_metadata()  # drains (and discards) what was collected before this call
        fn(*args)
        metadata = ctx.export_run_metadata()
    finally:
        ctx.disable_graph_collection()
        ctx.disable_run_metadata()
    graphs = [p for f in metadata.function_graphs for p in f.partition_graphs]
    crossing = [g for g in graphs if any(n.op == "_Send" for n in g.node)]
    sends = [(n.attr["send_device"].s.decode().split("/device:")[-1], n.input[0])
             for g in crossing for n in g.node if n.op == "_Send"]
    if not crossing and len({n.device for g in graphs for n in g.node}) > 1:
        raise _broken("a function placed on several devices exported no _Send ops")
    return len(crossing), sends


# A user's MirroredStrategy, made any number of times: every tf.distribute.MirroredStrategy
# made without gradlab numbers its collectives from the same group and instance keys, and the
# runtime remembers each key's shape for the whole process: gradlab's all-reduces under a
# second such strategy met the first one's shapes ("Shape mismatch in the collective instance
# 106"). Moving a strategy's instance keys to a range of its own, before gradlab traces
# anything under it, makes them independent.
_own_keys = weakref.WeakSet()


def _probe_instance_keys():
    made = tf.distribute.MirroredStrategy(["/cpu:0"])
    keys = getattr(made.extended, "_collective_keys", None)
    table = getattr(keys, "_instance_key_table", None)
    if not isinstance(table, dict) or not table or not all(
            isinstance(group, dict) and all(isinstance(v, int) for v in group.values())
            for group in table.values()):
        raise _broken("MirroredStrategy's extended._collective_keys no longer holds an "
                      "_instance_key_table of {group: {device: next instance key}}")
    for group_key, group in table.items():
        for device in group:
            group[device] = 12345
            if keys.get_instance_key(group_key, device) != 12345:
                raise _broken("CollectiveKeys.get_instance_key no longer reads _instance_key_table")


@_probed(_probe_instance_keys)
def own_instance_keys(strategy):
    """Give `strategy` (a one-machine `tf.distribute.MirroredStrategy`) collective instance keys
    no other strategy of this process uses, once per strategy; other strategies (several
    workers must agree on their keys) are left as they are."""
    if type(strategy) is not tf.distribute.MirroredStrategy or strategy in _own_keys:
        return
    _own_keys.add(strategy)
    for group in strategy.extended._collective_keys._instance_key_table.values():
        # the devices of a group advance together; a fresh range 100,000 keys wide
        fresh = max(group.values(), default=0) + 100_000 * next(_made)
        for device in group:
            group[device] = fresh


PRIVATE_NAMES = {
    "_collective_key_base": _probe_collective_keys,
    "_in_multi_worker_mode": _probe_multi_worker_mode,
    "tensorflow.python.eager.context.context": _probe_context_handle,
    "_context_handle": _probe_context_handle,
    "_Send": _probe_run_metadata,
    "_initialized": _probe_context_handle,
    "_collective_keys": _probe_instance_keys,
    "_instance_key_table": _probe_instance_keys,
}
