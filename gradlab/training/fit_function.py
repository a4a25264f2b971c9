"""Keras's train and test functions of an `AccumulatingModel`, wrapped where the engine needs it.

    after each train call: the contract's verdict (`verdict`: a refused update raises)
    under tf.distribute: Keras's per-replica loss division and its gradient all-reduce are
        switched off around the call (the engine all-reduces the sums once)
    jit_compile="auto" on one device: the first call lowers the step to XLA on zeros shaped
        like the data; if XLA refuses, it warns once, naming the reason, and runs without XLA
        (`prologue.xla_refused`, the policy a strategy follows)

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from .. import _compat
from ..core import contract
from . import prologue


class XlaProbe:
    """Whether a model's first train call under jit_compile="auto" is still to come (then it
    lowers the step to XLA once; never again for that model)."""
    __slots__ = ("pending",)

    def __init__(self):
        self.pending = True


def wrap(acc, keras_function, check, distributed, probe):
    """The train function `acc` should run in place of Keras's `keras_function`.

    Args:
        acc: the model (its public Keras API: optimizer, jit_compile, train_step,
            make_train_function, reset_metrics).
        keras_function: Keras's train function.
        check: its `CheckState`, whose verdict follows each call (`verdict`).
        distributed: whether it runs under a tf.distribute strategy.
        probe: its `XlaProbe`.
    """
    function = _wrap(acc, keras_function, check, distributed, probe)

    def train_function(iterator):
        logs = function(iterator)
        verdict(check, acc.reset_metrics)
        return logs
    train_function.gradlab = True
    return train_function


def verdict(check, reset_metrics):
    """After a train function call: ValueError `contract.REFUSAL` if its update was refused
    (weights and optimizer untouched, metrics reset by `reset_metrics`), else `check.after()`
    (disarmed once it has run, under "first")."""
    if check.take_refused():
        reset_metrics()
        raise ValueError(contract.REFUSAL)
    check.after()


def _wrap(acc, keras_function, check, distributed, probe):
    if distributed:
        def train_function(iterator):
            # around the whole call: Keras runs the replicas' train_step in parallel threads
            with _compat.losses_not_divided_by_replicas(), \
                    _compat.gradients_already_reduced(acc.optimizer):
                return keras_function(iterator)
    elif acc.jit_compile and acc.jit_compile_option == "auto" and probe.pending:
        def train_function(iterator):
            probe.pending = False
            zeros = _zeros_like(iterator, acc.accum_steps)
            step = tf.function(acc.train_step, jit_compile=True, autograph=False)
            # the same policy as a strategy's: lowered once, a refusal warned once
            if zeros is None or not prologue.xla_refused(step, zeros, "AccumulatingModel"):
                acc.train_function = wrap(acc, keras_function, check, distributed, probe)
                return keras_function(iterator)
            acc.jit_compile = False
            acc.make_train_function(force=True)
            return acc.train_function(iterator)  # its verdict read twice: the second is a no-op
    else:
        return keras_function
    return train_function


def wrap_test(keras_function, distributed):
    """The test function to run in place of Keras's `keras_function`: under tf.distribute
    (`distributed`), Keras's per-replica loss division switched off around the call (the
    step all-reduces the sums once)."""
    if not distributed:
        return keras_function

    def test_function(iterator):
        with _compat.losses_not_divided_by_replicas():
            return keras_function(iterator)
    test_function.gradlab = True
    return test_function


def _zeros_like(iterator, rows):
    """Zeros shaped like `iterator`'s elements (`rows` rows where the batch is unknown), or
    None where it is not a tf.data iterator (nothing to shape them by)."""
    spec = getattr(iterator, "element_spec", None)
    if spec is None:
        return None
    return tf.nest.map_structure(
        lambda s: tf.zeros([rows if d is None else d for d in s.shape], s.dtype), spec)
