"""What a run recorded, and where the cache keeps it.

    losses[t]          the mean training loss of update t's effective batch (before it)
    eval_accuracy[k]   test accuracy after eval_updates[k] updates
    cache entry        run_key(config) -> RunResult.to_dict()   (`cache.ResultCache`)

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import dataclasses
import math
import warnings

import keras
import numpy as np

from ..cache import jsonable
from .run_config import RunConfig

@dataclasses.dataclass
class RunResult:
    """What one run recorded. `losses[t]` is the mean training loss of update t's effective
    batch (before the update); `eval_accuracy[k]` the test accuracy after `eval_updates[k]`
    updates; `accuracy` the final one; `loss_noise` is `noise.loss_noise(losses)` as a dict."""
    config: RunConfig
    losses: np.ndarray
    eval_updates: np.ndarray
    eval_accuracy: np.ndarray
    accuracy: float
    seconds_per_update: float  # steady state: the first (tracing) update excluded
    seconds: float             # the whole run: data, model, tracing, evaluation
    loss_noise: dict
    cached: bool = False
    peak_mb: float | None = None  # resident memory the run added at its peak (Linux), MB

    def to_dict(self):
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
             if f.name not in ("config", "cached")}
        if d["peak_mb"] is None:
            del d["peak_mb"]
        return jsonable(d)

    @classmethod
    def from_dict(cls, config, d, cached=False):
        arrays = {k: np.asarray(d[k], dtype=np.float64) for k in ("losses", "eval_accuracy")}
        return cls(config, arrays["losses"], np.asarray(d["eval_updates"], dtype=np.int64),
                   arrays["eval_accuracy"], float(d["accuracy"]), float(d["seconds_per_update"]),
                   float(d["seconds"]), _nan_for_null(d["loss_noise"]), cached,
                   None if d.get("peak_mb") is None else float(d["peak_mb"]))


def _nan_for_null(loss_noise):
    """The cache stores a NaN loss noise (a run too short to measure it) as null."""
    return {k: math.nan if v is None else v for k, v in loss_noise.items()}


def run_key(config):
    """The cache key of `config` (a dict): its fields, less the settings at their defaults."""
    # Settings at their defaults are left out: a config keeps the key it had before they existed.
    d = config.to_dict()
    for f in dataclasses.fields(RunConfig):
        if f.name in _SETTINGS and d[f.name] == f.default:
            del d[f.name]
    # The run trains under Keras's global dtype policy (float64, mixed_float16...): another
    # run, so another key; float32, the default, keeps the keys runs had before.
    policy = keras.config.dtype_policy().name
    if policy != "float32":
        d["dtype_policy"] = policy
    return {"kind": "run", **d}


_SETTINGS = ("schedule", "batchnorm", "clip_norm", "clip", "short_by")


def cached_result(store, config):
    """The `RunResult` of `config` in the `ResultCache` `store`, or None (a malformed entry is
    reported and treated as missing, so it is recomputed)."""
    entry = store.get(run_key(config))
    if entry is None:
        return None
    try:
        return RunResult.from_dict(config, entry, cached=True)
    except (KeyError, TypeError, ValueError) as e:
        warnings.warn(f"discarding malformed cached result for {config} ({type(e).__name__}: "
                      f"{e}); it will be recomputed", RuntimeWarning, stacklevel=3)
        return None
