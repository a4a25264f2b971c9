"""The dataflow figure of lesson 17: each route's steps in order, per replica before the all-reduce and once
after it, and Keras's order (clip, then all-reduce) read off a real `optimizer.apply`."""
import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies.figures.replica_dataflow import DATAFLOWS, plot_replica_dataflow


def _boxes(ax):
    """(label, x, y) of each box (a Text with a bbox), left to right, top to bottom."""
    found = [(t.get_text(), *t.get_position()) for t in ax.texts if t.get_bbox_patch() is not None]
    return sorted(found, key=lambda b: (b[1], -b[2]))


def test_each_route_is_drawn_in_order_per_replica_then_once_on_the_sum():
    fig = plot_replica_dataflow(replicas=2)
    assert [ax.get_title(loc="left") for ax in fig.axes] == list(DATAFLOWS)
    for ax, (before, reduce, after) in zip(fig.axes, DATAFLOWS.values()):
        boxes = _boxes(ax)
        assert [b[0] for b in boxes] == [s for s in before for _ in range(2)] + [reduce, *after]
        ys = {b[0]: b[2] for b in boxes[2 * len(before):]}  # the all-reduce and after: between the replicas
        assert set(ys.values()) == {0.5}
        xs = [b[1] for b in boxes]
        assert xs == sorted(xs)  # left to right is the update's order


def test_the_clip_is_before_the_all_reduce_in_keras_and_after_it_in_stage_2():
    assert list(DATAFLOWS) == ["mirrored fit (Keras)", "stage 1 (public calls)", "stage 2 (optional: clips the mean)"]
    keras_route, stage1, stage2 = DATAFLOWS.values()
    assert "clip its part" in keras_route[0] and "clip" in stage2[2]
    assert "mean loss ÷ R" in keras_route[0] and "÷ B" in stage2[2]
    # stage 1: divided by B on each replica, before apply's all-reduce sums the parts; nothing clipped
    assert stage1[0][-1] == "÷ B" and stage1[2] == ("apply",)
    assert not any("clip" in step for step in (*stage1[0], *stage1[2]))
    with pytest.raises(ValueError, match="replicas must be at least 1"):
        plot_replica_dataflow(replicas=0)


def test_keras_apply_clips_before_its_all_reduce():
    # oracle: the order in which Keras 3's optimizer.apply calls its clip and its all-reduce
    opt, order = keras.optimizers.SGD(0.1, global_clipnorm=0.5), []
    v = keras.Variable(np.zeros(3, "float32"))
    opt.build([v])
    clip, reduce = opt._clip_gradients, opt._all_reduce_sum_gradients
    opt._clip_gradients = lambda g: order.append("clip") or clip(g)
    opt._all_reduce_sum_gradients = lambda gv: order.append("all-reduce") or reduce(gv)
    opt.apply([tf.ones(3)], [v])
    assert order == ["clip", "all-reduce"]
    assert np.allclose(v.numpy(), -0.1 * 0.5 / np.sqrt(3))  # clipped to norm 0.5
