"""The three classic TF1 graphs equal one large batch: in TF1, and against TF2 `large_batch`."""
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.classic import graphs_v1 as g1
from gradlab.core import towers
from gradlab.studies.data import load_mnist
from gradlab.core.microbatch import micro_batches
from gradlab.studies.models import make_model
from gradlab.training.strategies import make_strategy
from conftest import DEVICES

# Adam's step m / (sqrt(v) + eps) turns a rounding difference dg in a gradient near eps into
# about lr / (4 eps) * dg: TF1 against Keras differ by < 1e-6 at lr=1e-3, ~3e-5 at lr=1e-2.
LR = {"momentum": 0.1, "adam": 1e-3}
SIZES = (32, 30, 31)  # three updates; in 4 micro-batches 8+8+8+8, 8+8+7+7, 8+8+8+7; towers 15+15, 16+15
ACCUM_STEPS = {"towers": 1, "host_average": 4, "accumulation": 4}


@pytest.fixture(scope="module")
def batches():
    d = load_mnist()
    starts = np.cumsum((0,) + SIZES)
    return [(d.x_train[s:s + n], d.y_train[s:s + n]) for s, n in zip(starts, SIZES)]


@pytest.fixture(scope="module")
def keras_large_batch(batches):
    """`opt -> (initial weights, losses, final weights)` of TF2 large_batch, made once each."""
    done = {}

    def run(opt):
        if opt not in done:
            model = make_model("mlp", seed=1)
            init = [w.numpy() for w in model.trainable_weights]
            s = make_strategy("large_batch", model,
                              keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                              g1.keras_optimizer(opt, LR[opt]))
            losses = [s.step(x, y) for x, y in batches]
            done[opt] = init, losses, [w.numpy() for w in model.trainable_weights]
        return done[opt]
    return run


def build(kind, opt, num_towers=2):
    if kind == "towers":
        return g1.build_towers(num_towers, DEVICES[:num_towers], lr=LR[opt], optimizer=opt)
    builder = {"host_average": g1.build_host_average, "accumulation": g1.build_accumulation}[kind]
    return builder(lr=LR[opt], optimizer=opt)


def train(parts, init, batches, accum_steps):
    with parts.session() as sess:
        g1.set_weights(sess, parts, init)
        losses = [parts.run_update(sess, x, y, accum_steps) for x, y in batches]
        return losses, g1.get_weights(sess, parts)


def assert_same(a, b, rtol=1e-5, atol=1e-5):
    (losses_a, weights_a), (losses_b, weights_b) = a, b
    np.testing.assert_allclose(losses_a, losses_b, rtol=rtol, atol=atol)
    for wa, wb in zip(weights_a, weights_b, strict=True):
        np.testing.assert_allclose(wa, wb, rtol=rtol, atol=atol)


@pytest.mark.parametrize("opt", ["momentum", "adam"])
@pytest.mark.parametrize("kind", [pytest.param("towers", marks=pytest.mark.slow), "host_average", "accumulation"])
def test_classic_graph_equals_one_large_batch(batches, keras_large_batch, kind, opt):
    init, keras_losses, keras_weights = keras_large_batch(opt)
    parts = build(kind, opt)
    got = train(parts, init, batches, ACCUM_STEPS[kind])
    # The same construction with one tower / one micro-batch per update.
    reference = build(kind, opt, num_towers=1) if kind == "towers" else parts
    assert_same(got, train(reference, init, batches, accum_steps=1))
    assert_same(got, (keras_losses, keras_weights))
    assert max(np.abs(w - w0).max() for w, w0 in zip(got[1], init)) > 1e-3  # it did train


def test_tower_graph_runs_each_tower_on_its_device(batches):
    parts = build("towers", "momentum")
    for op in parts.graph.get_operations():
        if op.name.startswith("tower_") and op.device:
            assert op.device == DEVICES[int(op.name[6])], op.name
        if op.type == "VarHandleOp":
            assert op.device == "/device:CPU:0", op.name  # variables on the parameter device
    x, y = batches[2]
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


def test_tower_graph_averages_with_average_gradients(batches, monkeypatch):
    calls = []

    def spy(tower_grads, counts=None):
        calls.append((tower_grads, counts))
        return average_gradients(tower_grads, counts)

    average_gradients = towers.average_gradients
    monkeypatch.setattr(towers, "average_gradients", spy)
    parts = build("towers", "momentum")
    assert len(calls) == 1 and len(calls[0][0]) == 2 and calls[0][1] is None
    assert [g for g, _ in parts.averaged] == parts.grads
    types = {op.type for op in parts.graph.get_operations() if op.name.startswith("average/")}
    assert {"ExpandDims", "ConcatV2", "Mean"} <= types  # the original recipe's shape
    x, y = batches[1]  # 15 + 15: every tower weight is exactly 1
    with parts.session() as sess:
        tower_grads, averaged = sess.run([[[g for g, _ in t] for t in parts.tower_grads], parts.grads],
                                         {parts.x: x, parts.y: y})
    for j, mean in enumerate(averaged):
        np.testing.assert_allclose(mean, (tower_grads[0][j] + tower_grads[1][j]) / 2, rtol=1e-6, atol=1e-9)


