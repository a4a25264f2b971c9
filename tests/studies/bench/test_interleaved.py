from gradlab.studies.bench.interleaved import interleaved_ms, ratio_quartiles, side_of_one


def test_order_rotates_and_warm_up_is_dropped():
    calls = []
    runs = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    ms = interleaved_ms(runs, rounds=3)
    assert calls == list("abc" "bca" "cab" "abc")  # warm-up round, then 3 rounds, each starting one later
    assert {name: len(t) for name, t in ms.items()} == {"a": 3, "b": 3, "c": 3}
    assert all((t >= 0).all() for t in ms.values())


def test_ratio_is_taken_within_each_round():
    # per-round ratios 1, 2, 3, 4, 5: quartiles by hand (linear interpolation) 2, 3, 4
    ms = {"a": [2.0, 2.0, 9.0, 4.0, 25.0], "b": [2.0, 1.0, 3.0, 1.0, 5.0]}
    assert ratio_quartiles(ms, "a", "b") == (2.0, 3.0, 4.0)
    assert ratio_quartiles(ms, "b", "b") == (1.0, 1.0, 1.0)


def test_side_of_one():
    assert side_of_one((1.1, 1.5, 2.0)) == "above 1"
    assert side_of_one((0.5, 0.7, 0.9)) == "below 1"
    assert side_of_one((0.9, 1.0, 1.2)) == "includes 1"
    assert side_of_one((1.0, 1.2, 1.3)) == "includes 1"
