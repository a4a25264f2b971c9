"""Metrics of your own, updated once per micro-batch: do they add up to the batch's value?

    m.update_state(first rows); m.update_state(the rest)  ==  m.update_state(all rows)   ?

`AccumulatingModel` never holds a whole batch's predictions, so it updates each compiled
metric once per micro-batch. Keras's own metrics accumulate (sums and counts), so that is
the batch's value. A `keras.metrics.Metric` subclass whose `update_state` assigns the batch's
value instead of adding to it would report the last micro-batch's. `fit` checks each metric
of your own once, on the first labels of its data and stand-in predictions shaped like the
model's output (the model is not run: no layer's state or random generator moves), and warns
when the two differ.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import warnings

import keras
import numpy as np


def own_metrics(*compiled):
    """The `keras.metrics.Metric` objects in `compile`'s `metrics` / `weighted_metrics` that
    are not Keras's own classes."""
    return [m for m in keras.tree.flatten([c for c in compiled if c is not None])
            if isinstance(m, keras.metrics.Metric)
            and not type(m).__module__.startswith(("keras.", "tf_keras."))]


def warn_if_not_additive(acc, metrics, y):
    """Warn (UserWarning) naming each of `metrics` whose value on the first rows of labels `y`,
    updated in two parts, is not its value updated once; its state is reset afterwards
    (fit resets metrics at every epoch anyway). Single-output models only: with several
    outputs, each metric of your own is named in one warning without the check."""
    arrays = lambda a: a is not None and all(hasattr(t, "shape") for t in keras.tree.flatten(a))
    if not metrics or not arrays(y):
        return  # a dataset or generator: not read ahead for this
    if len(keras.tree.flatten(acc.model.outputs if getattr(acc.model, "outputs", None) else [0])) != 1:
        _warn([m.name for m in metrics], "could not be checked (several outputs)")
        return
    y = _head(y)
    rows = len(keras.tree.flatten(y)[0]) if y is not None else 0
    shape = _output_shape(acc.model)
    if rows < 2 or shape is None:
        return
    # stand-ins in (0, 1), from a generator of its own: no forward pass, no global seed used
    y_pred = np.random.default_rng(0).uniform(0.05, 0.95, (rows,) + shape).astype(keras.config.floatx())
    half = rows // 2
    differing = []
    for m in metrics:
        try:
            split, whole = _split_and_whole(m, y, y_pred, half, rows)
        except Exception:  # noqa: BLE001  (the metric's own error, if any, comes from fit itself)
            continue
        if not np.allclose(split, whole, rtol=1e-5, atol=1e-7):
            differing.append(f"{m.name} ({split.tolist()} in two parts, {whole.tolist()} at once)")
    if differing:
        _warn(differing, "is not additive: updated once per micro-batch, it reports the last "
                         "micro-batch's value (or another mix), not the batch's")


def _output_shape(model):
    """The shape of one row of `model`'s one output, or None where it is not known unbuilt."""
    outputs = getattr(model, "outputs", None)
    if not outputs:
        return None
    shape = tuple(keras.tree.flatten(outputs)[0].shape[1:])
    return shape if all(d is not None for d in shape) else None


def _split_and_whole(m, y, y_pred, half, rows):
    """`m`'s result updated on rows [0, half) then [half, rows), and updated on all at once."""
    try:
        m.reset_state()
        m.update_state(_rows(y, 0, half), _rows(y_pred, 0, half))
        m.update_state(_rows(y, half, rows), _rows(y_pred, half, rows))
        split = np.asarray(keras.ops.convert_to_numpy(m.result()), dtype=np.float64)
        m.reset_state()
        m.update_state(y, y_pred)
        return split, np.asarray(keras.ops.convert_to_numpy(m.result()), dtype=np.float64)
    finally:
        m.reset_state()


def _warn(names, what):
    warnings.warn(f"metric(s) {', '.join(names)} of your own {what}. AccumulatingModel updates "
                  "each metric once per micro-batch; make update_state add to its state (sums "
                  "and counts, as Keras's metrics do) to report the batch's value",
                  UserWarning, stacklevel=4)


def _head(a, count=16):
    return keras.tree.map_structure(lambda t: t[:count], a)


def _rows(a, start, stop):
    return keras.tree.map_structure(lambda t: t[start:stop], a)
