"""Devices to put towers on: logical CPUs or GPUs, made before TensorFlow starts.

Lesson: notebooks/02-tower-averaging.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat
from .microbatch import check_count


def check_device_names(devices):
    """`devices` as a list, if it is a list or tuple of device name strings; else TypeError."""
    if not isinstance(devices, (list, tuple)) or not all(isinstance(d, str) for d in devices):
        raise TypeError(f"devices must be a list of device name strings, got {devices!r}")
    return list(devices)


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
    first in a notebook. Afterwards it returns `n` existing logical GPUs, else `n` existing
    logical CPUs, and otherwise raises a RuntimeError that asks for a kernel restart.

    Args:
        n: number of towers.
        gpu_memory_mb: memory of each logical GPU when one GPU is split.
    Returns:
        list of `n` device name strings, e.g. `['/device:CPU:0', '/device:CPU:1']`.
    """
    n = check_count("num_towers", n)
    gpus = tf.config.list_physical_devices("GPU")
    kind = "GPU" if gpus else "CPU"
    if len(gpus) >= n:
        return [f"/device:GPU:{i}" for i in range(n)]
    if _compat.tf_initialised():
        # Too late to split anything: take n logical GPUs, else n logical CPUs (a 1-GPU host
        # whose notebook split the CPU first, as lesson 02 does), else ask for a restart.
        for have in (tf.config.list_logical_devices("GPU"), tf.config.list_logical_devices("CPU")):
            if len(have) >= n:
                return [d.name for d in have[:n]]
        raise RuntimeError(
            f"TensorFlow is already initialised with {len(have)} logical CPU(s) and "
            f"{len(tf.config.list_logical_devices('GPU'))} logical GPU(s), fewer than the {n} "
            f"towers asked for; logical devices can only be created before TensorFlow starts. "
            f"Restart the kernel and call tower_devices({n}) first.")
    physical = gpus[0] if gpus else tf.config.list_physical_devices("CPU")[0]
    config = (tf.config.LogicalDeviceConfiguration(memory_limit=gpu_memory_mb) if gpus
              else tf.config.LogicalDeviceConfiguration())
    tf.config.set_logical_device_configuration(physical, [config] * n)
    return [d.name for d in tf.config.list_logical_devices(kind)[:n]]
