"""The learning rate each update applies, one line per way of feeding a schedule to an optimizer.

    x        the update, counted from 1
    y        the rate that update applied (linear scale, from 0)
    marker   a dotted vertical line at the first update of each line that applies 0, if any,
             labelled with its place in the run ("update 17 of 64")

Lesson: notebooks/06-keras-accumulation.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np


def plot_applied_rates(rates, title="The rate each update applies"):
    """One line per case: the rate each of its updates applied, update 1 first.

    Args:
        rates: `{case name: the rate each update applied}`, one to four cases, each a sequence
            of finite numbers >= 0, all of one length (the run's updates).
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.
    Raises:
        ValueError: no case or more than four, cases of different lengths or none, or a rate
            that is not a finite number >= 0.
    """
    cases = {name: np.asarray(r, dtype=float).ravel() for name, r in rates.items()}
    if not 1 <= len(cases) <= 4:
        raise ValueError(f"plot_applied_rates draws one to four cases, got {len(cases)}")
    lengths = {r.size for r in cases.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError(f"every case needs the same number of updates, at least one, got {sorted(lengths)}")
    for name, r in cases.items():
        if not np.all(np.isfinite(r)) or np.any(r < 0):
            raise ValueError(f"{name!r}: every rate must be a finite number >= 0")
    (updates,) = lengths
    fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    plt.close(fig)  # owned by the caller
    x = np.arange(1, updates + 1)
    colors = ("tab:orange", "tab:blue", "tab:green", "tab:red")
    for (name, r), color in zip(cases.items(), colors):
        ax.plot(x, r, marker=".", markersize=4, color=color, label=name)
        zeros = np.flatnonzero(r == 0)
        if zeros.size and r[: zeros[0]].size and np.all(r[zeros[0]:] == 0):
            first = int(zeros[0]) + 1  # counted from 1
            ax.axvline(first, color=color, linestyle=":", linewidth=1)
            ax.annotate(f"update {first} of {updates}: 0 from here", (first, 0), xytext=(4, 24),
                        textcoords="offset points", color=color, fontsize=9)
    top = max(float(r.max()) for r in cases.values())
    ax.set_xlim(0, updates + 1)
    ax.set_ylim(0, top * 1.08 if top > 0 and math.isfinite(top) else 1)
    ax.set_xlabel("update (counted from 1)")
    ax.set_ylabel("learning rate applied")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return fig
