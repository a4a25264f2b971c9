"""Every way of averaging gradients behind one contract: `make_strategy(...).step(x, y)`.

    s = make_strategy(name, model, loss_fn, optimizer, accum_steps=4)
    loss = s.step(x, y)   # exactly one optimizer update from the effective batch (x, y)

A strategy is a choice of where the sum lives and where the batch runs (`engine`):

| strategy       | the sum lives in                        | the batch runs on        |
|----------------|-----------------------------------------|--------------------------|
| `large_batch`  | one micro-batch: nothing to sum         | one device               |
| `host_average` | numpy, fetched per micro-batch          | one device               |
| `accumulate`   | `tf.Variable` accumulators              | one device               |
| `fused`        | tensors carried by one compiled loop    | one device               |
| `towers`       | tensors carried by one compiled loop    | listed devices           |
| `mirrored`     | tensors carried by one compiled loop    | tf.distribute replicas   |

and all of them make one `engine.update` and apply `G / D` once, so every one equals `large_batch`
up to float rounding. `keras` (Keras 3's own `gradient_accumulation_steps`) is the reference
that does not: it divides by N whatever the sizes, and advances schedules per micro-batch.

Lesson: notebooks/06-keras-accumulation.ipynb
"""
from __future__ import annotations

import keras

from typing import NamedTuple

from ..core.batchnorm import BATCHNORM_MODES
from ..core.microbatch import check_count
from ..core.normaliser import check_reduction
from ..core.homes import Host, KerasOptimizer, Loop, Variables
from ..core.places import One, Replicas, Towers
from .options import NAMES, Options
from .strategy import Strategy
from ..core.towers import check_device_names, local_devices


class Recipe(NamedTuple):
    home: type                   # where the sum lives: a `homes` class
    place: type                  # where the batch runs: a `places` class
    batchnorm: tuple             # batchnorm modes supported
    xla_auto: bool = False       # jit_compile="auto" turns XLA on (if the model allows)


RECIPES = {
    "large_batch": Recipe(Loop, One, BATCHNORM_MODES),
    "host_average": Recipe(Host, One, ("micro",)),
    "accumulate": Recipe(Variables, One, BATCHNORM_MODES),
    "fused": Recipe(Loop, One, BATCHNORM_MODES, xla_auto=True),
    "towers": Recipe(Loop, Towers, ("micro",)),
    "keras": Recipe(KerasOptimizer, One, ("micro",)),
    "mirrored": Recipe(Loop, Replicas, ("micro",)),
}
STRATEGIES = tuple(RECIPES)
DEVICE_STRATEGIES = tuple(n for n, r in RECIPES.items() if r.place is not One)  # need 2+ devices


