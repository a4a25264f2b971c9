"""Host averaging: gradients fetched to numpy, averaged there, fed back through placeholders."""
import math

import numpy as np
import pytest

from gradlab.classic.host_graph import build_host_average
from classic_reference import (LR, WALK_W_AFTER, WALK_X, WALK_Y, assert_applies,
                               assert_bad_batch_changes_nothing, assert_equals_large_batch,
                               linear, very_uneven_case)


def build(opt):
    return build_host_average(lr=LR[opt], optimizer=opt)


@pytest.mark.parametrize("opt", ["momentum", "adam"])
def test_host_average_equals_one_large_batch(opt):
    parts = build(opt)  # 4 micro-batches per update against 1
    assert_equals_large_batch(parts, parts, opt, accum_steps=4)


def test_host_average_walk_through_by_hand():
    # 3 micro-batches of 2, 1, 1 examples (see classic_reference for each example's gradient):
    # g_1 = [[.5,-.5],[.5,-.5]], g_2 = [[-1,1],[0,0]], g_3 = [[0,0],[2,-2]]; unequal, so
    # weighted 1/2, 1/4, 1/4: the mean is [[0,0],[.75,-.75]], the large batch's gradient.
    parts = build_host_average(model=linear, lr=1.0, optimizer="sgd", input_shape=(2,))
    with parts.session() as sess:
        fetched = [sess.run(parts.grads[0], {parts.x: WALK_X[s], parts.y: WALK_Y[s]})
                   for s in (slice(0, 2), slice(2, 3), slice(3, 4))]
        for got, by_hand in zip(fetched, ([[0.5, -0.5], [0.5, -0.5]], [[-1, 1], [0, 0]], [[0, 0], [2, -2]])):
            np.testing.assert_allclose(got, by_hand, atol=1e-7)
        assert parts.run_update(sess, WALK_X, WALK_Y, 3) == pytest.approx(math.log(2), rel=1e-6)
        np.testing.assert_allclose(sess.run(parts.variables[0]), WALK_W_AFTER, atol=1e-7)


def test_host_average_fetches_and_feeds_one_array_per_variable():
    parts = build("momentum")
    assert len(parts.grad_placeholders) == len(parts.variables) == 4
    assert [p.op.type for p in parts.grad_placeholders] == ["Placeholder"] * 4
    assert [tuple(p.shape) for p in parts.grad_placeholders] == [tuple(v.shape) for v in parts.variables]
    # Feeding a hand-made mean moves the weights by exactly -lr * mean (first momentum step).
    with parts.session() as sess:
        before = parts.get_weights(sess)
        mean = [np.full(v.shape, 0.5, np.float32) for v in parts.variables]
        sess.run(parts.train_step, dict(zip(parts.grad_placeholders, mean)))
        for w, w0 in zip(parts.get_weights(sess), before):
            np.testing.assert_allclose(w, w0 - LR["momentum"] * 0.5, rtol=1e-6, atol=1e-7)


def test_very_uneven_micro_batches_are_weighted_by_example_count():
    assert_applies(build_host_average(lr=1.0), very_uneven_case(5, [2, 1, 1, 1]), accum_steps=4)


def test_bad_input_names_the_problem_and_changes_nothing():
    with pytest.raises(ValueError, match="'rmsprop'"):
        build_host_average(optimizer="rmsprop")
    assert_bad_batch_changes_nothing(build("momentum"), 3)
