"""Fit steps, micro-batches and updates over epochs, one lane per run.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import numpy as np

from ._draw import figure


def fit_step_spans(rows, updates, epoch_rows=None):
    """Where a run's fit steps and updates fall, in examples seen.

    Args:
        rows: the examples each fit step took, in order (over all epochs).
        updates: the optimizer's update count (`optimizer.iterations`) after each fit step, as many as `rows`.
        epoch_rows: the examples in one epoch (None: no epochs marked).
    Returns:
        dict: "starts" and "ends", each fit step's first example and the one after its last (counted across
        epochs); "updates", the end of each fit step that made an update (one entry per update, the count
        may rise by more than one); "waiting", (first, end) of the examples seen after the last update;
        "across", (first, epoch end, end) of each update's examples (those since the update before) that
        straddle an epoch's end.

    Lesson: notebooks/10-accumulation-in-fit.ipynb
    """
    rows, updates = np.asarray(rows, dtype=np.int64), np.asarray(updates, dtype=np.int64)
    if rows.ndim != 1 or not rows.size or updates.shape != rows.shape:
        raise ValueError(f"need one update count per fit step, got {rows.shape} rows and {updates.shape} counts")
    if np.any(rows < 1) or np.any(np.diff(np.concatenate([[0], updates])) < 0):
        raise ValueError("rows must be >= 1 and the update count must never fall (nor start below 0)")
    ends = np.cumsum(rows)
    made = np.diff(np.concatenate([[0], updates]))
    update_at = np.repeat(ends, made)
    last = int(update_at[-1]) if update_at.size else 0
    across = []
    for lo, hi in zip(np.concatenate([[0], update_at[:-1]]), update_at):
        cut = (int(lo) // int(epoch_rows) + 1) * int(epoch_rows) if epoch_rows else hi
        if lo < cut < hi:
            across.append((int(lo), int(cut), int(hi)))
    return {"starts": (ends - rows).tolist(), "ends": ends.tolist(), "updates": update_at.tolist(),
            "waiting": (last, int(ends[-1])), "across": across}


def plot_fit_steps(lanes, epoch_rows, title="Fit steps (bars), micro-batches (ticks) and updates (dots)",
                   window=None):
    """One lane per run over the examples seen: each fit step a bar (each ends with one `apply` call), its
    micro-batches split by ticks, a dot where an update lands, and a short step labelled with its rows
    ("11 rows"). Examples seen after a lane's last update show as a hatched span labelled "k waiting"; an
    update whose examples straddle an epoch's end is shaded and labelled "a + b"; the dotted line is a new epoch.

    Args:
        lanes: dict label -> (rows, updates, micro): `fit_step_spans`'s rows and update counts, and the
            micro-batches inside each fit step (1: none), split as lesson 01 splits.
        epoch_rows: the examples in one epoch.
        title: the Axes title.
        window: (first, end) of the examples drawn (None: all); the legend counts the fit steps and updates
            that lie wholly inside it.
    Returns:
        a matplotlib Figure with 1 Axes; lane i is drawn at y = i (top first).

    Lesson: notebooks/10-accumulation-in-fit.ipynb
    """
    if not lanes or int(epoch_rows) < 1:
        raise ValueError(f"need at least one lane and epoch_rows >= 1, got {len(lanes)} and {epoch_rows!r}")
    from ...core.microbatch import split_sizes  # layer 1, no TensorFlow work
    fig, ax = figure((9.0, 1.0 + 0.9 * len(lanes)))
    spans = {label: fit_step_spans(rows, updates, epoch_rows) for label, (rows, updates, _) in lanes.items()}
    total = max(s["ends"][-1] for s in spans.values())
    first, last = (0, total) if window is None else (int(window[0]), int(window[1]))
    if not 0 <= first < last:
        raise ValueError(f"window must be (first, end) with 0 <= first < end, got {window!r}")
    inside = lambda a, b: first <= a and b <= last  # noqa: E731
    for lane, (label, (rows, updates, micro)) in enumerate(lanes.items()):
        span, color, full = spans[label], f"C{lane}", max(rows)
        ax.broken_barh([(lo, hi - lo) for lo, hi in zip(span["starts"], span["ends"])], (lane - 0.3, 0.6),
                       facecolors=[color if k % 2 else "white" for k in range(len(rows))], edgecolor=color, lw=0.8)
        for lo, hi, n in zip(span["starts"], span["ends"], rows):
            cuts = np.cumsum(split_sizes(int(n), int(micro)))[:-1]  # inside the step
            ax.vlines(lo + cuts, lane - 0.3, lane - 0.05, color="black", lw=0.5)
            if n < full and inside(lo, hi):  # right-aligned at its end: clear of the epoch line that follows it
                ax.annotate(f"{n} rows", (hi, lane - 0.3), (-1, 3), textcoords="offset points", ha="right",
                            va="bottom", fontsize=8, color=color)
        steps = sum(inside(lo, hi) for lo, hi in zip(span["starts"], span["ends"]))
        dots = [u for u in span["updates"] if first < u <= last]
        ax.plot(dots, [lane + 0.42] * len(dots), "o", ms=4, color=color, clip_on=False,  # whole at the edge
                label=f"{label}: {steps} fit steps, {len(dots)} updates" + (" in view" if window else ""))
        for lo, cut, hi in span["across"]:  # an update that mixes two epochs' examples
            ax.broken_barh([(lo, hi - lo)], (lane - 0.45, 0.95), facecolors=color, alpha=0.15, lw=0)
            if first <= hi < last:
                ax.annotate(f"{cut - lo} + {hi - cut}", (hi, lane + 0.42), (5, 0), textcoords="offset points",
                            ha="left", va="center", fontsize=8, color=color,
                            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=color, lw=0.8))
        lo, hi = span["waiting"]
        if hi > lo:  # hatched under the bars, its label beside the last dot: no leader line to cross
            ax.broken_barh([(lo, hi - lo)], (lane + 0.32, 0.2), facecolors="none", edgecolor=color, hatch="////",
                           lw=0.8)
            if first <= lo < last:
                ax.annotate(f"{hi - lo} waiting", (lo, lane + 0.42), (-6, 0), textcoords="offset points",
                            ha="right", va="center", fontsize=8, color=color,
                            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
    for e in range(int(epoch_rows), total, int(epoch_rows)):
        ax.axvline(e, color="grey", lw=1, ls=":")
    ax.set_yticks(range(len(lanes)), list(lanes))
    ax.set_ylim(len(lanes) - 0.4, -0.6)
    ax.set_xlim(first, min(last, total))
    ax.set_xlabel("examples seen (dotted: a new epoch)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=len(lanes))
    return fig
