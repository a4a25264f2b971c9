"""What picking the best checkpoint adds: one run's accuracy at every evaluation, and each row's
gap to N = 1, paired by seed, on the evaluations every row shares.

    best of a schedule:   max over its evaluations of the test accuracy (>= final; grows with
                          the number of evaluations, whatever N)
    paired gap of row N:  mean over runs r of acc_N,r(t) - acc_1,r(t), ± t * SE as an interval

Rows whose gaps hold 0 learned alike; a gap between their best accuracies that the curves do
not show comes from picking among more evaluations. `plot_best_of_more` draws that gain against
the number of evaluations looked at, beside a model in which nothing learns.

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_checkpoint_curve(updates, curve, every=100, title=None):
    """One run's test accuracy at every evaluation, and the best of a sparser schedule's.

        best of all:     max_t curve(t)
        best of sparse:  max over updates t with t % every == 0 of curve(t)   (<= best of all)

    The same run, picked from more evaluations, reports a higher best: the gap between the two
    marked maxima is selection, not training. The axes show the top 4 points of accuracy and
    the updates from the first evaluation that reaches them.

    Args:
        updates: update count of each evaluation, e.g. `reproduction.checkpoints(20)`.
        curve: test accuracy (a fraction) at each of `updates`.
        every: the sparse schedule evaluates at multiples of `every` updates.
        title: the axes' title, e.g. naming the run; None: a generic one.
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    updates, curve = np.asarray(updates), 100 * np.asarray(curve, dtype=float)
    if updates.shape != curve.shape or updates.ndim != 1 or updates.size == 0:
        raise ValueError(f"updates and curve need one entry each per evaluation, got shapes "
                         f"{updates.shape} and {curve.shape}")
    sparse = updates % every == 0
    if not sparse.any():
        raise ValueError(f"no evaluation falls on a multiple of every={every}")
    fig, ax = plt.subplots(figsize=(8.0, 4.0), layout="constrained")
    plt.close(fig)
    ax.plot(updates, curve, "-", color="C0", linewidth=0.8, label=f"all {updates.size} evaluations")
    window = 4  # accuracy points shown below the best
    low = max(curve.min(), curve.max() - window)
    shown = updates[curve >= low]  # the early updates whose accuracy lies below the axis are cropped
    n_sparse = int(sparse.sum())
    first = updates[sparse & (updates >= shown.min())].min()  # the first sparse one the cropped axis shows
    cropped = f" (shown from update {first})" if first > updates[sparse].min() else ""
    ax.plot(updates[sparse], curve[sparse], "s", color="C1", markersize=5,
            label=f"the {n_sparse} at every {every} updates{cropped}")
    for mask, color, name in ((np.ones_like(sparse), "C0", f"best of all {updates.size}"),
                              (sparse, "C1", f"best of the {n_sparse}")):
        i = np.flatnonzero(mask)[np.argmax(curve[mask])]
        ax.axhline(curve[i], color=color, linestyle=":", linewidth=1)
        ax.plot(updates[i], curve[i], "*", color=color, markersize=14, markeredgecolor="black",
                label=f"{name}: {curve[i]:.1f}% at update {updates[i]}")
    ax.set_xlabel("update")
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(low, curve.max() + 0.5)
    best = updates[np.argmax(curve)]
    left = min(first, best)  # from the first sparse evaluation shown (or the best, if earlier)
    pad = 0.02 * max(updates.max() - left, 1)
    ax.set_xlim(left - pad, updates.max() + pad)
    ax.set_title(title or "One run, two schedules: more evaluations, a higher best")
    ax.legend(loc="best", fontsize="small")
    return fig


