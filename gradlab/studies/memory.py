"""Memory of training in this process: compiling a step apart from running it.

    HighWater().mb() = VmHWM now - VmRSS when it was made        (VmHWM reset to VmRSS then)
    compile_mb = HighWater over the first step                    (tracing, XLA, first run)
    rss_mb     = HighWater over the steps after it
    tf_peak_mb = allocator peak during those steps - allocator bytes before them

The first step of a compiled function pays for tracing and compilation once per input
shape; the steps after it show what training itself holds (activations, gradients,
accumulators). TensorFlow's default CPU allocator need not keep statistics (2.21's does):
run the process with `TF_CPU_ALLOCATOR_USE_BFC=true` (set before TensorFlow starts), the BFC
allocator, which keeps them, to have `tf_peak_mb` there.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import tensorflow as tf

from ..core.microbatch import check_count
from ..core.towers import check_device_names


class HighWater:
    """The resident memory added at the peak since this object was made, in MB.

    Linux keeps one high-water mark per process (VmHWM); writing 5 to /proc/self/clear_refs
    resets it to the current size, so each HighWater measures its own peak. Where it cannot
    be reset (`resets` False), `mb()` is only the growth of the earlier high-water mark.
    """

    def __init__(self):
        self.resets = _reset_maxrss()
        self.start = _status_mb("VmRSS") if self.resets else maxrss_mb()

    def mb(self):
        return max(0.0, maxrss_mb() - self.start)


def measure(step, updates=3, devices=("CPU:0",)):
    """Call `step()` once, then `updates` more times, and report the memory of each part.

    Args:
        step: a zero-argument callable making one training update.
        updates: steady updates measured after the first.
        devices: the devices whose allocators `tf_peak_mb` sums (e.g. `["CPU:0"]`).
    Returns:
        dict `compile_mb`, `tf_peak_mb` (None where the allocator keeps no statistics),
        `held_mb` (what the allocators held before the measured steps, or None),
        `rss_mb`, `peak_mb` (the training memory: `tf_peak_mb`, else `rss_mb`) and
        `rss_reset` (False where VmHWM cannot be reset: then `compile_mb` and `rss_mb` are
        only growths of earlier high-water marks, lower bounds).
    """
    updates = check_count("updates", updates)
    devices = check_device_names(devices)
    first = HighWater()  # reset: else an earlier peak (importing TensorFlow) would hide this one
    step()
    compile_mb = first.mb()
    steady = HighWater()
    try:
        for d in devices:
            tf.config.experimental.reset_memory_stats(d)
        current = sum(tf.config.experimental.get_memory_info(d)["current"] for d in devices)
    except (ValueError, tf.errors.OpError):  # this allocator keeps no statistics
        current = None
    for _ in range(updates):
        step()
    tf_peak = None if current is None else (
        sum(tf.config.experimental.get_memory_info(d)["peak"] for d in devices) - current) / 2**20
    rss = steady.mb()
    return dict(peak_mb=rss if tf_peak is None else tf_peak, tf_peak_mb=tf_peak, rss_mb=rss,
                held_mb=None if current is None else current / 2**20,
                compile_mb=compile_mb, rss_reset=steady.resets)


def maxrss_mb():
    """This process's resident-set high-water mark in MB.

    On Linux `ru_maxrss` keeps, across fork and exec, the parent's size at the fork (here a
    TensorFlow process of a gigabyte or more), which would hide the child's own peak;
    VmHWM in /proc/self/status is the high-water mark of this process's memory alone.
    """
    hwm = _status_mb("VmHWM")
    if hwm is not None:
        return hwm
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024  # bytes there, KiB on Linux


def _status_mb(field):
    """`field` (VmHWM, VmRSS) of /proc/self/status in MB; None where there is no /proc."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return None


def _reset_maxrss():
    """Reset VmHWM to the current RSS (writing 5 to clear_refs, Linux >= 4.0); False where
    that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return _status_mb("VmHWM") is not None


def in_fresh_process(args, timeout, env=None):
    """`python -m <args>` in a fresh process whose TensorFlow allocator keeps statistics
    (`TF_CPU_ALLOCATOR_USE_BFC=true`, set before TensorFlow starts), with `env`'s variables
    added: the JSON object its last line of output prints, or `{"error": why}` if it failed
    or ran over `timeout` seconds."""
    env = dict(os.environ, TF_CPU_ALLOCATOR_USE_BFC="true", **(env or {}))
    try:
        proc = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:  # run() has killed the child
        return {"error": f"timed out after {timeout} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        return {"error": f"exit {proc.returncode}: " + (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])
