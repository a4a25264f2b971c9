"""Data adapters: Keras's pipeline for arrays (validation split, sliceable arrays, class weights).

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from ._probing import _broken, _probed


def _probe_arrays():
    from keras.src.trainers.data_adapters import array_data_adapter, array_slicing, data_adapter_utils
    x, y = np.arange(8.0).reshape(4, 2), np.array([0, 1, 1, 0])
    (xt, yt, _), (xv, yv, _) = array_slicing.train_validation_split((x, y, None), 0.25)
    sliced = array_slicing.convert_to_sliceable((xt, yt), target_backend="tensorflow")
    weights = data_adapter_utils.class_weight_to_sample_weights(yt, {1: 2.0})
    if not (array_data_adapter.can_convert_arrays((x, y, None))
            and not array_data_adapter.can_convert_arrays((tf.data.Dataset.range(2), None, None))
            and xv.tolist() == [[6.0, 7.0]] and yv.tolist() == [0]
            and all(isinstance(t, np.ndarray) for t in sliced)
            and sliced[0].dtype == keras.backend.floatx() and sliced[1].dtype == np.int64
            and weights.tolist() == [1.0, 2.0, 2.0]):
        raise _broken("Keras's array pipeline (keras.src.trainers.data_adapters: "
                      "can_convert_arrays, train_validation_split, convert_to_sliceable, "
                      "class_weight_to_sample_weights) no longer prepares arrays as it did")


@_probed(_probe_arrays)
def fit_arrays(x, y, sample_weight, class_weight, validation_split, validation_data):
    """`((x, y, sample_weight), validation_data)` as Keras's `fit` trains on them: the last
    `validation_split` of the rows held out (unless `validation_data`), `class_weight` made
    into sample weights, floats cast to floatx, each a numpy array or a dense tf.Tensor;
    None when Keras would not treat the inputs as arrays (a dataset, a generator) or holds
    one as a sparse or ragged tensor."""
    from keras.src.trainers.data_adapters import array_data_adapter, array_slicing, data_adapter_utils
    if not array_data_adapter.can_convert_arrays((x, y, sample_weight)):
        return None
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = array_slicing.train_validation_split(
            (x, y, sample_weight), validation_split=validation_split)
    if class_weight is not None:
        sample_weight = data_adapter_utils.class_weight_to_sample_weights(y, class_weight)
    arrays = array_slicing.convert_to_sliceable((x, y, sample_weight), target_backend="tensorflow")
    if not all(t is None or isinstance(t, (np.ndarray, tf.Tensor)) for t in tf.nest.flatten(arrays)):
        return None
    return keras.tree.lists_to_tuples(arrays), validation_data


# Every private Keras/TensorFlow name gradlab uses (attributes, overridden methods, members
# of keras.src / tensorflow.python modules), with the probe that checks it.


PRIVATE_NAMES = {
    "keras.src.trainers.data_adapters.array_data_adapter.can_convert_arrays": _probe_arrays,
    "keras.src.trainers.data_adapters.array_slicing.train_validation_split": _probe_arrays,
    "keras.src.trainers.data_adapters.array_slicing.convert_to_sliceable": _probe_arrays,
    "keras.src.trainers.data_adapters.data_adapter_utils.class_weight_to_sample_weights": _probe_arrays,
}
