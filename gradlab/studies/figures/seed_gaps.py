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
    """(mean, half-width) of the paired 95% interval of `gaps`, one per seed (2 seeds or more)."""
    gaps = np.asarray(gaps, dtype=float)
    if gaps.ndim != 1 or gaps.size < 2:
        raise ValueError(f"one gap per seed, 2 seeds or more; got shape {gaps.shape}")
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


def plot_paired_curves(updates, panels, ylabel="test accuracy (%)"):
    """Side by side, one Axes per panel: runs that share a seed, each one's test curve, and the
    largest gap between them in the panel's title.

        largest gap:  max over t of |curve_a(t) - curve_b(t)|, over every pair of the panel's runs

    Runs that differ only by rounding draw one line (gap 0); runs whose randomness differs drift apart.

    Args:
        updates: the update count of each test, the same for every curve.
        panels: {panel title: {run label: accuracy (a fraction) at each of `updates`}}, each panel
            with at least one curve; drawn left to right, solid then dashed lines.
        ylabel: the first Axes' y label.
    Returns:
        a matplotlib Figure with one Axes per panel (shared y), already closed in pyplot.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    updates = np.asarray(updates)
    if updates.ndim != 1 or updates.size == 0 or not panels:
        raise ValueError("plot_paired_curves needs updates and at least one panel")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.0 * len(panels), 3.5), sharey=True, squeeze=False,
                             layout="constrained")
    plt.close(fig)
    for ax, (title, curves) in zip(axes[0], panels.items()):
        curves = {label: 100 * np.asarray(c, dtype=float) for label, c in curves.items()}
        if not curves or any(c.shape != updates.shape for c in curves.values()):
            raise ValueError(f"panel {title!r}: every curve needs one accuracy per update ({updates.size})")
        for i, (label, c) in enumerate(curves.items()):
            ax.plot(updates, c, ("-", "--", ":", "-.")[i % 4], color=f"C{i}", label=label)
        stack = np.array(list(curves.values()))
        widest = float((stack.max(axis=0) - stack.min(axis=0)).max())
        ax.set(title=f"{title}: largest gap {widest:.1f} points", xlabel="update")
        ax.legend(frameon=False, loc="lower right")
    axes[0, 0].set_ylabel(ylabel)
    return fig
