"""The first rows of whatever `fit` is given, read without losing a batch.

    (x, y, sample_weight) of the first PROBE_GROUP rows, and the data to train on

`fit` probes the loss on them before any update (`normaliser.probe`). Arrays and tensors
are sliced; a `tf.data.Dataset` and a `keras.utils.PyDataset` are read again from their
start by Keras, so reading their first batch here loses nothing; a Python generator is
read once, so its first batch is put back in front of the rest.
"""
from __future__ import annotations

import types

import keras
import tensorflow as tf

from ..core.microbatch import take
from ..core.normaliser import PROBE_GROUP


def first_batch(x, y=None, sample_weight=None):
    """`((x, y, sample_weight) of the first rows, data)`, or `(None, data)` when `x` is a
    kind of data this cannot peek at (a distributed dataset)."""
    if x is None:
        return None, x
    if isinstance(x, tf.data.Dataset):
        return _head(next(iter(x))), x
    if isinstance(x, keras.utils.PyDataset):
        return _head(x[0]), x
    if isinstance(x, types.GeneratorType):
        first = next(x)

        def again(rest=x):
            yield first
            yield from rest
        return _head(first), again()
    if hasattr(x, "__next__") or isinstance(x, tf.distribute.DistributedDataset):
        return None, x
    return _rows(x, y, sample_weight), x


def _head(element):
    return _rows(*keras.utils.unpack_x_y_sample_weight(element))


def _rows(x, y, sample_weight):
    n = tf.nest.flatten(x)[0].shape[0]
    if not n:
        return None
    k = min(PROBE_GROUP, n)
    return tuple(None if a is None else take(a, 0, k) for a in (x, y, sample_weight))
