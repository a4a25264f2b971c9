"""Chlebus (2018) in kind: the seed's layer structure, the accumulated Adam update against a
hand-written large-batch oracle, the checkpoint schedule, and bad input refused early."""
import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies.runs import reproduction as rp
from gradlab.studies.data import load_mnist


def test_model_has_the_seeds_layer_structure():
    model = rp.build_model(seed=0)
    kinds = [type(layer).__name__ for layer in model.layers]
    assert [l.rate for l in model.layers if isinstance(l, keras.layers.Dropout)] == [0.2, 0.5, 0.5, 0.5, 0.5]
    convs = [l for l in model.layers if isinstance(l, keras.layers.Conv2D)]
    assert [(l.filters, l.kernel_size) for l in convs] == [(6, (5, 5)), (16, (5, 5))]
    assert [l.pool_size for l in model.layers if isinstance(l, keras.layers.MaxPooling2D)] == [(2, 2)] * 2
    dense = [l for l in model.layers if isinstance(l, keras.layers.Dense)]
    assert [l.units for l in dense] == [120, 84, 10]
    # conv_net.py builds all five layers with one helper, ReLU included, the output layer too.
    assert all(l.activation is keras.activations.relu for l in convs + dense)
    assert rp.build_model(0, relu_logits=False).layers[-1].activation is keras.activations.linear
    assert kinds.index("Flatten") == kinds.index("Dense") - 1
    assert model.output_shape == (None, 10) and model.count_params() == 44_426


def test_accumulated_adam_update_is_the_large_batch_update_with_dropout_off():
    # Walk-through: 100 digits, N = 20 micro-batches of 5, three Adam updates, dropout off.
    mnist = load_mnist()
    x, y = mnist.x_train[:100], mnist.y_train[:100]
    oracle, model = rp.build_model(seed=3), rp.build_model(seed=3)
    start = [w.copy() for w in oracle.get_weights()]
    adam = keras.optimizers.Adam(1e-3)
    for step in range(3):  # the oracle: one tape over the whole batch, keras Adam
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
                y, oracle(x, training=False), from_logits=True))
        grads = tape.gradient(loss, oracle.trainable_variables)
        adam.apply_gradients(zip(grads, oracle.trainable_variables))
        if step == 0:
            grads_0, after_one = [g.numpy() for g in grads], [v.numpy() for v in oracle.trainable_variables]

    # By hand, Adam's first step (m = 0.1 g, v = 0.001 g^2, bias-corrected step size
    # lr * sqrt(0.001) / 0.1, eps = 1e-7 added to sqrt(v)): -lr * s|g| / (s|g| + eps) * sign(g),
    # s = sqrt(0.001): 1e-3 * sign(g) to 0.4% where |g| > 1e-3.
    s = np.sqrt(1 - 0.999)
    for w0, w1, g in zip(start, after_one, grads_0):
        np.testing.assert_allclose(w1 - w0, -1e-3 * s * g / (s * np.abs(g) + 1e-7), atol=1e-7)
        big = np.abs(g) > 1e-3
        np.testing.assert_allclose((w1 - w0)[big], -1e-3 * np.sign(g[big]), atol=4e-6)

    update = rp.make_update(model, keras.optimizers.Adam(1e-3), training=False)
    for _ in range(3):
        update(x.reshape(20, 5, 28, 28), y.reshape(20, 5))
    diff = max(float(np.abs(a.numpy() - b.numpy()).max())
               for a, b in zip(model.trainable_variables, oracle.trainable_variables))
    assert diff < 1e-6


def test_dropout_makes_the_accumulated_gradient_differ_from_the_large_batch():
    mnist = load_mnist()
    x, y = mnist.x_train[:100], mnist.y_train[:100]
    model = rp.build_model(seed=1)
    _, large = rp.accumulated_gradient(model, x[None], y[None], training=False)
    gaps = {}
    for training in (False, True):
        _, acc = rp.accumulated_gradient(model, x.reshape(20, 5, 28, 28), y.reshape(20, 5), training)
        gaps[training] = max(float(np.abs(a - b).max()) for a, b in zip(acc, large))
    assert gaps[False] < 1e-6 < 1e-3 < gaps[True]


def test_checkpoint_schedule_follows_the_reference():
    assert len(rp.checkpoints(1, 1000)) == 11 and len(rp.checkpoints(20, 1000)) == 201
    assert rp.checkpoints(1, 1000)[:2] == [100, 200] and rp.checkpoints(1, 1000)[-2:] == [1000, 1000]
    assert rp.checkpoints(20, 1000)[:2] == [5, 10]
    assert rp.checkpoints(5, 30) == [20, 30]  # every 100 micro-batches = 20 updates, then the last
    assert [len(rp.checkpoints(n, 1000)) for n in (5, 10)] == [51, 101]


