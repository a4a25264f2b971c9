"""What the lab can run: its settings (one table), its limits, and the configurations they make.

    config(seed) = RunConfig(strategy, accum_steps=N, micro_batch=b, lr=lr, seed=seed, **setting)
    twin(config) = the same B, seed and setting as one large batch (`large_batch`, N = 1)

A setting is one of the ways accumulation can differ from a large batch. Each row of
`SETTINGS` says what it adds to a RunConfig and how Measure runs it: the large batch's
setting, gradlab's setting, and the naive way's setting and strategy.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import dataclasses
from types import MappingProxyType

from ..core.microbatch import check_count
from ..core.towers import local_devices
from ..studies.runs import run_config
from ..training.strategies import DEVICE_STRATEGIES, STRATEGIES

MAX_ACCUM_STEPS = 32
MAX_MICRO_BATCH = 256
MAX_SEEDS = 5
LR_EXPONENTS = (-3, 0.5)  # the lr slider spans 10**-3 .. 10**0.5
X_AXES = ("updates", "examples", "seconds")
CLIP_NORM = 1.0           # the clipping settings' threshold on the global gradient norm


@dataclasses.dataclass(frozen=True)
class Setting:
    """One row of the table: a setting's RunConfig fields and how Measure runs it.

    Attributes:
        name: what the dropdown shows.
        fields: what it adds to every RunConfig (`short_by=None` means N // 2).
        reference, right, naive: the names of the settings Measure gives the large batch,
            gradlab's way and the naive way.
        naive_strategy: the naive way's strategy.
    """
    name: str
    fields: MappingProxyType
    reference: str
    right: str
    naive: str
    naive_strategy: str


def _row(name, fields, measured=None, naive_strategy="keras"):
    reference, right, naive = measured or (name, name, name)
    return Setting(name, MappingProxyType(fields), reference, right, naive, naive_strategy)


_BN_MICRO, _BN_UPDATE = "BatchNorm, statistics per micro-batch", "BatchNorm, statistics per update"
_CLIP_EACH, _CLIP_ONCE = "clip each micro-batch", "clip the update once"
_BN = ((_BN_MICRO, _BN_UPDATE, _BN_MICRO), "fused")
_CLIP = ((_CLIP_ONCE, _CLIP_ONCE, _CLIP_EACH), "accumulate")

SETTINGS = {s.name: s for s in (
    _row("exact", {}),
    _row("uneven micro-batches", {"short_by": None}),
    _row("cosine lr schedule", {"schedule": "cosine"}),
    _row(_BN_MICRO, {"batchnorm": "micro"}, *_BN),
    _row(_BN_UPDATE, {"batchnorm": "window"}, *_BN),
    _row(_CLIP_EACH, {"clip_norm": CLIP_NORM, "clip": "micro"}, *_CLIP),
    _row(_CLIP_ONCE, {"clip_norm": CLIP_NORM, "clip": "update"}, *_CLIP),
)}


def setting(name):
    """The row of `SETTINGS` called `name` (ValueError naming it if there is none)."""
    if name not in SETTINGS:
        raise ValueError(f"setting must be one of {', '.join(map(repr, SETTINGS))}; got {name!r}")
    return SETTINGS[name]


def available_strategies():
    """The `STRATEGIES` a lab run can use here: `towers` and `mirrored` need two or more devices.

    With one device `towers` would be `large_batch` with extra steps. Call
    `gl.tower_devices(2)` first (before TensorFlow starts) to get it on a CPU.
    """
    many = len(local_devices()[1]) >= 2
    return tuple(s for s in STRATEGIES if many or s not in DEVICE_STRATEGIES)


def setting_fields(name, accum_steps):
    """The RunConfig fields of the setting `name` at N = `accum_steps`.

    "uneven micro-batches" takes N // 2 examples off each update, so N // 2 of its N
    micro-batches hold b - 1 examples (`microbatch.split_sizes`): Keras's own accumulation
    still divides by N.
    """
    fields = dict(setting(name).fields)
    if "short_by" in fields:
        if accum_steps < 2:
            raise ValueError(f"uneven micro-batches need N >= 2 (N // 2 examples fewer per "
                             f"update), got N = {accum_steps}")
        fields["short_by"] = accum_steps // 2
    return fields


def short_by(name, accum_steps):
    """How many examples the setting takes off each update's N·b (0 but for uneven)."""
    return accum_steps // 2 if "short_by" in setting(name).fields else 0


def batch_text(name, accum_steps, micro_batch):
    """`"effective batch B = N·b = 4·25 = 100"`, with "- N//2" for uneven micro-batches."""
    n, b, short = accum_steps, micro_batch, short_by(name, accum_steps)
    if not short:
        return f"effective batch B = N·b = {n}·{b} = {n * b}"
    return f"effective batch B = N·b - N//2 = {n}·{b} - {short} = {n * b - short}"


def fixed_text(fixed, name):
    """The line under the controls: what every run shares (`fixed`), and whether the setting
    `name` clips: only the two clipping settings do, at global norm `CLIP_NORM`."""
    every = ", ".join(f"{k}={v}" for k, v in fixed.items())
    clip = setting(name).fields.get("clip_norm")
    return f"every run: {every}; " + (f"this setting clips at global norm {clip:g}" if clip is not None
                                        else "this setting does not clip")


def configs(strategy, accum_steps, micro_batch, lr, seeds, name, seed=0, **fixed):
    """One `run_config.RunConfig` per seed (seed, seed + 1, ...), ValueError if impossible.

    lr is rounded to the 3 digits its slider shows: what you read is what runs, and a
    slider position always maps to the same cache entry.
    """
    fields = setting_fields(name, accum_steps)
    return [run_config.RunConfig(strategy=strategy, accum_steps=accum_steps,
                                  micro_batch=micro_batch, lr=float(f"{lr:.3g}"), seed=seed + s,
                                  **fields, **fixed)
            for s in range(seeds)]


def measure_plan(strategy, name, make):
    """Measure's three lists of configs: the large batch, gradlab's way, the naive way.

    Args:
        strategy: the controls' strategy (gradlab's way for "exact", else `fused`).
        name: the setting.
        make: `make(strategy, setting_name)` -> the configs at the controls' N, b, lr, seeds.
    """
    row = setting(name)
    right = strategy if name == "exact" else "fused"
    return [[large_batch_twin(c) for c in make("fused", row.reference)],
            make(right, row.right), make(row.naive_strategy, row.naive)]


def large_batch_twin(config):
    """The `RunConfig` of one large batch that the configuration must equal if it is exact:
    the same effective batch, seed and setting, `large_batch` with N = 1 (its BatchNorm sees
    all B examples, and it clips its one gradient)."""
    extra = {}
    if config.batchnorm is not None:
        extra["batchnorm"] = "micro"  # one micro-batch: per micro-batch is per update
    if config.clip_norm is not None:
        extra["clip"] = "update"
    return dataclasses.replace(config, strategy="large_batch", accum_steps=1,
                               micro_batch=config.effective_batch, short_by=0, **extra)


def check_start(strategy, accum_steps, micro_batch, lr, seeds, name, x, seed=0, strategies=None,
                **fixed):
    """The lab's starting values, checked before any widget or training: a TypeError or
    ValueError that names the bad value; returns the strategies the dropdown offers."""
    run_config.RunConfig(strategy=strategy, accum_steps=accum_steps, micro_batch=micro_batch,
                          lr=lr, seed=seed, **setting_fields(name, accum_steps), **fixed)
    if accum_steps > MAX_ACCUM_STEPS or micro_batch > MAX_MICRO_BATCH:
        raise ValueError(f"the sliders reach accum_steps={MAX_ACCUM_STEPS} and "
                         f"micro_batch={MAX_MICRO_BATCH}; got {accum_steps} and {micro_batch}")
    low, high = (10.0 ** e for e in LR_EXPONENTS)
    if not low <= lr <= high:  # the slider would silently clamp it
        raise ValueError(f"the lr slider spans {low:g} to {high:.3g}; got lr={lr!r}")
    check_count("seeds", seeds)
    if seeds > MAX_SEEDS:
        raise ValueError(f"the seeds slider reaches {MAX_SEEDS}; got seeds={seeds}")
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}; got {x!r}")
    strategies = tuple(available_strategies() if strategies is None else strategies)
    if strategy not in strategies:
        raise ValueError(f"strategy {strategy!r} is not among the choices {strategies}")
    return strategies
