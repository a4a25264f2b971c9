"""State a model changes during its own forward pass, found in the traced graph.

    forward pass of a micro-batch -> its assign ops -> the model's variables they write

A layer that assigns a variable in `call` (a step counter, a running mean, a seed generator,
BatchNormalization's moving statistics) does so once per forward pass: N times in an update
of N micro-batches, where Keras's large batch does it once. Nothing runs to find them: the
assign ops are read from the graph the update traces anyway, so both faces name the same
variables in the same words (`warning`).

Lesson: notebooks/06-pitfalls.ipynb
"""
from __future__ import annotations

import contextlib

import keras
import tensorflow as tf

from .. import _compat

# Ops that write a resource variable in place (their first input is its handle).
WRITES = frozenset({
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate", "ResourceScatterNdUpdate",
    "ResourceScatterNdAdd", "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin",
    "ResourceScatterMax", "ResourceApplyGradientDescent",
})


@contextlib.contextmanager
def recording(found):
    """While active inside a trace, the handles of the variables the new ops write are
    appended to `found` when it exits (eagerly: nothing is recorded)."""
    if tf.executing_eagerly():
        yield
        return
    graph = tf.compat.v1.get_default_graph()
    start = len(graph.get_operations())
    yield
    for op in graph.get_operations()[start:]:
        if op.type in WRITES:
            found.append(_outermost(op.inputs[0]))


def written(model, handles):
    """The variables of `model` among `handles` (as `recording` found them), in model order."""
    ids = {id(h) for h in handles}
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
