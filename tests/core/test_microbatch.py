import numpy as np
import pytest

from gradlab.core.microbatch import batch_size, check_batch, offsets, split_sizes


def test_split_sizes_even_and_uneven():
    assert split_sizes(100, 10) == [10] * 10
    assert split_sizes(10, 3) == [4, 3, 3]
    assert split_sizes(7, 7) == [1] * 7
    assert offsets([4, 3, 3]) == [0, 4, 7]


@pytest.mark.parametrize("accum_steps, error", [
    (0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError), ("2", TypeError)])
def test_bad_accum_steps(accum_steps, error):
    with pytest.raises(error, match="accum_steps") as info:
        split_sizes(10, accum_steps)
    assert repr(accum_steps) in str(info.value)


def test_batch_smaller_than_accum_steps_gives_one_example_each():
    assert split_sizes(3, 4) == [1, 1, 1]
    assert split_sizes(1, 8) == [1]


def test_check_batch_gives_replica_shards():
    assert check_batch(31, 2) == [16, 15]
    assert check_batch(3, 2) == [2, 1]
    with pytest.raises(ValueError, match="batch of 1 examples is too small for 2 replicas"):
        check_batch(1, 2)


def test_batch_size_checks():
    assert batch_size(np.zeros((5, 2)), np.zeros(5)) == 5
    with pytest.raises(ValueError, match="same number of examples, got 5 and 4"):
        batch_size(np.zeros((5, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="empty"):
        batch_size(np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(TypeError, match="array or tensor"):
        batch_size(3, np.zeros(3))


def test_several_inputs_count_together():
    x = {"a": np.arange(10), "b": np.arange(20).reshape(10, 2)}
    assert batch_size(x, [np.arange(10), np.arange(10) * 2]) == 10
    with pytest.raises(ValueError, match=r"parts of x have different numbers of examples: .*'b'.*9"):
        batch_size({"a": np.zeros(10), "b": np.zeros(9)}, np.zeros(10))
