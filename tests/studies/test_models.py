"""gradlab.studies.models: seeded models, and the one accuracy every study and lesson reports."""
import keras
import numpy as np
import pytest

from gradlab.studies.models import accuracy, make_model


def test_accuracy_by_hand_across_batches():
    # Identity logits: the prediction is the larger coordinate, [0, 1, 1, 0] against y.
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, use_bias=False)])
    model.layers[0].set_weights([np.eye(2, dtype=np.float32)])
    x = np.array([[1, 0], [0, 1], [2, 3], [5, 4]], np.float32)
    y = np.array([0, 0, 1, 1])
    assert accuracy(model, x, y) == 0.5
    assert accuracy(model, x, y, batch=3) == 0.5  # batches of 3 and 1 give the same
    assert accuracy(model, x[:3], y[:3], batch=1) == pytest.approx(2 / 3)


def test_same_seed_same_weights():
    a, b = make_model("mlp", seed=4), make_model("mlp", seed=4)
    for va, vb in zip(a.weights, b.weights):
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
    assert not np.array_equal(a.weights[0].numpy(), make_model("mlp", seed=5).weights[0].numpy())


def test_accuracy_bad_input_is_named():
    model = make_model("mlp")
    x = np.zeros((3, 28, 28), np.float32)
    with pytest.raises(ValueError, match="same number of examples, got 3 and 2"):
        accuracy(model, x, np.zeros(2))
    with pytest.raises(ValueError, match="batch must be an integer >= 1, got 0"):
        accuracy(model, x, np.zeros(3), batch=0)
