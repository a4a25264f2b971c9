"""The lab's figures: curves over updates, examples or seconds, and results against the batch.

    curve(t) = mean over seeds of the moving average of loss_t     (band: ± std over seeds)
    x        = t (updates)  |  t·B (examples seen)  |  t·s (s: measured seconds per update)

Drawn from the lab's thread, so the figures never enter pyplot (`matplotlib.figure.Figure`);
`gradlab.lab.widgets.Lab` shows them as PNGs replaced in place.

Lesson: notebooks/05-the-lab.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from ..studies.plots import finite
from ..studies.stats import mean_std, moving_average

X_AXES = ("updates", "examples", "seconds")
_X_LABELS = {"updates": "update",
             "examples": "examples seen (updates × B)",
             "seconds": "seconds of training (updates × measured s/update)"}
_FLOOR = 1e-9  # an exact strategy can differ by 0.0 from the large batch; a log axis needs a floor


def plot_lab(groups, x="updates", current=None, window=15):
    """The lab's curves: every configuration shown, each over its seeds, against x.

        curve(t) = mean over seeds of the moving average of loss_t     (band: ± std over seeds)
        x        = t (updates)  |  t·B (examples seen)  |  t·s (s: measured seconds per update)
        Δ(t)     = max over seeds of |loss_t - loss_t of the large batch with the same B and seed|

    Left: the training loss; middle: the test accuracy; right: Δ on a log scale, where an
    exact strategy sits at float rounding (1e-7) and a failure mode far above it, with the
    largest Δ and the change of final accuracy in the legend. `plot_lab_batches` draws the
    same groups against the effective batch.

    Args:
        groups: configurations, as `gradlab.lab.widgets.Lab.groups`: each has `results` (one
            RunResult per seed; a running one may be partial), `label`, and optionally
            `color` and `reference` (`{seed: RunResult}` of its large-batch twin).
        x: "updates", "examples" or "seconds".
        current: index in `groups` of the configuration to draw bold.
        window: moving-average width in updates (full windows only: no ragged ends).
    Returns:
        a matplotlib Figure with 3 Axes.

    Lesson: notebooks/05-the-lab.ipynb
    """
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}; got {x!r}")
    fig, (ax_loss, ax_acc, ax_diff) = _lab_figure()
    palette = plt.get_cmap("tab10").colors
    for i, g in enumerate(groups):
        if not g.results:
            continue
        color = getattr(g, "color", None) or palette[i % 10]
        bold = i == current
        _loss_band(ax_loss, g, x, color, bold, window)
        _accuracy_band(ax_acc, g, x, color, bold)
        _difference(ax_diff, g, x, color, bold)
    if ax_loss.lines:
        ax_loss.legend(fontsize="x-small", loc="upper right")
    else:
        for ax in (ax_loss, ax_acc):
            ax.text(0.5, 0.5, "press Run", transform=ax.transAxes, ha="center", va="center",
                    color="grey", fontsize="large")
    for ax in (ax_loss, ax_acc, ax_diff):
        ax.set_xlabel(_X_LABELS[x])
    ax_loss.set_ylabel("training loss of the update's batch")
    ax_loss.set_title(f"Training loss (mean of {2 * (window // 2) + 1} updates; band ± std over seeds)",
                      fontsize="medium")
    ax_acc.set_ylabel("test accuracy")
    ax_acc.set_title("Test accuracy while training (band ± std over seeds)", fontsize="medium")
    ax_diff.set_yscale("log")
    ax_diff.set_ylabel("|loss - loss of the large batch|")
    ax_diff.set_title("Difference from one large batch (same B, seed)", fontsize="medium")
    if ax_diff.lines:
        ax_diff.legend(fontsize="x-small", loc="center right")
    else:
        ax_diff.text(0.5, 0.5, "run large_batch with the same B\n(or press Measure)",
                     transform=ax_diff.transAxes, ha="center", va="center", color="grey")
    return fig


def plot_lab_batches(groups):
    """The lab's summary: the finished configurations against the effective batch B = N·b.

    Left: final test accuracy; middle: loss noise (the std of the loss around its moving
    average), mean ± std over seeds, one colour per family: a fixed micro-batch b (B grows
    with N; circles joined by a line) or a fixed B (only N varies; open squares, which
    coincide when accumulation is exact), within one setting. Each fixed-b family's noise
    gets its least-squares log-log slope (dashed): measured, not a law assumed. Right:
    milliseconds per update and the allocator peak of each configuration (`run_memory`).

    Args:
        groups: as in `plot_lab`; unfinished ones are left out.
    Returns:
        a matplotlib Figure with 3 Axes.

    Lesson: notebooks/05-the-lab.ipynb
    """
    fig, (ax_acc, ax_noise, ax_cost) = _lab_figure()
    palette = plt.get_cmap("tab10").colors
    colors = {id(g): getattr(g, "color", None) or palette[i % 10] for i, g in enumerate(groups)}
    groups = [g for g in groups if g.results and _finished(g)]
    _against_batch(ax_acc, ax_noise, groups)
    _cost(ax_cost, groups, [colors[id(g)] for g in groups])
    return fig


def _lab_figure():
    # A fixed layout, not "constrained": the lab redraws while it trains, and the layout
    # solver would double the time of every draw.
    fig = Figure(figsize=(14.0, 4.4))
    axes = fig.subplots(1, 3)
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.12, top=0.9, wspace=0.25)
    return fig, axes


def _finished(group):
    return all(len(r.losses) == r.config.updates for r in group.results)


def _x_of(group, updates, x):
    """Updates -> the chosen x axis, for a whole group (seconds: its mean s/update)."""
    updates = np.asarray(updates, dtype=np.float64)
    if x == "examples":
        return updates * group.results[0].config.effective_batch
    if x == "seconds":
        return updates * np.nanmean([r.seconds_per_update for r in group.results])
    return updates


def _stack(rows):
    """Rows of unequal length as one array padded with NaN (a running seed is shorter)."""
    out = np.full((len(rows), max(len(r) for r in rows)), np.nan)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def _mean_std(stack):
    """Mean and sample std over seeds at each column, counting only the seeds that got there."""
    count = np.sum(np.isfinite(stack), axis=0)
    total = np.nansum(stack, axis=0)
    mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)  # no empty-slice warning
    dev = np.nansum((stack - mean) ** 2, axis=0)
    return mean, np.sqrt(dev / np.maximum(count - 1, 1)), count


def _loss_band(ax, group, x, color, bold, window):
    half = window // 2
    smooth = []
    for r in group.results:
        losses = np.asarray(r.losses, dtype=np.float64)
        t = np.arange(1, len(losses) + 1)
        ax.plot(_x_of(group, t, x), losses, color=color, alpha=0.12, linewidth=0.6)
        full = moving_average(losses, 2 * half + 1)
        full[:half], full[len(losses) - half:] = np.nan, np.nan  # full windows only
        smooth.append(full)
    mean, std, count = _mean_std(_stack(smooth))
    t = _x_of(group, np.arange(1, len(mean) + 1), x)
    ax.plot(t, mean, color=color, linewidth=2.6 if bold else 1.4, label=group.label)
    if len(group.results) > 1:
        ax.fill_between(t, mean - std, mean + std, where=count > 1, color=color, alpha=0.2,
                        linewidth=0)


def _accuracy_band(ax, group, x, color, bold):
    longest = max(group.results, key=lambda r: len(r.eval_updates))
    mean, std, count = _mean_std(_stack([np.asarray(r.eval_accuracy) for r in group.results]))
    t = _x_of(group, longest.eval_updates, x)
    ax.plot(t, mean, "o-", color=color, markersize=4, linewidth=2.6 if bold else 1.4)
    if len(group.results) > 1:
        ax.fill_between(t, mean - std, mean + std, where=count > 1, color=color, alpha=0.2,
                        linewidth=0)


def reference_difference(group):
    """`(Δ per update, max Δ, Δ final accuracy)` of a configuration against its large-batch
    twin (the same B, seeds and setting), over the seeds both have; None without a twin.

        Δ_t = max over seeds |loss_t - loss_t of the large batch|
    Δ final accuracy: mean over seeds of accuracy - twin's accuracy (finished runs only).
    """
    reference = getattr(group, "reference", None) or {}
    pairs = [(r, reference[r.config.seed]) for r in group.results
             if r.config.seed in reference and reference[r.config.seed] is not r]
    if not pairs:
        return None
    diffs = [np.abs(np.asarray(r.losses[:len(ref.losses)], np.float64)
                    - np.asarray(ref.losses[:len(r.losses)], np.float64)) for r, ref in pairs]
    delta = np.max(_stack(diffs), axis=0) if len(diffs) == 1 else np.fmax.reduce(_stack(diffs))
    done = [(r, ref) for r, ref in pairs
            if len(r.losses) == r.config.updates and len(ref.losses) == ref.config.updates]
    acc = float(np.mean([r.accuracy - ref.accuracy for r, ref in done])) if done else None
    return delta, float(np.max(delta)), acc


def _difference(ax, group, x, color, bold):
    found = reference_difference(group)
    if found is None:
        return
    delta, worst, acc = found
    t = _x_of(group, np.arange(1, len(delta) + 1), x)
    label = f"{group.label}: max {worst:.1g}"
    if acc is not None:
        label += f", accuracy {100 * acc:+.1f} pts"
    ax.plot(t, np.maximum(delta, _FLOOR), color=color, linewidth=2.2 if bold else 1.2, label=label)


def setting_tag(config):
    """`""` for a plain run, else a short name of its setting: `", cosine lr"`, `", BN window"`."""
    get = lambda name, default: getattr(config, name, default)  # noqa: E731
    tags = []
    if get("short_by", 0):
        tags.append(f"uneven (B = N·b - {config.short_by})")
    if get("schedule", "constant") != "constant":
        tags.append(f"{config.schedule} lr")
    if get("batchnorm", None) is not None:
        tags.append(f"BN {'per update' if config.batchnorm == 'window' else 'per micro-batch'}")
    if get("clip_norm", None) is not None:
        tags.append(f"clip {'each micro-batch' if config.clip == 'micro' else 'once'}")
    return "".join(", " + t for t in tags)


def _short(config):
    return f"{config.strategy} N={config.accum_steps}"


def _setting(config):
    """What a family shares besides N, b and B: everything that changes the learning."""
    d = config.to_dict()
    for k in ("strategy", "accum_steps", "micro_batch", "seed"):
        d.pop(k, None)
    return tuple(sorted((k, str(v)) for k, v in d.items()))


def _families(groups):
    """`[(kind, value, [groups])]`: fixed-b families (>= 2 values of B) and fixed-B families
    (>= 2 values of N), each within one setting; then the groups in neither."""
    fams, member = [], set()
    for kind, key in (("b", lambda c: c.micro_batch), ("B", lambda c: c.effective_batch)):
        split = {}
        for i, g in enumerate(groups):
            c = g.results[0].config
            split.setdefault((key(c), _setting(c)), []).append(i)
        for (value, _), idx in split.items():
            other = (lambda c: c.effective_batch) if kind == "b" else (lambda c: c.accum_steps)
            if len({other(groups[i].results[0].config) for i in idx}) >= 2:
                fams.append((kind, value, [groups[i] for i in idx]))
                member.update(idx)
    rest = [g for i, g in enumerate(groups) if i not in member]
    if rest:
        fams.append(("other", None, rest))
    return fams


def _against_batch(ax_acc, ax_noise, groups):
    colors = plt.get_cmap("Dark2").colors
    batches = set()
    for k, (kind, value, members) in enumerate(_families(groups)):
        color = "grey" if kind == "other" else colors[k % len(colors)]
        members = sorted(members, key=lambda g: (g.results[0].config.effective_batch,
                                                 g.results[0].config.accum_steps))
        B = np.array([g.results[0].config.effective_batch for g in members], dtype=np.float64)
        batches.update(int(v) for v in B)
        acc = [mean_std([r.accuracy for r in g.results]) for g in members]
        noise = [mean_std([v for v in (finite(r.loss_noise.get("std")) for r in g.results) if v]
                          or [np.nan]) for g in members]
        names = ", ".join(_short(g.results[0].config) for g in members)
        tag = setting_tag(members[0].results[0].config)
        if kind == "b":
            label, style = f"fixed b = {value}{tag}: {names}", dict(fmt="o-")
        elif kind == "B":
            label, style = f"fixed B = {value}{tag}: {names}", \
                dict(fmt="s", markerfacecolor="none", markersize=10, markeredgewidth=1.6)
        else:
            label, style = "other runs", dict(fmt="D", alpha=0.7)
        ax_acc.errorbar(B, [m for m, _ in acc], yerr=[s for _, s in acc], color=color,
                        capsize=3, label=label, **style)
        mean_noise = np.array([m for m, _ in noise])
        ok = np.isfinite(mean_noise) & (mean_noise > 0)
        if kind == "b" and len(set(B[ok])) >= 2:  # fitted, not a law: say the slope
            slope, logc = np.polyfit(np.log(B[ok]), np.log(mean_noise[ok]), 1)
            grid = np.geomspace(B[ok].min(), B[ok].max(), 20)
            ax_noise.plot(grid, np.exp(logc) * grid ** slope, "--", color=color, linewidth=1)
            label += f" (fitted slope {slope:+.2f})"
        if ok.any():
            ax_noise.errorbar(B[ok], mean_noise[ok], yerr=np.array([s for _, s in noise])[ok],
                              color=color, capsize=3, label=label, **style)
        if kind == "B":  # same B, one x: say which point is which, and which coincide
            _name_points(ax_acc, B[0], [m for m, _ in acc], members, color)
            _name_points(ax_noise, B[0], list(mean_noise), members, color)
    for ax in (ax_acc, ax_noise):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("effective batch B = N·b")
        if batches:
            ticks = sorted(batches)
            ax.set_xticks(ticks, [str(b) for b in ticks])
            ax.set_xlim(min(ticks) / 1.5, max(ticks) * 1.5)
        ax.xaxis.set_minor_locator(NullLocator())
    ax_noise.set_yscale("log")
    ax_acc.set_ylabel("final test accuracy")
    ax_acc.set_title("Final test accuracy against B (± std over seeds)", fontsize="medium")
    ax_noise.set_ylabel("std of the loss around its moving average")
    ax_noise.set_title("Loss noise against B (dashed: least-squares fit;\n"
                       "a 1/sqrt(B) law would have slope -0.50)", fontsize="medium")
    # Accuracy rises with B and noise falls: these corners stay free.
    for ax, corner in ((ax_acc, "lower right"), (ax_noise, "upper right")):
        if ax.lines or ax.collections:
            ax.legend(fontsize="xx-small", loc=corner)


def _name_points(ax, x, values, members, color):
    """Label points at one x by their runs; runs within 0.1% of each other share a label."""
    seen = []
    for v, g in zip(values, members):
        if not np.isfinite(v):
            continue
        for entry in seen:
            if abs(entry[0] - v) <= 1e-3 * abs(v):
                entry[1].append(_short(g.results[0].config))
                break
        else:
            seen.append((v, [_short(g.results[0].config)]))
    for v, names in seen:
        ax.annotate(" = ".join(names), (x, v), xytext=(8, 0), textcoords="offset points",
                    va="center", fontsize="xx-small", color=color)


def _cost(ax, groups, colors):
    """Milliseconds per update (bars) and, once measured, the allocator peak of a fresh
    process for the configuration's settings (text; `run_memory`): the same whatever ran
    before it, unlike the memory a run adds to a long-lived kernel."""
    rows = []
    for g, color in zip(groups, colors):
        ms = 1000 * float(np.nanmean([r.seconds_per_update for r in g.results]))
        rows.append((getattr(g, "short", g.label), ms, finite(getattr(g, "peak_mb", None)), color))
    ax.set_title("Time per update · allocator peak (fresh process)", fontsize="medium")
    if not rows:
        ax.text(0.5, 0.5, "no finished runs yet", transform=ax.transAxes, ha="center",
                va="center", color="grey")
        ax.set_yticks([])
        return
    y = np.arange(len(rows))[::-1]
    ax.barh(y, [r[1] for r in rows], color=[r[3] for r in rows], alpha=0.35, height=0.8)
    for yi, (name, ms, mb, _) in zip(y, rows):
        text = f"{name}:  {ms:.1f} ms" + ("" if mb is None else f" · {mb:.0f} MB")
        ax.text(0.01, yi, text, va="center", fontsize="x-small", transform=ax.get_yaxis_transform())
    ax.set_yticks([])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(0, max(r[1] for r in rows) * 1.1)
    ax.set_xlabel("milliseconds per update (mean over seeds)")
