"""What a traced function's graph holds: its ops of one type, and its while loops.

    op_counts(f, *specs, op="MatMul") = (ops of that type in f's graph, in its while bodies)
    while_attrs(f, *specs)            = parallel_iterations of each While op in f's graph
    while_ops(f, *specs, autograph)   = the While ops of f traced with AutoGraph on or off,
                                        its library functions' included; or the error the trace raised

A Python `for` over `range(N)` unrolls while a function is traced: the graph holds N copies of
its body. A `tf.while_loop` holds one copy, in a while body (a function in the graph's library),
and its `parallel_iterations` says how many iterations may run at once. Iterating over a tensor
needs AutoGraph; traced with it off, as `fit` traces `train_step`, the trace fails.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import tensorflow as tf


def _graph(f, specs):
    """The graph of `f` (a `tf.function`) traced for `specs`."""
    return f.get_concrete_function(*specs).graph


def op_counts(f, *specs, op="MatMul"):
    """Count the ops of type `op` in `f`'s traced graph and inside its while bodies.

    Args:
        f: a `tf.function`.
        *specs: the `tf.TensorSpec`s (or tensors) to trace it for.
        op: the op type to count.
    Returns:
        `(in_graph, in_while_bodies)`: ints. A while body is a library function whose name
        contains "while_body"; each body counts once, however many times the loop runs.
    """
    graph = _graph(f, specs).as_graph_def()
    bodies = [n for fn in graph.library.function if "while_body" in fn.signature.name for n in fn.node_def]
    return sum(n.op == op for n in graph.node), sum(n.op == op for n in bodies)


def while_attrs(f, *specs, attr="parallel_iterations"):
    """The attribute `attr` of each While op in `f`'s traced graph (its top level), in order.

    Args:
        f: a `tf.function`.
        *specs: the `tf.TensorSpec`s (or tensors) to trace it for.
        attr: the While op's attribute to read.
    Returns:
        a list, one entry per While or StatelessWhile op.
    """
    return [o.get_attr(attr) for o in _graph(f, specs).get_operations() if "While" in o.type]


def while_ops(f, *specs, autograph=True):
    """Trace the Python function `f` with AutoGraph on or off and list its While ops.

    Args:
        f: a plain Python function (wrapped here in `tf.function(f, autograph=autograph)`).
        *specs: the `tf.TensorSpec`s (or tensors) to trace it for.
        autograph: whether AutoGraph converts `f`'s Python control flow.
    Returns:
        the op types containing "While" in the graph and its library functions, or, where the
        trace fails because `f` iterates over a tensor, the string "ErrorName: first 52 characters".
    """
    try:
        graph = _graph(tf.function(f, autograph=autograph), specs).as_graph_def()
    except tf.errors.OperatorNotAllowedInGraphError as error:
        return f"{type(error).__name__}: {str(error)[:52]}"
    nodes = [*graph.node, *(n for fn in graph.library.function for n in fn.node_def)]
    return [n.op for n in nodes if "While" in n.op]
