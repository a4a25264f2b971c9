"""`fit`'s arrays fed to the update by row index: the rows of one micro-batch at a time.

    Keras's fit(x, y, batch_size=B):  batches of B rows, gathered ahead of the step
    AccumulatingModel's fit on arrays: batches of B row indices; micro-batch i gathers its
                                       rows inside the update,  x_i, y_i = x[index_i], y[index_i]

Keras's array pipeline gathers each batch with a parallel map and prefetches the next, so it
holds a few batches of the rows it is asked for: B rows for `AccumulatingModel`, B / N for
Keras's own accumulation. Handed indices instead, Keras shuffles and batches exactly as it
would the arrays (the same batches, so the same updates), and the update holds the rows of
the micro-batch it runs. Inputs Keras does not treat as arrays (a tf.data.Dataset, a
generator, a PyDataset) keep Keras's pipeline: their batches are held as they hold them.

Lesson: notebooks/08-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import contextlib
import inspect
from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import tensorflow as tf

from .. import _compat

_FIT = inspect.signature(keras.Model.fit)


class Rows:
    """Variables holding one `fit`'s arrays, `data = (x, y, sample_weight)` (None kept).

    Variables, so that one traced train function serves every fit of arrays shaped alike
    (emptied after each fit); on the host, created outside any tf.distribute scope, so that
    they are not copied to every replica or GPU (each gathers its rows from the host). A
    plain object, not a tuple: Keras would track a tuple set on a model, turning its dicts
    into TrackedDicts that its losses no longer read as dicts."""
    __slots__ = ("data", "key", "count")

    def __init__(self, arrays):
        self.key = key(arrays)
        with ThreadPoolExecutor(1) as fresh:  # a tf.distribute scope is per thread
            self.data = fresh.submit(tf.nest.map_structure, _variable, arrays).result()
        self.count = _count(arrays)

    def assign(self, arrays):
        tf.nest.map_structure(lambda v, a: None if v is None else v.assign(a), self.data, arrays)
        self.count = _count(arrays)

    def empty(self):
        self.count = 0
        tf.nest.map_structure(lambda v: None if v is None else v.assign(
            tf.zeros([0] + v.shape[1:].as_list(), v.dtype)), self.data)


def key(arrays):
    """What a traced train function depends on: structure, dtypes and shapes but the rows."""
    return repr(tf.nest.map_structure(
        lambda a: None if a is None else (str(a.dtype), tuple(a.shape[1:])), arrays))


def _count(arrays):
    return int(next(a for a in tf.nest.flatten(arrays) if a is not None).shape[0])


def _variable(t):
    if t is None:
        return None
    with tf.device("CPU:0"):  # in host memory, as Keras's pipeline keeps them, not on a GPU
        return tf.Variable(t, trainable=False, shape=tf.TensorShape([None]).concatenate(t.shape[1:]),
                           name="fit_rows")


def fit_arguments(model, x, y, args, kwargs):
    """Keras's `fit` arguments by name (TypeError for an argument fit does not take)."""
    bound = _FIT.bind(model, x, y, *args, **kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if k != "self"}


@contextlib.contextmanager
def feeding(acc, arguments):
    """Yield the arguments for Keras's `fit` of `acc`: row indices in place of arrays, their
    rows in `acc._rows` (emptied after), or `arguments` unchanged."""
    arrays, arguments = by_index(acc, arguments)
    if arrays is None:
        use(acc, None)
        yield arguments
        return
    if acc._rows is not None and acc._rows.key == key(arrays):
        acc._rows.assign(arrays)
        rows = acc._rows
    else:
        rows = Rows(arrays)
    del arrays  # the variables hold them now
    use(acc, rows)
    try:
        yield arguments
    finally:
        rows.empty()


def use(acc, rows):
    """Make `acc`'s train step read `rows` (None: whole batches); a train function traced
    for other rows is dropped."""
    if acc._rows is not rows:
        acc._rows, acc.train_function = rows, None


def by_index(acc, arguments):
    """`((x, y, sample_weight) as arrays, arguments with x = row indices)`, or
    `(None, arguments)` where Keras's own pipeline should feed the step (not arrays; errors
    Keras names itself)."""
    a = arguments
    nested_y = keras.tree.is_nested(a["y"])
    if (a["class_weight"] is not None and (a["sample_weight"] is not None or nested_y
                                           or a["y"] is None)) or \
            (a["sample_weight"] is not None and nested_y and not keras.tree.is_nested(a["sample_weight"])):
        return None, arguments  # Keras refuses the first, spreads one weight over outputs in the second
    if acc.jit_compile and tf.config.list_logical_devices("GPU"):
        return None, arguments  # XLA would copy the whole arrays to the device at every step
    prepared = _compat.fit_arrays(a["x"], a["y"], a["sample_weight"], a["class_weight"],
                                  a["validation_split"], a["validation_data"])
    if prepared is None:
        return None, arguments
    data, validation_data = prepared
    counts = {int(t.shape[0]) for t in tf.nest.flatten(data) if t is not None}
    if len(counts) != 1:
        return None, arguments  # Keras names the mismatched sizes
    indices = np.arange(counts.pop(), dtype=np.int64)
    return data, {**arguments, "x": indices, "y": None, "sample_weight": None,
                  "class_weight": None, "validation_split": 0.0, "validation_data": validation_data}


def feeding_now(acc):
    """The `Rows` a fit of `acc` is reading by index now, else None (a step traced or run
    outside such a fit takes whole batches)."""
    return acc._rows if acc._rows is not None and acc._rows.count else None


def parts(rows, data):
    """`(parts, take, y)` of one fit batch `data`: what the engine splits, how a micro-batch
    of it becomes `{"x", "y", "sample_weight"}` (present ones), and the targets' structure."""
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    if rows is None:
        return _present(x, y, sample_weight), lambda part: part, y
    return {"index": x}, lambda part: take(rows, part["index"]), rows.data[1]


def take(rows, index):
    """`{"x", "y", "sample_weight"}` (present ones) of the rows `index`, gathered where the
    arrays are (a device running the step receives only these rows)."""
    def gather(t):
        if t is None:
            return None
        with tf.device(t.device):
            return tf.gather(t, index)
    return _present(*tf.nest.map_structure(gather, rows.data))


def first_rows(rows, count=2):
    """`(x, y, sample_weight)` of the first rows: a batch Keras can build the model from."""
    return tf.nest.map_structure(lambda t: None if t is None else t[:count], rows.data)


def _present(x, y, sample_weight):
    # None (no targets: losses from add_loss only; no weights) is no tensor to split.
    return {k: v for k, v in (("x", x), ("y", y), ("sample_weight", sample_weight))
            if v is not None}