def linear(x):
    """logits = x w + b, starting from zero: every softmax is (1/2, 1/2)."""
    w = tf.compat.v1.get_variable("w", [2, 2], initializer=tf.compat.v1.zeros_initializer())
    b = tf.compat.v1.get_variable("b", [2], initializer=tf.compat.v1.zeros_initializer())
    return tf.matmul(x, w) + b


def test_accumulators_walk_through_by_hand():
    # At w = 0 the logit gradient of one example is p - onehot(y) = (-1/2, 1/2) for y = 0 and
    # (1/2, -1/2) for y = 1, so its w-gradient is the outer product x (p - onehot(y)).
    x = np.array([[1, 2], [3, 4], [2, 0], [0, 4]], np.float32)
    y = np.array([0, 1, 0, 1], np.int32)
    parts = g1.build_accumulation(model=linear, lr=1.0, optimizer="sgd", input_shape=(2,))
    expected = [  # (acc_w, acc_b) after micro-batches 1 (2 examples, w=1/2), 2 and 3 (w=1/4)
        ([[0.25, -0.25], [0.25, -0.25]], [0.0, 0.0]),     # 1/2 * mean([[-.5,.5],[-1,1]], [[1.5,-1.5],[2,-2]])
        ([[0.0, 0.0], [0.25, -0.25]], [-0.125, 0.125]),   # + 1/4 * [[-1,1],[0,0]], 1/4 * (-.5,.5)
        ([[0.0, 0.0], [0.75, -0.75]], [0.0, 0.0]),        # + 1/4 * [[0,0],[2,-2]], 1/4 * (.5,-.5)
    ]
    with parts.session() as sess:
        sess.run(parts.zero_ops)
        for (x_i, y_i, w_i), (acc_w, acc_b) in zip(micro_batches(x, y, 3), expected, strict=True):
            sess.run(parts.accum_ops, {parts.x: x_i, parts.y: y_i, parts.weight: w_i})
            got_w, got_b = sess.run(parts.accumulators)
            np.testing.assert_allclose(got_w, acc_w, atol=1e-7)
            np.testing.assert_allclose(got_b, acc_b, atol=1e-7)
        # The last accumulator is the large batch's mean gradient; SGD with lr=1 subtracts it.
        large = sess.run(parts.grads, {parts.x: x, parts.y: y})
        np.testing.assert_allclose(large[0], expected[-1][0], atol=1e-7)
        sess.run(parts.train_step)
        np.testing.assert_allclose(sess.run(parts.variables[0]), [[0, 0], [-0.75, 0.75]], atol=1e-7)
        sess.run(parts.zero_ops)
        assert all(not a.any() for a in sess.run(parts.accumulators))
    with parts.session() as sess:  # the runner does the same: zero, 3 weighted adds, apply
        assert g1.accumulation_update(sess, parts, x, y, 3) == pytest.approx(math.log(2), rel=1e-6)
        np.testing.assert_allclose(sess.run(parts.variables[0]), [[0, 0], [-0.75, 0.75]], atol=1e-7)


def test_uneven_micro_batches_need_their_weights(batches):
    x, y = batches[1]  # 30 examples in 4 micro-batches: 8, 8, 7, 7
    parts = build("accumulation", "momentum")
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


@pytest.mark.parametrize("kind, batch, accum_steps, sizes", [
    ("towers", 3, 1, [2, 1]), ("host_average", 5, 4, [2, 1, 1, 1]),
    ("accumulation", 5, 4, [2, 1, 1, 1])])