@pytest.mark.parametrize("call, error, match", [
    (lambda: rp.checkpoints(3), ValueError, "divide the effective batch 100.*got 3"),
    (lambda: rp.checkpoints(1.5), TypeError, "accum_steps must be a positive integer, got 1.5"),
    (lambda: rp.run(0), ValueError, "accum_steps must be an integer >= 1, got 0"),
    (lambda: rp.run(True), TypeError, "got True"),
    (lambda: rp.run(5, seed=-1), ValueError, "seed must be an integer >= 0, got -1"),
    (lambda: rp.run(5, updates="10"), TypeError, "updates must be a positive integer, got '10'"),
    (lambda: rp.build_model(seed=2.0), TypeError, "seed must be a positive integer, got 2.0"),
    (lambda: rp.grid(accum="1,5"), TypeError, "accum must be a sequence"),
    (lambda: rp.grid(accum=()), ValueError, "empty"),
    (lambda: rp.grid(accum=(1, 7)), ValueError, "got 7"),
    (lambda: rp.grid(runs=0), ValueError, "runs must be an integer >= 1, got 0"),
])
def test_bad_input_is_refused_naming_the_value(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_cli_refuses_bad_values(capsys):
    for argv in (["--accum", "1,3"], ["--runs", "0"], ["--updates", "x"]):
        with pytest.raises(SystemExit):
            rp.cli(argv)
    assert "got 3" in capsys.readouterr().err


@pytest.mark.slow
def test_run_records_best_final_and_curve():
    result = rp.run(20, seed=0, updates=10)
    assert len(result["curve"]) == len(rp.checkpoints(20, 10)) == 3
    assert result["best"] == max(result["curve"]) and result["final"] == result["curve"][-1]
    assert result["curve"][-1] == result["curve"][-2]  # the last evaluation repeats the 10th update's
    assert all(0.0 <= a <= 1.0 for a in result["curve"])


@pytest.mark.slow
def test_grid_cli_json_table_and_plot(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADLAB_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "r.json"
    assert rp.cli(["--runs", "2", "--updates", "5", "--accum", "1,5", "--json", "--out", str(out),
                   "--no-progress"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record == json.loads(out.read_text())
    assert [r["accum_steps"] for r in record["rows"]] == [1, 5]
    row = record["rows"][1]
    best = [r["best"] for r in row["runs"]]
    assert row["best_std"] == pytest.approx(np.std(best)) and row["best_mean"] == pytest.approx(np.mean(best))
    assert rp.grid((1, 5), runs=2, updates=5, progress=False) == record  # from the cache
    text = rp.format_table(record)
    assert "95.0 ± 0.17" in text and "population std" in text


def test_eval_updates_every_k_then_the_last_once():
    assert rp.eval_updates(10, 40) == [10, 20, 30, 40]
    assert rp.eval_updates(3, 7) == [3, 6, 7]
    assert rp.eval_updates(50, 20) == [20]


def test_run_with_dropout_off_tests_what_a_hand_written_tape_trains():
    # Oracle: the same seed's weights and example order, 3 Adam updates of 100 on one tape, dropout off.
    mnist = load_mnist()
    oracle, adam = rp.build_model(seed=2), keras.optimizers.Adam(1e-3)
    order = np.random.default_rng(2).permutation(len(mnist.x_train))
    accuracies = []
    for t in range(3):
        idx = order[100 * t:100 * (t + 1)]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                mnist.y_train[idx], oracle(mnist.x_train[idx], training=False)))
        grads = tape.gradient(loss, oracle.trainable_variables)
        adam.apply_gradients(zip(grads, oracle.trainable_variables))
        if t >= 1:  # tested after updates 2 and 3
            pred = np.argmax(oracle(mnist.x_test, training=False).numpy(), axis=1)
            accuracies.append(float(np.mean(pred == mnist.y_test)))
    silent = sorted(set(range(10)) - set(pred.tolist()))
    for n in (1, 20):  # N = 20 differs by rounding only: at most a digit or two may flip
        got = rp.run(n, seed=2, updates=3, training=False, eval_every=2)
        assert len(got["curve"]) == 2 and got["final"] == got["curve"][-1]
        np.testing.assert_allclose(got["curve"], accuracies, atol=0.002)
        assert got["silent"] == silent
    on = rp.run(1, seed=2, updates=3, training=True, eval_every=2)
    assert on["curve"] != accuracies  # dropout on trains another model


def test_run_refuses_a_training_flag_that_is_not_a_bool():
    with pytest.raises(TypeError, match="training must be True .* got 'no'"):
        rp.run(1, updates=1, training="no")
