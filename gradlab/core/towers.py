"""Average gradients across towers, and find devices to put towers on.

The averaging rule (the classic multi-GPU CIFAR-10 recipe, generalised to unequal towers)::

    g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k)

where tower t saw n_t examples and g_t is its mean gradient. With equal towers this is the
plain mean, computed as in the original: expand_dims, concat on a new tower axis, reduce_mean.

Lesson: notebooks/02-tower-averaging.ipynb
"""
from __future__ import annotations

import numbers

import tensorflow as tf

from .. import _compat
from .microbatch import check_count, weights as count_weights


def average_gradients(tower_grads, counts=None):
    """Average `(grad, var)` pairs across towers, variable by variable.

    Args:
        tower_grads: list over towers of lists of `(grad, var)` pairs, every tower listing
            the same variables in the same order (as `compute_gradients` returns them).
        counts: optional examples per tower; `None` means equal towers.
    Returns:
        list of `(mean_grad, var)`, the variable taken from the first tower. A gradient that
        is `None` in every tower stays `None`; `tf.IndexedSlices` stay sparse (their rows are
        concatenated and scaled, which sums duplicates exactly as the dense mean would).

    Works on eager tensors, inside `tf.function` and on TF1 graph tensors.
    """
    tower_grads = _check_towers(tower_grads)
    k = len(tower_grads)
    w = [1.0 / k] * k if counts is None else _check_counts(counts, k)
    averaged = []
    for pairs in zip(*tower_grads):
        var = pairs[0][1]
        grads = [g for g, _ in pairs]
        if all(g is None for g in grads):
            averaged.append((None, var))
        elif any(g is None for g in grads):
            raise ValueError(f"variable {_name(var)} has a gradient in some towers and None in others")
        elif any(isinstance(g, tf.IndexedSlices) for g in grads):
            averaged.append((_average_slices(grads, w), var))
        else:
            averaged.append((_average_dense(grads, w, counts is None), var))
    return averaged


def _average_dense(grads, w, equal):
    # A new leading "tower" axis, then reduce over it: the shape of the original recipe.
    stacked = tf.concat([tf.expand_dims(g, 0) for g in grads], axis=0)
    if equal:
        return tf.reduce_mean(stacked, axis=0)
    w = tf.reshape(tf.constant(w, dtype=stacked.dtype), [-1] + [1] * (stacked.shape.rank - 1))
    return tf.reduce_sum(w * stacked, axis=0)


def _average_slices(grads, w):
    slices = [g if isinstance(g, tf.IndexedSlices) else _as_slices(g) for g in grads]
    values = tf.concat([wt * s.values for wt, s in zip(w, slices)], axis=0)
    indices = tf.concat([tf.cast(s.indices, tf.int64) for s in slices], axis=0)
    return tf.IndexedSlices(values, indices, slices[0].dense_shape)


def _as_slices(g):
    g = tf.convert_to_tensor(g)
    rows = tf.range(tf.shape(g, out_type=tf.int64)[0])
    return tf.IndexedSlices(g, rows, tf.shape(g, out_type=tf.int64))


def _check_towers(tower_grads):
    if not isinstance(tower_grads, (list, tuple)) or len(tower_grads) == 0:
        raise ValueError(f"average_gradients needs at least one tower, got {tower_grads!r}")
    towers = [list(t) for t in tower_grads]
    lengths = [len(t) for t in towers]
    if len(set(lengths)) != 1:
        raise ValueError(f"towers have different numbers of gradients: {lengths}")
    for t, pairs in enumerate(towers):
        for p in pairs:
            if not (isinstance(p, (list, tuple)) and len(p) == 2):
                raise TypeError(f"tower {t} must hold (grad, var) pairs, got {p!r}")
    return towers


def _check_counts(counts, k):
    counts = list(counts)
    if len(counts) != k:
        raise ValueError(f"counts must give one example count per tower ({k}), got {counts!r}")
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or c <= 0:
            raise ValueError(f"counts must be positive numbers, got {counts!r}")
    return [float(v) for v in count_weights(counts)]


def check_device_names(devices):
    """`devices` as a list, if it is a list or tuple of device name strings; else TypeError."""
    if not isinstance(devices, (list, tuple)) or not all(isinstance(d, str) for d in devices):
        raise TypeError(f"devices must be a list of device name strings, got {devices!r}")
    return list(devices)


def _name(var):
    return getattr(var, "name", None) or getattr(var, "path", None) or repr(var)


def local_devices():
    """`(kind, names)`: the logical GPUs if there are any, else the logical CPUs; the one
    place gradlab looks for devices to put towers and replicas on."""
    gpus = tf.config.list_logical_devices("GPU")
    if gpus:
        return "GPU", [d.name for d in gpus]
    return "CPU", [d.name for d in tf.config.list_logical_devices("CPU")]


def tower_devices(n, gpu_memory_mb=1024):
    """`n` device names for `n` towers: real GPUs if there are `n`, else logical devices.

    - `n` or more GPUs: the first `n` of them.
    - fewer GPUs: GPU 0 split into `n` logical GPUs of `gpu_memory_mb` each.
    - no GPU: the CPU split into `n` logical CPUs (how a 2-core laptop shows towers).

    Logical devices can only be made before TensorFlow initialises its runtime, so call this
    first in a notebook. Afterwards it returns existing devices when there are enough, and
    otherwise raises a RuntimeError that asks for a kernel restart.

    Args:
        n: number of towers.
        gpu_memory_mb: memory of each logical GPU when one GPU is split.
    Returns:
        list of `n` device name strings, e.g. `['/device:CPU:0', '/device:CPU:1']`.
    """
    n = check_count("num_towers", n)
    gpus = tf.config.list_physical_devices("GPU")
    kind = "GPU" if gpus else "CPU"
    existing = tf.config.list_logical_devices(kind) if _compat.tf_initialised() else []
    if len(gpus) >= n:
        return [f"/device:GPU:{i}" for i in range(n)]
    if existing:
        if len(existing) >= n:
            return [d.name for d in existing[:n]]
        raise RuntimeError(
            f"TensorFlow is already initialised with {len(existing)} {kind} device(s), fewer "
            f"than the {n} towers asked for; logical devices can only be created before "
            f"TensorFlow starts. Restart the kernel and call tower_devices({n}) first.")
    physical = gpus[0] if gpus else tf.config.list_physical_devices("CPU")[0]
    config = (tf.config.LogicalDeviceConfiguration(memory_limit=gpu_memory_mb) if gpus
              else tf.config.LogicalDeviceConfiguration())
    tf.config.set_logical_device_configuration(physical, [config] * n)
    return [d.name for d in tf.config.list_logical_devices(kind)[:n]]
