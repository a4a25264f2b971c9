"""XLA: whether the graph being traced will be compiled by XLA, and a slice whose start XLA
takes as a run-time value.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import tensorflow as tf

from ._probing import _broken, _probed


def _probe_xla_context():
    from tensorflow.python.ops import control_flow_util
    seen = []

    def f(x):
        seen.append(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))
        return x
    tf.function(f, jit_compile=True).get_concrete_function(tf.TensorSpec([], tf.float32))
    tf.function(f, jit_compile=False).get_concrete_function(tf.TensorSpec([], tf.float32))
    if seen != [True, False]:
        raise _broken("tensorflow.python.ops.control_flow_util.GraphOrParentsInXlaContext no "
                      f"longer tells a tf.function(jit_compile=True) from one without XLA (got {seen})")


@_probed(_probe_xla_context)
def traced_for_xla():
    """Whether the graph being traced now will be compiled by XLA (a `tf.function` with
    `jit_compile=True`, or one called inside it)."""
    from tensorflow.python.ops import control_flow_util
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def _probe_dynamic_slice():
    from tensorflow.compiler.tf2xla.python import xla as tfxla
    f = tf.function(lambda p, start: tfxla.dynamic_slice(p, [start, 0], [2, 2]), jit_compile=True)
    got = f(tf.reshape(tf.range(8.0), (4, 2)), tf.constant(1)).numpy().tolist()
    if got != [[2.0, 3.0], [4.0, 5.0]]:
        raise _broken(f"tensorflow.compiler.tf2xla.python.xla.dynamic_slice no longer slices "
                      f"rows 1:3 of a [4, 2] tensor (got {got})")


@_probed(_probe_dynamic_slice)
def dynamic_rows(p, start, n):
    """Rows `start` to `start + n` of `p` under XLA.

    `tf.slice` asks XLA for its start at compile time: a start computed from the batch makes
    XLA fold the batch in as a constant and compile again for every batch. XLA's DynamicSlice
    takes the start at run time."""
    from tensorflow.compiler.tf2xla.python import xla as tfxla
    begin = tf.concat([[tf.cast(start, tf.int32)], tf.zeros([p.shape.rank - 1], tf.int32)], 0)
    if p.shape[1:].is_fully_defined() and not tf.is_tensor(n):
        return tfxla.dynamic_slice(p, begin, [n] + p.shape[1:].as_list())
    # XLA knows every shape when it compiles: a size read from tf.shape is a constant to it.
    return tfxla.dynamic_slice(p, begin, tf.concat([[n], tf.shape(p)[1:]], 0))


PRIVATE_NAMES = {
    "tensorflow.python.ops.control_flow_util.GraphOrParentsInXlaContext": _probe_xla_context,
    "tensorflow.compiler.tf2xla.python.xla.dynamic_slice": _probe_dynamic_slice,
}
