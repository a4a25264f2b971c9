"""gradlab.studies.build: a strategy from names equals the same strategy built by hand."""
import keras
import numpy as np
import pytest

from gradlab.studies.build import build_strategy, parts
from gradlab.studies.data import load_mnist
from gradlab.studies.models import make_model
from gradlab.training.strategies import make_strategy


def test_build_strategy_equals_make_strategy_by_hand():
    d = load_mnist()
    x, y = d.x_train[:40], d.y_train[:40]
    built = build_strategy("accumulate", "mlp", "momentum", 0.1, accum_steps=4, seed=3)
    by_hand = make_strategy("large_batch", make_model("mlp", seed=3),
                            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                            keras.optimizers.SGD(0.1, momentum=0.9))
    for _ in range(2):
        np.testing.assert_allclose(built.step(x, y), by_hand.step(x, y), rtol=1e-5)
    for a, b in zip(built.model.trainable_variables, by_hand.model.trainable_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)


@pytest.mark.parametrize("kw, error", [
    ({"model": "resnet"}, ValueError), ({"optimizer": "rmsprop"}, ValueError),
    ({"lr": -1.0}, ValueError), ({"seed": -1}, ValueError), ({"seed": 1.5}, TypeError)])
def test_bad_input_is_named(kw, error):
    with pytest.raises(error, match=next(iter(kw))):
        parts(**kw)
