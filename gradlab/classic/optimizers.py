"""Optimizers by name: the one table of names and defaults every study and graph uses.

    sgd       w -= lr g
    momentum  v = 0.9 v - lr g;  w += v                 (Keras SGD(lr, momentum=0.9))
    adam      Adam(lr, epsilon=1e-7)                    (Keras's epsilon; TF1's was 1e-8)

`make_optimizer` builds the Keras optimizer; the TF1 builders of `gradlab.classic` (`classic.model`) take the same
names and the same defaults from `settings`, so a classic graph and a Keras model make the
same update.

Lesson: notebooks/03-host-averaging.ipynb
"""
from __future__ import annotations

import math
import numbers

# name -> the arguments it takes, with their defaults (beside the learning rate).
OPTIMIZERS = {"sgd": {}, "momentum": {"momentum": 0.9}, "adam": {"epsilon": 1e-7}}
ARGUMENTS = ("momentum", "epsilon")


def settings(name, **kw):
    """The arguments of optimizer `name`: its defaults from `OPTIMIZERS`, overridden by `kw`.

    `settings("momentum") == {"momentum": 0.9}`. An argument of another optimizer in `kw`
    (`momentum` for `adam`) is ignored, so one set of options serves every name.

    Args:
        name: one of `OPTIMIZERS`.
        **kw: `momentum`, `epsilon`.
    Returns:
        dict of keyword arguments for the optimizer's constructor, without the learning rate.
    """
    if not isinstance(name, str) or name not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {name!r}")
    unknown = sorted(set(kw) - set(ARGUMENTS))
    if unknown:
        raise TypeError(f"unknown optimizer argument(s) {unknown}; valid: {', '.join(ARGUMENTS)}")
    return {k: kw.get(k, default) for k, default in OPTIMIZERS[name].items()}


def check_lr(lr):
    """`lr` as a float, if it is a positive finite number; else TypeError/ValueError naming it."""
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f"lr must be a positive number, got {lr!r} ({type(lr).__name__})")
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    return float(lr)


def make_optimizer(name, lr, **kw):
    """The Keras optimizer `name` at learning rate `lr`: `sgd`, `momentum` or `adam`.

    Args:
        name: one of `OPTIMIZERS`.
        lr: the learning rate: a positive number, or a
            `keras.optimizers.schedules.LearningRateSchedule` (it counts optimizer updates).
        **kw: `momentum`, `epsilon` (see `settings`).
    Returns:
        a fresh `keras.optimizers.SGD` or `keras.optimizers.Adam`.
    """
    options = settings(name, **kw)
    import keras  # here, so that the table above is read without starting TensorFlow
    if not isinstance(lr, keras.optimizers.schedules.LearningRateSchedule):
        lr = check_lr(lr)
    if name == "adam":
        return keras.optimizers.Adam(lr, **options)
    return keras.optimizers.SGD(lr, **options)


def describe(name, lr, **kw):
    """`"SGD(0.1, momentum=0.9)"`: the optimizer as its constructor call, for reports."""
    options = settings(name, **kw)
    cls = "Adam" if name == "adam" else "SGD"
    return f"{cls}({', '.join([f'{lr:g}'] + [f'{k}={v:g}' for k, v in options.items()])})"
