"""The memory of one strategy's `step`, each strategy in a fresh process.

    parent:  memory.in_fresh_process(["gradlab.studies.bench.step_memory", SPEC_JSON])
    child:   python -m gradlab.studies.bench.step_memory SPEC_JSON  ->  one JSON line on stdout
             (the model built, then `memory.measure(step, updates)`)

A fresh process holds nothing of another strategy's run, and its TensorFlow allocator keeps
statistics (`TF_CPU_ALLOCATOR_USE_BFC=true`, set by `in_fresh_process` before TensorFlow
starts): TensorFlow's default CPU allocator need not keep any (2.21's does), its BFC
allocator does.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import concurrent.futures
import json
import sys

import tensorflow as tf

from .. import memory
from .step_timing import base_name, bench_batch, bench_strategy
from ...core.towers import local_devices, tower_devices
from ...training.strategies import DEVICE_STRATEGIES

MEMORY_TIMEOUT = 600  # seconds for one memory process: import, build, trace, a few updates
FAILED = dict(peak_mb=None, tf_peak_mb=None, rss_mb=None, compile_mb=None, rss_reset=None,
              memory_device=None)


def measure_memory(name, model="mlp", accum_steps=10, micro_batch=10, optimizer="sgd",
                   inputs="numpy", updates=3, seed=0, towers=1):
    """`gradlab.studies.memory.measure` of strategy `name` in a fresh process, once the model is
    built: its first update (compiling) apart from `updates` more (training). With `towers`
    > 1, logical devices are made first, for `towers` and `mirrored`.

    Args:
        name: a bench strategy name (`fused+xla` included); the rest as `bench.run_bench`.
    Returns:
        the dict of `memory.measure` (`peak_mb`, `tf_peak_mb`, `rss_mb`, `compile_mb`,
        `rss_reset`) and `memory_device`; on failure the same keys as None and
        `memory_error`.

    Lesson: notebooks/17-the-lab.ipynb
    """
    spec = dict(name=name, model=model, accum_steps=accum_steps, micro_batch=micro_batch,
                optimizer=optimizer, inputs=inputs, updates=updates, seed=seed, towers=towers)
    result = memory.in_fresh_process([__name__, json.dumps(spec)], MEMORY_TIMEOUT)
    return dict(FAILED, memory_error=result["error"]) if "error" in result else result


def measure_all(c, bar):
    """`measure_memory` of every strategy of the config `c` (`step_timing.make_config`), in
    its order; `bar.update` as each process ends."""
    def one(name):
        try:
            towers = len(c["devices"]) if base_name(name) in DEVICE_STRATEGIES else 1
            return measure_memory(name, c["model"], c["accum_steps"], c["micro_batch"],
                                  c["optimizer"], c["inputs"], c["memory_updates"], c["seed"], towers)
        finally:
            bar.update()
    # Two at a time: a fresh TensorFlow process spends seconds importing; peaks are per process.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, c["strategies"]))


def child(spec):
    """The child's side: build `spec`'s strategy, measure it, print one JSON line."""
    if spec["towers"] > 1:
        tower_devices(spec["towers"])  # before TensorFlow starts, as in the parent
    else:
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)  # or TF takes it all at once
    x, y = bench_batch(spec["accum_steps"] * spec["micro_batch"], spec["inputs"], spec["seed"])
    s = bench_strategy(spec["name"], spec["model"], spec["accum_steps"], spec["optimizer"],
                       spec["seed"])
    kind, names = local_devices()
    many = kind == "GPU" and base_name(spec["name"]) in DEVICE_STRATEGIES
    used = [n.replace("/device:", "") for n in (names if many else names[:1])]
    result = memory.measure(lambda: s.step(x, y), spec["updates"], used)
    print(json.dumps(dict(result, memory_device=", ".join(used))))


if __name__ == "__main__":
    from ..._quiet import quiet
    quiet()  # the parent reads this process's stdout and stderr
    child(json.loads(sys.argv[1]))
