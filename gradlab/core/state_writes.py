"""What a model's forward pass does beyond its rows, found in the traced graph.

    forward pass of a micro-batch -> its assign ops -> the model's variables they write
                                  -> its reductions over the batch axis -> rows mixed

A layer that assigns a variable in `call` (a step counter, a running mean, a seed generator,
BatchNormalization's moving statistics) does so once per forward pass: N times in an update
of N micro-batches, where Keras's large batch does it once. Nothing runs to find them: the
assign ops are read from the graph the update traces anyway, so both faces name the same
variables in the same words (`warning`).

A reduction over the rows (a batch mean, as BatchNormalization and custom batch-statistics
layers take) makes each micro-batch's forward pass its own, so the update is close to the
large batch's, not equal (`mixing_warning`).

Lesson: notebooks/17-the-lab.ipynb (BatchNorm's statistics, measured)
"""
from __future__ import annotations

import contextlib
import warnings

import keras
import numpy as np
import tensorflow as tf

from .. import _compat
from .normaliser import depends_on, split_warning

# Ops that write a resource variable in place (their first input is its handle).
WRITES = frozenset({
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate", "ResourceScatterNdUpdate",
    "ResourceScatterNdAdd", "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin",
    "ResourceScatterMax", "ResourceApplyGradientDescent",
})


REDUCTIONS = frozenset({"Mean", "Sum", "Prod", "Max", "Min", "ArgMax", "ArgMin", "All", "Any",
                        "EuclideanNorm"})


@contextlib.contextmanager
def recording(found):
    """While active inside a trace, the ops it adds are appended to `found` when it exits
    (eagerly: nothing is recorded)."""
    if tf.executing_eagerly():
        yield
        return
    graph = tf.compat.v1.get_default_graph()
    start = len(graph.get_operations())
    yield
    found.extend(graph.get_operations()[start:])


def warn_once(seen, model, ops, rows, passes, outputs):
    """Warn (UserWarning) what a traced forward pass's `ops` show and `seen` (a set of the
    messages already given: a step is traced more than once) does not hold: the variables it
    writes (`warning`) and, unless `normaliser.split_warning` names the model's layers
    already, a reduction over its `rows` on the way to its `outputs` (`mixing_warning`).
    The same words from both faces."""
    messages = [warning(model, written(model, ops), passes)]
    if split_warning(model, passes) is None:
        messages.append(mixing_warning(ops, rows, passes, outputs))
    for message in messages:
        if message and message not in seen:
            seen.add(message)
            warnings.warn(message, UserWarning, stacklevel=3)


def written(model, ops):
    """The variables of `model` that `ops` (as `recording` found them) write, in model order."""
    ids = {id(_outermost(op.inputs[0])) for op in ops if op.type in WRITES}
    return [v for v in model.variables if any(id(h) in ids for h in _handles(v))]


def warning(model, variables, passes):
    """The warning for `variables` a forward pass writes, or None: those that gradlab does not
    already name elsewhere (BatchNormalization's statistics, the seed generators of Dropout and
    noise layers: `normaliser.split_warning`) and only when the update runs `passes` > 1."""
    named = set()
    for layer in _compat.sublayers(model):
        if isinstance(layer, keras.layers.BatchNormalization) or _random(layer):
            named.update(id(v) for v in layer.non_trainable_variables)
    rest = [v for v in variables if id(v) not in named]
    if passes < 2 or not rest:
        return None
    what = ", ".join(f"{v.path!r} (layer {_owner(model, v)!r})" for v in rest)
    return (f"the model's forward pass writes {what}: it is written once per micro-batch, {passes} "
            "times in an update where Keras's large batch writes it once (a counter counts "
            f"{passes}x, a running statistic moves {passes} times, a seed generator draws "
            f"{passes} times), so this state differs from plain fit's; the weights' update is "
            "exact only if the loss does not read it")


