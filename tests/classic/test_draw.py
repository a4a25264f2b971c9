"""Pictures of the classic graphs with matplotlib: one box per name scope, arrows from the real op inputs."""
import itertools

import matplotlib.pyplot as plt
import pytest
import tensorflow as tf
from matplotlib.colors import to_rgb
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from gradlab.classic.accumulation_graph import build_accumulation
from gradlab.classic import scopes
from gradlab.classic.draw import CROSS_COLOR, CROSS_LABEL, UPDATE_LABEL, draw_graph
from gradlab.classic.host_graph import build_host_average
from gradlab.classic.tower_graph import build_towers
from common import DEVICES


def boxes(fig):
    return {p.get_gid(): p for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)}


def texts(fig):
    return {t.get_text() for t in fig.axes[0].texts}


def test_tower_figure_shows_each_tower_the_averaging_and_the_apply():
    fig = draw_graph(build_towers(2, DEVICES))
    shown = boxes(fig)
    for t in (0, 1):
        for scope in ("model", "loss", "gradients"):
            assert f"tower_{t}/{scope}" in shown and f"tower_{t}/{scope}" in texts(fig)
    assert {"average", "apply", "variables", "split"} <= set(shown) & texts(fig)
    assert {"average_gradients", "apply_gradients"} <= texts(fig)
    color = {name: tuple(box.get_facecolor()) for name, box in shown.items()}
    assert color["tower_0/model"] == color["tower_0/gradients"] != color["tower_1/gradients"]
    assert len({color["tower_0/loss"], color["tower_1/loss"], color["average"], color["apply"]}) == 4
    legend = {t.get_text() for t in fig.axes[0].get_legend().get_texts()}
    assert {"tower 0 on CPU:0", "tower 1 on CPU:1", "averaging", "apply (one update)"} <= legend
    assert "init" not in shown  # the initializer, which reads every variable, is left out
    assert fig.number not in plt.get_fignums()  # owned by the caller, shown once


