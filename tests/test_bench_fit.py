"""`bench --fit`: bad arguments refused before any TensorFlow work, and a small real run whose
numbers hang together (a benchmark's ratios are never asserted as speed)."""
import json

import pytest

from gradlab import bench_fit


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(accum_steps=0), ValueError, "accum_steps"),
    (dict(micro_batch=2.5), TypeError, "micro_batch"),
    (dict(examples=5000), ValueError, "5000"),
    (dict(examples=10, accum_steps=4, micro_batch=5), ValueError, "examples"),
    (dict(model="resnet"), ValueError, "resnet"),
    (dict(jit_compile="yes"), ValueError, "yes"),
])
def test_bad_arguments_name_the_value(kwargs, error, word):
    with pytest.raises(error, match=word):
        bench_fit.run_bench_fit(**kwargs)


def test_paired_ratio_is_the_median_of_round_ratios():
    # rounds: 2/1, 6/2, 4/1 -> ratios 2, 3, 4: median 3 (the ratio of medians would be 4/1)
    assert bench_fit._paired([2.0, 6.0, 4.0], [1.0, 2.0, 1.0]) == 3.0


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
