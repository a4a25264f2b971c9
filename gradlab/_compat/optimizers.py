"""Optimizers: the all-reduce inside apply, the counters, Keras's own accumulators, EMA, which
variables an optimizer knows.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import contextlib
import threading

import keras
import tensorflow as tf

from ._probing import _broken, _probed


def _probe_all_reduce():
    opt = keras.optimizers.SGD(0.1)
    v = keras.Variable([1.0])
    calls = []
    opt._all_reduce_sum_gradients = lambda pairs: calls.append(1) or list(pairs)
    try:
        opt.apply([tf.constant([1.0])], [v])
    finally:
        del opt._all_reduce_sum_gradients
    if calls != [1]:
        raise _broken("Keras optimizers no longer all-reduce gradients through "
                      "_all_reduce_sum_gradients")


# Entries per optimizer still open, and the attribute the first of them found. Keras traces a
# strategy's replicas in threads whose entries and exits interleave (A in, B in, A out, B out), so
# only the first entry switches the all-reduce off and only the last exit puts back what it found.
_OPEN = {}
_OPEN_LOCK = threading.Lock()


@contextlib.contextmanager
@_probed(_probe_all_reduce)
def _passthrough(chain):
    with _OPEN_LOCK:
        for opt in chain:
            entry = _OPEN.setdefault(id(opt), [0, opt.__dict__.get("_all_reduce_sum_gradients")])
            if entry[0] == 0:
                opt._all_reduce_sum_gradients = list
            entry[0] += 1
    try:
        yield
    finally:
        with _OPEN_LOCK:
            for opt in chain:
                entry = _OPEN[id(opt)]
                entry[0] -= 1
                if entry[0] == 0:
                    del _OPEN[id(opt)]
                    if entry[1] is None:
                        opt.__dict__.pop("_all_reduce_sum_gradients", None)
                    else:
                        opt._all_reduce_sum_gradients = entry[1]


def gradients_already_reduced(optimizer):
    """While active, `apply_gradients` does not all-reduce the gradients again.

    Keras 3's TensorFlow optimizer SUM-all-reduces what it gets in a replica context. gradlab's
    gradients are summed already (one all-reduce with the loss and normaliser): a second one
    would multiply the update by the replicas (measured: 2.0 on two). Outside tf.distribute it
    is an identity built with custom_gradient, which cannot be made inside a tf.cond branch.
    Keras 2 had `experimental_aggregate_gradients=False`; Keras 3 has no switch.
    """
    return _passthrough(optimizer_chain(optimizer))


def optimizer_chain(optimizer):
    """The optimizer and any it wraps (a LossScaleOptimizer's inner_optimizer)."""
    chain = [optimizer]
    while getattr(chain[-1], "inner_optimizer", None) is not None:
        chain.append(chain[-1].inner_optimizer)
    return chain


def _probe_iterations():
    # With gradient_accumulation_steps the public `iterations` counts updates, not applies:
    # `_iterations` is the variable apply() increments.
    opt = keras.optimizers.SGD(0.1, gradient_accumulation_steps=2)
    v = keras.Variable([1.0])
    opt.apply([tf.constant([1.0])], [v])
    counter = getattr(opt, "_iterations", None)
    if not isinstance(counter, keras.Variable) or int(counter.numpy()) != 1:
        raise _broken("Keras optimizers no longer count each apply() in the variable _iterations")


@_probed(_probe_iterations)
def counters(optimizer):
    """The step counters of `optimizer` and the optimizers it wraps (each its own variable)."""
    found = []
    for opt in optimizer_chain(optimizer):
        v = opt._iterations
        if not any(v is f for f in found):
            found.append(v)
    return found


def _probe_accumulators():
    opt = keras.optimizers.SGD(1.0, gradient_accumulation_steps=2)
    v = keras.Variable([0.0])
    opt.apply([tf.constant([3.0])], [v])  # the first of two: accumulated, not applied
    held = [a.numpy().tolist() for a in getattr(opt, "_accumulated_gradients", [])]
    if held != [[3.0]] or v.numpy().tolist() != [0.0]:
        raise _broken("Keras's gradient_accumulation_steps no longer holds the pending "
                      "gradients in the optimizer's _accumulated_gradients")


@_probed(_probe_accumulators)
def keras_accumulators(optimizer):
    """The accumulators of Keras's own `gradient_accumulation_steps` (empty without it, or
    before the optimizer is built: Keras makes them in `build`)."""
    if not optimizer.gradient_accumulation_steps or not optimizer.built:
        return []
    return list(optimizer._accumulated_gradients)


def _probe_ema():
    opt = keras.optimizers.SGD(1.0, use_ema=True)
    v = keras.Variable([1.0, 2.0])
    opt.apply([tf.constant([1.0, 1.0])], [v])  # Keras's first update copies the weights
    averages = getattr(opt, "_model_variables_moving_average", None) or []
    if [a.numpy().tolist() for a in averages] != [[0.0, 1.0]]:
        raise _broken("Keras optimizers with use_ema=True no longer keep the weights' moving "
                      "averages in _model_variables_moving_average")


@_probed(_probe_ema)
def ema_variables(optimizer):
    """The moving averages of the weights an optimizer with `use_ema=True` keeps."""
    return list(optimizer._model_variables_moving_average)


def _probe_variable_index():
    opt = keras.optimizers.SGD(0.1)
    v, other = keras.Variable([1.0]), keras.Variable([1.0])
    opt.build([v])
    if opt._var_key(v) not in opt._trainable_variables_indices or \
            opt._var_key(other) in opt._trainable_variables_indices:
        raise _broken("Keras optimizers no longer index the variables they were built with "
                      "in _trainable_variables_indices by _var_key")


@_probed(_probe_variable_index)
def optimizer_knows(optimizer, variable):
    """Whether `optimizer` was built with `variable` (Keras refuses to apply to others)."""
    return optimizer._var_key(variable) in optimizer._trainable_variables_indices


PRIVATE_NAMES = {
    "_all_reduce_sum_gradients": _probe_all_reduce,
    "_iterations": _probe_iterations,
    "_accumulated_gradients": _probe_accumulators,
    "_model_variables_moving_average": _probe_ema,
    "_var_key": _probe_variable_index,
    "_trainable_variables_indices": _probe_variable_index,
}