def mixing_warning(ops, rows, passes, outputs):
    """The warning for a forward pass whose `ops` reduce over the batch axis (of `rows` rows,
    None where the trace does not know it) on the way to its `outputs`, or None (also when
    `passes` < 2). A reduction that feeds only a penalty (`add_loss(mean(...))`) splits exactly."""
    if passes < 2:
        return None
    mixing = {op for op in ops if op.type in REDUCTIONS and _over_rows(op, rows)}
    if not mixing or not depends_on(tf.nest.flatten(outputs), [op.outputs[0] for op in mixing]):
        return None
    return ("the model's training forward pass (call with training=True) is not row by row: "
            "a layer reduces over the rows of the batch on the way to its outputs (a batch "
            f"statistic), so each of the {passes} micro-batches computes its own and this "
            "update is close to the large batch's, not equal")


def _over_rows(op, rows):
    axes = tf.get_static_value(op.inputs[1])
    shape = op.inputs[0].shape
    if axes is None or shape.rank is None or shape.rank == 0:
        return False
    axes = [int(a) % shape.rank for a in np.ravel(axes)]
    return 0 in axes and shape[0] == rows


def check_splittable(model, passes):
    """ValueError, before any update, for state an update of `passes` > 1 forward passes
    cannot give as Keras's large batch does."""
    if passes < 2:
        return
    overwritten = [v.path for v in model.trainable_variables if getattr(v, "overwrite_with_gradient", False)]
    if overwritten:
        raise ValueError(
            f"variables {overwritten} have overwrite_with_gradient=True (float8 quantization's "
            "scales): Keras assigns their 'gradient' as their new value, which a sum over "
            f"{passes} micro-batches would add up instead. Train them with accum_steps=1, "
            "or quantize after training")
    penalised = [layer.name for layer in _compat.sublayers(model)
                 if getattr(layer, "activity_regularizer", None) is not None]
    if penalised and not _compat.activity_penalty_is_a_mean():
        # the check inside the update sees the penalty as one term of its micro-batch, so it
        # cannot tell a sum over rows from a mean: refused from the version Keras sums it in
        raise ValueError(
            f"cannot accumulate this loss exactly: layer(s) {penalised} have an "
            f"activity_regularizer, whose penalty this Keras ({keras.__version__}; before 3.14) "
            "sums over the batch's rows, so the loss is no mean over rows and "
            f"{passes} micro-batches would count it differently. Upgrade Keras to 3.14 or "
            "later, add the penalty as a mean with add_loss, or train with accum_steps=1")
    stateful = [layer.name for layer in _compat.sublayers(model) if getattr(layer, "stateful", False)]
    if stateful:
        raise ValueError(
            f"layer(s) {stateful} are stateful: their states hold one batch's rows from one "
            f"batch to the next, which {passes} micro-batches of fewer rows cannot carry. "
            "Use stateful=False, or accum_steps=1 on one device")


def _random(layer):
    name = type(layer).__name__
    return ("Dropout" in name or "Noise" in name) and getattr(layer, "rate", getattr(layer, "stddev", 1)) != 0


def _owner(model, variable):
    """The innermost layer of `model` holding `variable`."""
    holders = [layer for layer in _compat.sublayers(model)
               if any(w is variable for w in layer.variables)]
    return min(holders, key=lambda layer: len(layer.variables)).name if holders else model.name


def _handles(v):
    """The resource handles of a Keras variable (one per replica under tf.distribute)."""
    value = getattr(v, "value", v)
    parts = getattr(value, "values", None) or (value,)
    return [getattr(p, "handle", p) for p in parts]


def _outermost(t):
    """Follow a captured handle out of nested function graphs to the tensor it captures."""
    while True:
        graph = getattr(t, "graph", None)
        captures = getattr(graph, "captures", None)
        if not captures:
            return t
        outer = next((ext for ext, inner in captures if inner is t), None)
        if outer is None:
            return t
        t = outer
