import keras
import numpy as np
import pytest

import gradlab as gl
from common import DEVICES


def test_tower_devices_reuses_existing_devices_or_asks_for_a_restart():
    assert gl.tower_devices(2) == DEVICES
    assert gl.tower_devices(1) == DEVICES[:1]
    # the session made its 2 devices (tests/common.py); a third cannot be made any more
    with pytest.raises(RuntimeError, match=r"logical GPU\(s\), fewer than the 3 towers.*Restart the kernel"):
        gl.tower_devices(3)
    with pytest.raises(ValueError, match="num_towers"):
        gl.tower_devices(0)


@pytest.mark.slow
def test_tower_devices_splits_the_cpu_in_a_fresh_process():
    import subprocess, sys
    code = "import gradlab as gl; print(gl.tower_devices(3))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['/device:CPU:0', '/device:CPU:1', '/device:CPU:2']", out.stderr


@pytest.mark.slow
def test_tower_devices_takes_logical_cpus_a_notebook_made_itself():
    # lesson 02's setup: split the CPU by hand, start the runtime, then ask for towers
    import subprocess, sys
    code = ("import tensorflow as tf, gradlab as gl\n"
            "cpu = tf.config.list_physical_devices('CPU')[0]\n"
            "tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)\n"
            "tf.config.list_logical_devices('CPU')\n"
            "print(gl.tower_devices(2))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['/device:CPU:0', '/device:CPU:1']", out.stderr


@pytest.mark.gpu("make_strategy('towers') on two GPUs (or GPU 0 split in two): each tower "
                 "allocates on its own GPU, and 3 updates equal Keras's train_on_batch at the large batch")
def test_towers_on_gpus_equal_keras_large_batch():
    assert all("GPU" in d for d in DEVICES), DEVICES  # tests/common.py: GPUs where there are any
    ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def mlp():
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((12,)), keras.layers.Dense(32, activation="relu"),
                                 keras.layers.Dense(4)])
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 12)).astype("float32"), rng.integers(0, 4, size=30)
    oracle = mlp()
    oracle.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss=ce)
    s = gl.make_strategy("towers", mlp(), ce, keras.optimizers.SGD(0.1, momentum=0.9),
                         accum_steps=4, devices=DEVICES)  # 15 rows a tower, in micro-batches
    names = [d.split("device:")[-1] for d in DEVICES]
    for name in names:
        tf.config.experimental.reset_memory_stats(name)
    for _ in range(3):
        oracle.reset_metrics()
        expected = float(oracle.train_on_batch(x, y))
        assert float(s.step(x, y)) == pytest.approx(expected, rel=1e-5)
    for name in names:
        assert tf.config.experimental.get_memory_info(name)["peak"] > 0, name
    for a, b in zip(s.model.get_weights(), oracle.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
