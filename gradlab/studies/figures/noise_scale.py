"""The trade between updates and examples as the effective batch grows, per noise scale.

    S / S_min = 1 + B_noise / B      (updates to reach a given loss)
    E / E_min = 1 + B / B_noise      (examples to reach it)

McCandlish et al. (2018), "An Empirical Model of Large-Batch Training", arXiv:1812.06162,
with the best learning rate at each batch size; B_simple = tr(Sigma) / |g|^2 stands in for
B_noise. Below B_noise a larger batch cuts updates almost in proportion at few extra
examples; above it, it barely cuts updates and costs examples in proportion.

Like `gradlab.studies.figures.plots`, the function returns a Figure already closed in pyplot,
so a notebook cell ending with the call shows it exactly once.

Lesson: notebooks/02-batch-size-and-noise.ipynb
"""
from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import numpy as np


def _check(noise_scales, micro_batch, ks):
    if not isinstance(noise_scales, dict) or not noise_scales:
        raise ValueError(f"noise_scales needs at least one {{label: B_noise}}, got {noise_scales!r}")
    for label, value in noise_scales.items():
        if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"noise scale {label!r} must be a finite number > 0, got {value!r}")
    if isinstance(micro_batch, bool) or not isinstance(micro_batch, numbers.Integral) or micro_batch < 1:
        raise ValueError(f"micro_batch must be an integer >= 1, got {micro_batch!r}")
    ks = list(ks)
    if not ks or any(isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1 for k in ks):
        raise ValueError(f"ks must be integers >= 1, at least one, got {ks!r}")
    return sorted(int(k) for k in ks)


def plot_batch_tradeoff(noise_scales, micro_batch=32, ks=(1, 2, 4, 8, 16, 32, 64), measured=None):
    """Updates and examples needed against the effective batch B = k * micro_batch.

    Left: S / S_min; right: E / E_min, both against B on log axes, one colour per noise
    scale: the curve over B, a marker at each accumulation count k, and a dotted vertical
    line at B = B_noise, where both factors are 2. Each panel's legend names each scale and its
    value, and the dotted line. `measured` trainings are drawn on top as black crosses, so a
    reader sees which noise scale they follow.

    Args:
        noise_scales: dict `{label: B_noise}`, e.g. `{"before training": 71.0}`.
        micro_batch: examples per micro-batch.
        ks: accumulation counts to mark.
        measured: optional `{B: (S / S_min, E / E_min)}` from trainings (S_min, E_min from a fit).
    Returns:
        a matplotlib Figure with 2 Axes.
    """
    ks = _check(noise_scales, micro_batch, ks)
    measured = dict(measured or {})
    for b, pair in measured.items():
        if not (isinstance(b, numbers.Real) and b > 0 and len(pair) == 2 and all(v > 0 for v in pair)):
            raise ValueError(f"measured needs {{B: (S / S_min, E / E_min)}}, all > 0, got {b!r}: {pair!r}")
    batches = np.asarray(ks, dtype=np.float64) * micro_batch
    lo = min(batches.min(), min(noise_scales.values())) / 2
    hi = max(batches.max(), max(noise_scales.values())) * 2
    grid = np.geomspace(lo, hi, 200)
    fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(11.0, 4.0), layout="constrained")
    plt.close(fig)
    colors = plt.get_cmap("viridis")(np.linspace(0.15, 0.75, len(noise_scales)))
    for (label, b_noise), color in zip(noise_scales.items(), colors):
        for ax, factor in ((ax_s, lambda b: 1 + b_noise / b), (ax_e, lambda b: 1 + b / b_noise)):
            ax.plot(grid, factor(grid), "-", color=color, label=f"{label}: {b_noise:.0f}")
            ax.plot(batches, factor(batches), "o", color=color, markersize=5)
            ax.axvline(b_noise, color=color, linestyle=":")
    if measured:
        m_b = np.asarray(list(measured), dtype=np.float64)
        for ax, col in ((ax_s, 0), (ax_e, 1)):
            ax.plot(m_b, [pair[col] for pair in measured.values()], "X", color="black", markersize=9,
                    linestyle="none", label="trainings (measured)")
    for ax, name in ((ax_s, "updates needed, $S / S_{min}$"), (ax_e, "examples needed, $E / E_{min}$")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel(f"effective batch B = k x {micro_batch} (examples)")
        ax.set_ylabel(name)
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax_s.set_title("Fewer updates as B grows, down to $S_{min}$")
    ax_e.set_title("More examples as B grows past the noise scale")
    for ax, where in ((ax_s, "upper right"), (ax_e, "upper left")):
        handles, labels = ax.get_legend_handles_labels()
        handles.append(plt.Line2D([], [], color="black", linestyle=":"))
        labels.append("dotted: B = the noise scale")
        ax.legend(handles, labels, loc=where, fontsize="small", title="noise scale",
                  title_fontsize="small")
    return fig


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
    _check(noise_scales, 1, (1,))
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
