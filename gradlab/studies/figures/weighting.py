"""The plain mean's error against how unequal the micro-batches are, measured and predicted.

For micro-batches of sizes n_1..n_N (B = sum n_i), the plain mean weights each 1/N where the
large batch weights n_i/B:

    plain - weighted = sum_i (1/N - n_i/B) g_i

so with N - 1 micro-batches of one size and a last one of size r the error is
|1/N - r/B| times the last one's distance from the others' mean: zero at equal sizes.

Lesson: notebooks/05-host-averaging.ipynb
"""
from __future__ import annotations

import math


def plot_weighting_error(last_sizes, measured, predicted, title="the plain mean's error"):
    """Draw the measured relative error as points and the predicted one as a line.

    Args:
        last_sizes: the last micro-batch's size r, one per point, ascending.
        measured: plain_mean's relative error against the large batch's gradient, per r.
        predicted: the rule's prediction, per r.
        title: the figure's title.
    Returns:
        the matplotlib Figure, already closed in pyplot (a notebook cell ending with it shows it once).
    """
    last_sizes, measured, predicted = list(last_sizes), list(measured), list(predicted)
    if not last_sizes or not len(last_sizes) == len(measured) == len(predicted):
        raise ValueError("last_sizes, measured and predicted need one value each per point, at least one")
    if any(not math.isfinite(v) or v < 0 for v in measured + predicted):
        raise ValueError("errors must be finite and >= 0")
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, ax = plt.subplots(figsize=(6.0, 3.0), layout="constrained")
    plt.close(fig)
    ax.plot(last_sizes, predicted, color="0.5", label="predicted: |1/N - r/B| x spread")
    ax.plot(last_sizes, measured, "o", color="C3", label="measured")
    ax.set_xlabel("size r of the last micro-batch")
    ax.set_ylabel("relative error")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend(fontsize="small")
    return fig
