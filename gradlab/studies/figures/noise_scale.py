"""The trade between updates and examples as the effective batch grows, per noise scale.

    S / S_min = 1 + B_noise / B      (updates to reach a given loss)
    E / E_min = 1 + B / B_noise      (examples to reach it)

McCandlish et al. (2018), "An Empirical Model of Large-Batch Training", arXiv:1812.06162,
with the best learning rate at each batch size; B_simple = tr(Sigma) / |g|^2 stands in for
B_noise. Below B_noise a larger batch cuts updates almost in proportion at few extra
examples; above it, it barely cuts updates and costs examples in proportion.

Like `gradlab.studies.figures.plots`, `plot_updates_anchored` returns a Figure already closed in pyplot,
so a notebook cell ending with the call shows it exactly once.

Lesson: notebooks/02-batch-size-and-noise.ipynb
"""
from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import numpy as np


def _check(noise_scales):
    if not isinstance(noise_scales, dict) or not noise_scales:
        raise ValueError(f"noise_scales needs at least one {{label: B_noise}}, got {noise_scales!r}")
    for label, value in noise_scales.items():
        if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"noise scale {label!r} must be a finite number > 0, got {value!r}")


def plot_updates_anchored(noise_scales, updates, anchor):
    """Measured updates S against B, with each noise scale's curve pinned at one measured batch.

        S(B) = S(anchor) * (1 + B_noise / B) / (1 + B_noise / anchor)

    S(anchor) is the mean of the measured updates at B = anchor, so every curve starts from
    the same point and predicts the other batch sizes on its own: no curve is normalised by a
    fit, and the crosses are the raw counts, one per training (seed).

    Args:
        noise_scales: dict `{label: B_noise}`, each > 0.
        updates: dict `{B: [S, ...]}`, the updates each training took at batch B, all > 0.
        anchor: a batch size in `updates` where every curve meets the mean measured S.
    Returns:
        a matplotlib Figure with 1 Axes (log-log).
    """
    _check(noise_scales)
    updates = {b: [float(s) for s in ss] for b, ss in dict(updates).items()}
    if anchor not in updates:
        raise ValueError(f"anchor {anchor!r} must be one of the measured batch sizes {sorted(updates)}")
    for b, ss in updates.items():
        if not (isinstance(b, numbers.Real) and b > 0 and ss and all(np.isfinite(s) and s > 0 for s in ss)):
            raise ValueError(f"updates needs {{B: [S, ...]}}, all finite and > 0, got {b!r}: {ss!r}")
    s_anchor = float(np.mean(updates[anchor]))
    grid = np.geomspace(min(updates) / 1.5, max(updates) * 1.5, 200)
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    plt.close(fig)
    colors = plt.get_cmap("viridis")(np.linspace(0.15, 0.75, len(noise_scales)))
    for (label, b_noise), color in zip(noise_scales.items(), colors):
        ax.plot(grid, s_anchor * (1 + b_noise / grid) / (1 + b_noise / anchor), "-", color=color,
                label=f"{label}: {b_noise:.0f}")
    xs = [b for b, ss in updates.items() for _ in ss]
    ax.plot(xs, [s for ss in updates.values() for s in ss], "X", color="black", markersize=8, linestyle="none",
            label="trainings (one cross per seed)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("batch B (examples)")
    ax.set_ylabel("updates S to the target loss")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_title(f"Each noise scale's prediction, all pinned at the mean S(B = {anchor:g})")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize="small", title="noise scale",
              title_fontsize="small")
    return fig
