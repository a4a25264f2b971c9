"""The allocator's peak and the wall-clock time of a few calls, measured in rounds.

    peak[name] = median (or least) over rounds of (allocator peak during one call - bytes held before it), MiB
    ms[name]   = the call's wall-clock milliseconds, one per round

The allocator must keep statistics: on a CPU, set `TF_CPU_ALLOCATOR_USE_BFC=true` before
TensorFlow starts. One large tensor is made and freed first, so that the allocator's region
grows before the measured calls and not inside one (later requests are cut from that region);
each call then runs once unmeasured (tracing). Every round calls each callable once, in turn, so
a slow moment of a shared machine falls on all of them alike. A chunk the allocator reuses can
only add to a call's peak, so `statistic="min"`, the least reading, is nearest the call's own need.

Lesson: notebooks/11-memory-budget.ipynb, notebooks/12-recomputation.ipynb, notebooks/22-how-this-course-measures.ipynb (the least)
"""
from __future__ import annotations

import time

import numpy as np
import tensorflow as tf


def call_peaks(calls, rounds=5, device="CPU:0", reserve_bytes=2**30, statistic="median"):
    """Measure each of `calls` (name -> zero-argument callable) `rounds` times, in turn.

    Args:
        calls: dict of name -> callable, e.g. one training update each.
        rounds: measured rounds (after one unmeasured call of each).
        device: the device whose allocator is read (`tf.config.experimental.get_memory_info`).
        reserve_bytes: the float32 tensor made and freed first (0: none).
        statistic: "median" or "min", over the rounds' peaks.
    Returns:
        `(peak, ms)`: dict name -> the median (or least) peak above what was held before the call, in MiB;
        dict name -> float64 array of the `rounds` wall-clock milliseconds.
    """
    if int(rounds) < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds!r}")
    reduce = {"median": np.median, "min": np.min}.get(statistic)
    if reduce is None:
        raise ValueError(f"statistic must be 'median' or 'min', got {statistic!r}")
    if reserve_bytes:
        with tf.device(device):
            tf.fill([int(reserve_bytes) // 4], 1.0)  # taken and freed at once
    for f in calls.values():
        f()  # traces, unmeasured
    peaks, ms = {name: [] for name in calls}, {name: [] for name in calls}
    for _ in range(int(rounds)):
        for name, f in calls.items():
            tf.config.experimental.reset_memory_stats(device)
            held, start = tf.config.experimental.get_memory_info(device)["current"], time.perf_counter()
            f()
            ms[name].append(1000 * (time.perf_counter() - start))
            peaks[name].append((tf.config.experimental.get_memory_info(device)["peak"] - held) / 2**20)
    return ({name: float(reduce(p)) for name, p in peaks.items()},
            {name: np.asarray(t, dtype=np.float64) for name, t in ms.items()})
