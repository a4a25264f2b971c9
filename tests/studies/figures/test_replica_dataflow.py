"""The dataflow figure of lesson 16: each route's steps in order, per replica before its last all-reduce and
once after it, the one-division route's and the two-all-reduce route's all-reduces, the dashed frame around what runs
inside `optimizer.apply`, and Keras's order (clip, then all-reduce, then update) read off a real `optimizer.apply`."""
import keras
import matplotlib.colors
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies.figures.replica_dataflow import APPLY, DATAFLOWS, FRAME, LEGEND, all_reduces, plot_replica_dataflow


def _boxes(ax):
    """(label, x, y) of each box (a Text with a bbox), left to right, top to bottom."""
    found = [(t.get_text(), *t.get_position()) for t in ax.texts if t.get_bbox_patch() is not None]
    return sorted(found, key=lambda b: (b[1], -b[2]))


def _arrows(ax):
    return [a for a in ax.patches if isinstance(a, FancyArrowPatch)]


def _frames(ax):
    return [p for p in ax.patches if isinstance(p, FancyBboxPatch)]


def test_each_route_is_drawn_in_order_per_replica_until_its_last_all_reduce_then_once_on_the_sum():
    fig = plot_replica_dataflow(replicas=2)
    assert [ax.get_title(loc="left") for ax in fig.axes] == list(DATAFLOWS)
    for ax, route in zip(fig.axes, DATAFLOWS.values()):
        boxes = _boxes(ax)
        want = []
        for k, segment in enumerate(route):  # per replica twice; an all-reduce and the steps on the sum once
            once = isinstance(segment, str) or k == len(route) - 1
            want += [segment] if isinstance(segment, str) else [s for s in segment for _ in range(1 if once else 2)]
        assert [b[0] for b in boxes] == want
        for label, _, y in boxes:  # the all-reduces and what follows the last one: between the replicas
            if label in all_reduces(route) or label in route[-1]:
                assert y == 0.5, (label, y)
        xs = [b[1] for b in boxes]
        assert xs == sorted(xs)  # left to right is the update's order


def test_stage_1_makes_two_all_reduces_the_rows_first_then_the_gradient():
    # the lesson's count: mirrored fit 1 all-reduce per update, unclipped one division 2 (4 bytes of rows, then the gradient
    # inside apply), the one-all-reduce route 1 (the gradient with the rows)
    keras_route, stage1, by_hand, stage2 = DATAFLOWS.values()
    assert [len(all_reduces(r)) for r in DATAFLOWS.values()] == [1, 2, 2, 1]
    first, second = all_reduces(stage1)
    assert "rows" in first and "4 bytes" in first and "gradient" not in first
    assert "gradient" in second
    assert stage1[0][-1] == "gradient,\nrows $n_r$"  # each replica has its gradient and rows; only rows enter 1
    assert stage1[2] == ("÷ B",) and stage1[-1] == ("update",)  # all-reduce 1's sum goes to each replica's ÷ B
    ax = plot_replica_dataflow(replicas=2).axes[1]
    labels = [b[0] for b in _boxes(ax)]
    assert labels.index(stage1[0][-1]) < labels.index(first) < labels.index("÷ B")
    assert labels.index(first) < labels.index("÷ B") < labels.index(second) < labels.index("update")
    assert labels.count("÷ B") == 2 and labels.count(stage1[0][-1]) == 2  # on each replica
    xs = {label: x for label, x, _ in _boxes(ax)}
    into_divide = sorted((a._posA_posB[0], a._posA_posB[1][1], a.get_linestyle())
                         for a in _arrows(ax) if a._posA_posB[1][0] == xs["÷ B"])  # arrows into ÷ B
    # from all-reduce 1 (its sum B) to each replica's ÷ B, and, dashed around it, each replica's own gradient
    assert into_divide == sorted([((xs[first], 0.5), 1.0, "-"), ((xs[first], 0.5), 0.0, "-"),
                                  ((xs[stage1[0][-1]], 1.0), 1.0, "--"), ((xs[stage1[0][-1]], 0.0), 0.0, "--")])
    stage2_divide = [a for a in _arrows(plot_replica_dataflow(replicas=2).axes[3]) if a.get_linestyle() == "--"]
    assert stage2_divide == []  # stage 2's all-reduce carries the gradient: nothing goes around it
    assert "gradient" in all_reduces(stage2)[0] and "rows" in all_reduces(stage2)[0]  # stage 2 sends rows and gradient


