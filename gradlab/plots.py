"""Figures for the lessons. Each function takes results, draws them, and returns a Figure.

The figure is closed in pyplot before it is returned (or, for the lab, never enters
pyplot: it is drawn from a thread), so a notebook cell that ends with the call shows it
exactly once (as the cell's value), and its size and axes are fixed.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from .stats import mean_std, moving_average


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


def plot_accumulation(contributions, target):
    """An accumulator after each micro-batch, stacked from its contributions `w_i g_i`.

        acc_0 = 0,   acc_i = acc_{i-1} + w_i g_i,   acc_k = g_B (the dashed line)

    Args:
        contributions: the scalar `w_i g_i` of one gradient entry, one per micro-batch.
        target: the same entry of the large-batch gradient g_B.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/04-variable-accumulation.ipynb
    """
    parts = [float(c) for c in contributions]
    if not parts:
        raise ValueError("contributions needs at least one micro-batch, got an empty sequence")
    fig, ax = _figure(figsize=(6.4, 3.8))
    colors = _colors(len(parts))
    steps = np.arange(len(parts) + 1)
    for i, (part, color) in enumerate(zip(parts, colors)):
        below = sum(parts[:i])
        # Micro-batch i's slice sits at the same height in every bar from step i+1 on.
        ax.bar(steps[i + 1:], part, bottom=below, width=0.6, color=color, edgecolor="black",
               linewidth=0.6, label=f"micro-batch {i + 1}: $w_{i + 1} g_{i + 1}$ = {part:.4g}")
    for step, value in zip(steps, np.cumsum([0.0] + parts)):
        ax.annotate(f"{value:.4g}", (step, value), xytext=(0, 4), textcoords="offset points",
                    ha="center", va="bottom", fontsize=10, fontweight="bold")
    ax.axhline(float(target), color="crimson", linestyle="--", label=f"large batch $g_B$ = {float(target):.4g}")
    ax.set_xticks(steps, ["zero"] + [f"after {i}" for i in steps[1:]])
    ax.set_xlabel("micro-batches accumulated")
    ax.set_ylabel("accumulator value")
    ax.set_title("The accumulator adds up to the large-batch gradient")
    ax.set_ylim(min(0.0, *np.cumsum(parts)) * 1.15, max(0.0, float(target), *np.cumsum(parts)) * 1.15)
    ax.legend(loc="center left", fontsize="small")
    return fig


def plot_learning_rates(rates, accum_steps):
    """The learning rate after each update, one line per strategy, on a log2 axis.

        gradlab:  lr_k = schedule(k)            Keras's accumulation:  lr_k = schedule(N k)

    Args:
        rates: dict `{strategy name: [lr after update 1, 2, ...]}`.
        accum_steps: N, the micro-batches per update (for the title).
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/06-pitfalls.ipynb
    """
    if not rates:
        raise ValueError("rates needs at least one strategy, got an empty dict")
    fig, ax = _figure()
    for (name, lrs), color, marker in zip(rates.items(), _colors(len(rates)), "osD^v<>"):
        updates = np.arange(1, len(lrs) + 1)
        style = dict(color="crimson", linestyle="--") if name == "keras" else dict(color=color)
        ax.plot(updates, lrs, marker=marker, label=name, **style)
    ax.set_xticks(updates)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("update")
    ax.set_ylabel("learning rate after the update")
    ax.set_title(f"ExponentialDecay(1.0, 1, 0.5) with {accum_steps} micro-batches per update")
    ax.legend(fontsize="small")
    return fig


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
        groups: configurations, as `gradlab.widgets.Lab.groups`: each has `results` (one
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
    milliseconds per update and peak resident memory of each configuration.

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
        noise = [mean_std([v for v in (_finite(r.loss_noise.get("std")) for r in g.results) if v]
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
    """Milliseconds per update (bars) and peak memory (text) of each configuration."""
    rows = []
    for g, color in zip(groups, colors):
        ms = 1000 * float(np.nanmean([r.seconds_per_update for r in g.results]))
        peaks = [p for p in (_finite(getattr(r, "peak_mb", None)) for r in g.results) if p is not None]
        rows.append((getattr(g, "short", g.label), ms, max(peaks) if peaks else None, color))
    ax.set_title("Time per update · peak memory the run added", fontsize="medium")
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


_DASHES = ("-", "--", ":", "-.")


def _finite(value):
    """`value` as a float if it is a finite number, else None (JSON stores NaN as null)."""
    return float(value) if value is not None and np.isfinite(value) else None


def plot_training_loss(curves, window=51, title="Training loss per update"):
    """Training loss per update, raw (faint) and as a centred moving average, per curve.

        smooth_t = mean(loss_{t-h} ... loss_{t+h}),   h = window // 2

    The smoothed line is drawn only where the whole window fits: near the ends a shorter
    window would follow single updates and look like a trend.

    Args:
        curves: dict `{label: losses}`, e.g. `{"N = 5": result.losses}`, in legend order.
        window: moving-average width in updates.
        title: the Axes title.
    Returns:
        a matplotlib Figure with 1 Axes (log-scaled loss).

    Lesson: notebooks/03-host-averaging.ipynb
    """
    if not curves:
        raise ValueError("curves needs at least one {label: losses} entry, got an empty dict")
    fig, ax = _figure(figsize=(7.0, 4.2))
    for i, ((label, losses), color) in enumerate(zip(curves.items(), _colors(len(curves)))):
        losses = np.asarray(losses, dtype=np.float64)
        t = np.arange(1, len(losses) + 1)
        ax.plot(t, losses, color=color, alpha=0.2, linewidth=0.7)
        # Paired runs coincide: dashes keep every smoothed curve visible on top of the others.
        h = min(window, len(losses)) // 2
        inner = slice(h, len(losses) - h) if len(losses) > 2 * h else slice(None)
        ax.plot(t[inner], moving_average(losses, window)[inner], color=color, linewidth=1.8,
                linestyle=_DASHES[i % 4], label=label)
    ax.set_yscale("log")
    ax.set_xlabel("update")
    ax.set_ylabel("mean loss of the update's batch")
    ax.set_title(title)
    # An even window is centred by taking one more: 50 averages 51 updates.
    ax.legend(title=f"faint: per update; line: mean of {2 * (window // 2) + 1}", fontsize="small",
              title_fontsize="small", loc="upper right")
    return fig


def plot_accuracy(rows, reference=None):
    """Final test accuracy against the accumulation count N: mean ± std over runs.

    Args:
        rows: dicts with `accum_steps`, `micro_batch`, `updates`, `runs`, `accuracy_mean`,
            `accuracy_std` and optionally `accuracies` (one per run, drawn as dots), as the rows of
            `gradlab.experiments.table` (accuracies as fractions).
        reference: optional `{N: (micro_batch, iterations, mean, std)}` drawn beside them,
            e.g. `experiments.REFERENCE`.
    Returns:
        a matplotlib Figure with 1 Axes (accuracy in %, N on a log2 axis).

    Lesson: notebooks/03-host-averaging.ipynb
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows needs at least one row, got none")
    fig, ax = _figure(figsize=(6.4, 4.2))
    n = np.array([r["accum_steps"] for r in rows], dtype=np.float64)
    mean = 100 * np.array([r["accuracy_mean"] for r in rows])
    std = 100 * np.array([r["accuracy_std"] for r in rows])
    for x, r in zip(n, rows):
        accs = 100 * np.asarray(r.get("accuracies", []), dtype=np.float64)
        ax.plot(np.full(accs.shape, x * 0.94), accs, ".", color="grey", alpha=0.6, markersize=5)
    ax.errorbar(n, mean, yerr=std, fmt="o-", color="tab:blue", capsize=4, linewidth=1.5,
                label=f"gradlab, {rows[0]['updates']:,} updates: mean ± std of "
                      f"{rows[0]['runs']} runs (dots)")
    counts = [int(v) for v in n]
    if reference:
        ref = sorted(reference.items())
        rn = np.array([k for k, _ in ref], dtype=np.float64) * 1.06
        ax.errorbar(rn, [100 * v[2] for _, v in ref], yerr=[100 * v[3] for _, v in ref],
                    fmt="s--", color="tab:orange", capsize=4, linewidth=1.0, alpha=0.9,
                    label="reference, 1,000 updates: mean ± std of 10 runs")
        counts = sorted(set(counts) | set(reference))
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [f"{k}" for k in counts])
    ax.minorticks_off()
    ax.set_xlim(min(counts) / 1.5, max(counts) * 1.5)
    lo, hi = ax.get_ylim()
    mid = (lo + hi) / 2
    ax.set_ylim(min(lo, mid - 2.0), max(hi, mid + 2.0))  # at least 4 points tall: noise at its size
    ax.set_xlabel("accumulation count N  (micro-batch = effective batch / N)"
                  if len({r["accum_steps"] * r["micro_batch"] for r in rows}) == 1
                  else "accumulation count N")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("Accuracy against N")
    ax.legend(fontsize="small", loc="lower right")
    return fig


