"""Towers: the batch split across devices, gradients averaged in the graph, one update."""
import math

import numpy as np
import pytest
import tensorflow as tf

from gradlab.classic.tower_graph import build_towers
from gradlab.classic import tower_average
from classic_reference import (LR, WALK_W_AFTER, WALK_X, WALK_Y, assert_applies,
                               assert_bad_batch_changes_nothing, assert_equals_large_batch, batches,
                               linear, very_uneven_case)
from common import DEVICES


def build(opt, num_towers=2):
    return build_towers(num_towers, DEVICES[:num_towers], lr=LR[opt], optimizer=opt)


@pytest.mark.slow
@pytest.mark.parametrize("opt", ["momentum", "adam"])
def test_towers_equal_one_large_batch(opt):
    # 32 = 16 + 16, 30 = 15 + 15, 31 = 16 + 15; the reference is the same graph with one tower.
    assert_equals_large_batch(build(opt), build(opt, num_towers=1), opt, accum_steps=1)


def test_towers_walk_through_by_hand():
    # Tower 0 holds examples 1-2, tower 1 examples 3-4 (see classic_reference for each one's
    # gradient): tower means [[.5,-.5],[.5,-.5]] and [[-.5,.5],[1,-1]], average [[0,0],[.75,-.75]].
    parts = build_towers(2, DEVICES, model=linear, lr=1.0, optimizer="sgd", input_shape=(2,))
    with parts.session() as sess:
        (g0, _), (g1, _) = sess.run([parts.tower_grads[0][0], parts.tower_grads[1][0]],
                                    {parts.x: WALK_X, parts.y: WALK_Y})
        np.testing.assert_allclose(g0, [[0.5, -0.5], [0.5, -0.5]], atol=1e-7)
        np.testing.assert_allclose(g1, [[-0.5, 0.5], [1.0, -1.0]], atol=1e-7)
        assert parts.run_update(sess, WALK_X, WALK_Y) == pytest.approx(math.log(2), rel=1e-6)
        np.testing.assert_allclose(sess.run(parts.variables[0]), WALK_W_AFTER, atol=1e-7)


def test_tower_graph_runs_each_tower_on_its_device():
    parts = build("momentum")
    for op in parts.graph.get_operations():
        if op.name.startswith("tower_") and op.device:
            assert op.device == DEVICES[int(op.name[6])], op.name
        if op.type == "VarHandleOp":
            assert op.device == "/device:CPU:0", op.name  # variables on the parameter device
    x, y = batches()[2]
    meta = tf.compat.v1.RunMetadata()
    with parts.session() as sess:
        sess.run(parts.train_step, {parts.x: x, parts.y: y}, run_metadata=meta,
                 options=tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE))
    ran = {}  # tower -> devices its ops ran on (variable reads run where the variable lives)
    for dev in meta.step_stats.dev_stats:
        for node in dev.node_stats:
            if node.node_name.startswith("tower_") and not node.node_name.endswith("ReadVariableOp"):
                ran.setdefault(node.node_name[:7], set()).add(dev.device.split("device:")[-1])
    assert ran == {"tower_0": {"CPU:0"}, "tower_1": {"CPU:1"}}


def test_tower_graph_averages_with_average_gradients(monkeypatch):
    calls = []

    def spy(tower_grads, counts=None):
        calls.append((tower_grads, counts))
        return average_gradients(tower_grads, counts)

    average_gradients = tower_average.average_gradients
    monkeypatch.setattr(tower_average, "average_gradients", spy)
    parts = build("momentum")
    assert len(calls) == 1 and len(calls[0][0]) == 2 and calls[0][1] is None
    assert [g for g, _ in parts.averaged] == parts.grads
    types = {op.type for op in parts.graph.get_operations() if op.name.startswith("average/")}
    assert {"ExpandDims", "ConcatV2", "Mean"} <= types  # the original recipe's shape
    x, y = batches()[1]  # 15 + 15: every tower weight is exactly 1
    with parts.session() as sess:
        tower_grads, averaged = sess.run([[[g for g, _ in t] for t in parts.tower_grads], parts.grads],
                                         {parts.x: x, parts.y: y})
    for j, mean in enumerate(averaged):
        np.testing.assert_allclose(mean, (tower_grads[0][j] + tower_grads[1][j]) / 2, rtol=1e-6, atol=1e-9)


def test_very_uneven_towers_are_weighted_by_example_count():
    assert_applies(build_towers(2, DEVICES, lr=1.0), very_uneven_case(3, [2, 1]), accum_steps=1)


def test_bad_input_names_the_problem_and_changes_nothing():
    with pytest.raises(ValueError, match="num_towers"):
        build_towers(0)
    with pytest.raises(ValueError, match="one device per tower"):
        build_towers(2, devices=DEVICES[:1])
    with pytest.raises(TypeError, match="devices"):
        build_towers(2, devices="/device:CPU:0")
    with pytest.raises(TypeError, match="devices must be a list of device name strings, got 5"):
        build_towers(2, devices=5)
    parts = build("momentum")
    before = assert_bad_batch_changes_nothing(parts, 1)
    x, y = batches()[0]
    with parts.session() as sess:
        with pytest.raises(ValueError, match="too small for 2 replicas"):
            parts.run_update(sess, x[:1], y[:1])
        with pytest.raises(ValueError, match="accum_steps must be 1, got 2"):
            parts.run_update(sess, x, y, accum_steps=2)
        for w, w0 in zip(parts.get_weights(sess), before):
            np.testing.assert_array_equal(w, w0)
