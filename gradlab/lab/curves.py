"""The lab's curves, drawn on given Axes: loss and accuracy over x, and the difference from a
large batch.

    curve(t) = mean over seeds of the moving average of loss_t     (band: ± std over seeds)
    x        = t (updates)  |  t·B (examples seen)  |  t·s (s: measured seconds per update)
    Δ(t)     = max over seeds of |loss_t - loss_t of the large batch with the same B and seed|
    legend   = the course's yardstick on those losses: "exact (3.5 spacings)" | "miss 31.8%"

A running seed is shorter than the others: each column counts only the seeds that got there.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import numpy as np

from ..studies.stats import moving_average
from ..studies.yardstick import ROUNDING, as_spacings, beyond, miss, spacings

X_LABELS = {"updates": "update",
            "examples": "examples seen (updates × B)",
            "seconds": "seconds of training (updates × measured s/update)"}
FLOOR = 1e-9  # an exact strategy can differ by 0.0 from the large batch; a log axis needs a floor


def x_of(group, updates, x):
    """Updates -> the chosen x axis, for a whole group (seconds: its mean s/update)."""
    updates = np.asarray(updates, dtype=np.float64)
    if x == "examples":
        return updates * group.results[0].config.effective_batch
    if x == "seconds":
        return updates * np.nanmean([r.seconds_per_update for r in group.results])
    return updates


def stack(rows):
    """Rows of unequal length as one array padded with NaN (a running seed is shorter)."""
    out = np.full((len(rows), max(len(r) for r in rows)), np.nan)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def mean_std(stacked):
    """`(mean, sample std, count)` over seeds at each column, counting only the seeds that
    got there."""
    count = np.sum(np.isfinite(stacked), axis=0)
    total = np.nansum(stacked, axis=0)
    mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)  # no empty-slice warning
    dev = np.nansum((stacked - mean) ** 2, axis=0)
    return mean, np.sqrt(dev / np.maximum(count - 1, 1)), count


DOTTED_ZORDER = 2.5  # above matplotlib's lines (2), below its legends and texts (3 and up)


def loss_band(ax, group, x, color, bold, window):
    """Each seed's loss (faint), and the mean over seeds of its moving average (full windows
    only: no ragged ends) with a ± std band; the line is labelled with the group."""
    half = window // 2
    smooth = []
    for r in group.results:
        losses = np.asarray(r.losses, dtype=np.float64)
        t = np.arange(1, len(losses) + 1)
        ax.plot(x_of(group, t, x), losses, color=color, alpha=0.12, linewidth=0.6)
        full = moving_average(losses, 2 * half + 1)
        full[:half], full[len(losses) - half:] = np.nan, np.nan
        smooth.append(full)
    mean, std, count = mean_std(stack(smooth))
    t = x_of(group, np.arange(1, len(mean) + 1), x)
    # a group may carry a `linestyle` (e.g. "--"), so a curve drawn under another stays visible;
    # a dotted one lies above every solid or dashed line, wherever it was drawn: a reference that the
    # others coincide with shows through them
    style = getattr(group, "linestyle", None) or "-"
    line, = ax.plot(t, mean, color=color, linewidth=2.6 if bold else 1.4, label=group.label,
                    linestyle=style, zorder=DOTTED_ZORDER if style == ":" else None)
    if len(group.results) > 1:
        ax.fill_between(t, mean - std, mean + std, where=count > 1, color=color, alpha=0.2,
                        linewidth=0)
    return line


def accuracy_band(ax, group, x, color, bold):
    """The test accuracy at each evaluation, in percent, mean ± std over seeds."""
    longest = max(group.results, key=lambda r: len(r.eval_updates))
    percent = [100 * np.asarray(r.eval_accuracy) for r in group.results]
    mean, std, count = mean_std(stack(percent))
    t = x_of(group, longest.eval_updates, x)
    ax.plot(t, mean, "o-", color=color, markersize=4, linewidth=2.6 if bold else 1.4)
    if len(group.results) > 1:
        ax.fill_between(t, mean - std, mean + std, where=count > 1, color=color, alpha=0.2,
                        linewidth=0)


def _twins(group):
    """(run, its large-batch twin) for each seed both have; a large batch is not its own twin."""
    reference = getattr(group, "reference", None) or {}
    return [(r, reference[r.config.seed]) for r in group.results
            if r.config.seed in reference and reference[r.config.seed] is not r]


def _aligned(pairs):
    """Each pair's losses over the updates both runs have, as float64: (runs', twins')."""
    return ([np.asarray(r.losses[:len(ref.losses)], np.float64) for r, ref in pairs],
            [np.asarray(ref.losses[:len(r.losses)], np.float64) for r, ref in pairs])


def reference_difference(group):
    """`(Δ per update, max Δ, Δ final accuracy)` of a configuration against its large-batch
    twin (the same B, seeds and setting), over the seeds both have; None without a twin.

        Δ_t = max over seeds |loss_t - loss_t of the large batch|
    Δ final accuracy: mean over seeds of accuracy - twin's accuracy (finished runs only).

    Lesson: notebooks/17-the-lab.ipynb
    """
    pairs = _twins(group)
    if not pairs:
        return None
    diffs = [np.abs(a - b) for a, b in zip(*_aligned(pairs))]
    delta = np.fmax.reduce(stack(diffs))  # fmax: a shorter seed's NaN padding does not count
    done = [(r, ref) for r, ref in pairs
            if len(r.losses) == r.config.updates and len(ref.losses) == ref.config.updates]
    acc = float(np.mean([r.accuracy - ref.accuracy for r, ref in done])) if done else None
    return delta, float(np.max(delta)), acc


def difference_verdict(group):
    """The course's yardstick on a configuration's losses against its twin's, every seed and
    every update both have: "exact (3.5 spacings)" within ten float32 spacings at the largest
    loss, else "miss 31.8%" (README, "Two yardsticks"); None without a twin.

    Lesson: notebooks/17-the-lab.ipynb (its prints give the same verdict on the same losses)
    """
    pairs = _twins(group)
    if not pairs:
        return None
    mine, theirs = _aligned(pairs)
    if not all(np.isfinite(v).all() for v in mine + theirs):
        return "miss (a loss is not finite)"
    k = spacings(mine, theirs)
    return f"exact ({as_spacings(k)})" if k <= ROUNDING else beyond(k, miss(mine, theirs))


def difference_text(close, acc):
    """`"exact (0 spacings, bit for bit), accuracy +0.0 pts"`: a `difference_verdict` and the accuracy
    gap of a `reference_difference`, in a legend entry."""
    return close + ("" if acc is None else f", accuracy {100 * acc:+.1f} pts")


def difference_line(ax, group, x, color, bold, found):
    """Δ(t) on a log axis (`found`: the group's `reference_difference`), floored at FLOOR."""
    delta = found[0]
    t = x_of(group, np.arange(1, len(delta) + 1), x)
    ax.plot(t, np.maximum(delta, FLOOR), color=color, linewidth=2.2 if bold else 1.2,
            linestyle=getattr(group, "linestyle", None) or "-")  # dashed as its loss line