def make_strategy(name, model, loss_fn, optimizer, accum_steps=1, devices=None, **options):
    """Build the strategy `name` (one of `STRATEGIES`) around a Keras 3 model and optimizer.

    Args:
        name: one of `STRATEGIES`.
        model: a `keras.Model`, or a zero-argument callable that builds one (`mirrored` needs
            the callable: a distribution strategy must create the variables in its scope).
        loss_fn: `loss_fn(y, pred)` returning a mean or per-example losses, e.g.
            `keras.losses.SparseCategoricalCrossentropy()`, or a Keras loss name. A loss that
            returns a scalar must be a mean per example (or per unmasked entry, for an
            output with a Keras mask); gradlab checks this on the first batch, before any
            update, and refuses anything else (a sum) with a ValueError. It is traced
            without autograph, as Keras's `fit` traces its step: Python `if` or `for` on a
            tensor raises; write `tf.where` or `tf.cond`. `step`'s `sample_weight` follows
            the reduction as Keras's `train_on_batch` does: `sum_j w_j l_j / B` for Keras's
            default `"sum_over_batch_size"` (and a function), `sum_j w_j l_j / sum_j w_j`
            over the whole update for `"mean_with_sample_weight"`.
        optimizer: a Keras optimizer, a zero-argument callable that builds one, or a name
            (`mirrored` makes an unbuilt optimizer again inside its scope, from its config).
        accum_steps: micro-batches per update (a batch with fewer examples makes one
            micro-batch per example).
        devices: device names for `towers` and `mirrored` (default: every local GPU, else
            every logical CPU).
        **options: `clip_norm` (clip the global norm of each update, once), `jit_compile`
            (True, False or "auto": XLA for `large_batch`, `fused` and `towers`; "auto", the
            default, turns it on for `fused` when the model has no convolutions, and falls
            back without XLA, with one warning, if XLA cannot compile the model) and
            `batchnorm`: `'micro'` (default, Keras's behaviour: BatchNorm moving statistics
            move once per micro-batch) or `'window'` (once per update, from the mean and
            variance of all its examples; `large_batch`, `accumulate`, `fused`), and
            `overlap` (micro-batches whose activations may be alive at once in the compiled
            loop: 1, the default, holds one; 2 holds two, so a forward pass may run beside the
            previous backward pass (lesson 11 measures its memory); see `accumulate.loop_sum`), and `check` (when the contract is checked inside
            the update, `contract.split_holds`: "first", the default, the first update after
            the strategy is built or retraced; "every", every update).
    Returns:
        a `Strategy`; `step(x, y)` makes one update and returns its mean loss as a float.

    All arguments are checked before any TensorFlow work.
    """
    if not isinstance(name, str) or name not in RECIPES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    check_count("accum_steps", accum_steps)
    _check_loss(loss_fn)
    _check_buildable(model, keras.Model, "model")
    if not isinstance(optimizer, str):
        _check_buildable(optimizer, keras.optimizers.Optimizer, "optimizer")
    distribution = options.pop("distribution", None)
    options = _check_options(name, accum_steps, options, distribution)
    place = RECIPES[name].place
    if place is Replicas and isinstance(model, keras.Model):
        raise TypeError(
            f"mirrored needs a model builder (a zero-argument callable such as "
            f"lambda: make_model()), got the built model {model.name!r}: MirroredStrategy must "
            "create the variables inside its own scope, to mirror them on every device")
    if place is not One:
        devices = _check_devices(devices)
    return Strategy(name, RECIPES[name], model, loss_fn, optimizer, options, devices, distribution)


def _check_loss(loss_fn):
    if not callable(loss_fn) and not isinstance(loss_fn, str):
        raise TypeError(f"loss_fn must be callable as loss_fn(y, pred), got {loss_fn!r}")
    # step divides by the update's weights itself (Strategy: normalize_sample_weight)
    if getattr(loss_fn, "reduction", None) != "mean_with_sample_weight":
        check_reduction(loss_fn)


def _check_options(name, accum_steps, options, distribution):
    """The strategy's `Options` (one micro-batch for `large_batch`), each checked."""
    unknown = set(options) - set(NAMES)
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; valid: {', '.join(NAMES)}")
    options = Options.checked(1 if name == "large_batch" else accum_steps, **options)
    if options.batchnorm not in RECIPES[name].batchnorm:
        supported = [n for n, r in RECIPES.items() if options.batchnorm in r.batchnorm]
        raise ValueError(
            f"batchnorm={options.batchnorm!r} is not supported by strategy {name!r} (supported by "
            f"{', '.join(supported)}): it updates BatchNorm statistics once per micro-batch. Use "
            "batchnorm='micro', or GroupNormalization/LayerNormalization (no batch statistics)")
    if distribution is not None and RECIPES[name].place is not Replicas:
        raise TypeError(f"distribution= is for the mirrored strategy, not {name!r}")
    return options


def _check_devices(devices):
    if devices is None:
        return local_devices()[1]
    devices = check_device_names(devices)
    if not devices:
        raise ValueError(f"devices must name at least one device, got {devices!r}")
    return devices


def _check_buildable(obj, cls, what):
    if not isinstance(obj, cls) and (not callable(obj) or isinstance(obj, keras.layers.Layer)):
        raise TypeError(f"{what} must be a {cls.__name__} or a zero-argument callable that "
                        f"builds one, got {obj!r}")
