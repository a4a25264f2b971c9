"""What each example counts in the combined gradient, and the miss when shards are weighed wrongly.

    weights:   example j of micro-batch i gets 1 / (k n_i) from a mean of means, 1 / B from n_i / B
    imbalance: a mean per token on R replicas weighs shard r by 1/R instead of D_r / D

Lessons: notebooks/01-why-average.ipynb, notebooks/15-fit-across-replicas.ipynb
"""
from __future__ import annotations

import numpy as np

from ._draw import figure


def plot_example_weights(sizes):
    """The weight each example gets in the combined gradient, per micro-batch: plain mean vs n_i/B.

        plain mean of the N micro-batch gradients:  (1/N) (1/n_i) = 1 / (N n_i)
        weighted by n_i/B, as the large batch:      (n_i/B) (1/n_i) = 1/B

    The large batch gives every example 1/B; the plain mean gives the examples of a small
    micro-batch more and those of a large one less. Each pair of bars is labelled with the
    plain mean's factor, (1 / (N n_i)) / (1/B) = B / (N n_i).

    Args:
        sizes: the micro-batch sizes n_1, ..., n_N (positive integers).
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/01-why-average.ipynb
    """
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) <= 0:
        raise ValueError(f"sizes needs at least one positive micro-batch size, got {sizes}")
    N, B = len(sizes), sum(sizes)
    plain = [1 / (N * n) for n in sizes]
    at = np.arange(N)
    fig, ax = figure((6.4, 3.4))
    ax.bar(at - 0.2, plain, width=0.4, color="tab:orange",
           label=f"plain mean of the {N} micro-batch gradients: 1/{N} × 1/n_i")
    ax.bar(at + 0.2, [1 / B] * N, width=0.4, color="tab:blue",
           label=f"weighted by n_i/B, as the large batch: 1/B = 1/{B}")
    for i, p in enumerate(plain):
        ax.annotate(f"x{p * B:.3g}", (i - 0.2, p), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=9)
    ax.set_xticks(at, [f"micro-batch {i + 1}\nn = {n}" for i, n in enumerate(sizes)])
    ax.set_ylabel("weight of one example")
    ax.set_ylim(0, 1.3 * max(max(plain), 1 / B))  # room above the bars for the factors and the legend
    ax.set_title(f"{' + '.join(map(str, sizes))} = {B}: what each example counts in the gradient", fontsize="medium")
    ax.legend(fontsize="small", frameon=False, loc="upper left")
    return fig


def plot_miss_against_imbalance(misses, tokens):
    """Each update's miss against its shards' token imbalance, one labelled dot per update: a mean per
    token on R replicas weighs shard r by 1/R instead of D_r/D, so the miss grows with the imbalance.

        imbalance = (max_r D_r - min_r D_r) / sum_r D_r        (|D_0 - D_1| / (D_0 + D_1) on two replicas)

    Args:
        misses: each update's miss, a fraction >= 0 (e.g. 0.041 for 4.1%).
        tokens: each update's tokens shard by shard, [D_0, D_1, ...], all > 0, as many as `misses`.
    Returns:
        a matplotlib Figure with 1 Axes: x the imbalance, y the miss in percent; each dot labelled "[D_0, D_1]".

    Lesson: notebooks/15-fit-across-replicas.ipynb
    """
    misses = np.asarray(misses, dtype=float)
    if misses.ndim != 1 or not misses.size or len(tokens) != misses.size:
        raise ValueError(f"need one miss per update and as many token lists, got {misses.size} and {len(tokens)}")
    if not np.all(np.isfinite(misses)) or np.any(misses < 0):
        raise ValueError(f"misses must be finite fractions >= 0, got {misses.tolist()}")
    shards = [np.asarray(d, dtype=float) for d in tokens]
    if any(d.ndim != 1 or d.size < 2 or np.any(d <= 0) for d in shards):
        raise ValueError("each update's tokens must list at least two shards, each > 0")
    imbalance = np.array([(d.max() - d.min()) / d.sum() for d in shards])
    fig, ax = figure((6.4, 3.4))
    ax.scatter(imbalance, 100 * misses, color="tab:blue", zorder=3)
    for i, (x_, y_, d) in enumerate(zip(imbalance, 100 * misses, shards)):
        others = [j for j in range(len(shards)) if j != i]
        near = min(others, key=lambda j: abs(imbalance[j] - x_)) if others else i
        above = y_ >= 100 * misses[near]  # the higher of two close dots labelled above, the lower below
        ax.annotate(f"[{', '.join(f'{v:g}' for v in d)}]", (x_, y_), textcoords="offset points", ha="center",
                    va="bottom" if above else "top", xytext=(0, 5 if above else -5), fontsize=8)
    ax.set_xlim(-0.1 * imbalance.max(), imbalance.max() * 1.15)
    ax.set_ylim(-0.12 * 100 * misses.max(), 100 * misses.max() * 1.2)
    ax.set_xlabel("token imbalance |D_0 − D_1| / (D_0 + D_1)", fontsize=10)
    ax.set_ylabel("miss of the update (%)", fontsize=10)
    ax.set_title("A mean per token on 2 replicas: each update's miss", fontsize=11)
    ax.grid(alpha=0.3)
    return fig
