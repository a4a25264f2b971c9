"""`bench --fit`: bad arguments refused before any TensorFlow work, and a small real run whose
numbers hang together (a benchmark's ratios are never asserted as speed)."""
import json

import keras
import numpy as np
import pytest

from gradlab.studies.bench import fit as bench_fit
from gradlab.studies.models import make_model


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(accum_steps=0), ValueError, "accum_steps"),
    (dict(micro_batch=2.5), TypeError, "micro_batch"),
    (dict(examples=5000), ValueError, "5000"),
    (dict(examples=10, accum_steps=4, micro_batch=5), ValueError, "examples"),
    (dict(examples=45, accum_steps=2, micro_batch=5), ValueError, "45 .try 40"),
    (dict(model="resnet"), ValueError, "resnet"),
    (dict(jit_compile="yes"), ValueError, "yes"),
])
def test_bad_arguments_name_the_value(kwargs, error, word):
    with pytest.raises(error, match=word):
        bench_fit.run_bench_fit(**kwargs)


def test_examples_default_to_the_most_whole_updates():
    assert bench_fit._check(10, 10, 1, None, "mlp", 1, "auto") == 4000
    assert bench_fit._check(3, 10, 1, None, "mlp", 1, "auto") == 3990


def test_hand_loop_trains_like_plain_fit():
    # The floor does the large batch's work: 4 equal micro-batches of 5 per batch of 20,
    # their mean gradients averaged, equal Keras's own fit at batch 20.
    rng = np.random.default_rng(0)
    x, y = rng.random((80, 28, 28), dtype=np.float32), rng.integers(0, 10, 80)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    plain, loop = make_model("mlp", seed=1), bench_fit.HandLoop(make_model("mlp", seed=1), 4)
    for net in (plain, loop):
        net.compile(optimizer=keras.optimizers.SGD(0.5), loss=loss)
    h_plain = plain.fit(x, y, batch_size=20, epochs=2, shuffle=False, verbose=0)
    h_loop = loop.fit(x, y, batch_size=20, epochs=2, shuffle=False, verbose=0)
    assert int(loop.optimizer.iterations) == int(plain.optimizer.iterations) == 8
    start = make_model("mlp", seed=1).get_weights()
    moved = max(np.abs(w - w0).max() for w, w0 in zip(plain.get_weights(), start))
    assert moved > 1e-2  # the comparison below is not of untouched weights
    for a, b in zip(loop.model.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-5)  # measured 3e-6: float rounding
    np.testing.assert_allclose(h_loop.history["loss"], h_plain.history["loss"], rtol=1e-5)


def test_paired_ratio_is_the_median_of_round_ratios():
    # rounds: 2/1, 6/2, 4/1 -> ratios 2, 3, 4: median 3 (the ratio of medians would be 4/1)
    assert bench_fit._paired([2.0, 6.0, 4.0], [1.0, 2.0, 1.0]) == 3.0


@pytest.mark.slow
def test_a_small_run_prints_one_json_object(capsys):
    assert bench_fit.cli(["--accum", "2", "--micro-batch", "5", "--rounds", "1",
                          "--examples", "40", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["updates_per_epoch"] == 4  # 40 examples, batches of 2 x 5
    assert set(result["seconds"]) == set(bench_fit.CONTENDERS)
    for name, seconds in result["seconds"].items():
        assert seconds > 0
        assert result["ms_per_update"][name] == pytest.approx(1000 * seconds / 4)
    # one round: each ratio is that round's own
    s = result["seconds"]
    assert result["ratio_to_keras"] == pytest.approx(s["keras"] / s["accumulating"])
    assert result["ratio_to_plain"] == pytest.approx(s["accumulating"] / s["plain"])
    assert result["ratio_to_loop"] == pytest.approx(s["accumulating"] / s["hand_loop"])
    assert result["loop_to_plain"] == pytest.approx(s["hand_loop"] / s["plain"])
    assert result["overlap_gain"] == pytest.approx(s["accumulating"] / s["overlap2"])
    assert result["check_cost"] == pytest.approx(s["check_every"] / s["accumulating"])