def plot_bench(sweep, memory="peak_mb"):
    """Seconds per update and peak memory against N, one line per strategy.

        time(N) ~ N * (dispatch + compute of one micro-batch)      for per-call strategies
        memory(N) ~ N * b  for large_batch;  ~ b, flat, for accumulation

    Left: median seconds per update (bars: the interquartile range over rounds), log
    scale. Right: peak memory of one update (each strategy measured in a fresh process);
    absent when the sweep skipped memory.

    Args:
        sweep: the dict of `gradlab.bench.run_sweep`.
        memory: `"peak_mb"` (resident memory on a CPU, tracing included) or `"tf_peak_mb"`
            (the TensorFlow allocator's peak during an update: activations and gradients).
    Returns:
        a matplotlib Figure with 2 Axes (1 without memory).

    Lesson: notebooks/05-the-lab.ipynb
    """
    if not isinstance(sweep, dict) or "accum_steps" not in sweep or "strategies" not in sweep:
        raise ValueError("plot_bench needs the dict of gradlab.bench.run_sweep (with 'accum_steps' "
                         f"and 'strategies'), got {type(sweep).__name__}")
    if memory not in ("peak_mb", "tf_peak_mb"):
        raise ValueError(f"memory must be 'peak_mb' or 'tf_peak_mb', got {memory!r}")
    ns, rows, c = sweep["accum_steps"], sweep["strategies"], sweep["config"]
    shown = c.get("memory") and any(v is not None for r in rows.values() for v in r.get(memory, []))
    fig, axes = _figure(2 if shown else 1, figsize=(11.0, 4.2) if shown else (6.4, 4.2))
    axes = list(axes) if shown else [axes]
    for (name, r), color in zip(rows.items(), _colors(len(rows))):
        med = np.array(r["ms_median"]) / 1e3
        err = [med - np.array(r["ms_q25"]) / 1e3, np.array(r["ms_q75"]) / 1e3 - med]
        axes[0].errorbar(ns, med, yerr=err, marker="o", capsize=3, color=color, label=name)
        if shown:
            mb = [np.nan if v is None else v for v in r[memory]]
            axes[1].plot(ns, mb, marker="o", color=color, label=name)
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes[0].yaxis.set_minor_locator(NullLocator())
    axes[0].set_ylabel("seconds per update (median)")
    axes[0].set_title(f"Time per update, micro-batch {c['micro_batch']} ({c['model']})")
    if shown:
        axes[1].set_ylabel("peak memory of one update (MB)")
        axes[1].set_title("Peak memory per update" + (" (TensorFlow allocator)"
                                                      if memory == "tf_peak_mb" else ""))
        axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("accumulation count N (effective batch N·b)")
        ax.legend(fontsize="small")
    return fig
