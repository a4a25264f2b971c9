"""gradlab.studies.memory: the first step's memory apart from the steady steps', against allocations
of known size."""
import mmap

import numpy as np
import pytest

from gradlab.studies import memory


@pytest.mark.slow
def test_compile_memory_is_reported_apart_from_training():
    sizes = iter([80, 20, 20])  # MB touched by the first step, then by each steady step

    def step():
        # Fresh anonymous pages, all written, given back when closed: numpy's own buffers
        # may reuse pages the heap already holds (glibc raises its mmap threshold after a
        # large free), so how far RSS grows would hang on what this process did before.
        with mmap.mmap(-1, next(sizes) * 2**20) as m:
            a = np.frombuffer(m, dtype=np.uint8)
            a[:] = 1
            assert a[-1] == 1
            del a

    r = memory.measure(step, updates=2, devices=["CPU:0"])
    assert r["rss_reset"] is True
    assert 75 < r["compile_mb"] < 95
    assert 18 < r["rss_mb"] < 35  # not the 80 MB of the first step
    if r["tf_peak_mb"] is None:  # this process runs TensorFlow's default CPU allocator
        assert r["peak_mb"] == r["rss_mb"]


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="updates must be an integer >= 1, got 0"):
        memory.measure(lambda: None, updates=0)
    with pytest.raises(TypeError, match="devices must be a list"):
        memory.measure(lambda: None, devices="CPU:0")
