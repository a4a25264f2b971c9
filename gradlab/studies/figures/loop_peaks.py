"""How far one gradient lifts the allocator's peak, against N, one line per loop.

    loop peaks: the allocator's peak rise against N, one line per loop, a right-hand axis in gradients

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

import itertools

import numpy as np

from ._draw import figure


def plot_loop_peaks(peaks, gradient_mib=None, title="How far one gradient lifts the peak, against N"):
    """Lines of the allocator's peak rise (MiB) against the micro-batches N, one per loop.

        line k:  x = the N of peaks[label_k] (log 2 axis, ticked at every N), y = its MiB
        gradient_mib, if given: a right-hand axis reading MiB / gradient_mib, in gradients

    Args:
        peaks: `{label: {N: MiB}}`, for example `{"range (unrolled)": {2: 1.6, 8: 6.7}}`; every N a
            positive integer, every MiB finite.
        gradient_mib: MiB of one gradient (> 0), or None for no right-hand axis.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes (`ax.lines`: one per label, in order; the right-hand axis,
        if any, is `ax.child_axes[0]`).

    Lesson: notebooks/05-fused-accumulation.ipynb
    """
    if not peaks or not all(by_n for by_n in peaks.values()):
        raise ValueError(f"peaks needs at least one loop with at least one N, got {peaks!r}")
    for label, by_n in peaks.items():
        if not all(isinstance(n, (int, np.integer)) and n > 0 for n in by_n) or not np.all(np.isfinite(list(by_n.values()))):
            raise ValueError(f"{label}: N must be positive integers and MiB finite, got {by_n!r}")
    if gradient_mib is not None and not (np.isfinite(gradient_mib) and gradient_mib > 0):
        raise ValueError(f"gradient_mib must be positive, got {gradient_mib!r}")
    fig, ax = figure((6.4, 3.2))
    for (label, by_n), marker in zip(peaks.items(), itertools.cycle("osD^v")):
        ns = sorted(by_n)
        ax.plot(ns, [by_n[n] for n in ns], marker=marker, label=label)
    ns = sorted({n for by_n in peaks.values() for n in by_n})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("N (micro-batches of one gradient)")
    ax.set_ylabel("peak rise, MiB (median)")
    if gradient_mib is not None:
        g = float(gradient_mib)
        ax.secondary_yaxis("right", functions=(lambda m: m / g, lambda k: k * g)).set_ylabel("gradients")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    return fig
