import numpy as np
import pytest

from gradlab.core.host_average import host_average


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
