"""Two logical CPU devices for the whole session (tests/common.py), made before TensorFlow
initialises, so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine."""
import common  # noqa: F401  (first, before anything initialises TensorFlow)

import keras
import pytest

# JupyterLab in a real browser is slow and needs Chromium: `make test-browser` runs it.
collect_ignore = ["browser"]


@pytest.fixture
def float64():
    """Keras's floatx float64 for one test (its models and losses made inside it), restored
    after. A fresh process needs only set_floatx; here layers made earlier fixed the policy."""
    floatx, policy = keras.config.floatx(), keras.config.dtype_policy()
    keras.config.set_floatx("float64")
    keras.config.set_dtype_policy("float64")
    try:
        yield
    finally:
        keras.config.set_floatx(floatx)
        keras.config.set_dtype_policy(policy)
