import pytest

import gradlab as gl
from common import DEVICES


def test_tower_devices_reuses_existing_devices_or_asks_for_a_restart():
    assert gl.tower_devices(2) == DEVICES
    assert gl.tower_devices(1) == DEVICES[:1]
    with pytest.raises(RuntimeError, match="Restart the kernel"):
        gl.tower_devices(3)
    with pytest.raises(ValueError, match="num_towers"):
        gl.tower_devices(0)


@pytest.mark.slow
def test_tower_devices_splits_the_cpu_in_a_fresh_process():
    import subprocess, sys
    code = "import gradlab as gl; print(gl.tower_devices(3))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['/device:CPU:0', '/device:CPU:1', '/device:CPU:2']", out.stderr