def test_every_route_that_all_reduces_rows_shows_each_replicas_rows_in_the_box_before_it():
    # each replica counts its rows n_r before an all-reduce that sums them; mirrored fit sends no rows
    routes = list(DATAFLOWS.values())
    for name, route in DATAFLOWS.items():
        for k, reduce in enumerate(all_reduces(route)):
            before = route[2 * k][-1]  # the last per-replica step before this all-reduce
            assert ("rows" in reduce) == ("rows $n_r$" in before), (name, reduce, before)
    assert [any("rows" in r for r in all_reduces(route)) for route in routes] == [False, True, True, True]
    ax = plot_replica_dataflow(replicas=2).axes[3]  # the one-all-reduce route: drawn on both replicas
    assert [b[0] for b in _boxes(ax)].count("gradient,\nrows $n_r$") == 2


def test_routes_draws_only_the_first_routes_as_the_full_figure_draws_them():
    full, first_two = plot_replica_dataflow(replicas=2), plot_replica_dataflow(replicas=2, routes=2)
    assert [ax.get_title(loc="left") for ax in first_two.axes] == list(DATAFLOWS)[:2]
    for a, b in zip(first_two.axes, full.axes):
        assert [box[0] for box in _boxes(a)] == [box[0] for box in _boxes(b)]
    for bad in (0, len(DATAFLOWS) + 1):
        with pytest.raises(ValueError, match="routes must be"):
            plot_replica_dataflow(routes=bad)


def test_routes_by_position_or_name_draws_those_routes_in_that_order_as_the_full_figure_draws_them():
    full, chosen = plot_replica_dataflow(replicas=2), plot_replica_dataflow(replicas=2, routes=(0, 2))
    names = list(DATAFLOWS)
    assert [ax.get_title(loc="left") for ax in chosen.axes] == [names[0], names[2]]
    for a, b in zip(chosen.axes, (full.axes[0], full.axes[2])):
        assert [box[0] for box in _boxes(a)] == [box[0] for box in _boxes(b)]
        assert len(_frames(a)) == len(_frames(b)) == 1
    by_name = plot_replica_dataflow(replicas=2, routes=(names[2], names[0]))
    assert [ax.get_title(loc="left") for ax in by_name.axes] == [names[2], names[0]]
    for bad in ((), (len(DATAFLOWS),), (-1,), ("no such route",)):
        with pytest.raises(ValueError, match="routes must name"):
            plot_replica_dataflow(routes=bad)


def test_the_clip_is_before_the_all_reduce_in_keras_and_after_it_in_stage_2():
    assert list(DATAFLOWS) == ["mirrored fit (Keras)", "unclipped, one division: public calls",
                               "clipped, two all-reduces: public calls", "one all-reduce, yours and gradlab's (a private Keras hook)"]
    keras_route, stage1, by_hand, stage2 = DATAFLOWS.values()
    assert "clip its part" in keras_route[0] and "clip" in stage2[-1]
    assert "mean loss ÷ R" in keras_route[0] and "÷ B" in stage2[-1]
    assert not any("clip" in step for segment in stage1[::2] for step in segment)  # stage 1 clips nothing
    with pytest.raises(ValueError, match="replicas must be at least 1"):
        plot_replica_dataflow(replicas=0)
    with pytest.raises(ValueError, match="must alternate"):
        plot_replica_dataflow(dataflows={"bad": (("a",), "all-reduce")})


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


def test_the_hand_clip_all_reduces_the_gradient_clips_the_mean_then_lets_apply_all_reduce_again():
    # the lesson's count: 2 all-reduces per update, both carrying the gradient (203,604 bytes, twice mirrored fit's)
    by_hand = DATAFLOWS["clipped, two all-reduces: public calls"]
    first, second = all_reduces(by_hand)
    assert "rows" in first and "gradient" in first and "gradient" in second
    assert by_hand[2] == ("÷ B", "clip", "÷ R") and by_hand[-1] == ("update",)  # clip the mean, then / R for apply
    ax = plot_replica_dataflow(replicas=2).axes[2]
    labels = [b[0] for b in _boxes(ax)]
    assert labels.index(first) < labels.index("÷ B") < labels.index("clip") < labels.index(second)
    assert labels.count("clip") == 2 and labels.count("÷ R") == 2  # on each replica, between the all-reduces
    assert [a for a in _arrows(ax) if a.get_linestyle() == "--"] == []  # all-reduce 1 carries the gradient


def test_the_figure_keys_its_three_colours_in_one_legend():
    fig = plot_replica_dataflow(replicas=2)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [label for _, label in LEGEND] + [FRAME]
    boxes = {matplotlib.colors.to_hex(t.get_bbox_patch().get_facecolor()) for ax in fig.axes for t in ax.texts
             if t.get_bbox_patch() is not None}
    assert {matplotlib.colors.to_hex(c) for c, _ in LEGEND} <= boxes  # every keyed colour is drawn


