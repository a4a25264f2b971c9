"""gradlab.classic.weights: micro-batches weighted n_i / B add up to the large batch."""
import numpy as np

from gradlab.classic.weights import micro_batches, weights


def test_weighted_micro_batch_means_equal_the_batch_mean():
    # The rule the whole project stands on: sum_i (n_i/B) mean_i == mean.
    x = np.arange(10, dtype=np.float64) ** 2
    parts = micro_batches(x, x, 3)
    assert [len(p[0]) for p in parts] == [4, 3, 3]
    np.testing.assert_allclose(sum(w * xi.mean() for xi, _, w in parts), x.mean(), rtol=1e-12)
    # ... while the plain mean of means over-weights the small micro-batches.
    assert abs(np.mean([xi.mean() for xi, _, _ in parts]) - x.mean()) > 1.0


def test_weights_sum_to_one():
    np.testing.assert_allclose(weights([4, 3, 3]), [0.4, 0.3, 0.3])


def test_several_inputs_split_together():
    x = {"a": np.arange(10), "b": np.arange(20).reshape(10, 2)}
    y = [np.arange(10), np.arange(10) * 2]
    (x0, y0, w0), *_ = micro_batches(x, y, 3)
    np.testing.assert_array_equal(x0["b"], [[0, 1], [2, 3], [4, 5], [6, 7]])
    assert isinstance(y0, list) and list(y0[1]) == [0, 2, 4, 6] and w0 == 0.4