def plot_paired_gaps(record, t, reference=1, every=100, accum_steps=None, zoom_from=None, level=None):
    """Each row's gap to the reference row on the evaluations every row shares, paired by run.

        shared updates:  t = every, 2 every, ..., updates
        gap_r(t):        acc_N,run r(t) - acc_reference,run r(t)   (run r of each row: same seed)
        drawn:           mean over r of gap_r(t) ± t * std(ddof=1) / sqrt(runs), a 95% interval
                         when `t` is Student's 97.5% quantile at runs - 1 degrees of freedom

    Pairing removes what run r's seed (initial weights, example order) gives every row alike, so
    the interval is narrower than one from two independent rows. An interval that holds 0 is no
    evidence that N changed what run r learned at update t.

    Args:
        record: what `reproduction.grid` returns (or its JSON, loaded): rows with `accum_steps`
            and runs (as many in each row, run r of each row from the same seed) whose `curve`
            is logged at `reproduction.checkpoints(accum_steps, updates)`.
        t: the interval's multiple of the standard error (2.262: 95% with 10 runs).
        reference: the row, by its N, that every other row is paired with.
        every: the shared schedule, in updates (a multiple of each row's evaluation step).
        accum_steps: the rows to draw, by their N (default: every row but the reference).
        zoom_from: if given, a second panel redraws the updates from this one on, on its own
            axis.
        level: what the interval is, for the title ("95%" when `t` is Student's 97.5% quantile):
            "mean ± 95% interval (2.26 × SE)"; without it the title reads "mean ± 2.26 × SE".
    Returns:
        a matplotlib Figure with 1 Axes (2 with `zoom_from`), already closed in pyplot.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    from ..runs.reproduction import checkpoints

    rows = record.get("rows") if isinstance(record, dict) else None
    if not rows or "updates" not in record:
        raise ValueError(f"record needs `updates` and rows, as reproduction.grid returns, got {record!r:.80}")
    by_n = {row["accum_steps"]: row for row in rows}
    wanted = [n for n in by_n if n != reference] if accum_steps is None else list(accum_steps)
    missing = (set(wanted) | {reference}) - set(by_n)
    if missing:
        raise ValueError(f"no row with accum_steps in {sorted(missing)}")
    updates = int(record["updates"])
    shared = np.arange(every, updates + 1, every)

    def at_shared(n):  # runs x shared updates, in accuracy points
        logged = checkpoints(n, updates)
        at = [logged.index(u) for u in shared]
        return 100 * np.array([[run["curve"][k] for k in at] for run in by_n[n]["runs"]])

    base = at_shared(reference)
    panels = 1 if zoom_from is None else 2
    fig, axes = plt.subplots(1, panels, figsize=(8.0 if panels == 1 else 11.0, 4.0), layout="constrained")
    plt.close(fig)
    axes = np.atleast_1d(axes)
    for i, n in enumerate(wanted):
        acc = at_shared(n)
        if acc.shape != base.shape or len(acc) < 2:
            raise ValueError(f"row N={n}: needs as many runs as N={reference} (at least 2) to pair them")
        gap = acc - base
        mean, half = gap.mean(axis=0), t * gap.std(axis=0, ddof=1) / np.sqrt(len(gap))
        shift = (i - (len(wanted) - 1) / 2) * every * 0.08  # side by side, not on top of each other
        for j, ax in enumerate(axes):
            keep = shared >= (zoom_from if j else 0)
            ax.errorbar(shared[keep] + shift, mean[keep], yerr=half[keep], fmt="os^D"[i % 4], markersize=5,
                        capsize=3, color=f"C{i + 1}", label=f"N={n} minus N={reference}")
    for j, ax in enumerate(axes):
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xticks(shared[shared >= (zoom_from if j else 0)])
        ax.set_xlabel("update")
        ax.set_ylabel("test accuracy gap (points)")
    spread = f"{t:.2f} × SE" if level is None else f"{level} interval ({t:.2f} × SE)"
    axes[0].set_title(f"Paired gap to N = {reference} (same seed): mean ± {spread}")
    axes[0].legend(loc="upper right", frameon=False)
    if zoom_from is not None:
        axes[1].set_title(f"Zoom: updates {zoom_from:,} to {updates:,} (colours as left)")
    return fig


def plot_best_of_more(counts, gains, title="The best of more evaluations is higher"):
    """The mean best accuracy's gain as more evaluations are looked at, one line per source.

        gain(k):  mean over runs of (best of the first k evaluations) - (best of counts[0])

    A line that rises where nothing learns (fresh noise at each evaluation) shows the gain that
    picking alone gives; a run's line beside it shows how much of its gain that explains.

    Args:
        counts: evaluations looked at, increasing and positive, e.g. (11, 21, 51, 101, 201):
            the x axis, logarithmic, with these as its ticks.
        gains: {label: one gain per count, in accuracy points}, drawn in order with markers
            o, s, D, ^ and solid, dashed, dash-dot, dotted lines.
    Returns:
        a matplotlib Figure, 7 x 3.5 inches, with 1 Axes, already closed in pyplot.
    Raises:
        ValueError: no counts, counts not increasing or not positive, no gains, or a line
            whose gains are not one per count.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    counts = np.asarray(counts)
    gains = {label: np.asarray(values, dtype=float) for label, values in dict(gains).items()}
    if counts.ndim != 1 or counts.size == 0 or counts.min() <= 0 or np.any(np.diff(counts) <= 0):
        raise ValueError(f"counts must be positive and increasing, got {counts.tolist()}")
    if not gains:
        raise ValueError("plot_best_of_more needs at least one line of gains, got none")
    for label, values in gains.items():
        if values.shape != counts.shape:
            raise ValueError(f"line {label!r}: {values.size} gains for {counts.size} counts")
    fig, ax = plt.subplots(figsize=(7.0, 3.5), layout="constrained")
    plt.close(fig)
    for i, (label, values) in enumerate(gains.items()):
        ax.plot(counts, values, "osD^"[i % 4] + ("-", "--", "-.", ":")[i % 4], label=label)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.set(xlabel="evaluations looked at", ylabel=f"mean best of them - best of {counts[0]} (points)", title=title)
    ax.legend(frameon=False)
    return fig
