"""The options of one update, shared by both faces: checked once, one XLA decision, one guard decision.

    options = Options.checked(accum_steps, clip_norm=None, batchnorm="micro", jit_compile="auto",
                              overlap=1, check="first")         # ValueError/TypeError naming the value
    options.xla(model, allowed, auto)  -> bool                   # the one XLA decision
    guarded(optimizer, home)           -> bool                   # the one guard decision

`make_strategy(...)` and `AccumulatingModel(...)` take the same keywords and make one of these;
each face adds only what is its own (a strategy's devices and distribution; `compile`'s
`jit_compile` overriding the model's).

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

from dataclasses import dataclass

import keras

from ..core import contract
from ..core.batchnorm import check_mode
from ..core.gradients import check_clip_norm
from ..core.microbatch import check_count
from .xla import check_jit_compile, xla_by_default

NAMES = ("clip_norm", "jit_compile", "batchnorm", "overlap", "check")


@dataclass(frozen=True)
class Options:
    """What every update of a face does (see `make_strategy` and `AccumulatingModel`).

    accum_steps: micro-batches per update (per tower or replica).
    clip_norm: clip the global norm of each update once (None: no clipping).
    batchnorm: "micro" (Keras's: moving statistics per micro-batch) or "window" (per update).
    jit_compile: True, False or "auto" (`xla`).
    overlap: micro-batches whose activations may be alive at once (`accumulate.loop_sum`).
    check: when the contract is checked inside the update: "first" or "every" (`contract`).
    """
    accum_steps: int
    clip_norm: float | None = None
    batchnorm: str = "micro"
    jit_compile: object = "auto"
    overlap: int = 1
    check: str = "first"

    @classmethod
    def checked(cls, accum_steps, clip_norm=None, batchnorm="micro", jit_compile="auto", overlap=1,
                check="first"):
        """The options, each checked before any TensorFlow work (ValueError/TypeError naming
        the value)."""
        return cls(check_count("accum_steps", accum_steps), check_clip_norm(clip_norm),
                   check_mode(batchnorm), check_jit_compile(jit_compile),
                   check_count("overlap", overlap), contract.check_option(check))

    def xla(self, model, allowed=True, auto=True):
        """Whether the update runs under XLA: `jit_compile` where it is `allowed` (an update
        compiled whole); for "auto", only where it also gains (`auto`: a loop of micro-batches
        on one device) and `xla.xla_by_default(model)` accepts the model."""
        if self.jit_compile == "auto":
            return bool(allowed and auto and xla_by_default(model))
        return bool(allowed and self.jit_compile)


def guarded(optimizer, home):
    """Whether the engine guards the update (`engine.Task.guard`): unless the sum's `home`
    applies as Keras does (its own accumulation: whatever it accumulated) or the optimizer
    is a LossScaleOptimizer, which skips non-finite updates and lowers its scale itself."""
    return getattr(home, "guarded", True) and not isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
