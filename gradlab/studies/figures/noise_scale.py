"""The trade between updates and examples as the effective batch grows, per noise scale.

    S / S_min = 1 + B_noise / B      (updates to reach a given loss)
    E / E_min = 1 + B / B_noise      (examples to reach it)

McCandlish et al. (2018), "An Empirical Model of Large-Batch Training", arXiv:1812.06162,
with the best learning rate at each batch size; B_simple = tr(Sigma) / |g|^2 stands in for
B_noise. Below B_noise a larger batch cuts updates almost in proportion at few extra
examples; above it, it barely cuts updates and costs examples in proportion.

Like `gradlab.studies.figures.plots`, `plot_updates_examples` returns a Figure already closed in
pyplot, so a notebook cell ending with the call shows it exactly once.

Lesson: notebooks/02-batch-size-and-noise.ipynb
"""
from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np


def _check(noise_scales):
    if not isinstance(noise_scales, dict) or not noise_scales:
        raise ValueError(f"noise_scales needs at least one {{label: B_noise}}, got {noise_scales!r}")
    for label, value in noise_scales.items():
        if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"noise scale {label!r} must be a finite number > 0, got {value!r}")


def plot_updates_examples(updates, b_crit, anchor, held_out, noise_scales):
    """Each seed's trainings against its own fitted model: S against B, and S against E = B S.

        S(B) = S_min (1 + B_crit / B),   S_min = S(anchor) / (1 + B_crit / anchor)
        E(B) = B S(B) = E_min (1 + B / B_crit),   E_min = S_min B_crit
        so   (S / S_min - 1)(E / E_min - 1) = 1,   with the knee (2 E_min, 2 S_min) at B = B_crit

    Left: each seed's crosses and curve, and for each noise scale the S(held_out) it predicts from
    that seed's S(anchor) (hollow markers). Right: each seed's crosses at (B S, S) on its hyperbola
    (McCandlish et al. 2018, Fig. 1), its knee circled. One colour per seed; each seed's crosses
    are shifted sideways by a factor 2^(0.12 (i - (n-1)/2)), i its place, so tied counts stay visible.

    Args:
        updates: dict `{seed: {B: S}}`, the fewest updates each seed took at batch B, all > 0;
            every seed measured at `anchor` and `held_out`.
        b_crit: dict `{seed: B_crit}`, each seed's fitted critical batch, > 0.
        anchor: the batch size where each seed's curves meet its measured S.
        held_out: the batch size each noise scale predicts.
        noise_scales: dict `{label: B_noise}`, each > 0 (at most 3).
    Returns:
        a matplotlib Figure with 2 Axes (log-log), already closed in pyplot.
    """
    _check(noise_scales)
    if len(noise_scales) > 3:
        raise ValueError(f"at most 3 noise scales, got {len(noise_scales)}")
    if set(updates) != set(b_crit) or not updates:
        raise ValueError(f"updates and b_crit need the same seeds, got {sorted(updates)} and {sorted(b_crit)}")
    for seed, runs in updates.items():
        if not (anchor in runs and held_out in runs):
            raise ValueError(f"seed {seed!r} needs updates at anchor {anchor!r} and held_out {held_out!r}")
        if not all(isinstance(b, numbers.Real) and b > 0 and np.isfinite(s) and s > 0 for b, s in runs.items()):
            raise ValueError(f"updates of seed {seed!r} must be finite and > 0, got {runs!r}")
        if not (isinstance(b_crit[seed], numbers.Real) and np.isfinite(b_crit[seed]) and b_crit[seed] > 0):
            raise ValueError(f"b_crit of seed {seed!r} must be a finite number > 0, got {b_crit[seed]!r}")
    sizes = sorted({b for runs in updates.values() for b in runs})
    grid = np.geomspace(sizes[0] / 1.5, sizes[-1] * 1.5, 200)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    plt.close(fig)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.8, len(updates)))
    markers = ("o", "s", "^")
    n = len(updates)
    for i, ((seed, runs), color) in enumerate(zip(updates.items(), colors)):
        shift = 2 ** (0.12 * (i - (n - 1) / 2))
        bc = float(b_crit[seed])
        s_min = runs[anchor] / (1 + bc / anchor)
        e_min = s_min * bc
        bs = sorted(runs)
        left.plot(grid, s_min * (1 + bc / grid), "-", color=color, linewidth=1.2)
        left.plot([b * shift for b in bs], [runs[b] for b in bs], "X", color=color, markersize=8,
                  label=f"seed {seed}: B_crit = {bc:.0f}")
        for (label, b_noise), marker in zip(noise_scales.items(), markers):
            left.plot([held_out * shift], [runs[anchor] * (1 + b_noise / held_out) / (1 + b_noise / anchor)],
                      marker, color=color, markerfacecolor="none", markersize=8)
        right.plot(e_min * (1 + grid / bc), s_min * (1 + bc / grid), "-", color=color, linewidth=1.2)
        right.plot([b * runs[b] * shift for b in bs], [runs[b] for b in bs], "X", color=color, markersize=8,
                   label=f"seed {seed}")
        right.plot([2 * e_min], [2 * s_min], "o", color=color, markerfacecolor="none", markersize=14)
    for b in sizes:  # name each batch size once, beside its crosses
        first = updates[next(iter(updates))]
        if b in first:
            right.annotate(f"B = {b:g}", (b * first[b], first[b]), textcoords="offset points", xytext=(8, 8),
                           fontsize="small")
    proxies = [plt.Line2D([], [], color="black", marker="X", linestyle="-", label="measured; line: fit")]
    proxies += [plt.Line2D([], [], color="black", marker=m, markerfacecolor="none", linestyle="none",
                           label=f"S({held_out:g}) from S({anchor:g}) by {label}: {b_noise:.0f}")
                for (label, b_noise), m in zip(noise_scales.items(), markers)]
    seeds = left.legend(loc="upper right", fontsize="small")
    left.add_artist(seeds)
    left.legend(handles=proxies, loc="lower left", fontsize="small")
    right.legend(handles=[plt.Line2D([], [], color="black", marker="o", markerfacecolor="none", markersize=10,
                                     linestyle="none", label="knee: B = B_crit, 2 S_min, 2 E_min")],
                 loc="upper right", fontsize="small")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_locator(ticker.LogLocator(base=2, subs=(1.0, 1.25, 1.5, 1.75)))
        ax.yaxis.set_minor_locator(ticker.NullLocator())
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("updates S to the target loss")
    left.set_xlabel("batch B (examples; each seed's crosses shifted sideways)")
    right.set_xlabel("examples E = B S")
    left.set_title(f"Each seed's fit, and S({held_out:g}) predicted from its S({anchor:g})", fontsize="medium")
    right.set_title("Updates against examples: each seed's hyperbola", fontsize="medium")
    return fig
