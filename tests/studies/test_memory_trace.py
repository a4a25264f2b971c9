"""memory_trace.trace: a thread samples what the allocator holds while one call runs; checked
against a call whose allocations are known to the byte."""
import gc
import time

import numpy as np
import pytest
import tensorflow as tf

from gradlab.studies import memory_trace

MiB = 2**20


def _current():
    return tf.config.experimental.get_memory_info("CPU:0")["current"]


# The BFC allocator hands out a whole free chunk when it is under twice the request, so what a
# tensor of n bytes holds depends on the free chunks earlier tests left: each test reads what the
# allocator gave (inside the call) and checks the trace against it, and it against [n, 2n).

def test_a_held_tensor_shows_as_a_plateau_of_its_size():
    gc.collect()  # earlier tests' garbage freed now, not during the trace (a CI run read -0.77 MiB at its end)
    tf.fill([2**22], 1.0)  # 16 MiB taken and freed first: the allocator has room
    given = []

    def fn():
        held = tf.fill([2**20], 1.0)  # 2^20 floats = 4 MiB, held for 100 ms: a loaded CPU can starve
        given.append(_current())      # the sampling thread for a few ms (a CI run found no sample in 15)
        time.sleep(0.1)
        del held
    before = _current()
    t = memory_trace.trace(fn, pad_ms=2.0)
    held_mib = (given[0] - before) / MiB
    assert 4.0 <= held_mib < 8.0
    assert t.ms[0] < 0 and t.ms[-1] >= 100  # sampled from before the call to after it
    assert len(t.ms) > 20 and np.all(np.diff(t.ms) >= 0)
    # the level outside the call: what was held at the start (back within 1 MiB of it after the
    # call: another thread of the process may free a stray tensor meanwhile; the held one is 4 MiB)
    assert t.mib[0] == 0 and abs(t.mib[-1]) < 1
    plateau = t.mib[(t.ms > 20) & (t.ms < 80)]
    assert plateau.size > 5 and np.median(plateau) == held_mib
    assert held_mib <= t.peak < held_mib + 0.01  # and the fill's 4-byte shape (one 256-byte chunk at most)
    assert t.mib.max() <= t.peak


def test_two_tensors_one_after_the_other_peak_at_their_sum():
    given, stamps = [], []  # stamps: ms since fn() began, around each level (a loaded CPU
                            # stretches a sleep: a CI run's fixed windows missed the second level)

    def fn():
        t0 = time.perf_counter()
        stamp = lambda: stamps.append(1000 * (time.perf_counter() - t0))
        a = tf.fill([2**19], 1.0)  # 2 MiB
        given.append(_current()), stamp()
        time.sleep(0.05)
        stamp()
        b = tf.fill([2**20], 1.0)  # + 4 MiB
        given.append(_current()), stamp()
        time.sleep(0.05)
        stamp()
        del a, b
    before = _current()
    t = memory_trace.trace(fn)
    first, both = (given[0] - before) / MiB, (given[1] - before) / MiB
    assert 2.0 <= first < 4.0 and 4.0 <= both - first < 8.0
    for level, (start, end) in ((first, stamps[0:2]), (both, stamps[2:4])):
        held = t.mib[(t.ms > start) & (t.ms < end)]
        assert held.size > 0 and np.median(held) == level, (level, held)
    assert both <= t.peak < both + 0.01


def test_a_call_that_allocates_nothing_reads_zero():
    t = memory_trace.trace(lambda: time.sleep(0.01))
    assert np.all(t.mib == 0) and t.peak == 0


@pytest.mark.parametrize("kwargs, named", [(dict(fn=3), "3"), (dict(fn=lambda: None, pad_ms=-1), "-1"),
                                          (dict(fn=lambda: None, pad_ms=float("nan")), "nan"),
                                          (dict(fn=lambda: None, device=0), "0")])
def test_bad_input_raises_naming_the_value(kwargs, named):
    with pytest.raises(ValueError, match=named):
        memory_trace.trace(**kwargs)


def test_an_allocator_without_statistics_is_refused(monkeypatch):
    monkeypatch.setattr(tf.config.experimental, "get_memory_info", lambda device: {"current": 0, "peak": 0})
    monkeypatch.setattr(tf.config.experimental, "reset_memory_stats", lambda device: None)
    with pytest.raises(ValueError, match="TF_CPU_ALLOCATOR_USE_BFC"):
        memory_trace.trace(lambda: None)
