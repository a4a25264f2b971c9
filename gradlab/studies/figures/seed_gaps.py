"""Paired gaps: each seed's result minus the reference run's with the same seed, per row.

    gap of seed s:   d_s = acc(way, s) - acc(reference, s)          (points)
    interval:        mean(d) ± t_{n-1} · sd(d) / sqrt(n)            (Student's t, 97.5th percentile)

A seed fixes the start and the batches of both runs, so d_s cancels what the seed gives both:
each way's own spread over seeds (the unpaired ± std) is much wider than the gaps' and hides a
gap that every seed shows. An interval that holds 0 does not tell the row from the reference.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from gradlab.studies.stats import t_quantile


def interval(gaps):
    """(mean, half-width) of the paired 95% interval of `gaps`, one per seed (2 to 10 seeds)."""
    gaps = np.asarray(gaps, dtype=float)
    if gaps.ndim != 1 or not 2 <= gaps.size <= 10:
        raise ValueError(f"one gap per seed, 2 to 10 seeds; got shape {gaps.shape}")
    return float(gaps.mean()), float(t_quantile(0.975, gaps.size - 1) * gaps.std(ddof=1) / np.sqrt(gaps.size))


def plot_seed_gaps(rows, xlabel="final test accuracy minus the large batch's, same seed (points)"):
    """One row per (label, gaps): each seed's gap as a small dot, the mean as a large one and
    its paired 95% interval as a bar; a line at 0. Rows top down in the given order; a row
    whose gaps are all zero shows its dots at 0 and no bar.

    Args:
        rows: [(label, gaps)], gaps one per seed, the same seeds in every row.
        xlabel: the x axis.
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.
    """
    if not rows:
        raise ValueError("no rows to draw")
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(rows) + 1.2))
    ax.axvline(0, color="0.5", lw=1)
    for k, (label, gaps) in enumerate(rows):
        mean, half = interval(gaps)
        y = -k
        ax.errorbar([mean], [y], xerr=[half], fmt="o", color="tab:blue", capsize=4, markersize=7)
        ax.plot(gaps, np.full(len(gaps), y - 0.22), "|", color="black", markersize=8, gid="seeds")
        ax.text(0.01, y + 0.18, f"{label}: {mean:+.1f} ± {half:.1f}", transform=ax.get_yaxis_transform(),
                fontsize="small", va="bottom")
    ax.set_yticks([])
    ax.set_ylim(-len(rows) + 0.5, 0.75)
    ax.set_xlabel(xlabel)
    ax.set_title("Paired gaps: each seed (ticks), their mean and 95% interval")
    fig.tight_layout()
    plt.close(fig)
    return fig
