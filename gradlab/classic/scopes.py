"""A TF1 graph seen as name-scope groups and the data flow between them.

    group(op) = 'variables' | 'optimizer state' | 'accumulators'   (a variable and its ops)
              | 'tower_t/<scope>'                                   (ops of tower t)
              | 'placeholders/<name>'                               (each fed tensor)
              | '<top-level scope>'                                 (everything else)
    a -> b    iff an op in b reads a tensor of (or waits for) an op in a

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-accumulating-in-variables.ipynb
"""
from __future__ import annotations

import collections
import re

_TOWER = re.compile(r"^tower_(\d+)$")
_VARIABLE_OPS = ("VarHandleOp", "VariableV2")
STATE = ("variables", "optimizer state", "accumulators")


def summarize_graph(parts_or_graph):
    """`[(scope, op_count, device), ...]` in order of first appearance in the graph.

    `device` is the device most of the group's placed ops asked for ('' if none asked).

    Args:
        parts_or_graph: a built classic graph (`gradlab.classic.classic_graph.ClassicGraph`)
            or a `tf.Graph`.
    Returns:
        one `(group, number of ops, device)` per group, every op counted once.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    return [(name, len(ops), device(ops)) for name, ops in groups(graph_of(parts_or_graph)).items()]


def graph_of(parts_or_graph):
    """The `tf.Graph` of a built classic graph, or the graph itself; TypeError for anything else."""
    graph = getattr(parts_or_graph, "graph", parts_or_graph)
    if not hasattr(graph, "get_operations"):
        raise TypeError(f"expected a tf.Graph or the parts of a classic graph, got {parts_or_graph!r}")
    return graph


def groups(graph):
    """`{group: [ops]}` in order of first appearance (see the module's `group(op)`).

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    ops = graph.get_operations()
    trainable = {v.op.name for v in graph.get_collection("trainable_variables")}
    # Longest first, so that a slot `model/dense/kernel/Momentum` is not its variable's.
    variables = sorted((op.name for op in ops if op.type in _VARIABLE_OPS), key=len, reverse=True)
    found = {}
    for op in ops:
        found.setdefault(_group(op.name, variables, trainable), []).append(op)
    return found


def _group(name, variables, trainable):
    for v in variables:
        if name == v or name.startswith(v + "/"):
            if v in trainable:
                return "variables"
            return "accumulators" if v.startswith("accumulators/") else "optimizer state"
    parts = name.split("/")
    if (_TOWER.match(parts[0]) or parts[0] == "placeholders") and len(parts) > 1:
        return "/".join(parts[:2])  # one box per tower scope, one per placeholder
    return parts[0]


def edges(grouped):
    """`{(a, b)}`: an op in group b reads a tensor of, or waits for, an op in group a != b.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    where = {op.name: g for g, ops in grouped.items() for op in ops}
    found = set()
    for g, ops in grouped.items():
        for op in ops:
            for src in [t.op for t in op.inputs] + list(op.control_inputs):
                a = where.get(src.name)
                if a is not None and a != g:
                    found.add((a, g))
    return found


def device(ops):
    """The device most of `ops` asked for, '' if none asked for one."""
    placed = collections.Counter(op.device for op in ops if op.device)
    return placed.most_common(1)[0][0] if placed else ""


def tower(name):
    """t for a group `tower_t/...`, else None."""
    m = _TOWER.match(name.split("/")[0])
    return int(m.group(1)) if m else None
