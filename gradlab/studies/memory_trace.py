"""Memory over time: what TensorFlow's allocator holds while one call runs, sampled by a thread.

    trace(fn)  ->  Trace(ms, mib, peak)
        ms    the time of each sample, in ms since fn() was called (the first few before it)
        mib   what the allocator held at that sample, in MiB above what it held before the call
        peak  the allocator's own peak during the call, in MiB above the same start

A Python thread reads `tf.config.experimental.get_memory_info(device)["current"]` in a loop,
yielding the interpreter after each read (`time.sleep(0)`), while the calling thread runs fn().
A graph (a `tf.function`, `train_on_batch`) runs with the interpreter released, so the thread
samples while it runs; the yield keeps fn()'s own Python steps running at about their usual
pace. A sample is a snapshot: an allocation freed between two samples is missed, so a trace's
highest sample can lie under `peak`, which the allocator keeps itself (reset at the start).
Draw both (`figures.memory_timeline.plot_memory_trace`).

On a CPU, TensorFlow's BFC allocator (`TF_CPU_ALLOCATOR_USE_BFC=true`, set before TensorFlow
starts) keeps these statistics in every supported TensorFlow (2.21's default allocator does too);
where the allocator keeps none, `get_memory_info` reads 0 and `trace` raises rather than draw a
flat line.

Lesson: notebooks/11-memory-budget.ipynb, notebooks/12-recomputation.ipynb
"""
from __future__ import annotations

import threading
import time
from typing import NamedTuple

import numpy as np
import tensorflow as tf

MiB = 2**20


class Trace(NamedTuple):
    ms: np.ndarray    # sample times, ms since fn() was called
    mib: np.ndarray   # held at each sample, MiB above the start
    peak: float       # the allocator's peak during the call, MiB above the start


def trace(fn, device="CPU:0", pad_ms=2.0):
    """Call `fn()` once while a thread samples what `device`'s allocator holds.

    Args:
        fn: a zero-argument callable (one update, say); its result is dropped.
        device: a TensorFlow device name whose allocator keeps statistics, e.g. "CPU:0".
        pad_ms: milliseconds sampled before the call and after it returns (>= 0), so the
            trace starts and ends at the level held outside the call.
    Returns:
        a `Trace` (ms, mib, peak); see the module's docstring.
    Raises:
        ValueError: fn is not callable, pad_ms is negative or not finite, device is not a
            name, or the device's allocator keeps no statistics (it reads 0 with 1 MiB held:
            on a CPU, set TF_CPU_ALLOCATOR_USE_BFC=true before TensorFlow starts).
    """
    if not callable(fn):
        raise ValueError(f"fn must be a zero-argument callable, got {fn!r}")
    if not isinstance(pad_ms, (int, float)) or isinstance(pad_ms, bool) or not np.isfinite(pad_ms) or pad_ms < 0:
        raise ValueError(f"pad_ms must be a finite number of milliseconds >= 0, got {pad_ms!r}")
    if not isinstance(device, str):
        raise ValueError(f"device must be a device name such as 'CPU:0', got {device!r}")
    read = tf.config.experimental.get_memory_info
    with tf.device(device):
        probe = tf.fill([2**18], 0.0)  # 1 MiB: an allocator that keeps statistics counts it
    if read(device)["current"] == 0:
        raise ValueError(f"the allocator of {device!r} keeps no statistics (it reads 0 with 1 MiB held): "
                         "on a CPU set TF_CPU_ALLOCATOR_USE_BFC=true before TensorFlow starts")
    del probe
    tf.config.experimental.reset_memory_stats(device)  # peak := what is held now
    start = read(device)["current"]
    samples, stop, ready = [], threading.Event(), threading.Event()

    def poll():
        while True:
            samples.append((time.perf_counter(), read(device)["current"]))
            ready.set()
            if stop.is_set():
                return
            time.sleep(0)  # let the calling thread run its Python steps

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    ready.wait()
    time.sleep(pad_ms / 1000)
    began = time.perf_counter()
    try:
        fn()
        time.sleep(pad_ms / 1000)
    finally:
        stop.set()
        thread.join()
    peak = read(device)["peak"]
    at, held = np.array(samples, dtype=float).T
    return Trace(ms=(at - began) * 1000, mib=(held - start) / MiB, peak=(peak - start) / MiB)
