"""`fit`'s arrays fed to the update by row index: the rows of one micro-batch at a time.

    Keras's fit(x, y, batch_size=B):  batches of B rows, gathered ahead of the step
    AccumulatingModel's fit on arrays: batches of B row indices; micro-batch i gathers its
                                       rows inside the update,  x_i, y_i = x[index_i], y[index_i]

Keras's array pipeline gathers each batch with a parallel map and prefetches the next, so it
holds a few batches of the rows it is asked for: B rows for `AccumulatingModel`, B / N for
Keras's own accumulation. Handed indices instead, Keras shuffles and batches exactly as it
would the arrays (the same batches, so the same updates), and the update holds the rows of
the micro-batch it runs. Validation and `evaluate` read their arrays the same way. Inputs
Keras does not treat as arrays (a tf.data.Dataset, a generator, a PyDataset) keep Keras's
pipeline: their batches are held as they hold them.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import contextlib
import inspect
from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import tensorflow as tf

from .. import _compat


class Rows:
    """Variables holding the arrays of one `fit` or `evaluate`, `data = (x, y, sample_weight)`
    (None kept).

    Variables, so that one traced function serves every call on arrays shaped alike (emptied
    after each call); on the host, created outside any tf.distribute scope, so that
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


class Feeds:
    """What a model's train and test steps read by row index now (`Rows`), or None (whole
    batches): one per `AccumulatingModel`, a plain object (not tracked by Keras)."""
    __slots__ = ("train", "test")

    def __init__(self):
        self.train = self.test = None


_FUNCTIONS = {"train": "train_function", "test": "test_function"}


def arguments_of(method, model, args, kwargs):
    """Keras's `method` (`keras.Model.fit`, `.evaluate`) arguments by name, defaults filled
    (TypeError for an argument it does not take)."""
    bound = inspect.signature(method).bind(model, *args, **kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if k != "self"}


@contextlib.contextmanager
def feeding(acc, feeds, arguments):
    """Yield the arguments for Keras's `fit` of `acc`: row indices in place of the training
    and validation arrays (their rows held in `feeds` for the train and test steps, emptied
    after), or the arguments unchanged where they are not arrays."""
    train, arguments = by_index(acc, arguments)
    test, validation = _indexed(acc, arguments["validation_data"])
    with _holding(acc, feeds, "train", train), _holding(acc, feeds, "test", test):
        yield {**arguments, "validation_data": validation}


@contextlib.contextmanager
def evaluating(acc, feeds, arguments):
    """`feeding` for Keras's `evaluate`: `x` as row indices, the rows held for the test step."""
    test, indices = _indexed(acc, (arguments["x"], arguments["y"], arguments["sample_weight"]))
    if test is not None:
        arguments = {**arguments, "x": indices[0], "y": None, "sample_weight": None}
    with _holding(acc, feeds, "test", test):
        yield arguments


def use(acc, feeds, kind, rows):
    """Make `acc`'s `kind` step ("train", "test") read `rows` (None: whole batches), as
    `feeds` records; Keras's function traced for other rows is dropped."""
    if getattr(feeds, kind) is not rows:
        setattr(feeds, kind, rows)
        setattr(acc, _FUNCTIONS[kind], None)


def feeding_now(feeds, kind):
    """The `Rows` the `kind` step reads by index now (`feeds`), else None (a step traced or
    run outside a fit or evaluate of arrays takes whole batches)."""
    rows = getattr(feeds, kind)
    return rows if rows is not None and rows.count else None


def by_index(acc, arguments):
    """`((x, y, sample_weight) as arrays, fit's arguments with x = row indices)`, or
    `(None, arguments)` where Keras's own pipeline should feed the step (not arrays; errors
    Keras names itself). `validation_split` is taken off first, as Keras takes it."""
    a = arguments
    if a["class_weight"] is not None and (a["sample_weight"] is not None or a["y"] is None
                                          or keras.tree.is_nested(a["y"])):
        return None, arguments  # Keras refuses these in its own words
    prepared = _arrays(acc, a["x"], a["y"], a["sample_weight"], a["class_weight"],
                       a["validation_split"], a["validation_data"])
    if prepared is None:
        return None, arguments
    data, indices, validation_data = prepared
    return data, {**arguments, "x": indices, "y": None, "sample_weight": None,
                  "class_weight": None, "validation_split": 0.0, "validation_data": validation_data}


def _indexed(acc, data):
    """`(arrays, (row indices,))` of `data` = (x, y, sample_weight) arrays, else `(None, data)`."""
    if data is None:
        return None, None
    prepared = _arrays(acc, *keras.utils.unpack_x_y_sample_weight(data), None, 0.0, None)
    if prepared is None:
        return None, data
    arrays, indices, _ = prepared
    return arrays, (indices,)


def _arrays(acc, x, y, sample_weight, class_weight, validation_split, validation_data):
    """`(arrays, row indices, validation_data)` as Keras prepares arrays (`_compat.fit_arrays`),
    or None where Keras's own pipeline should feed the step."""
    if sample_weight is not None and keras.tree.is_nested(y) and not keras.tree.is_nested(sample_weight):
        return None  # Keras spreads one weight array over the outputs
    if acc.jit_compile and tf.config.list_logical_devices("GPU"):
        return None  # XLA would copy the whole arrays to the device at every step
    prepared = _compat.fit_arrays(x, y, sample_weight, class_weight, validation_split, validation_data)
    if prepared is None:
        return None
    data, validation_data = prepared
    counts = {int(t.shape[0]) for t in tf.nest.flatten(data) if t is not None}
    if len(counts) != 1:
        return None  # Keras names the mismatched sizes
    if counts == {0}:
        return None  # no rows: Keras's pipeline hands the step its empty batch, as plain fit's
    return data, np.arange(counts.pop(), dtype=np.int64), validation_data


@contextlib.contextmanager
def _holding(acc, feeds, kind, arrays):
    """While active, `acc`'s `kind` step reads `arrays` by row index (None: whole batches).
    Inside another (a callback's `evaluate` during fit's validation on arrays) the outer
    rows are left as they are and read again afterwards."""
    outer = getattr(feeds, kind)
    busy = outer is not None and outer.count > 0
    if arrays is None:
        use(acc, feeds, kind, None)
        rows = None
    elif not busy and outer is not None and outer.key == key(arrays):
        rows = outer
        rows.assign(arrays)
    else:
        rows = Rows(arrays)
    use(acc, feeds, kind, rows)
    try:
        yield
    finally:
        if rows is not None:
            rows.empty()
        if busy:
            use(acc, feeds, kind, outer)


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
