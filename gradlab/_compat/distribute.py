"""tf.distribute and the runtime: MirroredStrategy's collective keys, multi-worker mode,
whether TensorFlow has started.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import inspect

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


PRIVATE_NAMES = {
    "_collective_key_base": _probe_collective_keys,
    "_in_multi_worker_mode": _probe_multi_worker_mode,
    "tensorflow.python.eager.context.context": _probe_context_handle,
    "_context_handle": _probe_context_handle,
    "_initialized": _probe_context_handle,
}
