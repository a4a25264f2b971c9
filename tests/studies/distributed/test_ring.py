"""The ring all-reduce from scratch: a hand walk-through on R=3, its byte count, and
tf.distribute's all-reduce (MirroredStrategy on logical CPUs) as the oracle."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import gradlab
from gradlab.core.distribute import make_distribution
from gradlab.studies.distributed.comm_cost import ring_bytes
from gradlab.studies.distributed.ring import ring_all_reduce

DEVICES = gradlab.tower_devices(2)  # the session's two logical CPUs (tests/common.py)


def test_three_devices_by_hand():
    g = [np.array([1, 2, 3]), np.array([10, 20, 30]), np.array([100, 200, 300])]
    out = ring_all_reduce(g, record=True)
    # device r's chunks (one value each) after every step, worked out on paper:
    # reduce-scatter step 0: 0 -> 1 chunk 0, 1 -> 2 chunk 1, 2 -> 0 chunk 2 (added)
    # reduce-scatter step 1: 0 -> 1 chunk 2, 1 -> 2 chunk 0, 2 -> 0 chunk 1 (added)
    # all-gather step 0:     0 -> 1 chunk 1, 1 -> 2 chunk 2, 2 -> 0 chunk 0 (copied)
    # all-gather step 1:     0 -> 1 chunk 0, 1 -> 2 chunk 1, 2 -> 0 chunk 2 (copied)
    expected = [
        [[1, 2, 3], [10, 20, 30], [100, 200, 300]],
        [[1, 2, 303], [11, 20, 30], [100, 220, 300]],
        [[1, 222, 303], [11, 20, 333], [111, 220, 300]],   # device r holds chunk r+1 summed
        [[111, 222, 303], [11, 222, 333], [111, 220, 333]],
        [[111, 222, 333], [111, 222, 333], [111, 222, 333]],
    ]
    got = [[[int(c[0]) for c in device] for device in step] for step in out.history]
    assert got == expected
    for r in out.results:
        np.testing.assert_array_equal(r, [111, 222, 333])
    assert out.chunks == [1, 1, 1]
    assert out.sent.tolist() == [[8, 8, 8]] * 4  # one int64 per device per step
    np.testing.assert_array_equal(g[0], [1, 2, 3])  # the inputs are not written


@pytest.mark.parametrize("R", [2, 3, 4, 8])
def test_bytes_sent_are_two_r_minus_one_over_r_of_the_array(R):
    n = 24  # divisible by every R here
    out = ring_all_reduce([np.ones(n, np.float32) for _ in range(R)])
    assert out.sent.shape == (2 * (R - 1), R)
    assert (out.sent == n // R * 4).all()  # every device sends one chunk every step
    per_device = 2 * (R - 1) / R * n * 4
    assert out.sent_per_device().tolist() == [per_device] * R == [ring_bytes(n * 4, R)] * R


def test_uneven_chunks_sum_exactly_and_count_the_bytes_sent():
    rng = np.random.default_rng(0)
    g = [rng.integers(-50, 50, (2, 5)) for _ in range(4)]  # 10 values over 4 devices: 3, 3, 2, 2
    out = ring_all_reduce(g)
    assert out.chunks == [3, 3, 2, 2]
    for r in out.results:
        assert r.shape == (2, 5)
        np.testing.assert_array_equal(r, sum(g))
    nbytes, c = g[0].nbytes, np.array(out.chunks) * 8
    # device r sends every chunk but (r+1) while reducing and every chunk but (r+2) gathering
    assert out.sent_per_device().tolist() == [2 * nbytes - c[(r + 1) % 4] - c[(r + 2) % 4] for r in range(4)]
    assert out.sent.sum() == 2 * 3 * nbytes


def test_more_devices_than_values_and_one_device():
    g = [np.array([float(r)]) for r in range(3)]  # chunks of 1, 0, 0 values
    out = ring_all_reduce(g)
    assert out.chunks == [1, 0, 0] and all(r.tolist() == [3.0] for r in out.results)
    one = ring_all_reduce([np.arange(5.0)])
    assert one.sent.shape == (0, 1) and one.sent_per_device().tolist() == [0]
    np.testing.assert_array_equal(one.results[0], np.arange(5.0))


@pytest.mark.parametrize("bad, error, words", [
    ([], ValueError, "at least one"),
    (np.zeros((2, 3)), TypeError, "a list of arrays"),
    ([np.zeros(3), np.zeros(4)], ValueError, "device 1 has (4,)"),
    ([np.zeros(3), np.zeros(3, np.float32)], ValueError, "float32"),
    ([np.array(["a"]), np.array(["b"])], TypeError, "numeric"),
])
def test_bad_input_is_refused_naming_it(bad, error, words):
    with pytest.raises(error) as e:
        ring_all_reduce(bad)
    assert words in str(e.value)


def tf_all_reduce(arrays, devices):
    """tf.distribute's SUM all-reduce of one array per replica: a MirroredStrategy (with
    collective keys of its own, `make_distribution`: TensorFlow's shared keys would abort a
    second strategy's all-reduce of another shape) and a replica context's all_reduce."""
    strategy = make_distribution(devices)
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(arrays[ctx.replica_id_in_sync_group]))

    @tf.function
    def reduce(v):
        return strategy.run(lambda x: tf.distribute.get_replica_context().all_reduce("SUM", x), args=(v,))
    return [t.numpy() for t in strategy.experimental_local_results(reduce(values))]


@pytest.mark.parametrize("shape", [(3, 7), (1,), (5,)])  # 21 and 5 values: uneven chunks
def test_equals_tf_distribute_all_reduce_on_two_devices(shape):
    rng = np.random.default_rng(1)
    g = [rng.standard_normal(shape).astype(np.float32) for _ in DEVICES]
    ours, theirs = ring_all_reduce(g).results, tf_all_reduce(g, DEVICES)
    assert len(theirs) == len(ours) == 2
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


_CHILD = """
import json, sys
import numpy as np
import gradlab
devices = gradlab.tower_devices(4)
sys.path.insert(0, sys.argv[1])
from test_ring import tf_all_reduce
from gradlab.studies.distributed.ring import ring_all_reduce
g = [np.random.default_rng(r).standard_normal(1001).astype(np.float32) for r in range(4)]
ours, theirs = ring_all_reduce(g).results, tf_all_reduce(g, devices)
print(json.dumps(max(float(np.max(np.abs(a - b))) for a in ours for b in theirs)))
"""


@pytest.mark.slow
def test_equals_tf_distribute_all_reduce_on_four_devices():
    """Four logical CPUs need a fresh process (this one has made its two)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    run = subprocess.run([sys.executable, "-c", _CHILD, os.path.dirname(__file__)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) < 1e-5  # sums of four N(0,1): float32 rounding
