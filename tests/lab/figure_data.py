"""Hand-made results and groups for the tests of the lab's figures."""
from types import SimpleNamespace

import numpy as np

from gradlab.studies.runs.run_config import RunConfig
from gradlab.studies.runs.run_result import RunResult

UPDATES = 40


def result(accum_steps=1, micro_batch=100, seed=0, losses=None, accuracy=0.9, noise_std=0.1,
           strategy="fused", seconds_per_update=0.002, **setting):
    config = RunConfig(strategy=strategy, accum_steps=accum_steps, micro_batch=micro_batch,
                       updates=UPDATES, eval_every=20, seed=seed, sampling="paired", **setting)
    losses = np.linspace(2.0, 0.5, UPDATES) if losses is None else np.asarray(losses, float)
    return RunResult(config, losses, np.array([0, 20, 40][:1 + len(losses) // 20]),
                     np.array([0.1, 0.8, accuracy][:1 + len(losses) // 20]), accuracy,
                     seconds_per_update, 1.0, {"std": noise_std})


def group(*results, reference=None, label=None, peak_mb=None):
    return SimpleNamespace(results=list(results), reference=reference or {}, peak_mb=peak_mb,
                           label=label or f"N={results[0].config.accum_steps}", color=None)
