"""Keras's train and test functions of an `AccumulatingModel`, wrapped where the engine needs it.

    under tf.distribute: Keras's per-replica loss division and its gradient all-reduce are
        switched off around the call (the engine all-reduces the sums once)
    jit_compile="auto" on one device: the first call lowers the step to XLA on zeros shaped
        like the data; if XLA refuses, it warns once, naming the reason, and runs without XLA

Lesson: notebooks/12-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat
from . import fit_prologue, xla


def wrap(acc, keras_function):
    """The train function `acc` should run in place of Keras's `keras_function`, followed by
    the contract's verdict (`fit_prologue.after_call`: a refused update raises)."""
    function = _wrap(acc, keras_function)

    def train_function(iterator):
        logs = function(iterator)
        fit_prologue.after_call(acc)
        return logs
    train_function.gradlab = True
    return train_function


def _wrap(acc, keras_function):
    if acc._distributed():
        def train_function(iterator):
            # around the whole call: Keras runs the replicas' train_step in parallel threads
            with _compat.losses_not_divided_by_replicas(), \
                    _compat.gradients_already_reduced(acc.optimizer):
                return keras_function(iterator)
    elif acc.jit_compile and acc.jit_compile_option == "auto" and not acc._xla_probed:
        def train_function(iterator):
            acc._xla_probed = True
            reason = _xla_refusal(acc.train_step, iterator, acc.accum_steps)
            # the same policy as a strategy's: lowered once, a refusal warned once
            if reason is None:
                acc.train_function = wrap(acc, keras_function)
                return keras_function(iterator)
            xla.warn_refused(reason, "AccumulatingModel")
            acc.jit_compile = False
            acc.make_train_function(force=True)
            return acc.train_function(iterator)  # its verdict read twice: the second is a no-op
    else:
        return keras_function
    return train_function


def wrap_test(acc, keras_function):
    """The test function `acc` should run in place of Keras's `keras_function`: under
    tf.distribute, Keras's per-replica loss division switched off around the call (the
    step all-reduces the sums once)."""
    if not acc._distributed():
        return keras_function

    def test_function(iterator):
        with _compat.losses_not_divided_by_replicas():
            return keras_function(iterator)
    test_function.gradlab = True
    return test_function


def _xla_refusal(step, iterator, rows):
    """None if XLA lowers `step` on zeros shaped like `iterator`'s elements (`rows` rows),
    else XLA's reason (`xla.refusal`)."""
    spec = getattr(iterator, "element_spec", None)
    if spec is None:  # not a tf.data iterator: nothing to shape the zeros by
        return None
    zeros = tf.nest.map_structure(
        lambda s: tf.zeros([rows if d is None else d for d in s.shape], s.dtype), spec)
    return xla.refusal(tf.function(step, jit_compile=True, autograph=False), zeros)
