"""`RunConfig`: a bad field is refused naming it and its value; a config is frozen, normalised
(equal configs share a cache key) and bounded by the shipped data."""
import dataclasses

import numpy as np
import pytest

from gradlab.studies.cache import cache_key
from gradlab.studies.runs.run_config import RunConfig


# -- configs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, error, message", [
    ("strategy", "magic", ValueError, "strategy must be one of .*got 'magic'"),
    ("accum_steps", 0, ValueError, "accum_steps must be an integer >= 1, got 0"),
    ("accum_steps", 2.0, TypeError, r"accum_steps must be a positive integer, got 2.0 \(float\)"),
    ("micro_batch", True, TypeError, "micro_batch must be a positive integer, got True"),
    ("updates", -5, ValueError, "updates must be an integer >= 1, got -5"),
    ("optimizer", "lbfgs", ValueError, "optimizer must be one of sgd, momentum, adam; got 'lbfgs'"),
    ("lr", 0.0, ValueError, "lr must be a positive finite number, got 0.0"),
    ("lr", float("inf"), ValueError, "lr must be a positive finite number, got inf"),
    ("lr", "0.1", TypeError, r"lr must be a positive number, got '0.1' \(str\)"),
    ("model", "resnet", ValueError, "unknown model|model must be one of .*got 'resnet'"),
    ("seed", -1, ValueError, "seed must be an integer >= 0, got -1"),
    ("sampling", "shuffled", ValueError, "sampling must be one of paired, independent; got 'shuffled'"),
    ("eval_every", 0, ValueError, "eval_every must be an integer >= 1, got 0"),
])
def test_config_validation_names_the_field_and_value(field, value, error, message):
    with pytest.raises(error, match=message):
        RunConfig(**{field: value})


def test_config_is_frozen_normalised_and_bounded_by_the_data():
    c = RunConfig(accum_steps=np.int64(5), micro_batch=20, lr=1)
    assert (c.accum_steps, c.effective_batch, c.lr) == (5, 100, 1.0)
    assert type(c.accum_steps) is int and type(c.lr) is float
    assert cache_key(c.to_dict()) == cache_key(RunConfig(accum_steps=5, micro_batch=20, lr=1.0).to_dict())
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.lr = 0.1
    with pytest.raises(ValueError, match="accum_steps\\*micro_batch = 5\\*1000 = 5000 exceeds the 4,000"):
        RunConfig(accum_steps=5, micro_batch=1000)


@pytest.mark.parametrize("settings, message", [
    (dict(schedule="linear"), "schedule must be one of 'constant', 'cosine'; got 'linear'"),
    (dict(clip="micro", clip_norm=1.0), "clip='micro' .* strategy 'accumulate'"),
    (dict(short_by=4, accum_steps=4, micro_batch=5), "short_by must be smaller than accum_steps \\(4\\)"),
])
def test_a_setting_is_refused_naming_it(settings, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**settings)


def test_short_by_takes_examples_off_the_effective_batch():
    assert RunConfig(accum_steps=4, micro_batch=5, short_by=3).effective_batch == 17
