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
def dynamic_slice(p, begin, size):
    """`tf.slice(p, begin, size)` for a graph XLA compiles, `size` static to XLA.

    `tf.slice` asks XLA for `begin` at compile time: a start computed from the batch makes XLA
    fold the batch in as a constant and compile again for every batch. XLA's DynamicSlice
    takes the start at run time."""
    from tensorflow.compiler.tf2xla.python import xla as tfxla
    return tfxla.dynamic_slice(p, begin, size)


PRIVATE_NAMES = {
    "tensorflow.python.ops.control_flow_util.GraphOrParentsInXlaContext": _probe_xla_context,
    "tensorflow.compiler.tf2xla.python.xla.dynamic_slice": _probe_dynamic_slice,
}
