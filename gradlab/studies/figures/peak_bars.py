"""Allocator peaks of a few ways to run one update, as bars in units of one micro-batch's peak.

    bar      the median of a case's readings, divided by the unit
    dots     every reading of the case, divided by the unit (how far they move)
    line     1: the unit itself (one micro-batch's peak), dashed

Horizontal bars, the first case on top; a case read once draws one dot on its bar's end. No bar
is written with its number (a reading moves between runs: the axis and the dots show how far).
The legend sits below the axes, where no bar can hide under it.

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np


def plot_peak_bars(readings, unit_mib, title="An update's peak, in micro-batches"):
    """One horizontal bar per case, at its median reading over `unit_mib`, every reading a dot.

    Args:
        readings: `{case name: readings in MiB}` (a number or a sequence of numbers), one to
            eight cases, in the order to draw, top down.
        unit_mib: the unit (> 0), one micro-batch's peak in MiB.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.
    Raises:
        ValueError: no case or more than eight, a case with no reading, a reading or unit that
            is not a finite number, or a unit that is not positive.
    """
    if not isinstance(unit_mib, (int, float)) or not math.isfinite(unit_mib) or unit_mib <= 0:
        raise ValueError(f"unit_mib must be a positive number of MiB, got {unit_mib!r}")
    cases = {name: np.atleast_1d(np.asarray(r, dtype=float)) for name, r in readings.items()}
    if not 1 <= len(cases) <= 8:
        raise ValueError(f"plot_peak_bars draws one to eight cases, got {len(cases)}")
    for name, r in cases.items():
        if r.size == 0 or not np.all(np.isfinite(r)):
            raise ValueError(f"case {name!r} needs at least one finite reading, got {r!r}")
    fig, ax = plt.subplots(figsize=(6.4, 0.55 * len(cases) + 1.7), layout="constrained")
    plt.close(fig)  # owned by the caller: a cell ending with the call shows it once
    ys = np.arange(len(cases))[::-1]  # the first case on top
    medians = [float(np.median(r)) / unit_mib for r in cases.values()]
    ax.barh(ys, medians, height=0.6, color="tab:blue", alpha=0.45, label="median reading")
    for y, r in zip(ys, cases.values()):
        ax.plot(r / unit_mib, [y] * r.size, "o", color="black", ms=3.5, zorder=3)
    ax.plot([], [], "o", color="black", ms=3.5, label="each reading")  # the legend's entry for the dots
    ax.axvline(1.0, ls="--", color="black", lw=1.2, zorder=4, label="1: one micro-batch's peak")
    ax.set_yticks(ys, list(cases))
    ax.set_xlim(0, 1.12 * max(float(r.max()) for r in cases.values()) / unit_mib)  # a median is never past its max
    ax.set_xlabel(f"peak / one micro-batch's peak ({unit_mib:.1f} MiB)")
    ax.set_title(title)
    fig.legend(fontsize="small", loc="outside lower center", ncol=3)  # below the axes: no bar hides under it
    return fig
