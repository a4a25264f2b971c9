"""The memory of a run's settings, measured where no earlier run can reach it: a fresh process.

    peak_mb = the allocator's peak over `updates` updates of the run's strategy, after one
              untimed update (tracing), in a fresh process with TF_CPU_ALLOCATOR_USE_BFC=true
    cached under the settings that decide memory (MEMORY_FIELDS), not the seed, lr or length
    repeated_peaks: the same measurement in `repeats` fresh processes of their own, to see how
              far one configuration's peak moves from process to process (at a few MiB, the
              allocator peak of the same settings can differ between processes by a weight copy
              or more)

    model_sizes: what the peak is made of, counted from the model: its weights (one gradient,
    and the gradient sum that accumulation adds, are each that size) and the float32 layer
    outputs one example adds (activations; a lower estimate: views are not counted, and a
    layer's internal tensors are not outputs). Accumulating N micro-batches of b examples
    instead of one batch of B = N·b saves activations·(B - b) and costs one gradient sum:

        saves memory  <=>  activations per example · (B - b)  >  weights

The resident memory a run adds inside a long-lived process (a notebook's kernel) depends on
what ran before it: TensorFlow's allocators and Python keep what earlier runs freed. A fresh
process measures the run's settings alone, so the lab can show one number per configuration
whatever the order of its runs. With a GPU the GPU's allocator (`GPU:0`) is read.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np

from ..studies import memory

MEMORY_FIELDS = ("strategy", "accum_steps", "micro_batch", "optimizer", "model", "batchnorm",
                 "clip_norm", "clip", "short_by")
CHILD_TIMEOUT = 300  # seconds: import TensorFlow, build, trace, a few updates


def allocator_peak(config, cache=None, updates=3):
    """The fresh-process allocator peak of `config`'s settings, from `cache` if it is there.

    Args:
        config: an `RunConfig`.
        cache: a `ResultCache` (None: no cache); a measurement is stored, a failure is not.
        updates: measured updates after the first.
    Returns:
        dict `peak_mb` (the peak, all the allocator held: weights, optimizer, batch,
        activations), `compile_peak_mb` (over the first update, apart) and `device`; or
        `{"error": why}` when the process failed.
    """
    key = {"allocator_peak": _settings(config), "updates": updates}
    return _cached(cache, key, lambda: _in_child(config, updates))


def repeated_peaks(config, repeats=3, cache=None, updates=3):
    """`allocator_peak`'s measurement in `repeats` fresh processes, cached as one entry.

    Returns:
        dict `peaks_mb` (one peak per process, in order), or `{"error": why}` if one failed.
    """
    key = {"allocator_peaks": _settings(config), "updates": updates, "repeats": repeats}

    def measure():
        peaks = []
        for _ in range(repeats):
            one = _in_child(config, updates)
            if "error" in one:
                return one
            peaks.append(one["peak_mb"])
        return {"peaks_mb": peaks}
    return _cached(cache, key, measure)


def _settings(config):
    """The fields of `config` that decide memory (the cache key), checked to be a RunConfig."""
    from ..studies.runs.run_config import RunConfig
    if not isinstance(config, RunConfig):
        raise TypeError(f"config must be an experiments.RunConfig, got {config!r}")
    return {f: getattr(config, f) for f in MEMORY_FIELDS}


def _cached(cache, key, measure):
    """`cache`'s entry for `key`, else `measure()`, stored unless it failed."""
    found = None if cache is None else cache.get(key)
    if found is not None:
        return found
    result = measure()
    if cache is not None and "error" not in result:
        cache.put(key, result)
    return result


def model_sizes(model="mlp"):
    """`dict(weights_mb, activations_mb)`: float32 MiB of `model`'s weights and of the layer
    outputs of one example (its input included; Reshape and Flatten, views, left out)."""
    from ..studies.models import make_model
    m = make_model(model)
    views = ("Reshape", "Flatten")
    floats = int(np.prod(m.inputs[0].shape[1:])) + sum(
        int(np.prod(layer.output.shape[1:])) for layer in m.layers
        if type(layer).__name__ not in views)
    return dict(weights_mb=m.count_params() * 4 / 2**20, activations_mb=floats * 4 / 2**20)


def _in_child(config, updates):
    return memory.in_fresh_process(["gradlab.lab.run_memory", json.dumps(config.to_dict()), str(updates)],
                                   CHILD_TIMEOUT)


def measure(config, updates=3):
    """In this process (the child): one update of `config`'s strategy, then `updates` more,
    on the run's own first batches; the allocator's peak of each part."""
    import tensorflow as tf

    from ..studies.data import load_mnist
    from ..studies.runs.run_loop import run_strategy, sample_order

    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    device = "GPU:0" if gpus else "CPU:0"
    config = dataclasses.replace(config, updates=1 + updates)
    d, strategy = load_mnist(), run_strategy(config)
    batches = [(d.x_train[idx], d.y_train[idx]) for idx in sample_order(config, len(d.x_train))]
    tf.config.experimental.reset_memory_stats(device)
    strategy.step(*batches[0])
    compile_peak = tf.config.experimental.get_memory_info(device)["peak"]
    tf.config.experimental.reset_memory_stats(device)
    for x, y in batches[1:]:
        strategy.step(x, y)
    peak = tf.config.experimental.get_memory_info(device)["peak"]
    return dict(peak_mb=peak / 2**20, compile_peak_mb=compile_peak / 2**20, device=device)


if __name__ == "__main__":
    from .._quiet import quiet
    quiet()  # the parent reads this process's stdout
    from ..studies.runs.run_config import RunConfig
    print(json.dumps(measure(RunConfig(**json.loads(sys.argv[1])), int(sys.argv[2]))))
