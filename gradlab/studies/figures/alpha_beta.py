"""Measured all-reduce times against message size, with the alpha-beta line fitted to them.

A ring all-reduce of M bytes over R replicas takes (Thakur et al., 2005; beta as bytes per second)

    t(M) = 2 (R - 1) alpha + 2 (R - 1) / R * M / beta ,

a straight line t = a + b M, so a line fitted to measured times gives

    alpha = a / (2 (R - 1)),        beta = 2 (R - 1) / (R b) .

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

import numpy as np

from ..distributed import comm_cost


def alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas):
    """alpha (µs) and beta (GiB/s) of the line `t = intercept_ms + slope_ms_per_byte * M` (the module's
    rule; `comm_cost.alpha_beta_of_line`, here refusing a line that cannot be a ring's).

    Args:
        intercept_ms: a, the line's time at M = 0 bytes, in ms.
        slope_ms_per_byte: b, ms per byte (> 0).
        replicas: R (>= 2).
    Returns:
        (alpha_us, beta_gib_per_s).
    """
    if replicas < 2 or slope_ms_per_byte <= 0:
        raise ValueError(f"need replicas >= 2 and a slope > 0, got {replicas!r} and {slope_ms_per_byte!r}")
    return comm_cost.alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas)


def plot_alpha_beta(sizes_bytes, times_ms, intercept_ms, slope_ms_per_byte, replicas):
    """Draw measured times against size on linear axes, and the line `intercept_ms + slope_ms_per_byte * M`
    from M = 0, where it meets the time axis at its intercept, 2 (R - 1) alpha.

    Args:
        sizes_bytes: the message sizes M, bytes.
        times_ms: one time per size (e.g. each size's median), ms.
        intercept_ms, slope_ms_per_byte, replicas: the fitted line and R, as `alpha_beta_of_line`.
    Returns:
        (figure, (alpha_us, beta_gib_per_s)): a Figure of one Axes, already closed in pyplot (a
        notebook cell ending with it shows it once), and the line's alpha and beta, as its title states.
    """
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    sizes, times = np.asarray(sizes_bytes, dtype=float), np.asarray(times_ms, dtype=float)
    if sizes.shape != times.shape or sizes.size < 2 or np.any(sizes <= 0):
        raise ValueError(f"one time per size, at least two sizes > 0, got {sizes_bytes!r} and {times_ms!r}")
    alpha_us, beta = alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas)
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    plt.close(fig)
    ax.plot(sizes / 2 ** 20, times, "o", color="tab:blue", label="measured (median)")
    line = np.array([0.0, sizes.max()])
    ax.plot(line / 2 ** 20, intercept_ms + slope_ms_per_byte * line, "-", color="tab:orange",
            label=f"fitted line: {intercept_ms:.2f} ms + M / ({1 / slope_ms_per_byte / 2 ** 20:.2f} MiB per ms)")
    ax.annotate(f"intercept {intercept_ms:.2f} ms = 2 (R - 1) alpha", (0, intercept_ms), textcoords="offset points",
                xytext=(8, -14), fontsize="small")
    ax.set_xlabel("message size M (MiB)")
    ax.set_ylabel("one all-reduce (ms)")
    ax.set_xlim(0, None)
    ax.set_ylim(0, None)
    ax.set_title(f"R = {replicas}: alpha = {alpha_us:.0f} µs, beta = {beta:.2f} GiB/s")
    ax.legend(loc="upper left", fontsize="small")
    return fig, (alpha_us, beta)
