"""Figures for the lessons. Each function takes results, draws them, and returns a Figure.

The figure is closed in pyplot before it is returned, so a notebook cell that ends with
the call shows it exactly once (as the cell's value), and its size and axes are fixed.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter


def _figure(ncols=1, figsize=(6.4, 4.0)):
    fig, axes = plt.subplots(1, ncols, figsize=figsize, layout="constrained")
    plt.close(fig)  # owned by the caller, not by pyplot's "show at end of cell"
    return fig, axes


def _colors(n):
    return plt.get_cmap("viridis")(np.linspace(0.0, 0.85, n))


def plot_gradient_noise(full_grad, minibatch_grads):
    """Minibatch gradients scattered around the full-batch gradient, per batch size b.

        spread(b) = mean_draws ||g_b - g||  ~  1 / sqrt(b)

    Left: every minibatch gradient projected on two directions: the full gradient g, and
    the direction in which the smallest batches scatter most (orthogonal to g).
    Right: the distance of each draw from g against b, on log-log axes, with a 1/sqrt(b)
    reference line through the smallest batch size.

    Args:
        full_grad: 1-D array, the gradient of the mean loss over the whole training set.
        minibatch_grads: dict `{b: array (draws, dim)}` of flattened minibatch gradients.
    Returns:
        a matplotlib Figure with 2 Axes.

    Lesson: notebooks/01-why-average.ipynb
    """
    full = np.asarray(full_grad, dtype=np.float64).ravel()
    sizes = sorted(minibatch_grads)
    if not sizes:
        raise ValueError("minibatch_grads needs at least one batch size, got an empty dict")
    grads = {b: np.asarray(minibatch_grads[b], dtype=np.float64).reshape(-1, full.size)
             for b in sizes}
    u1 = full / np.linalg.norm(full)
    dev = grads[sizes[0]] - full
    dev = dev - np.outer(dev @ u1, u1)
    u2 = np.linalg.svd(dev, full_matrices=False)[2][0]  # widest scatter, orthogonal to g

    fig, (ax, ax2) = _figure(2, figsize=(10.0, 4.2))
    for b, color in zip(sizes, _colors(len(sizes))):
        g = grads[b]
        ax.scatter(g @ u1, g @ u2, s=12, color=color, alpha=0.6, label=f"b = {b}")
        dist = np.linalg.norm(g - full, axis=1)
        ax2.scatter(np.full(dist.shape, b), dist, s=10, color=color, alpha=0.5)
        ax2.plot(b, dist.mean(), "o", color=color, markersize=8, markeredgecolor="black")
    ax.plot(full @ u1, 0.0, "*", color="crimson", markersize=16, markeredgecolor="black",
            label="full gradient g")
    ax.set_xlabel("component along g")
    ax.set_ylabel("component across g (widest scatter)")
    ax.set_title("Minibatch gradients around the full gradient")
    for handle in ax.legend(loc="upper right", fontsize="small").legend_handles:
        handle.set_alpha(1.0)

    means = [np.linalg.norm(grads[b] - full, axis=1).mean() for b in sizes]
    ref = means[0] * np.sqrt(sizes[0] / np.asarray(sizes, dtype=np.float64))
    ax2.plot(sizes, means, "-", color="grey", zorder=0)
    ax2.plot(sizes, ref, "--", color="crimson", label=r"$\propto 1/\sqrt{b}$")
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log", base=2)
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax2.set_xticks(sizes, [str(b) for b in sizes])
    ax2.set_xlabel("batch size b")
    ax2.set_ylabel(r"$\|g_b - g\|$")
    ax2.set_title("The spread shrinks like $1/\\sqrt{b}$")
    ax2.legend(loc="upper right", fontsize="small")
    return fig