def test_a_dashed_frame_holds_what_runs_inside_optimizer_apply_and_nothing_before_it():
    # mirrored fit: apply clips each part, all-reduces, updates; the public routes: apply all-reduces the gradient
    # and updates; the one-all-reduce route: apply, its all-reduce passed through, only updates (the clip before it)
    inside = {"mirrored fit (Keras)": ["clip its part", "clip its part", "all-reduce:\ngradient", "update"],
              "unclipped, one division: public calls": ["all-reduce 2:\ngradient", "update"],
              "clipped, two all-reduces: public calls": ["all-reduce 2:\ngradient", "update"],
              "one all-reduce, yours and gradlab's (a private Keras hook)": ["update"]}
    assert list(APPLY) == list(DATAFLOWS) == list(inside)
    fig = plot_replica_dataflow(replicas=2)
    for ax, (name, route) in zip(fig.axes, DATAFLOWS.items()):
        (frame,) = _frames(ax)
        assert frame.get_linestyle() == "--" and frame.get_label() == FRAME
        left, bottom = frame.get_x(), frame.get_y()
        right, top = left + frame.get_width(), bottom + frame.get_height()
        assert bottom < 0 and top > 1  # both replicas' rows
        assert [label for label, x, _ in _boxes(ax) if left < x < right] == inside[name], name
        assert max(x for _, x, _ in _boxes(ax)) < right  # the frame runs to the route's last box
        captions = [t.get_text() for t in ax.texts if t.get_bbox_patch() is None and "optimizer.apply" in t.get_text()]
        assert captions == [APPLY[name][1]]
    reduces_inside = [any(r in inside[name] for r in all_reduces(route)) for name, route in DATAFLOWS.items()]
    assert reduces_inside == [True, True, True, False]  # only the private hook keeps apply from all-reducing
    assert "passed through" in APPLY["one all-reduce, yours and gradlab's (a private Keras hook)"][1]
    assert all(_frames(ax) == [] for ax in plot_replica_dataflow(dataflows={"own": (("a",), "all-reduce", ("b",))}).axes)


def test_apply_with_its_all_reduce_passed_through_only_updates():
    # oracle for the last frame: with `_all_reduce_sum_gradients` swapped for `list` (lesson 16's passthrough),
    # apply calls no all-reduce and applies what it is handed
    opt = keras.optimizers.SGD(0.1)
    v = keras.Variable(np.zeros(3, "float32"))
    opt.build([v])
    reduce, calls = opt._all_reduce_sum_gradients, []
    opt._all_reduce_sum_gradients = lambda gv: calls.append("all-reduce") or reduce(gv)
    opt.apply([tf.ones(3)], [v])
    assert calls == ["all-reduce"]  # public apply all-reduces (a no-op sum outside a strategy)
    opt._all_reduce_sum_gradients = list
    opt.apply([tf.ones(3)], [v])
    assert calls == ["all-reduce"] and np.allclose(v.numpy(), -0.2)  # passed through: two steps of 0.1


def test_text_is_readable_at_the_figures_display_width():
    # boxes, replica labels and legend at 11 points, titles at 13, on a figure no wider than before (about 9.4 inches
    # for lesson 16's two routes), and neighbouring boxes of a row do not overlap
    from gradlab.studies.figures.replica_dataflow import GAP, _columns, _half_width, _labels
    fig = plot_replica_dataflow(routes=(0, 2))
    assert fig.get_size_inches()[0] < 9.6
    for ax in fig.axes:
        assert ax.title.get_fontsize() == 13 or ax._left_title.get_fontsize() == 13
        assert all(t.get_fontsize() >= 10 for t in ax.texts)
        assert min(t.get_fontsize() for t in ax.texts if t.get_bbox_patch() is not None) == 11
    assert all(t.get_fontsize() == 11 for t in fig.legends[0].get_texts())
    route = DATAFLOWS["mirrored fit (Keras)"]
    centres, labels = _columns(route), _labels(route)
    assert labels == ["mean loss ÷ R", "gradient", "clip its part", "all-reduce:\ngradient", "update"]
    for (a, la), (b, lb) in zip(zip(centres, labels), zip(centres[1:], labels[1:])):
        assert abs((b - a) - (_half_width(la) + _half_width(lb)) / 72 - GAP) < 1e-9


def test_only_the_clip_of_each_part_is_red():
    # with even shards mirrored fit's mean loss ÷ R is the large batch's: white; its clip of each part is red
    from gradlab.studies.figures.replica_dataflow import _MISSES
    fig = plot_replica_dataflow(routes=(0,))
    colors = {t.get_text(): t.get_bbox_patch().get_facecolor() for t in fig.axes[0].texts if t.get_bbox_patch()}
    assert colors["mean loss ÷ R"] == (1.0, 1.0, 1.0, 1.0)
    assert colors["clip its part"] == matplotlib.colors.to_rgba(_MISSES)
