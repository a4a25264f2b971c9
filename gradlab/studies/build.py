"""A strategy from names: the one place a study or command turns a config into a strategy.

    build_strategy(name, model, optimizer, lr, accum_steps, seed)
        == make_strategy(name, lambda: make_model(model, seed),
                         SparseCategoricalCrossentropy(from_logits=True),
                         lambda: make_optimizer(optimizer, lr), accum_steps)

Builders, not objects: `mirrored` must create the variables inside its own scope.
`experiments`, `bench` and `multiworker` all build their strategies here.

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import keras

from ..core.microbatch import check_count
from .models import MODELS, make_model
from ..classic.optimizers import check_lr, make_optimizer, settings
from ..training.strategies import make_strategy


def parts(model="mlp", optimizer="sgd", lr=0.1, seed=0, batchnorm=False):
    """`(model builder, loss, optimizer builder)` of the MNIST classifier, checked first.

    Args:
        model: one of `gradlab.studies.models.MODELS`.
        optimizer: one of `gradlab.classic.optimizers.OPTIMIZERS`.
        lr: the learning rate, a positive number or a Keras `LearningRateSchedule`.
        seed: the initial weights (`make_model(model, seed)`).
        batchnorm: build the model with a BatchNormalization layer (`make_model`).
    Returns:
        the three arguments `make_strategy` (or a strategy class) takes after the name.
    """
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    settings(optimizer)
    if not isinstance(lr, keras.optimizers.schedules.LearningRateSchedule):
        lr = check_lr(lr)
    seed = check_count("seed", seed, minimum=0)
    batchnorm = bool(batchnorm)
    return (lambda: make_model(model, seed=seed, batchnorm=batchnorm),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            lambda: make_optimizer(optimizer, lr))


def build_strategy(name, model="mlp", optimizer="sgd", lr=0.1, accum_steps=1, seed=0, **options):
    """`make_strategy(name, *parts(model, optimizer, lr, seed), accum_steps, **options)`.

    Args:
        name: one of `gradlab.training.strategies.STRATEGIES`.
        model, optimizer, lr, seed: see `parts`.
        accum_steps: micro-batches per update.
        **options: passed to `make_strategy` (`jit_compile`, `clip_norm`, `batchnorm`,
            `devices`; `distribution` for `mirrored` on a given tf.distribute strategy).
    Returns:
        the strategy (`step(x, y)`); every argument is checked before any TensorFlow work.
    """
    return make_strategy(name, *parts(model, optimizer, lr, seed), accum_steps=accum_steps,
                         **options)
