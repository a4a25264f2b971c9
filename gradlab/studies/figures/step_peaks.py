"""An accumulating step's memory against its micro-batch count N, counted in gradients.

    peak / gradient   for each step and each N, against N on a log2 axis
    N                 every micro-batch's gradient alive at once (the sum can take one's buffer)
    2                 one micro-batch's gradient plus the running sum (from N = 2)

A Python loop in a traced step unrolls into N independent backward passes that TensorFlow may
run in any order, so all N gradients can be alive before the sum takes them (the line at N);
a `tf.while_loop` with `parallel_iterations=1` runs micro-batch i + 1 after micro-batch i has
been added, so one gradient and the sum are alive (the line at 2).

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator

MARKERS = ("o", "s", "^", "D")


def plot_step_peaks(peaks, gradient_mib):
    """Each step's peak, in gradients of the weights, against N, with the lines N and 2 (from N = 2).

    Args:
        peaks: `{step name: {N: peak in MiB}}`, one to four steps, in the order to draw.
        gradient_mib: one gradient of the weights, in MiB (> 0): the unit of the y axis.
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.
    """
    if not isinstance(gradient_mib, (int, float)) or not math.isfinite(gradient_mib) or gradient_mib <= 0:
        raise ValueError(f"gradient_mib must be a positive number of MiB, got {gradient_mib!r}")
    if not peaks or len(peaks) > len(MARKERS) or not all(isinstance(p, dict) and p for p in peaks.values()):
        raise ValueError(f"peaks needs one to {len(MARKERS)} steps, each {{N: MiB}} with at least one N, got {peaks!r}")
    ks = sorted({k for p in peaks.values() for k in p})
    if ks[0] < 1:
        raise ValueError(f"every N must be at least 1, got {ks}")
    fig, ax = plt.subplots(figsize=(6.0, 3.8), layout="constrained")
    plt.close(fig)  # owned by the caller: a cell ending with the call shows it once
    for (name, p), marker in zip(peaks.items(), MARKERS):
        k = sorted(p)
        ax.plot(k, [p[i] / gradient_mib for i in k], marker=marker, lw=4, alpha=0.45, label=name)
    # the reference lines, thin and dark on top of the wide pale steps: visible where a step follows them
    ax.plot(ks, list(ks), "--", color="black", lw=1.2, zorder=4, label="N: every micro-batch's gradient at once")
    looped = [k for k in ks if k >= 2]  # from N = 2: at N = 1 there is no sum beside the one gradient
    ax.plot(looped, [2] * len(looped), ":", color="black", lw=1.8, zorder=4, label="2: one gradient and the sum")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(bottom=0)
    ax.set_xlabel("micro-batches N (batch fixed; log scale, base 2)")
    ax.set_ylabel(f"update peak, in gradients ({gradient_mib:.3f} MiB)")
    ax.set_title("An accumulating step's peak memory")
    ax.legend(fontsize="small", loc="upper left")
    return fig
