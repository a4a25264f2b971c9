"""The config of one run: everything that decides it, checked when it is made.

    one update = accum_steps micro-batches of micro_batch examples, applied once
    effective batch B = accum_steps * micro_batch - short_by  (at most the 4,000 images)

Equal configs give equal results and share a cache entry (`run_result.run_key`); a bad
field raises ValueError/TypeError naming it and its value, before any TensorFlow work.

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import dataclasses

from ..data import NUM_CLASSES, TRAIN_PER_CLASS
from ..models import MODELS
from ...core.gradients import check_clip_norm
from ...core.microbatch import check_count
from ...classic.optimizers import OPTIMIZERS, check_lr
from ...training.strategies import STRATEGIES

REFERENCE_BATCH = 100  # the published experiment's examples per update
SAMPLINGS = ("paired", "independent")
SCHEDULES = ("constant", "cosine")
BATCHNORMS = (None, "micro", "window")
CLIPS = ("update", "micro")
TRAIN_SIZE = TRAIN_PER_CLASS * NUM_CLASSES  # the shipped subset: 4,000 training images


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run: `updates` updates of B = accum_steps * micro_batch
    examples each, applied by `make_strategy(strategy, ...)`. Equal configs give equal
    results and share a cache entry; bad fields raise ValueError/TypeError naming them.

    Plain SGD at lr=0.5 reaches the reference's ~95% on the 4,000-image subset in 1,000
    updates of 100 examples (measured: 0.1 gives 93%, 0.2 gives 94%).

    sampling: `paired` draws the example order from `seed` alone (epochs of permutations,
    update t takes examples [t*B, (t+1)*B) of it), so for any N the effective batch of
    update t is the same examples and the initial weights are the same: accumulation then
    equals the large batch up to float rounding. `independent` draws the order and the
    initial weights afresh for each (seed, accum_steps, micro_batch), as the reference did.

    The settings where accumulation can differ from a large batch (lessons 07 and 08), measured by
    the lab (at their defaults a config is what it was before they existed, cache key too):
    - `schedule`: "constant", or "cosine" (`CosineDecay(lr, decay_steps=updates)`: lr falls
      to 0 over the run, if the optimizer counts updates).
    - `batchnorm`: None (the model has none), or a BatchNorm model with its statistics
      moved per micro-batch ("micro") or once per update ("window", `make_strategy`'s option).
    - `clip_norm`, `clip`: clip the global gradient norm to `clip_norm`, once per update
      ("update", `make_strategy`'s option) or each micro-batch, the naive way ("micro",
      `pitfalls.ClipEachMicroBatch`, with strategy "accumulate", whose loop it copies).
    - `short_by`: take this many examples (fewer than N) off each update, so that many
      micro-batches hold b - 1 examples (`microbatch.split_sizes`): uneven micro-batches.

    Lesson: notebooks/21-reproducing-the-table.ipynb (the settings: notebooks/17-the-lab.ipynb)
    """
    strategy: str = "fused"
    accum_steps: int = 1
    micro_batch: int = 100
    updates: int = 1000
    optimizer: str = "sgd"
    lr: float = 0.5
    model: str = "mlp"
    seed: int = 0
    sampling: str = "independent"
    eval_every: int = 100
    schedule: str = "constant"
    batchnorm: str | None = None
    clip_norm: float | None = None
    clip: str = "update"
    short_by: int = 0

    def __post_init__(self):
        for name, options in (("strategy", STRATEGIES), ("optimizer", OPTIMIZERS),
                              ("model", MODELS), ("sampling", SAMPLINGS)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in options:
                raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
        for name in ("accum_steps", "micro_batch", "updates", "eval_every"):
            object.__setattr__(self, name, check_count(name, getattr(self, name)))
        object.__setattr__(self, "seed", check_count("seed", self.seed, minimum=0))
        object.__setattr__(self, "lr", check_lr(self.lr))  # lr=1 and lr=1.0 share a cache key
        self._check_setting()
        if self.effective_batch > TRAIN_SIZE:
            raise ValueError(f"the effective batch accum_steps*micro_batch = {self.accum_steps}"
                             f"*{self.micro_batch} = {self.effective_batch} exceeds the "
                             f"{TRAIN_SIZE:,} training images")

    def _check_setting(self):
        for name, options in (("schedule", SCHEDULES), ("batchnorm", BATCHNORMS), ("clip", CLIPS)):
            if getattr(self, name) not in options:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; "
                                 f"got {getattr(self, name)!r}")
        c = check_clip_norm(self.clip_norm)
        object.__setattr__(self, "clip_norm", c)
        if self.clip == "micro" and (c is None or self.strategy != "accumulate"):
            raise ValueError(f"clip='micro' (the naive per-micro-batch clipping) needs a clip_norm "
                             f"and strategy 'accumulate'; got clip_norm={c!r}, strategy={self.strategy!r}")
        short = check_count("short_by", self.short_by, minimum=0)
        object.__setattr__(self, "short_by", short)
        if short and not (short < self.accum_steps and self.micro_batch >= 2):
            raise ValueError(f"short_by must be smaller than accum_steps ({self.accum_steps}), with "
                             f"micro_batch >= 2, so that every micro-batch keeps an example; "
                             f"got short_by={short}, micro_batch={self.micro_batch}")

    @property
    def effective_batch(self):
        return self.accum_steps * self.micro_batch - self.short_by

    def to_dict(self):
        return dataclasses.asdict(self)
