"""Split one effective batch into micro-batches: their sizes, offsets and slices, checked.

    split_sizes(10, 3) == [4, 3, 3];   offsets([4, 3, 3]) == [0, 4, 7]

The engine sums each micro-batch's loss and divides once (`loss_terms`, `normaliser`); the
weights n_i / B of the founding texts are `gradlab.classic.weights`.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import numbers

import keras
import numpy as np
import tensorflow as tf


# Counts reach TensorFlow as int32 (shapes, loop bounds): a larger one would wrap around.
MAX_COUNT = 2**31 - 1


def sum_dtype():
    """The dtype one update's sums and counts are kept in: "float64" when Keras's floatx is
    (a float64 model stays float64 end to end), else "float32" (float16 gradients are
    summed in float32, as Keras's mixed precision keeps its loss)."""
    return "float64" if keras.config.floatx() == "float64" else "float32"


def check_count(name, value, minimum=1):
    """A positive integer up to `MAX_COUNT`, else a TypeError/ValueError that names `name`
    and the value."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value > MAX_COUNT:
        raise ValueError(f"{name} must be at most {MAX_COUNT} (TensorFlow counts in int32), got {value!r}")
    return int(value)


def split_sizes(batch, accum_steps):
    """Sizes of `min(batch, accum_steps)` micro-batches covering `batch` examples, as even
    as possible.

    `split_sizes(10, 3) == [4, 3, 3]`: the first `batch % accum_steps` micro-batches take
    one extra example (the same split as `np.array_split`). A batch smaller than
    `accum_steps` (a data set's short last batch) gives one micro-batch per example,
    `split_sizes(3, 8) == [1, 1, 1]`: still exact, since every rule weights by counts.

    Args:
        batch: number of examples in the effective batch.
        accum_steps: number of micro-batches.
    Returns:
        list of positive ints summing to `batch`.
    """
    batch = check_count("batch size", batch)
    accum_steps = min(check_count("accum_steps", accum_steps), batch)
    base, extra = divmod(batch, accum_steps)
    return [base + 1] * extra + [base] * (accum_steps - extra)


def check_batch(batch, num_replicas):
    """Examples per replica (or tower): `check_batch(31, 2) == [16, 15]` (= `split_sizes(31, 2)`).

    Raises ValueError (pure Python, before any TensorFlow work) when some replica would get
    no example at all; a replica with fewer examples than `accum_steps` simply makes one
    micro-batch per example (`split_sizes`).
    """
    if batch < num_replicas:
        raise ValueError(
            f"a batch of {batch} examples is too small for {num_replicas} replicas (or towers): "
            f"each needs at least one example; use a batch of at least {num_replicas}")
    return split_sizes(batch, num_replicas)


def offsets(sizes):
    """Start index of each micro-batch: `offsets([4, 3, 3]) == [0, 4, 7]`."""
    return [int(s) for s in np.cumsum([0] + list(sizes[:-1]))]


def slices(parts, sizes):
    """Consecutive slices of `parts` (an array, or a nest of them) of `sizes` rows each: the
    one micro-batch loop of everything that runs micro-batches from Python."""
    return [take(parts, o, n) for o, n in zip(offsets(sizes), sizes)]


def take(a, start, n):
    """Rows `start : start + n` of `a`: an array or tensor, or, for a model with several
    inputs or outputs, a dict, list or tuple of them (as Keras takes them)."""
    if isinstance(a, dict):
        return {k: take(v, start, n) for k, v in a.items()}
    if isinstance(a, (list, tuple)):
        return type(a)(take(v, start, n) for v in a)
    return a[start:start + n]


def check_dense(*data):
    """TypeError if any of `data` (arrays, nests of them, or a `tf.data.Dataset`, by its
    element_spec) holds a `tf.SparseTensor` or `tf.RaggedTensor`: micro-batches are slices
    of rows of dense tensors. No TensorFlow work is done."""
    for d in data:
        parts = tf.nest.flatten(d.element_spec if isinstance(d, tf.data.Dataset) else d)
        kinds = {type(p).__name__.replace("Spec", "") for p in parts if isinstance(p, (
            tf.SparseTensor, tf.RaggedTensor, tf.SparseTensorSpec, tf.RaggedTensorSpec))}
        if kinds:
            raise TypeError(
                f"gradlab splits each batch into micro-batches of rows, which it does not do for "
                f"{' or '.join(sorted(kinds))} inputs yet: pass them dense (tf.sparse.to_dense(x), "
                "or ragged.to_tensor() with a Masking layer or mask_zero), or train this model "
                "with Keras's plain fit")


def batch_size(x, y):
    """The number of examples in `(x, y)`, after checking both have the same non-zero length.

    Works on numpy arrays, eager tensors and anything with a `shape` or a `len`, and on
    dicts, lists and tuples of them (several inputs or outputs, which must agree); it does
    no TensorFlow work.
    """
    n_x, n_y = _length("x", x), _length("y", y)
    if n_x != n_y:
        raise ValueError(f"x and y must have the same number of examples, got {n_x} and {n_y}")
    if n_x == 0:
        raise ValueError("the batch is empty (x has 0 examples)")
    return n_x


def _length(name, a):
    if isinstance(a, (dict, list, tuple)):
        parts = a.items() if isinstance(a, dict) else enumerate(a)
        lengths = {f"{name}[{k!r}]": _length(f"{name}[{k!r}]", v) for k, v in parts}
        if not lengths:
            raise ValueError(f"{name} is an empty {type(a).__name__}: no inputs")
        if len(set(lengths.values())) != 1:
            raise ValueError(f"the parts of {name} have different numbers of examples: {lengths}")
        return next(iter(lengths.values()))
    shape = getattr(a, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            raise ValueError(f"{name} must have a batch dimension, got a scalar {a!r}")
        n = shape[0]
        if n is None:
            raise ValueError(f"{name} has an unknown batch size (shape {tuple(shape)})")
        return int(n)
    try:
        return len(a)
    except TypeError:
        raise TypeError(f"{name} must be an array or tensor, got {type(a).__name__}") from None
