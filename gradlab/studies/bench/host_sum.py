"""Time the host's share of host averaging: one fetched gradient copied, scaled and added, per parameter.

    h = min over rounds of t(copy = fetch.copy(); copy *= n; total += copy) / params      (seconds a parameter)

`Tensor.numpy()` hands back a fresh numpy copy of a fetched gradient; lesson 03's running sum then scales it
in place by its count and adds it into the total. Those three passes (28 bytes read or written a float32
parameter) are what `host_sum_seconds` times, on arrays far larger than a cache, the fastest of `rounds`
(the least disturbed by other work on a shared machine).

Lesson: notebooks/03-host-averaging.ipynb
"""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

BYTES_PER_PARAM = 28  # copy: read 4, write 4; g *= n: read 4, write 4; total += g: read 8, write 4


def host_sum_seconds(params=2 ** 24, count=16, rounds=7, seed=0, details=False):
    """Seconds a parameter the host takes to copy a fetched float32 gradient, scale it by `count`, add it.

    Args:
        params: the gradient's size in float32 numbers (64 MiB at the default, past any cache).
        count: the micro-batch's n_i, the factor the copy is scaled by.
        rounds: timed repeats; the fastest is returned.
        seed: the fetched gradient's random values.
        details: also return the total and the fetch, so a test can check the arithmetic.
    Returns:
        float, seconds a parameter; with details=True a SimpleNamespace(seconds, total, fetch, rounds).
    """
    fetch = np.random.default_rng(seed).standard_normal(params, dtype=np.float32)
    total = np.zeros(params, np.float32)
    n = np.float32(count)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        g = fetch.copy()  # what .numpy() hands back: fresh memory
        g *= n  # n_i g_i, in place
        total += g  # the running sum, in place
        times.append(time.perf_counter() - start)
        del g
    seconds = min(times) / params
    if details:
        return SimpleNamespace(seconds=seconds, total=total, fetch=fetch, rounds=rounds)
    return seconds
