"""graph_ops: ops counted in traced graphs whose contents are known by construction."""
import tensorflow as tf

from gradlab.studies import graph_ops

SPEC = tf.TensorSpec([None, 3])
W = tf.ones([3, 3])


def test_an_unrolled_loop_repeats_its_body_a_while_loop_holds_it_once():
    @tf.function(autograph=False)
    def unrolled(x):
        for _ in range(4):  # a Python loop: four MatMuls in the graph
            x = tf.matmul(x, W)
        return x

    @tf.function(autograph=False)
    def looped(x):
        return tf.while_loop(lambda i, x: i < 4, lambda i, x: (i + 1, tf.matmul(x, W)), (0, x),
                             parallel_iterations=1)[1]

    assert graph_ops.op_counts(unrolled, SPEC) == (4, 0)
    assert graph_ops.op_counts(looped, SPEC) == (0, 1)
    assert graph_ops.op_counts(looped, SPEC, op="Relu") == (0, 0)
    assert graph_ops.while_attrs(looped, SPEC) == [1]
    assert graph_ops.while_attrs(unrolled, SPEC) == []


def test_a_loop_over_a_tensor_needs_autograph():
    def f(n):
        total = tf.constant(0.0)
        for _ in tf.range(n):
            total += 1.0
        return total

    n = tf.TensorSpec([], "int32")
    assert graph_ops.while_ops(f, n, autograph=True) == ["StatelessWhile"]
    refused = graph_ops.while_ops(f, n, autograph=False)
    assert refused.startswith("OperatorNotAllowedInGraphError: ") and refused.endswith("is not allowed")
    assert graph_ops.while_ops(lambda n: n + 1, n, autograph=True) == []