@pytest.mark.parametrize("num_towers", [1, 2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_boxes_never_overlap(num_towers):
    fig = draw_graph(build_towers(num_towers, [DEVICES[t % 2] for t in range(num_towers)]))
    fig.canvas.draw()
    extents = [box.get_window_extent() for box in boxes(fig).values()]
    assert len(extents) == 3 * num_towers + 7  # x, y, split, variables, loss, average, apply (SGD: no slots)
    for a, b in itertools.combinations(extents, 2):
        assert not a.overlaps(b)
    for text in fig.axes[0].texts:  # every label inside the figure
        extent = text.get_window_extent()
        assert fig.bbox.contains(*extent.p0) and fig.bbox.contains(*extent.p1), text.get_text()


def test_a_large_batch_check_is_named_as_one_in_the_legend():
    graph = tf.Graph()
    with graph.as_default(), tf.name_scope("large_batch"):
        tf.reduce_sum(tf.compat.v1.placeholder(tf.float32, [None, 2]) * 2.0)
    legend = {t.get_text() for t in draw_graph(graph).axes[0].get_legend().get_texts()}
    assert "large-batch check" in legend and "forward / loss / gradients" not in legend


def test_host_average_and_accumulation_figures_name_their_steps():
    host = draw_graph(build_host_average())
    assert {"gradients", "host", "averaged", "apply", "fetch", "feed", "mean of fetched grads"} <= texts(host)
    assert boxes(host)["host"].get_linestyle() == "--"  # numpy is not a graph op
    shown = boxes(host)
    assert shown["averaged"].get_facecolor() == shown["placeholders/x"].get_facecolor()  # both fed
    legend = {t.get_text() for t in host.axes[0].get_legend().get_texts()}
    assert {"input (fed)", "variables"} <= legend and "shared variables" not in legend
    assert "averaging" not in legend  # no box of the host graph is filled red: the host box is white
    filled = {tuple(box.get_facecolor()) for box in shown.values()}
    for patch in host.axes[0].get_legend().legend_handles:  # every swatch is the colour of a drawn box
        assert patch.get_linestyle() == "--" or tuple(patch.get_facecolor()) in filled, patch.get_label()
    acc = draw_graph(build_accumulation())
    assert {"accumulators", "zero", "accum", "apply", "weight", "assign_add(w*g)"} <= texts(acc)


def test_arrows_come_from_the_op_inputs():
    graph = tf.Graph()
    with graph.as_default():
        with tf.name_scope("placeholders"):
            x = tf.compat.v1.placeholder(tf.float32, [None], name="x")
        with tf.name_scope("model"):
            h = 2.0 * x
        with tf.name_scope("loss"):
            loss = tf.reduce_sum(h * x)  # reads model and x: the arrow from x is kept
        with tf.name_scope("report"):
            tf.identity(loss) + tf.reduce_max(h)  # model -> report is implied by model -> loss -> report
    fig = draw_graph(graph, title="tiny")
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 4  # x -> model, x -> loss, model -> loss, loss -> report
    shown = boxes(fig)
    assert set(shown) == {"placeholders/x", "model", "loss", "report"}
    x_of = {name: box.get_x() for name, box in shown.items()}
    assert x_of["placeholders/x"] < x_of["model"] < x_of["loss"] < x_of["report"]  # depth order


def test_draw_into_given_axes_and_reject_non_graphs():
    fig, ax = plt.subplots()
    plt.close(fig)
    assert draw_graph(build_accumulation(), ax=ax) is fig
    with pytest.raises(TypeError, match="tf.Graph.*42"):
        draw_graph(42)
    with pytest.raises(ValueError, match="nothing to draw"):
        draw_graph(tf.Graph())


def test_the_update_arrow_has_two_heads_and_labels_stay_off_dashed_lines():
    for parts in (build_towers(2, DEVICES), build_accumulation()):
        fig = draw_graph(parts)
        assert UPDATE_LABEL in texts(fig)  # apply reads the variables and writes them
        styles = [type(p.get_arrowstyle()).__name__ for p in fig.axes[0].patches
                  if isinstance(p, FancyArrowPatch)]
        assert styles.count("CurveFilledAB") == 1 and "CurveFilledB" in styles
    fig = draw_graph(build_accumulation())
    then = [t for t in fig.axes[0].texts if t.get_text() == "then"]
    assert len(then) == 2 and all(t.get_va() == "bottom" for t in then)  # above their arrows
    # zero -> accum rises to accum's row: its label sits at its start, beside zero, below accum -> apply's
    # (and so off the weight -> accum arrow that reaches accum's row from the left)
    rising, level = sorted(then, key=lambda t: t.get_position()[1])
    assert rising.get_ha() == "left" and level.get_ha() == "center"
    assert rising.get_position()[1] < level.get_position()[1] - 0.3, (rising.get_position(), level.get_position())


def test_the_update_label_beside_a_slope_between_neighbouring_columns_stays_off_the_level_arrows():
    v1 = tf.compat.v1
    graph = tf.Graph()  # lesson 03's own graph in small: apply one column right of the variables, lower
    with graph.as_default():
        with tf.name_scope("placeholders"):
            x = v1.placeholder(tf.float32, [None, 3], name="x")
        with v1.variable_scope("model"):
            w = v1.get_variable("w", [3, 2])
            tf.matmul(x, w)
        with tf.name_scope("averaged"):
            g = v1.placeholder(tf.float32, [3, 2])
        with tf.name_scope("apply"):
            v1.train.GradientDescentOptimizer(0.1).apply_gradients([(g, w)])
    fig = draw_graph(graph)
    fig.canvas.draw()
    shown = boxes(fig)
    label = next(t for t in fig.axes[0].texts if t.get_text() == UPDATE_LABEL)
    middle = {n: shown[n].get_y() + shown[n].get_height() / 2 for n in ("variables", "apply")}
    assert middle["variables"] > middle["apply"]  # the case: a slope down to the next column
    # below the variables' box: off the level arrow variables -> model, which leaves its middle
    assert label.get_window_extent().y1 < shown["variables"].get_window_extent().y0
    for name, box in shown.items():
        assert not label.get_window_extent().overlaps(box.get_window_extent()), name


def test_cross_device_arrows_are_red_only_when_asked_and_only_between_two_devices():
    parts = build_towers(2, DEVICES[:2])
    groups = {g: ops for g, ops in scopes.groups(parts.graph).items() if g != "init"}
    # the oracle: a real op input whose producer and reader asked for different devices
    crossing = {(a, b) for a, ops in groups.items() for b, other in groups.items()
                for op in other for t in op.inputs if t.op in ops and t.op.device and op.device
                and t.op.device != op.device}
    assert crossing  # tower 1 reads the variables on tower 0's device
    red = [p for p in draw_graph(parts, cross_device=True).axes[0].patches
           if isinstance(p, FancyArrowPatch) and p.get_edgecolor()[:3] == to_rgb(CROSS_COLOR)]
    assert red
    legend = {t.get_text() for t in draw_graph(parts, cross_device=True).axes[0].get_legend().get_texts()}
    assert CROSS_LABEL in legend
    named = draw_graph(parts, cross_device=True, cross_label="the copies of each update").axes[0]
    assert "the copies of each update" in {t.get_text() for t in named.get_legend().get_texts()}
    assert CROSS_LABEL not in {t.get_text() for t in named.get_legend().get_texts()}
    plain = draw_graph(parts)
    assert not [p for p in plain.axes[0].patches
                if isinstance(p, FancyArrowPatch) and p.get_edgecolor()[:3] == to_rgb(CROSS_COLOR)]
    assert CROSS_LABEL not in {t.get_text() for t in plain.axes[0].get_legend().get_texts()}
    one_device = draw_graph(build_towers(2, [DEVICES[0]] * 2), cross_device=True)
    assert CROSS_LABEL not in {t.get_text() for t in one_device.axes[0].get_legend().get_texts()}


def test_the_title_counts_the_ops_drawn_and_names_the_scope_left_out():
    parts = build_accumulation(lr=0.1, optimizer="sgd")
    fig = draw_graph(parts)
    ops = parts.graph.get_operations()
    init = [op for op in ops if op.name == "init" or op.name.startswith("init/")]
    assert init  # the initializer exists and is skipped by default
    title = fig.axes[0].get_title()
    assert title.startswith(f"accumulation: {len(ops) - len(init)} ops in ")
    assert title.endswith("(init not drawn)")
    plt.close(fig)
