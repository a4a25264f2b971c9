"""The lab's settings table, its limits, and the configurations they make: by value."""
import pytest

from gradlab.lab import settings
from gradlab.studies.runs.run_config import RunConfig

TINY = dict(updates=20, eval_every=10, sampling="paired")


def test_one_row_per_setting_with_its_fields_and_its_measure():
    assert list(settings.SETTINGS) == [
        "exact", "uneven micro-batches", "cosine lr schedule",
        "BatchNorm, statistics per micro-batch", "BatchNorm, statistics per update",
        "clip each micro-batch", "clip the update once"]
    clip = settings.setting("clip each micro-batch")
    assert dict(clip.fields) == {"clip_norm": settings.CLIP_NORM, "clip": "micro"}
    assert (clip.reference, clip.right, clip.naive, clip.naive_strategy) == (
        "clip the update once", "clip the update once", "clip each micro-batch", "accumulate")
    with pytest.raises(TypeError):
        clip.fields["clip"] = "update"  # the table is read-only
    with pytest.raises(ValueError, match="setting must be one of .*got 'wrong'"):
        settings.setting("wrong")


def test_uneven_takes_half_of_n_off_each_update():
    assert settings.setting_fields("uneven micro-batches", 5) == {"short_by": 2}
    assert settings.short_by("uneven micro-batches", 5) == 2 and settings.short_by("exact", 5) == 0
    with pytest.raises(ValueError, match="need N >= 2 .* got N = 1"):
        settings.setting_fields("uneven micro-batches", 1)
    assert settings.setting_fields("cosine lr schedule", 4) == {"schedule": "cosine"}


def test_configs_one_per_seed_with_lr_as_the_slider_shows_it():
    made = settings.configs("fused", 4, 25, 0.123456, 3, "cosine lr schedule", seed=5, **TINY)
    assert [c.seed for c in made] == [5, 6, 7]
    assert made[0] == RunConfig(strategy="fused", accum_steps=4, micro_batch=25, lr=0.123,
                                seed=5, schedule="cosine", **TINY)
    with pytest.raises(ValueError, match="8192"):
        settings.configs("fused", 32, 256, 0.1, 1, "exact", **TINY)


def describe(config):
    """`(strategy, batchnorm, clip)`, clip None when nothing is clipped."""
    return config.strategy, config.batchnorm, config.clip if config.clip_norm else None


@pytest.mark.parametrize("name, right, naive", [
    ("exact", ("accumulate", None, None), ("keras", None, None)),
    ("cosine lr schedule", ("fused", None, None), ("keras", None, None)),
    ("BatchNorm, statistics per update", ("fused", "window", None), ("fused", "micro", None)),
    ("clip each micro-batch", ("fused", None, "update"), ("accumulate", None, "micro")),
])
def test_measure_plan_runs_the_large_batch_gradlab_and_the_naive_way(name, right, naive):
    def make(strategy, setting):
        return settings.configs(strategy, 4, 5, 0.1, 2, setting, **TINY)
    large, ours, theirs = settings.measure_plan("accumulate", name, make)
    assert [c.seed for c in large] == [0, 1]
    assert {(c.strategy, c.accum_steps, c.micro_batch) for c in large} == {("large_batch", 1, 20)}
    assert describe(ours[0]) == right
    assert describe(theirs[0]) == naive


def test_the_large_batch_twin_keeps_b_seed_and_setting():
    config = RunConfig(strategy="accumulate", accum_steps=4, micro_batch=25, short_by=2, seed=3,
                       batchnorm="window", clip_norm=1.0, clip="micro", **TINY)
    twin = settings.large_batch_twin(config)
    assert (twin.strategy, twin.accum_steps, twin.micro_batch, twin.short_by) == ("large_batch", 1, 98, 0)
    assert (twin.seed, twin.batchnorm, twin.clip) == (3, "micro", "update")
    assert settings.large_batch_twin(twin) == twin


def test_bad_starting_values_name_the_value():
    start = dict(strategy="fused", accum_steps=4, micro_batch=25, lr=0.5, seeds=1, name="exact",
                 x="updates", strategies=("fused",), **TINY)
    assert settings.check_start(**start) == ("fused",)
    for change, error, match in [
            (dict(accum_steps=0), ValueError, "accum_steps must be an integer >= 1, got 0"),
            (dict(micro_batch=300), ValueError, "micro_batch=256; got 4 and 300"),
            (dict(lr="fast"), TypeError, "lr must be a positive number"),
            (dict(lr=10), ValueError, "lr slider spans 0.001 to 3.16; got lr=10"),
            (dict(seeds=9), ValueError, "seeds slider reaches 5; got seeds=9"),
            (dict(seeds=True), TypeError, "seeds must be a positive integer"),
            (dict(name="wrong"), ValueError, "got 'wrong'"),
            (dict(x="time"), ValueError, "x must be one of updates, examples, seconds; got 'time'"),
            (dict(strategy="towers"), ValueError, "'towers' is not among the choices")]:
        with pytest.raises(error, match=match):
            settings.check_start(**{**start, **change})


def test_strategies_that_need_devices_are_offered_with_two():
    # tests/common.py made two logical CPUs, so `towers` is offered.
    assert {"large_batch", "fused", "accumulate", "host_average", "towers"} <= set(
        settings.available_strategies())
