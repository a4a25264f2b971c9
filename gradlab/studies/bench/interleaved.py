"""Time a few callables against each other on a shared machine: interleaved rounds, per-round ratios.

    ms[name][r]  = wall-clock milliseconds of runs[name]() in round r (round 0, the warm-up, dropped)
    ratio_quartiles(ms, a, b) = 25th, 50th, 75th percentile over rounds of ms[a][r] / ms[b][r]

Each round calls every callable once, starting one further along the list each round, so that a
slow moment of the machine falls on all of them alike; a ratio taken within a round cancels it.
`side_of_one` reads a ratio's middle half: "above 1", "below 1" or "includes 1" (not told apart
from noise).

Lesson: notebooks/20-host-cost.ipynb
"""
from __future__ import annotations

import time

import numpy as np


def interleaved_ms(runs, rounds=20):
    """Call each of `runs` (name -> callable) once per round, the order rotating; round 0 warms up.

    Args: runs: dict of name -> zero-argument callable; rounds: timed rounds (after one warm-up).
    Returns: dict name -> float64 array of `rounds` milliseconds.
    """
    names = list(runs)
    ms = {name: [] for name in names}
    for r in range(rounds + 1):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            start = time.perf_counter()
            runs[name]()
            ms[name].append(1000 * (time.perf_counter() - start))
    return {name: np.array(t[1:], dtype=np.float64) for name, t in ms.items()}


def ratio_quartiles(ms, a, b):
    """`(q25, median, q75)` over rounds of `ms[a] / ms[b]`, the ratio taken within each round."""
    q25, q50, q75 = np.percentile(np.asarray(ms[a]) / np.asarray(ms[b]), [25, 50, 75])
    return float(q25), float(q50), float(q75)


def side_of_one(quartiles):
    """Where a ratio's middle half lies: "above 1", "below 1" or "includes 1"."""
    low, _, high = quartiles
    return "above 1" if low > 1 else "below 1" if high < 1 else "includes 1"
