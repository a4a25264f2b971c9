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


def _size_label(size_bytes):
    """'4 B' below 1 KiB, '16 KiB' below 1 MiB, '8 MiB' or '6.21 MiB' from it on (three digits at most)."""
    if size_bytes < 2 ** 10:
        return f"{size_bytes:.3g} B"
    return f"{size_bytes / 2 ** 10:.3g} KiB" if size_bytes < 2 ** 20 else f"{size_bytes / 2 ** 20:.3g} MiB"


def _spread_ticks(values, labels, min_share=0.06):
    """Ticks at `values` (sorted), labelled, on a log axis, dropping one whose label would crowd the last kept:
    closer than `min_share` of the axis's span (in log units) or named the same."""
    span = np.log10(max(values) / min(values)) or 1.0
    ticks, kept = [], []
    for value, label in sorted(zip(values, labels)):
        if kept and (label == kept[-1] or np.log10(value / ticks[-1]) < min_share * span):
            continue
        ticks.append(value)
        kept.append(label)
    return ticks, kept


def _time_ticks(times_ms):
    """The measured times and their labels ('1.15'), one tick per distinct label, none crowding another, for a
    log time axis."""
    return _spread_ticks(list(times_ms), [f"{t:.2f}" for t in times_ms])


def plot_alpha_beta(sizes_bytes, times_ms, intercept_ms, slope_ms_per_byte, replicas, *, log=False, held_out=None):
    """Draw measured times against size on linear axes, and the line `intercept_ms + slope_ms_per_byte * M`
    from M = 0, where it meets the time axis at its intercept, 2 (R - 1) alpha.

    With `log=True` both axes are logarithmic, so sizes that differ by 500 times are all readable; M = 0 is
    then off the axes, so the line is drawn (curved: a constant plus a proportional term) over the sizes
    measured, and its intercept as a dashed horizontal line; the x ticks name the sizes measured and the
    y ticks the times measured (two decimals), so each point reads off both axes; a tick that would crowd the
    one before it (under 6 % of the time axis apart, 12 % of the wider-labelled size axis) is left out.

    Args:
        sizes_bytes: the message sizes M, bytes.
        times_ms: one time per size (e.g. each size's median), ms.
        intercept_ms, slope_ms_per_byte, replicas: the fitted line and R, as `alpha_beta_of_line`.
        log: log-log axes instead of linear ones (needs intercept_ms > 0).
        held_out: optional (sizes, times) measured but not fitted, drawn hollow against the line (which, on
            log axes, then spans them too).
    Returns:
        (figure, (alpha_us, beta_gib_per_s)): a Figure of one Axes, already closed in pyplot (a
        notebook cell ending with it shows it once), and the line's alpha and beta, as its title states.
        The legend gives the line's slope in the title's unit, GiB/s (at R = 2 it is beta itself).
    """
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    from matplotlib import ticker
    sizes, times = np.asarray(sizes_bytes, dtype=float), np.asarray(times_ms, dtype=float)
    if sizes.shape != times.shape or sizes.size < 2 or np.any(sizes <= 0):
        raise ValueError(f"one time per size, at least two sizes > 0, got {sizes_bytes!r} and {times_ms!r}")
    held_sizes, held_times = (np.asarray(v, dtype=float) for v in (held_out or ([], [])))
    if held_sizes.shape != held_times.shape or np.any(held_sizes <= 0):
        raise ValueError(f"held_out: one time per size, sizes > 0, got {held_out!r}")
    all_sizes, all_times = np.concatenate([sizes, held_sizes]), np.concatenate([times, held_times])
    alpha_us, beta = alpha_beta_of_line(intercept_ms, slope_ms_per_byte, replicas)
    if log and (intercept_ms <= 0 or np.any(all_times <= 0)):
        raise ValueError(f"log axes need times and an intercept > 0, got {times_ms!r} and {intercept_ms!r}")
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    plt.close(fig)
    ax.plot(sizes / 2 ** 20, times, "o", color="tab:blue", label="measured (median)")
    line = np.geomspace(all_sizes.min(), all_sizes.max(), 50) if log else np.array([0.0, all_sizes.max()])
    ax.plot(line / 2 ** 20, intercept_ms + slope_ms_per_byte * line, "-", color="tab:orange",
            label=f"fitted line: {intercept_ms:.2f} ms + M / ({1000 / slope_ms_per_byte / 2 ** 30:.2f} GiB/s)")
    if held_sizes.size:
        ax.plot(held_sizes / 2 ** 20, held_times, "o", mfc="none", color="tab:red", label="held out: not fitted")
    if log:
        ax.axhline(intercept_ms, ls="--", lw=0.8, color="gray")
        ax.annotate(rf"intercept {intercept_ms:.2f} ms = $2(R-1)\alpha$", (line[0] / 2 ** 20, intercept_ms),
                    textcoords="offset points", xytext=(4, 3), ha="left", va="bottom", fontsize="small")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(*_spread_ticks(list(all_sizes / 2 ** 20), [_size_label(m) for m in all_sizes], 0.12))  # wide labels
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.set_yticks(*_time_ticks(all_times))  # the times measured, named: a short log axis has few decades
        ax.yaxis.set_minor_locator(ticker.NullLocator())
    else:
        ax.annotate(rf"intercept {intercept_ms:.2f} ms = $2(R-1)\alpha$", (0, intercept_ms),
                    textcoords="offset points", xytext=(8, -14), fontsize="small")
        ax.set_xlim(0, None)
        ax.set_ylim(0, None)
    ax.set_xlabel("message size M (log scale)" if log else "message size M (MiB)")
    ax.set_ylabel(f"one all-reduce (ms{', log scale' if log else ''})")
    ax.set_title(rf"$R$ = {replicas}: $\alpha$ = {alpha_us:.0f} µs, $\beta$ = {beta:.2f} GiB/s")
    ax.legend(loc="upper left", fontsize="small")
    return fig, (alpha_us, beta)
