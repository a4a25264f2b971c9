"""Labels a sparse categorical loss cannot take, found before `fit` runs its update under XLA.

    0 <= y < classes   for every label of an output trained with a sparse categorical loss
                       (its `ignore_class` excepted)

Without XLA, TensorFlow's kernel raises "Received a label value of 5 which is outside the
valid range of [0, 3)" and Keras's `fit` stops. Under XLA the same op gives a NaN loss
instead, which the update's guard would skip and count (`skipped_updates`), and training
would go on. So when `AccumulatingModel.fit` runs under XLA, labels given as arrays are
checked on the host, once per call, in TensorFlow's words (a dataset or generator is not
read ahead: its NaN update is skipped and counted, as docs/USING.md says).

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import keras
import numpy as np


def check_sparse_labels(acc, y, validation_data=None):
    """ValueError naming the first label out of range in `y` or `validation_data`'s (as
    `fit` takes them: an array, or a list or dict of them per output), if `acc` runs under XLA."""
    if not acc.jit_compile:
        return
    labels = [y]
    if isinstance(validation_data, (tuple, list)):
        labels.append(keras.utils.unpack_x_y_sample_weight(tuple(validation_data))[1])
    outputs = getattr(acc.model, "outputs", None)
    if not outputs:
        return  # a subclassed model: no output shapes before it runs
    names = list(getattr(acc.model, "output_names", None) or [])
    outputs = keras.tree.flatten(outputs)
    losses = _per_output(acc.loss, names, len(outputs))
    for y in labels:
        if y is None or not all(isinstance(a, np.ndarray) or hasattr(a, "numpy")
                                for a in keras.tree.flatten(y)):
            continue
        for i, (loss, target) in enumerate(zip(losses, _per_output(y, names, len(outputs)))):
            if target is None or not _sparse(loss):
                continue
            classes = outputs[i].shape[-1]
            values = np.asarray(target)
            ignore = getattr(loss, "ignore_class", None)
            bad = values[((values < 0) | (values >= classes)) & (values != ignore if ignore is not None else True)]
            if bad.size:
                which = f" (output {names[i]!r})" if len(outputs) > 1 and names else ""
                raise ValueError(
                    f"Received a label value of {bad.flat[0]} which is outside the valid range of "
                    f"[0, {classes}){which}. Keras's fit stops here; under XLA (jit_compile="
                    f"{acc.jit_compile_option!r}) TensorFlow would give a NaN loss instead and the "
                    "update would be skipped. Fix the labels (or the number of classes)")


def _per_output(value, names, count):
    """`value` (one thing, a list, or a dict by output name) as a list of `count` entries."""
    if isinstance(value, dict):
        return [value.get(name) for name in names] if len(names) == count else [None] * count
    if isinstance(value, (list, tuple)) and not isinstance(value, np.ndarray):
        return list(value) if len(value) == count else [None] * count
    return [value] * count if count == 1 else [None] * count


def _sparse(loss):
    if isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        return True
    if isinstance(loss, str):
        return loss in ("sparse_categorical_crossentropy", "SparseCategoricalCrossentropy")
    return loss is keras.losses.sparse_categorical_crossentropy
