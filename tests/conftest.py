"""Two logical CPU devices for the whole session (tests/common.py), made before TensorFlow
initialises, so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine
(on a GPU machine: two GPUs, or GPU 0 split in two). Tests marked `gpu` skip without a GPU."""
import common  # noqa: F401  (first, before anything initialises TensorFlow)

import keras
import pytest
import tensorflow as tf

# TensorFloat-32 (on by default on Ampere and later GPUs) rounds matmul and convolution inputs
# to 10 bits: a split and the large batch would differ by ~1e-3. The tests compare float32.
tf.config.experimental.enable_tensor_float_32_execution(False)

# JupyterLab in a real browser is slow and needs Chromium: `make test-browser` runs it.
collect_ignore = ["browser"]


def pytest_collection_modifyitems(config, items):
    """Without a GPU, a test marked `gpu("what it runs")` is skipped, saying what it would run."""
    if tf.config.list_physical_devices("GPU"):
        return
    for item in items:
        marker = item.get_closest_marker("gpu")
        if marker is not None:
            what = marker.args[0] if marker.args else item.name
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU (none here): would run {what}"))


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
