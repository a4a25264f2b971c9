"""An accumulating step's memory against its micro-batch count k, counted in gradients.

    peak / gradient   for each step and each k, against k on a log2 axis
    k                 every micro-batch's gradient alive at once (the sum can take one's buffer)
    2                 one micro-batch's gradient plus the running sum

A Python loop in a traced step unrolls into k independent backward passes that TensorFlow may
run in any order, so all k gradients can be alive before the sum takes them (the line at k);
a `tf.while_loop` with `parallel_iterations=1` runs micro-batch i + 1 after micro-batch i has
been added, so one gradient and the sum are alive (the line at 2).

Lesson: notebooks/15-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator

MARKERS = ("o", "s", "^", "D")


def plot_step_peaks(peaks, gradient_mib):
    """Each step's peak, in gradients of the weights, against k, with the lines k and 2.

    Args:
        peaks: `{step name: {k: peak in MiB}}`, one to four steps, in the order to draw.
        gradient_mib: one gradient of the weights, in MiB (> 0): the unit of the y axis.
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.
    """
    if not isinstance(gradient_mib, (int, float)) or not math.isfinite(gradient_mib) or gradient_mib <= 0:
        raise ValueError(f"gradient_mib must be a positive number of MiB, got {gradient_mib!r}")
    if not peaks or len(peaks) > len(MARKERS) or not all(isinstance(p, dict) and p for p in peaks.values()):
        raise ValueError(f"peaks needs one to {len(MARKERS)} steps, each {{k: MiB}} with at least one k, got {peaks!r}")
    ks = sorted({k for p in peaks.values() for k in p})
    if ks[0] < 1:
        raise ValueError(f"every k must be at least 1, got {ks}")
    fig, ax = plt.subplots(figsize=(6.0, 3.8), layout="constrained")
    plt.close(fig)  # owned by the caller: a cell ending with the call shows it once
    for (name, p), marker in zip(peaks.items(), MARKERS):
        k = sorted(p)
        ax.plot(k, [p[i] / gradient_mib for i in k], marker=marker, lw=4, alpha=0.45, label=name)
    # the reference lines, thin and dark on top of the wide pale steps: visible where a step follows them
    ax.plot(ks, list(ks), "--", color="black", lw=1.2, zorder=4, label="k: every micro-batch's gradient at once")
    ax.plot(ks, [2] * len(ks), ":", color="black", lw=1.8, zorder=4, label="2: one gradient and the sum")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(bottom=0)
    ax.set_xlabel("micro-batches k (batch fixed; log scale, base 2)")
    ax.set_ylabel(f"update peak, in gradients ({gradient_mib:.3f} MiB)")
    ax.set_title("An accumulating step's peak memory")
    ax.legend(fontsize="small", loc="upper left")
    return fig
