import numpy as np
import tensorflow as tf

from gradlab.studies.bench.round_trip import round_trip_ms, round_trip_parts


def test_parts_are_medians_and_median_differences_by_hand():
    ms = {"in-graph step": [3.0, 4.0, 5.0], "in-graph loop": [2.0, 3.5, 4.0],  # step - loop: 1, .5, 1
          "2 graph calls": [2.0, 3.0, 4.0], "fetch": [2.5, 3.0, 4.5],  # fetch - calls: .5, 0, .5
          "fetch + mean": [3.0, 3.5, 5.5], "apply fed numpy": [1.0, 1.0, 1.0],  # + mean: .5, .5, 1
          "apply fed tensors": [1.2, 1.2, 1.2], "empty call": [0.1, 0.2, 0.3],  # numpy - tensors < 0
          "tf.constant": [0.05, 0.1, 0.2]}
    parts = round_trip_parts(ms, 2)
    assert parts == {"in-graph step": {"your one call: the loop": 3.5, "apply": 1.0},
                     "host_step": {"2 graph calls": 3.0, "copies out": 0.5, "numpy's mean": 0.5,
                                            "mean to tensors": 0.1, "numpy into the call": 0.0,
                                            "second call": 0.2, "apply": 1.0}}
    # fed numpy 1.0 over fed tensors 0.6 in every round: 0.4, of which the mean to tensors (0.1) is bytes
    ms.update({"apply fed numpy": [1.0, 1.0, 1.0], "apply fed tensors": [0.6, 0.6, 0.6]})
    numpy_part = round_trip_parts(ms, 2)["host_step"]["numpy into the call"]
    assert abs(numpy_part - 0.3) < 1e-12


def test_each_call_runs_once_a_round_on_the_lessons_pieces():
    calls = []

    def fetch(x, y, n):
        calls.append("fetch")
        return [[np.ones(2, np.float32)]] * n, [len(x) // n] * n

    def mean(fetched, counts):
        calls.append("mean")
        return [np.ones(2, np.float32)]

    def apply(m):
        calls.append(("apply", type(m[0]).__name__))

    def in_graph_step(x, y, n, apply=True):
        calls.append(("in-graph", apply))

    def grads_fn(x_i, y_i):
        calls.append(("grads", len(x_i)))
        return tf.constant(0.0), []

    x, y = np.zeros((6, 3), np.float32), np.zeros(6, np.int32)
    ms, parts = round_trip_ms(fetch, mean, apply, in_graph_step, grads_fn, x, y, accum_steps=3, rounds=4)
    assert set(ms) == {"host_step", "in-graph step", "in-graph loop", "3 graph calls", "fetch",
                       "fetch + mean", "apply fed numpy", "apply fed tensors", "empty call", "tf.constant"}
    assert all(len(t) == 4 and (t >= 0).all() for t in ms.values())
    n = 5  # a warm-up round and 4 rounds
    assert calls.count(("in-graph", True)) == calls.count(("in-graph", False)) == n
    assert calls.count(("grads", 2)) == 3 * n  # three micro-batches of 2
    assert calls.count("fetch") == 1 + 3 * n  # the setup's mean, then host step, fetch, fetch + mean
    assert calls.count(("apply", "ndarray")) == 2 * n and calls.count(("apply", "EagerTensor")) == n
    assert parts == round_trip_parts(ms, 3)
