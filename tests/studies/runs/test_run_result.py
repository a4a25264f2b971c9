"""`RunResult` and its cache entry: a result survives the JSON round trip (a NaN loss noise as
null), and a config keeps the key it had before the settings existed."""
import math

import numpy as np

from gradlab.studies.runs.run_config import RunConfig
from gradlab.studies.runs.run_result import RunResult, run_key


def test_a_result_survives_its_cache_entry():
    config = RunConfig(accum_steps=2, micro_batch=5, updates=2)
    result = RunResult(config, np.array([2.5, 2.0]), np.array([0, 2]), np.array([0.1, 0.3]), 0.3,
                       0.01, 1.5, {"std": math.nan, "cv": 0.5}, peak_mb=None)
    d = result.to_dict()
    assert "peak_mb" not in d and d["loss_noise"]["std"] is None  # JSON has no NaN
    back = RunResult.from_dict(config, d, cached=True)
    assert back.cached and back.config == config
    np.testing.assert_array_equal(back.losses, result.losses)
    assert back.eval_updates.dtype == np.int64 and back.accuracy == 0.3
    assert math.isnan(back.loss_noise["std"]) and back.loss_noise["cv"] == 0.5


def test_settings_at_their_defaults_are_left_out_of_the_key():
    key = run_key(RunConfig())
    assert key["kind"] == "run" and "schedule" not in key and "short_by" not in key
    assert run_key(RunConfig(schedule="cosine"))["schedule"] == "cosine"


def test_run_key_names_a_global_dtype_policy_other_than_float32():
    import keras
    config = RunConfig(strategy="fused", accum_steps=4, micro_batch=25, updates=3)
    plain = run_key(config)
    assert "dtype_policy" not in plain  # float32: the key runs always had
    try:
        keras.config.set_floatx("float64")
        keras.config.set_dtype_policy("float64")
        wide = run_key(config)
    finally:
        keras.config.set_floatx("float32")
        keras.config.set_dtype_policy("float32")
    assert wide == {**plain, "dtype_policy": "float64"}
    assert run_key(config) == plain
