"""lockstep: two runs on the same batches, their weight gap update by update."""
import dataclasses

import pytest

from gradlab.studies.runs.lockstep import lockstep
from gradlab.studies.runs.run_config import RunConfig

TINY = dict(updates=4, eval_every=2, sampling="paired", micro_batch=20)


def test_one_run_against_itself_never_parts():
    config = RunConfig(**TINY)
    gap = lockstep(config, config)
    assert gap.shape == (4,) and not gap.any()


def test_accumulation_stays_at_rounding_and_another_rate_parts_at_once():
    large = RunConfig(**{**TINY, "micro_batch": 40})
    gap = lockstep(large, RunConfig(**TINY, strategy="fused", accum_steps=2), updates=3)
    assert gap.shape == (3,) and gap[0] == 0 and gap.max() < 1e-5
    gap = lockstep(large, dataclasses.replace(large, lr=5.0), updates=2)
    assert gap[0] == 0 and gap[1] > 1e-3  # the first update parts them


def test_runs_of_other_batches_are_refused():
    with pytest.raises(ValueError, match="one B"):
        lockstep(RunConfig(**TINY), RunConfig(**{**TINY, "micro_batch": 10}))
    with pytest.raises(ValueError, match="paired"):
        lockstep(RunConfig(**{**TINY, "sampling": "independent"}), RunConfig(**{**TINY, "sampling": "independent"}))
