"""The trade between updates and examples as the effective batch grows, per noise scale.

    S / S_min = 1 + B_noise / B      (updates to reach a given loss)
    E / E_min = 1 + B / B_noise      (examples to reach it)

McCandlish et al. (2018), "An Empirical Model of Large-Batch Training", arXiv:1812.06162,
with the best learning rate at each batch size; B_simple = tr(Sigma) / |g|^2 stands in for
B_noise. Below B_noise a larger batch cuts updates almost in proportion at few extra
examples; above it, it barely cuts updates and costs examples in proportion.

Like `gradlab.studies.figures.plots`, `plot_critical_batch` returns a Figure already closed in
pyplot, so a notebook cell ending with the call shows it exactly once.

Lessons: notebooks/18-batch-size-and-noise.ipynb (`plot_progress`, `plot_noise_scale_tracking`),
notebooks/19-critical-batch.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np


def fit_critical_batch(updates):
    """The least-squares fit of S = S_min (1 + B_crit / B) to every (B, S) measured.

        S = S_min + (S_min B_crit) / B  is a line in 1/B:  intercept S_min, slope S_min B_crit

    Args:
        updates: dict `{seed: {B: S}}`, the fewest updates each seed took at batch B, all > 0;
            at least two distinct B in all.
    Returns:
        `(s_min, b_crit)`, both floats.
    """
    points = [(b, s) for runs in updates.values() for b, s in runs.items()]
    if len({b for b, _ in points}) < 2 or not all(b > 0 and np.isfinite(s) and s > 0 for b, s in points):
        raise ValueError(f"updates need finite S > 0 at two or more batch sizes B > 0, got {updates!r}")
    slope, s_min = np.polyfit([1 / b for b, _ in points], [s for _, s in points], 1)
    if s_min <= 0 or slope <= 0:
        raise ValueError(f"the fit gives S_min = {s_min:.3g}, slope {slope:.3g}: S must fall with B")
    return float(s_min), float(slope / s_min)


SEED_MARKERS = ("o", "s", "^", "D", "v")  # plot_critical_batch: one open marker shape per seed, in order


def plot_critical_batch(updates, s_min, b_crit, clear_knee=False):
    """Every training against one fitted model: S against B, and S against E = B S.

        S(B) = S_min (1 + B_crit / B),   E(B) = B S(B) = E_min (1 + B / B_crit),   E_min = S_min B_crit
        so   (S / S_min - 1)(E / E_min - 1) = 1,   with the knee (2 E_min, 2 S_min) at B = B_crit

    Left: the measured S per seed and the fitted S(B), with S_min and B_crit marked.
    Right: the same trainings at their measured (E, S) on the fitted hyperbola (McCandlish et al.
    2018, Fig. 1), the knee circled. Nothing is shifted: each seed has its own open marker shape
    (`SEED_MARKERS`, in order), so tied counts stay visible.

    Args:
        updates: dict `{seed: {B: S}}`, the fewest updates each seed took at batch B, all > 0.
        s_min, b_crit: the fitted model (`fit_critical_batch`), both > 0.
        clear_knee: if True, a batch-size label whose training lies within a factor 2^0.5 of the knee
            (in both E and S) is written above-right of its cross, clear of the knee's circle
            (False: every label below its cross, as before).
    Returns:
        a matplotlib Figure with 2 Axes (log-log), already closed in pyplot.
    """
    if not (np.isfinite(s_min) and s_min > 0 and np.isfinite(b_crit) and b_crit > 0):
        raise ValueError(f"s_min and b_crit must be finite numbers > 0, got {s_min!r}, {b_crit!r}")
    if not updates or not all(b > 0 and np.isfinite(s) and s > 0 for r in updates.values() for b, s in r.items()):
        raise ValueError(f"updates must be finite and > 0, got {updates!r}")
    sizes = sorted({b for runs in updates.values() for b in runs})
    grid = np.geomspace(min(sizes[0], b_crit) / 1.5, sizes[-1] * 1.5, 200)
    e_min = s_min * b_crit
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    plt.close(fig)
    left.plot(grid, s_min * (1 + b_crit / grid), "-", color="black", linewidth=1.2,
              label=f"fit: S = {s_min:.1f} (1 + {b_crit:.0f} / B)")
    right.plot(e_min * (1 + grid / b_crit), s_min * (1 + b_crit / grid), "-", color="black", linewidth=1.2,
               label="fit: (S/S_min - 1)(E/E_min - 1) = 1")
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.8, len(updates)))
    for i, ((seed, runs), color) in enumerate(zip(updates.items(), colors)):
        bs, marker = sorted(runs), SEED_MARKERS[i % len(SEED_MARKERS)]
        style = dict(color=color, marker=marker, markersize=9 - i, markerfacecolor="none", markeredgewidth=1.5,
                     linestyle="none", label=f"seed {seed}")
        left.plot(bs, [runs[b] for b in bs], **style)
        right.plot([b * runs[b] for b in bs], [runs[b] for b in bs], **style)
    left.axhline(s_min, color="grey", linestyle=":", label=f"S_min = {s_min:.1f}")
    left.axvline(b_crit, color="crimson", linestyle="--", label=f"B_crit = {b_crit:.0f}")
    right.plot([2 * e_min], [2 * s_min], "o", color="crimson", markerfacecolor="none", markersize=14,
               label=f"knee: B = B_crit, 2 S_min = {2 * s_min:.0f}, 2 E_min = {2 * e_min:,.0f}")
    first = updates[next(iter(updates))]
    for b in sorted(first):  # name each batch size once, below its crosses
        near = abs(np.log2(b * first[b] / (2 * e_min))) < 0.5 and abs(np.log2(first[b] / (2 * s_min))) < 0.5
        offset = (12, 12) if clear_knee and near else (-10, -16)
        right.annotate(f"B = {b:g}", (b * first[b], first[b]), textcoords="offset points", xytext=offset,
                       fontsize="small")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_locator(ticker.LogLocator(base=2, subs=(1.0, 1.25, 1.5, 1.75)))
        ax.yaxis.set_minor_locator(ticker.NullLocator())
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("updates S to the target loss")
        ax.legend(loc="upper right", fontsize="small")
    left.set_xlabel("batch B")
    right.set_xlabel("examples E = B S")
    left.set_title("Fewer updates as B grows, down to S_min", fontsize="medium")
    right.set_title("Updates against examples: one hyperbola", fontsize="medium")
    return fig


def plot_critical_batch_by_target(by_target):
    """The fitted model at several target losses: S against B per target, and B_crit against the target.

        at each target t:  S_t(B) = S_min,t (1 + B_crit,t / B),  fitted to every seed (`fit_critical_batch`)

    Left: the updates S each seed took (one colour per target, one marker shape per seed: circle, square,
    triangle, ... in the order of `by_target`'s seeds) and each target's fitted curve, its B_crit marked by a
    dashed line; the y axis ticked at 2^n and 1.5 x 2^n (..., 24, 32, 48, 64, 96, 128, ...). Right: B_crit against the target loss, the x axis reversed so that
    training runs left to right: the fit over all seeds (line, labelled) and each seed's own fit (dots).
    McCandlish et al. (2018, Fig. 5) find B_crit growing as the loss falls.

    Args:
        by_target: dict `{target: {seed: {B: S}}}`, each as `fit_critical_batch` takes it; two or more targets.
    Returns:
        a matplotlib Figure with 2 Axes, already closed in pyplot.
    """
    if len(by_target) < 2:
        raise ValueError(f"by_target needs two or more target losses, got {list(by_target)!r}")
    targets = sorted(by_target, reverse=True)
    fits = {t: fit_critical_batch(by_target[t]) for t in targets}
    sizes = sorted({b for runs in by_target[targets[0]].values() for b in runs})
    grid = np.geomspace(sizes[0] / 1.5, sizes[-1] * 1.5, 200)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    plt.close(fig)
    colors = plt.get_cmap("plasma")(np.linspace(0.0, 0.75, len(targets)))
    seeds = list(dict.fromkeys(seed for t in targets for seed in by_target[t]))
    shapes = dict(zip(seeds, "os^DvP*X" * (1 + len(seeds) // 8)))
    for t, color in zip(targets, colors):
        s_min, b_crit = fits[t]
        for seed, runs in by_target[t].items():
            left.plot(list(runs), list(runs.values()), shapes[seed], color=color, alpha=0.7, linestyle="none")
        left.plot(grid, s_min * (1 + b_crit / grid), "-", color=color,
                  label=f"loss {t:g}: S = {s_min:.1f} (1 + {b_crit:.0f} / B)")
        left.axvline(b_crit, color=color, linestyle="--", linewidth=1)
    for seed in seeds:  # legend entries for the shapes, in grey
        left.plot([], [], shapes[seed], color="grey", linestyle="none", label=f"seed {seed}")
    left.set_xscale("log", base=2)
    left.set_yscale("log", base=2)
    left.yaxis.set_major_locator(ticker.LogLocator(base=2, subs=(1.0, 1.5)))
    left.yaxis.set_minor_locator(ticker.NullLocator())
    left.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    left.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    left.set_xlabel("batch B (dashed: B_crit)")
    left.set_ylabel("updates S to the target loss")
    left.set_title("A lower target: more updates, and the knee moves right", fontsize="medium")
    left.legend(fontsize="small")
    right.plot(targets, [fits[t][1] for t in targets], "o-", color="black", label="fit over all seeds")
    for t in targets:
        right.annotate(f"{fits[t][1]:.0f}", (t, fits[t][1]), textcoords="offset points", xytext=(6, 6),
                       fontsize="small")
        seeds = [fit_critical_batch({seed: runs})[1] for seed, runs in by_target[t].items()]
        right.plot([t] * len(seeds), seeds, "o", color="grey", markerfacecolor="none", linestyle="none",
                   label="each seed alone" if t == targets[0] else None)
    right.set_xlim(targets[0] + 0.05 * (targets[0] - targets[-1]), targets[-1] - 0.05 * (targets[0] - targets[-1]))
    right.set_xticks(targets)
    right.set_ylim(bottom=0)
    right.set_xlabel("target loss (training proceeds to the right)")
    right.set_ylabel("B_crit")
    right.set_title("The critical batch grows as the loss falls", fontsize="medium")
    right.legend(fontsize="small", loc="lower right")
    return fig


def plot_learning_rate_sweep(sweep, target=None, cap=None, offset=False):
    """Updates to the target loss against the learning rate, one line per batch size B.

        S(B, lr) = updates SGD at batch B and rate lr took to reach the target;  inf: not within the cap

    Each line marks its fewest updates (a tie goes to the lower rate) with a ring; a rate whose
    training never reached the target is drawn as a cross on the top edge (each B's shifted sideways
    by 2^(0.06 (i - (n-1)/2)), i its place). Log-2 axes, ticked at the rates swept.

    Args:
        sweep: dict `{B: {lr: S}}`, S > 0 or inf, at least one finite S per B.
        target: the target loss, for the title only (None: no number in it).
        cap: the most updates a training was given. If set, every finite S must be <= cap; the
            trainings that never reached the target are drawn as crosses in a grey band above the
            cap, labelled "not within {cap} updates (cap)", with no tick in the band; every rate tied
            at a B's fewest updates gets a circle. None: the crosses sit on the top edge, one ring per B,
            as before.
        offset: if True, every point of a B (line, circles, crosses) is shifted sideways by
            2^(0.1 (i - (n-1)/2)), so that two B's with the same S at the same rate both show; the
            ticks stay at the rates swept. False: only the crosses shift, by 2^(0.06 (i - (n-1)/2)).
    Returns:
        a matplotlib Figure with 1 Axes, already closed in pyplot.
    """
    if not sweep or not all(rates and all(s > 0 for s in rates.values()) and
                            any(np.isfinite(s) for s in rates.values()) for rates in sweep.values()):
        raise ValueError(f"sweep needs, per B, updates > 0 with at least one finite, got {sweep!r}")
    finite = [s for rates in sweep.values() for s in rates.values() if np.isfinite(s)]
    if cap is not None and not max(finite) <= cap:
        raise ValueError(f"a finite S above the cap {cap!r}: {max(finite)!r}")
    top = max(finite) * 1.4 if cap is None else cap * 1.25  # where the crosses sit
    fig, ax = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
    plt.close(fig)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.8, len(sweep)))
    n = len(sweep)
    for i, ((b, rates), color) in enumerate(zip(sweep.items(), colors)):
        lrs = sorted(rates)
        shift = 2 ** ((0.1 if offset else 0.06) * (i - (n - 1) / 2))  # side by side, so each B shows
        moved = shift if offset else 1.0  # the points reached and their circles
        reached = [lr for lr in lrs if np.isfinite(rates[lr])]
        ax.plot([lr * moved for lr in reached], [rates[lr] for lr in reached], "o-", color=color,
                label=f"B = {b:g}")
        missed = [lr for lr in lrs if not np.isfinite(rates[lr])]
        ax.plot([lr * shift for lr in missed], [top] * len(missed), "x", color=color, markersize=9,
                linestyle="none")
        best = min(lrs, key=lambda lr: (rates[lr], lr))
        ties = [best] if cap is None else [lr for lr in lrs if rates[lr] == rates[best]]
        ax.plot([lr * moved for lr in ties], [rates[best]] * len(ties), "o", color=color,
                markerfacecolor="none", markersize=15, linestyle="none")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(sorted({lr for rates in sweep.values() for lr in rates}))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_locator(ticker.LogLocator(base=2, subs=(1.0, 1.25, 1.5, 1.75)))
    ax.yaxis.set_minor_locator(ticker.NullLocator())
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}" if cap is None or v <= cap else ""))
    goal = f" loss {target:g}" if target is not None else " the target"
    if cap is None:
        ax.set_xlabel("learning rate (x: never reached the target)")
        ax.set_title(f"Updates to{goal} per rate; ring: the best rate of each B", fontsize="medium")
    else:
        ax.set_ylim(top=cap * 1.5)
        ax.axhspan(cap * 1.08, cap * 1.5, color="0.9", zorder=0)
        ax.text(0.02, cap * 1.4, f"x: not within {cap:g} updates (cap)", transform=ax.get_yaxis_transform(),
                fontsize="small", va="center")
        ax.set_xlabel("learning rate")
        ax.set_title(f"Updates to{goal} per rate; circle: the fewest of each B", fontsize="medium")
    ax.set_ylabel("updates S to the target loss")
    ax.legend(fontsize="small")
    return fig


def plot_progress(noise_scale, marks=(32, 256), line_label=None):
    """One step's progress at batch B, per update and per example, in McCandlish et al.'s model.

        per update:  p(B) = 1 / (1 + B_noise / B)      (of a noiseless step's drop in loss)
        per example: p(B) / B, as a share of its small-batch limit 1 / B_noise,  = 1 / (1 + B / B_noise)

    The two curves cross at B = B_noise, at 1/2: below it a larger batch buys progress per update
    almost for free per example; above it, each doubling of b halves the progress per example.

    Args:
        noise_scale: B_noise (a finite number > 0), e.g. B_simple.
        marks: batch sizes (> 0) to mark on both curves, with their values.
        line_label: the legend's label for the dashed line at B = noise_scale; None gives
            "B = B_noise = <noise_scale>" (say so when the value drawn is only taken as B_noise, e.g. B_simple).
    Returns:
        a matplotlib Figure with 1 Axes (log-2 x), already closed in pyplot.
    """
    if isinstance(noise_scale, bool) or not np.isfinite(noise_scale) or noise_scale <= 0:
        raise ValueError(f"noise_scale must be a finite number > 0, got {noise_scale!r}")
    if not all(np.isfinite(b) and b > 0 for b in marks):
        raise ValueError(f"marks must be batch sizes > 0, got {marks!r}")
    lo, hi = min([noise_scale / 16, *marks]) / 1.5, max([noise_scale * 16, *marks]) * 1.5
    grid = np.geomspace(lo, hi, 200)
    fig, ax = plt.subplots(figsize=(7, 4.6), layout="constrained")
    plt.close(fig)
    ax.plot(grid, 1 / (1 + noise_scale / grid), color="tab:blue", label="per update: 1 / (1 + B_noise / B)")
    ax.plot(grid, 1 / (1 + grid / noise_scale), color="tab:orange",
            label="per example, of its small-B limit: 1 / (1 + B / B_noise)")
    ax.axvline(noise_scale, color="grey", linestyle="--", label=f"B = B_noise = {noise_scale:.0f}" if line_label is None else line_label)
    for b in marks:
        for value, color in ((1 / (1 + noise_scale / b), "tab:blue"), (1 / (1 + b / noise_scale), "tab:orange")):
            ax.plot([b], [value], "o", color=color)
            # left of the dashed line the label goes left, so it never crosses the line: above the rising
            # per-update curve, below the falling per-example one
            left = b < noise_scale
            offset = ((-6, 4) if color == "tab:blue" else (-6, -12)) if left else (6, 4)
            ax.annotate(f"{value:.2f} at B = {b:g}", (b, value), textcoords="offset points", xytext=offset,
                        ha="right" if left else "left", fontsize="small")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("batch B (examples per update)")
    ax.set_ylabel("progress, as a share of its best")
    ax.set_title("A larger batch: more progress per update, less per example", fontsize="medium")
    fig.legend(loc="outside lower center", fontsize="small", ncols=2)
    return fig


def plot_noise_scale_tracking(exact, averages, first=1):
    """The exact |g|^2 and B_simple at checkpoints of a training, against moving-average estimates.

        exact, at update t:   |g_t|^2 and B_simple = tr(Sigma_t) / |g_t|^2 over the whole training set
        each average, every update:  |g|^2 and B_simple from moving averages of |G_b|^2 and |G_B|^2
                                     (`two_batch_noise_scale`); |g|^2 <= 0 gives B_simple = inf

    Left: |g|^2; right: B_simple; both on log-10 axes against the update. The exact values are black
    dots, not joined (nothing was measured between them); each average is one coloured line, the
    first solid, the others thinner and lighter. An average whose |g|^2 came out <= 0
    cannot sit on a log axis: it is drawn as a cross on the bottom edge of the left panel (at half the
    smallest positive |g|^2 drawn) and on the top edge of the right one (at twice the largest finite
    B_simple drawn), labelled with its count. One legend, below both panels.

    Args:
        exact: dict `{update: (grad_sq_norm, noise_scale)}`, both finite and > 0, updates >= 0 (0: the
            initial weights).
        averages: dict `{label: (grad_sq_norms, noise_scales)}`, two sequences over updates first,
            first + 1, ...; noise_scale inf exactly where grad_sq_norm <= 0, else finite and > 0.
        first: the update of each average's first value (1, or 0 when the averages are read at the
            same weights as the exact values, before each update).
    Returns:
        a matplotlib Figure with 2 Axes, already closed in pyplot.

    Lesson: notebooks/18-batch-size-and-noise.ipynb
    """
    if not exact or not all(t >= 0 and all(np.isfinite(v) and v > 0 for v in pair) for t, pair in exact.items()):
        raise ValueError(f"exact needs updates >= 0 with finite |g|^2 > 0 and B_simple > 0, got {exact!r}")
    curves = {}
    for label, (sq, scale) in averages.items():
        sq, scale = np.asarray(sq, dtype=float), np.asarray(scale, dtype=float)
        if sq.shape != scale.shape or sq.ndim != 1 or not np.all(np.isfinite(sq)):
            raise ValueError(f"{label}: |g|^2 and B_simple must be two finite series of one length")
        if not np.array_equal(sq <= 0, np.isinf(scale)) or np.any(scale[sq > 0] <= 0):
            raise ValueError(f"{label}: B_simple must be inf exactly where |g|^2 <= 0, else > 0")
        curves[label] = (sq, scale)
    steps = sorted(exact)
    positive = [exact[t][0] for t in steps] + [v for sq, _ in curves.values() for v in sq[sq > 0]]
    finite = [exact[t][1] for t in steps] + [v for _, s in curves.values() for v in s[np.isfinite(s)]]
    bottom, top = min(positive) / 2, max(finite) * 2
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    plt.close(fig)
    colors = plt.get_cmap("viridis")(np.linspace(0.25, 0.75, max(len(curves), 1)))
    for n, ((label, (sq, scale)), color) in enumerate(zip(curves.items(), colors)):
        t = np.arange(first, first + len(sq))
        ok = sq > 0
        style = dict(color=color, linewidth=1.2 if n == 0 else 0.7, alpha=1.0 if n == 0 else 0.6)
        left.plot(t[ok], sq[ok], "-", label=label, **style)
        right.plot(t[ok], scale[ok], "-", label=label, **style)
        if not ok.all():
            bad = t[~ok]
            note = f"{label}: |g|^2 <= 0 ({len(bad)} updates)"
            left.plot(bad, [bottom] * len(bad), "x", color=color, linestyle="none", label=note)
            right.plot(bad, [top] * len(bad), "x", color=color, linestyle="none", label=note)
    for ax, k in ((left, 0), (right, 1)):
        ax.plot(steps, [exact[t][k] for t in steps], "o", color="black", markersize=4, linestyle="none",
                label="exact, all training examples", zorder=3)
        ax.set_yscale("log")
        ax.set_xlabel("update")
    fig.legend(handles=right.lines, loc="outside lower center", fontsize="small", ncols=2)
    left.set_ylim(bottom / 1.3, max(positive) * 1.5)
    right.set_ylim(min(finite) / 1.5, top * 1.3)
    left.set_ylabel(r"$\Vert g\Vert^2$ (signal)")
    right.set_ylabel(r"$B_\mathrm{simple} = \mathrm{tr}\,\Sigma\ /\ \Vert g\Vert^2$")
    left.set_title(r"The signal $\Vert g\Vert^2$", fontsize="medium")
    right.set_title("The simple noise scale", fontsize="medium")
    return fig




def plot_time_to_target(s_min, b_crit, tau, ms_per_example, other_taus=(), priced=None, clocked=None, micro=None,
                        sizes=(16, 512)):
    """The time to a target loss on one device against the batch, from the fitted model, with its least.

        T(B) = S(B) (tau + B) = S_min (1 + B_crit / B)(tau + B)   (examples' work; times ms_per_example: ms)
        dT/dB = 0  at  B* = sqrt(B_crit tau),   T(B*) = S_min (sqrt(tau) + sqrt(B_crit))^2

    Each update costs its B examples' work plus a fixed cost tau (a call's launch, the optimizer's
    apply, an all-reduce), counted in examples' work. The curve at the measured tau is solid, each of
    `other_taus` grey in its own dash pattern; a diamond marks each curve's least at B*, every one in the legend.

    Args:
        s_min, b_crit: the fitted model (`fit_critical_batch`), both > 0.
        tau: the measured fixed cost of an update, in examples' work, > 0.
        ms_per_example: milliseconds per example's work, > 0 (converts every curve and point to ms).
        other_taus: more fixed costs (examples' work, > 0) to draw dashed, at the same ms per example.
        priced: optional `{label: {B: ms}}`, open markers (e.g. each seed's measured S times (tau + B)).
        clocked: optional `{B: ms}`, runs timed to the target, black filled dots joined by a line.
        micro: if given, a top axis reads B as N = B / micro micro-batches.
        sizes: the batch range to draw, widened to take in every B* and point.
    Returns:
        a matplotlib Figure with 1 Axes (log-log, base 2), already closed in pyplot. Its model lines
        carry gid "model" (measured tau) and "model tau=<t:g>", their B* markers gid "least".
    """
    taus = (tau, *other_taus)
    if not all(np.isfinite(v) and v > 0 for v in (s_min, b_crit, ms_per_example, *taus)):
        raise ValueError(f"s_min, b_crit, ms_per_example and every tau must be finite and > 0, got "
                         f"{s_min!r}, {b_crit!r}, {ms_per_example!r}, {taus!r}")
    points = [b for runs in (priced or {}).values() for b in runs] + list(clocked or {})
    best = [np.sqrt(b_crit * t) for t in taus]
    grid = np.geomspace(min(sizes[0], *best, *points) / 1.3, max(sizes[1], *best, *points) * 1.3, 400)
    fig, ax = plt.subplots(figsize=(7.5, 4.4), layout="constrained")
    plt.close(fig)
    model = lambda b, t: s_min * (1 + b_crit / b) * (t + b) * ms_per_example
    styles = ("-", "--", ":", "-.")  # the measured tau solid; each other tau its own dash pattern
    for i, (t, b_star) in enumerate(zip(taus, best)):
        first = i == 0
        ax.plot(grid, model(grid, t), styles[0] if first else styles[1 + (i - 1) % 3],
                color="black" if first else "grey", linewidth=1.4 if first else 1.2,
                gid="model" if first else f"model tau={t:g}",
                label=f"model, tau = {t:.0f}" + (" (measured)" if first else ""))
        ax.plot([b_star], [model(b_star, t)], "D", color="crimson" if first else "grey", markersize=7,
                gid="least", label=f"least at B* = sqrt(B_crit tau) = {b_star:.0f}" if first
                else f"its least, B* = {b_star:.0f} (tau = {t:.0f})")
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.8, max(len(priced or {}), 1)))
    for i, ((label, runs), color) in enumerate(zip((priced or {}).items(), colors)):
        bs = sorted(runs)
        ax.plot(bs, [runs[b] for b in bs], SEED_MARKERS[i % len(SEED_MARKERS)], color=color,
                markerfacecolor="none", markeredgewidth=1.4, markersize=8, linestyle="none", label=str(label))
    if clocked:
        bs = sorted(clocked)
        ax.plot(bs, [clocked[b] for b in bs], "o-", color="black", markersize=6, linewidth=0.8,
                gid="clocked", label="clocked runs to the target")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("batch B")
    ax.set_ylabel("time to the target loss, ms")
    if micro:
        top = ax.secondary_xaxis("top", functions=(lambda b: b / micro, lambda n: n * micro))
        top.set_xlabel(f"N micro-batches of {micro:g}")
        top.xaxis.set_major_locator(plt.LogLocator(base=2))  # every power of 2: N = 1, 2, 4, ...
        top.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_title("Time to the target: least at B* = sqrt(B_crit tau)", fontsize="medium")
    ax.legend(loc="upper left", fontsize="small")
    return fig
