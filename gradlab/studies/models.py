"""Small Keras 3 models for MNIST-sized experiments, built from a seed so runs repeat.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import keras
import numpy as np

from ..core.microbatch import batch_size, check_count

MODELS = ("mlp", "conv", "embedding")


def make_model(name="mlp", seed=0, hidden=256, num_classes=10, batchnorm=False):
    """A fresh, deterministic model: the same `seed` gives the same initial weights.

    - `mlp`: 784-256-10, the benchmark model (Flatten, Dense relu, Dense logits).
    - `conv`: a small convnet whose activations dominate memory (the memory benchmark).
    - `embedding`: pixel intensities bucketed to tokens, an Embedding, and a frozen Dense
      layer: a model with sparse (IndexedSlices) gradients and non-trainable weights.
    Outputs are logits: use `SparseCategoricalCrossentropy(from_logits=True)`.
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
    keras.utils.set_random_seed(seed)
    norm = [keras.layers.BatchNormalization()] if batchnorm else []
    if name == "mlp":
        layers = [keras.layers.Flatten(), keras.layers.Dense(hidden), *norm,
                  keras.layers.Activation("relu"), keras.layers.Dense(num_classes)]
    elif name == "conv":
        layers = [keras.layers.Reshape((28, 28, 1)),
                  keras.layers.Conv2D(32, 3, padding="same"), *norm, keras.layers.Activation("relu"),
                  keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
                  keras.layers.MaxPooling2D(4), keras.layers.Flatten(),
                  keras.layers.Dense(num_classes)]
    else:
        frozen = keras.layers.Dense(32, activation="tanh", name="frozen")
        frozen.trainable = False
        layers = [keras.layers.Reshape((784,)), keras.layers.Rescaling(15.0),
                  keras.layers.Lambda(lambda t: keras.ops.cast(t, "int32")),
                  keras.layers.Embedding(16, 8), keras.layers.GlobalAveragePooling1D(),
                  frozen, keras.layers.Dense(num_classes)]
    return keras.Sequential([keras.Input((28, 28)), *layers], name=name)


def accuracy(model, x, y, batch=1000):
    """`mean(argmax(model(x, training=False), -1) == y)`: the fraction of `x` whose largest
    logit is its label, in inference mode (BatchNorm on its moving statistics, no dropout).

    Args:
        model: a classifier returning logits.
        x, y: examples and integer labels.
        batch: examples per forward pass, to bound memory on a large `x`.
    Returns:
        a float in [0, 1].
    """
    n, batch = batch_size(x, y), check_count("batch", batch)
    logits = np.concatenate([np.asarray(model(x[i:i + batch], training=False))
                             for i in range(0, n, batch)])
    return float(np.mean(np.argmax(logits, axis=-1) == np.asarray(y)))
