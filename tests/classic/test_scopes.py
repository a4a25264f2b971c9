"""A TF1 graph as name-scope groups: every op counted once, in its group, with its device."""
import pytest
import tensorflow as tf

from gradlab.classic import scopes
from gradlab.classic.accumulation_graph import build_accumulation
from gradlab.classic.tower_graph import build_towers
from common import DEVICES


def tiny_graph():
    graph = tf.Graph()
    with graph.as_default():
        with tf.name_scope("placeholders"):
            x = tf.compat.v1.placeholder(tf.float32, [None], name="x")
        with tf.name_scope("model"):
            h = 2.0 * x
        with tf.device("/device:CPU:1"), tf.name_scope("tower_1/loss"):
            tf.reduce_sum(h * x)
    return graph


def test_summarize_a_hand_built_graph():
    # Counted by hand: placeholders/x is one op; model holds a constant and a Mul; tower_1/loss
    # holds Mul, Const (the axis) and Sum, all asked for CPU:1.
    assert scopes.summarize_graph(tiny_graph()) == [("placeholders/x", 1, ""), ("model", 2, ""),
                                                    ("tower_1/loss", 3, "/device:CPU:1")]


def test_edges_of_a_hand_built_graph():
    # model reads x; tower_1/loss reads model's h and x.
    assert scopes.edges(scopes.groups(tiny_graph())) == {
        ("placeholders/x", "model"), ("placeholders/x", "tower_1/loss"), ("model", "tower_1/loss")}


def test_summarize_graph_counts_every_op_once_with_its_device():
    parts = build_towers(2, DEVICES)
    summary = scopes.summarize_graph(parts)
    assert sum(n for _, n, _ in summary) == len(parts.graph.get_operations())
    device = {scope: d for scope, _, d in summary}
    assert device["tower_0/gradients"] == "/device:CPU:0"
    assert device["tower_1/gradients"] == "/device:CPU:1"
    assert device["variables"] == device["average"] == device["apply"] == "/device:CPU:0"


def test_variables_slots_and_accumulators_have_their_own_groups():
    groups = scopes.groups(build_accumulation(optimizer="momentum").graph)
    assert {"variables", "optimizer state", "accumulators", "zero", "accum", "apply"} <= set(groups)
    assert all("Momentum" in op.name for op in groups["optimizer state"])  # the slots, not the variables
    assert all(op.name.startswith("accumulators/") for op in groups["accumulators"])
    assert scopes.tower("tower_12/loss") == 12 and scopes.tower("towers") is None


def test_graph_of_rejects_what_is_not_a_graph():
    with pytest.raises(TypeError, match="tf.Graph.*42"):
        scopes.graph_of(42)
