"""The plain mean's error against how unequal the micro-batches are, measured and predicted.

For micro-batches of sizes n_1..n_N (B = sum n_i), the plain mean weights each 1/N where the
large batch weights n_i/B:

    plain - weighted = sum_i (1/N - n_i/B) g_i

so with N - 1 micro-batches of one size and a last one of size r the error is
|1/N - r/B| times the last one's distance from the others' mean: zero at equal sizes.

Lesson: notebooks/03-host-averaging.ipynb
"""
from __future__ import annotations

import math


def plot_weighting_factors(last_sizes, measured, mismatch, spread, title="the plain mean's error and its two factors",
                           product=False):
    """Draw the measured error and its two factors in three panels over r: error = mismatch x spread.

    Args:
        last_sizes: the last micro-batch's size r, one per point, ascending.
        measured: plain_mean's relative error against the large batch's gradient, per r.
        mismatch: the weight mismatch |1/N - r/B| per r (zero at equal sizes).
        spread: ||g_N - mean of the others|| / ||g|| per r.
        title: the figure's title.
        product: if True, also draw mismatch x spread as a line over the measured points (left panel), so the
            claim error = mismatch x spread can be read off the figure.
    Returns:
        the matplotlib Figure of 3 Axes (error, mismatch, spread), already closed in pyplot.
    """
    columns = [list(last_sizes), list(measured), list(mismatch), list(spread)]
    if not columns[0] or len({len(c) for c in columns}) != 1:
        raise ValueError("last_sizes, measured, mismatch and spread need one value each per point, at least one")
    if any(not math.isfinite(v) or v < 0 for c in columns[1:] for v in c):
        raise ValueError("errors, mismatches and spreads must be finite and >= 0")
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, axes = plt.subplots(1, 3, figsize=(9.0, 2.8), layout="constrained", sharex=True)
    plt.close(fig)
    labels = ("relative error (measured)", "weight mismatch |1/N - r/B|", "spread ||g_N - others' mean|| / ||g||")
    for ax, values, label, style in zip(axes, columns[1:], labels, ("o", ".-", ".-")):
        ax.plot(columns[0], values, style, color="C3" if style == "o" else "0.3")
        ax.set_title(label, fontsize="small")
        ax.set_xlabel("size r of the last micro-batch")
        ax.set_ylim(bottom=0, top=1.1 * max(values) if max(values) > 0 else 1)
    if product:
        axes[0].plot(columns[0], [w * s for w, s in zip(columns[2], columns[3])], "-", color="0.3", zorder=1,
                     label="mismatch x spread")
        axes[0].plot([], [], "o", color="C3", label="measured")
        axes[0].legend(fontsize="small")
    fig.suptitle(title)
    return fig