def test_very_uneven_split_is_weighted_by_example_count(batches, kind, batch, accum_steps, sizes):
    # Oracle: the mean-loss gradient of the whole batch, by tf.GradientTape on a Keras model
    # with the same weights. SGD(lr=1) moves the weights by exactly the applied gradient.
    x, y = batches[0][0][:batch], batches[0][1][:batch]
    model = make_model("mlp", seed=2)
    with tf.GradientTape() as tape:
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, model(x))
    large = [g.numpy() for g in tape.gradient(loss, model.trainable_variables)]
    # The naive plain mean of the per-part mean gradients, to show the split matters here.
    parts_grads = []
    for start, n in zip(np.cumsum([0] + sizes[:-1]), sizes):
        with tf.GradientTape() as tape:
            part = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
                y[start:start + n], model(x[start:start + n]))
        parts_grads.append([g.numpy() for g in tape.gradient(part, model.trainable_variables)])
    naive = [np.mean(gs, axis=0) for gs in zip(*parts_grads)]
    assert max(np.abs(a - b).max() for a, b in zip(naive, large)) > 1e-3

    parts = (g1.build_towers(2, DEVICES, lr=1.0) if kind == "towers"
             else {"host_average": g1.build_host_average,
                   "accumulation": g1.build_accumulation}[kind](lr=1.0))
    sess = parts.session()
    try:
        g1.set_weights(sess, parts, [w.numpy() for w in model.trainable_weights])
        before = g1.get_weights(sess, parts)
        got_loss = parts.run_update(sess, x, y, accum_steps)
        applied = [b - a for b, a in zip(before, g1.get_weights(sess, parts))]
    finally:
        sess.close()
    assert got_loss == pytest.approx(float(loss), rel=1e-5)
    for a, g in zip(applied, large, strict=True):
        np.testing.assert_allclose(a, g, rtol=1e-4, atol=1e-6)


def test_host_average_fetches_and_feeds_one_array_per_variable(batches):
    parts = build("host_average", "momentum")
    assert len(parts.grad_placeholders) == len(parts.variables) == 4
    assert [p.op.type for p in parts.grad_placeholders] == ["Placeholder"] * 4
    assert [tuple(p.shape) for p in parts.grad_placeholders] == [tuple(v.shape) for v in parts.variables]
    # Feeding a hand-made mean moves the weights by exactly -lr * mean (first momentum step).
    with parts.session() as sess:
        before = g1.get_weights(sess, parts)
        mean = [np.full(v.shape, 0.5, np.float32) for v in parts.variables]
        sess.run(parts.train_step, dict(zip(parts.grad_placeholders, mean)))
        for w, w0 in zip(g1.get_weights(sess, parts), before):
            np.testing.assert_allclose(w, w0 - LR["momentum"] * 0.5, rtol=1e-6, atol=1e-7)


def test_copy_from_keras_gives_the_same_loss(batches):
    model = make_model("mlp", seed=3)
    x, y = batches[0]
    keras_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, model(x))
    parts = build("host_average", "momentum")
    sess = parts.session()
    try:
        g1.copy_from_keras(sess, parts, model)
        for w, k in zip(g1.get_weights(sess, parts), model.get_weights(), strict=True):
            np.testing.assert_array_equal(w, k)
        np.testing.assert_allclose(sess.run(parts.loss, {parts.x: x, parts.y: y}), keras_loss, rtol=1e-6)
        with parts.graph.as_default(), pytest.raises(RuntimeError, match="outside that block"):
            g1.copy_from_keras(sess, parts, model)  # `with sess:` makes the TF1 graph the default
    finally:
        sess.close()


def test_bad_input_names_the_problem_and_changes_nothing(batches):
    with pytest.raises(ValueError, match="num_towers"):
        g1.build_towers(0)
    with pytest.raises(ValueError, match="one device per tower"):
        g1.build_towers(2, devices=DEVICES[:1])
    with pytest.raises(TypeError, match="devices"):
        g1.build_towers(2, devices="/device:CPU:0")
    with pytest.raises(TypeError, match="devices must be a list of device name strings, got 5"):
        g1.build_towers(2, devices=5)
    with pytest.raises(ValueError, match="'rmsprop'"):
        g1.build_host_average(optimizer="rmsprop")
    with pytest.raises(ValueError, match="lr .*-1"):
        g1.build_accumulation(lr=-1)
    with pytest.raises(ValueError, match="'cnn'"):
        g1.build_accumulation(model="cnn")
    x, y = batches[0]
    for parts, steps in ((build("towers", "momentum"), 1), (build("accumulation", "momentum"), 3)):
        with parts.session() as sess:
            before = g1.get_weights(sess, parts)
            with pytest.raises(ValueError, match="same number of examples, got 32 and 31"):
                parts.run_update(sess, x, y[:31], steps)
            if parts.kind == "towers":  # (a batch shorter than accum_steps is no error)
                with pytest.raises(ValueError, match="too small for 2 replicas"):
                    parts.run_update(sess, x[:1], y[:1])
                with pytest.raises(ValueError, match="accum_steps must be 1, got 2"):
                    parts.run_update(sess, x, y, accum_steps=2)
            with pytest.raises(ValueError, match="shapes"):
                g1.set_weights(sess, parts, before[:2])
            for w, w0 in zip(g1.get_weights(sess, parts), before):
                np.testing.assert_array_equal(w, w0)
