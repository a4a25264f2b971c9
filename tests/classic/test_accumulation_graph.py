"""Accumulation in variables: zero, add w_i g_i per micro-batch, apply once."""
import math

import numpy as np
import pytest

from gradlab.classic.accumulation_graph import build_accumulation
from gradlab.classic.weights import micro_batches
from classic_reference import (LR, WALK_GRAD_W, WALK_W_AFTER, WALK_X, WALK_Y, assert_applies,
                               assert_bad_batch_changes_nothing, assert_equals_large_batch, batches,
                               linear, very_uneven_case)


def build(opt):
    return build_accumulation(lr=LR[opt], optimizer=opt)


@pytest.mark.parametrize("opt", ["momentum", "adam"])
def test_accumulation_equals_one_large_batch(opt):
    parts = build(opt)  # 4 micro-batches per update against 1
    assert_equals_large_batch(parts, parts, opt, accum_steps=4)


def test_accumulators_walk_through_by_hand():
    # The per-example gradients are in classic_reference.
    parts = build_accumulation(model=linear, lr=1.0, optimizer="sgd", input_shape=(2,))
    expected = [  # (acc_w, acc_b) after micro-batches 1 (2 examples, w=1/2), 2 and 3 (w=1/4)
        ([[0.25, -0.25], [0.25, -0.25]], [0.0, 0.0]),     # 1/2 * mean([[-.5,.5],[-1,1]], [[1.5,-1.5],[2,-2]])
        ([[0.0, 0.0], [0.25, -0.25]], [-0.125, 0.125]),   # + 1/4 * [[-1,1],[0,0]], 1/4 * (-.5,.5)
        ([[0.0, 0.0], [0.75, -0.75]], [0.0, 0.0]),        # + 1/4 * [[0,0],[2,-2]], 1/4 * (.5,-.5)
    ]
    assert expected[-1][0] == WALK_GRAD_W
    with parts.session() as sess:
        sess.run(parts.zero_ops)
        for (x_i, y_i, w_i), (acc_w, acc_b) in zip(micro_batches(WALK_X, WALK_Y, 3), expected, strict=True):
            sess.run(parts.accum_ops, {parts.x: x_i, parts.y: y_i, parts.weight: w_i})
            got_w, got_b = sess.run(parts.accumulators)
            np.testing.assert_allclose(got_w, acc_w, atol=1e-7)
            np.testing.assert_allclose(got_b, acc_b, atol=1e-7)
        # The last accumulator is the large batch's mean gradient; SGD with lr=1 subtracts it.
        large = sess.run(parts.grads, {parts.x: WALK_X, parts.y: WALK_Y})
        np.testing.assert_allclose(large[0], WALK_GRAD_W, atol=1e-7)
        sess.run(parts.train_step)
        np.testing.assert_allclose(sess.run(parts.variables[0]), WALK_W_AFTER, atol=1e-7)
        sess.run(parts.zero_ops)
        assert all(not a.any() for a in sess.run(parts.accumulators))
    with parts.session() as sess:  # run_update does the same: zero, 3 weighted adds, apply
        assert parts.run_update(sess, WALK_X, WALK_Y, 3) == pytest.approx(math.log(2), rel=1e-6)
        np.testing.assert_allclose(sess.run(parts.variables[0]), WALK_W_AFTER, atol=1e-7)


def test_uneven_micro_batches_need_their_weights():
    x, y = batches()[1]  # 30 examples in 4 micro-batches: 8, 8, 7, 7
    parts = build("momentum")
    with parts.session() as sess:
        large = sess.run(parts.grads, {parts.x: x, parts.y: y})
        accumulated = {}
        for name, weighted in (("n_i/B", True), ("1/N", False)):
            sess.run(parts.zero_ops)
            for x_i, y_i, w_i in micro_batches(x, y, 4):
                feed = {parts.x: x_i, parts.y: y_i, parts.weight: w_i if weighted else 1 / 4}
                sess.run(parts.accum_ops, feed)
            accumulated[name] = sess.run(parts.accumulators)
    for a, g in zip(accumulated["n_i/B"], large):
        np.testing.assert_allclose(a, g, rtol=1e-5, atol=1e-7)
    assert max(np.abs(a - g).max() for a, g in zip(accumulated["1/N"], large)) > 1e-4


def test_very_uneven_micro_batches_are_weighted_by_example_count():
    assert_applies(build_accumulation(lr=1.0), very_uneven_case(5, [2, 1, 1, 1]), accum_steps=4)


def test_bad_input_names_the_problem_and_changes_nothing():
    with pytest.raises(ValueError, match="lr .*-1"):
        build_accumulation(lr=-1)
    with pytest.raises(ValueError, match="'cnn'"):
        build_accumulation(model="cnn")
    assert_bad_batch_changes_nothing(build("momentum"), 3)
