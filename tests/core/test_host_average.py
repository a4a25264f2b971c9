import numpy as np
import pytest

from gradlab.core.host_average import HostSum, host_average


def test_equal_micro_batches_take_the_plain_mean():
    out = host_average([[np.array([1.0, 2.0]), None], [np.array([3.0, 4.0]), None]])
    np.testing.assert_allclose(out[0], [2.0, 3.0])
    assert out[1] is None


def test_counts_weight_unequal_micro_batches():
    # (3*[1] + 1*[5]) / 4 = [2]
    out = host_average([[np.array([1.0])], [np.array([5.0])]], counts=[3, 1])
    np.testing.assert_allclose(out[0], [2.0])
    assert out[0].dtype == np.float64


def test_bad_input():
    with pytest.raises(ValueError, match="at least one micro-batch"):
        host_average([])
    with pytest.raises(ValueError, match="different numbers of gradients"):
        host_average([[np.zeros(1)], [np.zeros(1), np.zeros(1)]])
    with pytest.raises(ValueError, match="one entry per micro-batch"):
        host_average([[np.zeros(1)]], counts=[1, 2])


def test_running_sum_is_the_stack_mean_bit_for_bit():
    # the seed's np.stack(...).mean(axis=0) adds in order and divides once: so does HostSum
    rng = np.random.default_rng(0)
    grads = [[rng.standard_normal((30, 7)).astype(np.float32)] for _ in range(5)]
    out = host_average(grads)[0]
    np.testing.assert_array_equal(out, np.stack([g[0] for g in grads]).mean(axis=0))
    assert out.dtype == np.float32


def test_weighted_float32_is_the_lessons_weighted_mean():
    # (2*[1, 3] + 1*[4, 0]) / 3 = [2, 2], added in float32 as lesson 03 writes it
    g = [[np.float32([1.0, 3.0])], [np.float32([4.0, 0.0])]]
    out = host_average(g, counts=[2, 1])[0]
    np.testing.assert_array_equal(out, np.float32([2.0, 2.0]))
    assert out.dtype == np.float32


def test_float16_gradients_are_summed_in_float32():
    # 2048 + 1 + 1 rounds to 2048 in float16 one step at a time; in float32 the sum is 2050
    g = [[np.float16([2048.0])], [np.float16([1.0])], [np.float16([1.0])]]
    out = host_average(g, counts=[1, 1, 1])[0]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.float16([2050.0 / 3]))


def test_all_counts_zero_give_zero_gradients():
    out = host_average([[np.float32([1.0, 2.0])], [np.float32([3.0, 4.0])]], counts=[0, 0])
    np.testing.assert_array_equal(out[0], [0.0, 0.0])


def test_host_memory_is_two_gradients_not_k():
    # lesson 20's rule: a running sum holds the sum and one term; np.stack held k more
    import tracemalloc
    k, shape = 10, (512, 256)
    grads = [[np.ones(shape, np.float32)] for _ in range(k)]
    one = np.ones(shape, np.float32).nbytes
    for counts in (None, [3] * k):
        tracemalloc.start()
        host_average(grads, counts=counts)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak / one < 2.2, (counts, peak / one)


def test_host_sum_divides_in_place_and_is_spent():
    acc = HostSum()
    acc.add([np.float32([2.0, 4.0])])
    acc.add([np.float32([4.0, 8.0])])
    held = acc.sums[0]
    out = acc.mean(2)[0]
    assert out is held  # no third array for the mean
    np.testing.assert_array_equal(out, [3.0, 6.0])
    with pytest.raises(ValueError, match="at least one micro-batch"):
        acc.mean(2)
