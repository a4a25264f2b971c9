"""Figures for the lessons. Each function takes results, draws them, and returns a Figure.

The figure is closed in pyplot before it is returned, so a notebook cell that ends with the
call shows it exactly once (as the cell's value), and its size and axes are fixed. The
lab's figures are in `gradlab.lab.figures`.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

from ..stats import moving_average


def _figure(ncols=1, figsize=(6.4, 4.0)):
    fig, axes = plt.subplots(1, ncols, figsize=figsize, layout="constrained")
    plt.close(fig)  # owned by the caller, not by pyplot's "show at end of cell"
    return fig, axes


def _colors(n):
    return plt.get_cmap("viridis")(np.linspace(0.0, 0.85, n))


def plot_gradient_noise(full_grad, minibatch_grads, trace_cov=None, population=None, with_replacement=False):
    """Minibatch gradients against the full-batch gradient, per batch size b.

        cos(g_b, g) = g_b . g / (||g_b|| ||g||)
        spread(b) = mean_draws ||g_b - g||,   predicted  sqrt(tr(Sigma) / b * (N - b) / (N - 1))
        (drawn with replacement: sqrt(tr(Sigma) / b), the factor is 1)

    Left: the cosine of every minibatch gradient with g against b (each draw a dot, the mean
    of the draws per b a large circle), on a log2 axis of b: how far a step along g_b points
    from the step along g (1: the same direction, 0: at right angles).
    With `with_replacement`, the left panel also draws the means' prediction (dashed),
    1/sqrt(1 + B_simple/b) with B_simple = tr(Sigma) / ||g||^2 (lesson 18, Answer 2).
    Right: the distance of each draw from g against b, on log-log axes, with the root-mean-square of the
    draws per b and, when `trace_cov` and `population` are given, the prediction for b
    examples drawn without replacement from N = `population` (else a 1/sqrt(b) line through
    the smallest batch size). Both legends sit outside the data, to the right of each panel.

    Args:
        full_grad: 1-D array, the gradient of the mean loss over the whole training set.
        minibatch_grads: dict `{b: array (draws, dim)}` of flattened minibatch gradients.
        trace_cov: tr(Sigma), the trace of the per-example gradient covariance (optional).
        population: N, the number of examples the minibatches are drawn from (with
            `trace_cov`).
        with_replacement: the minibatches were drawn with replacement; the prediction is then
            sqrt(tr(Sigma) / b) and needs `trace_cov` only, no `population`.
    Returns:
        a matplotlib Figure with 2 Axes.

    Lesson: notebooks/18-batch-size-and-noise.ipynb
    """
    full = np.asarray(full_grad, dtype=np.float64).ravel()
    sizes = sorted(minibatch_grads)
    if not sizes:
        raise ValueError("minibatch_grads needs at least one batch size, got an empty dict")
    if with_replacement:
        if population is not None or trace_cov is None:
            raise ValueError("with_replacement needs trace_cov and no population")
    elif (trace_cov is None) != (population is None):
        raise ValueError("give trace_cov and population together, or neither")
    if population is not None and (population <= 1 or max(sizes) > population):
        raise ValueError(f"population must be > 1 and >= every b, got {population} for b = {sizes}")
    grads = {b: np.asarray(minibatch_grads[b], dtype=np.float64).reshape(-1, full.size)
             for b in sizes}

    fig, (ax, ax2) = _figure(2, figsize=(12.0, 4.2))
    cosines = [grads[b] @ full / (np.linalg.norm(grads[b], axis=1) * np.linalg.norm(full)) for b in sizes]
    for i, (b, color) in enumerate(zip(sizes, _colors(len(sizes)))):
        g = grads[b]
        spread = 2.0 ** np.linspace(-0.15, 0.15, len(cosines[i]))  # spread the draws sideways, on the log axis
        ax.scatter(b * spread, cosines[i], s=12, color=color, alpha=0.6, label=f"b = {b}", zorder=3)
        dist = np.linalg.norm(g - full, axis=1)
        ax2.scatter(np.full(dist.shape, b), dist, s=10, color=color, alpha=0.5)
        ax2.plot(b, np.sqrt(np.mean(dist ** 2)), "o", color=color, markersize=8, markeredgecolor="black")
    ax.plot(sizes, [c.mean() for c in cosines], "-", color="grey", zorder=4, marker="o", markersize=8,
            markerfacecolor="white", markeredgecolor="black", label="mean of the draws\n(large circles)")
    if with_replacement:  # the means' prediction, cos ~ 1/sqrt(1 + B_simple/b), B_simple = tr(Sigma) / |g|^2
        simple = trace_cov / float(full @ full)
        ax.plot(sizes, 1 / np.sqrt(1 + simple / np.asarray(sizes, dtype=np.float64)), "--", color="crimson",
                zorder=5, label=f"predicted from $B_{{simple}}$ = {simple:.0f}:\n" + r"$1/\sqrt{1 + B_{simple}/b}$")
    ax.axhline(1.0, color="crimson", linestyle=":", linewidth=1, label="g itself")
    ax.axhline(0.0, color="black", linewidth=0.5)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(b) for b in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(min(-0.1, min(c.min() for c in cosines) - 0.05), 1.05)
    ax.set_xlabel("batch size b")
    ax.set_ylabel(r"$\cos(g_b, g)$")
    ax.set_title("How well a minibatch gradient points along g")
    for handle in ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small").legend_handles:
        handle.set_alpha(1.0)

    b_axis = np.asarray(sizes, dtype=np.float64)
    means = [np.sqrt(np.mean(np.sum((grads[b] - full) ** 2, axis=1))) for b in sizes]  # rms, what tr(Sigma)/b predicts
    ax2.plot(sizes, means, "-", color="grey", zorder=0, marker="o", markersize=8,
             markerfacecolor="white", markeredgecolor="black", label="root-mean-square of the draws (large circles)")
    if trace_cov is None:
        ref = means[0] * np.sqrt(b_axis[0] / b_axis)
        ax2.plot(sizes, ref, "--", color="crimson", label=r"$\propto 1/\sqrt{b}$")
        ax2.set_title("The spread shrinks like $1/\\sqrt{b}$")
    elif with_replacement:
        ax2.plot(sizes, np.sqrt(trace_cov / b_axis), "--", color="crimson",
                 label="predicted\n" + r"$\sqrt{\mathrm{tr}\Sigma/b}$")
        ax2.set_title("Measured spread and its prediction")
    else:
        ref = np.sqrt(trace_cov / b_axis * (population - b_axis) / (population - 1))
        ax2.plot(sizes, ref, "--", color="crimson",
                 label="predicted\n" + r"$\sqrt{\mathrm{tr}\Sigma/b \cdot (N-b)/(N-1)}$")
        ax2.set_title("Measured spread and its prediction")
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log", base=2)
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax2.set_xticks(sizes, [str(b) for b in sizes])
    ax2.set_xlabel("batch size b")
    ax2.set_ylabel(r"$\|g_b - g\|$")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return fig


def plot_accumulation(contributions, target, rows=None):
    """An accumulator after each micro-batch, stacked from its contributions.

        rows None:  acc_i = acc_{i-1} + w_i g_i,    acc_k = g_B    (the dashed line)
        rows B:     acc_i = acc_{i-1} + dS_i,       acc_k = B g_B  (the dashed line), divided once by B

    Args:
        contributions: one gradient entry's contribution per micro-batch: `w_i g_i`, or with
            `rows` the gradient of micro-batch i's summed loss, `dS_i = n_i g_i`.
        target: the same entry of the large-batch gradient g_B.
        rows: B, the rows of the update, when the contributions are summed-loss gradients:
            the line is then drawn at `B g_B` and labelled with the division that gives g_B.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/04-accumulating-in-variables.ipynb
    """
    parts = [float(c) for c in contributions]
    if not parts:
        raise ValueError("contributions needs at least one micro-batch, got an empty sequence")
    fig, ax = _figure(figsize=(6.4, 3.8))
    colors = _colors(len(parts))
    steps = np.arange(len(parts) + 1)
    term = (lambda i: rf"$\nabla S_{i}$") if rows else (lambda i: f"$w_{i} g_{i}$")
    for i, (part, color) in enumerate(zip(parts, colors)):
        below = sum(parts[:i])
        # Micro-batch i's slice sits at the same height in every bar from step i+1 on.
        ax.bar(steps[i + 1:], part, bottom=below, width=0.6, color=color, edgecolor="black",
               linewidth=0.6, label=f"micro-batch {i + 1}: {term(i + 1)} = {part:.4g}")
    for step, value in zip(steps, np.cumsum([0.0] + parts)):
        ax.annotate(f"{value:.4g}", (step, value), xytext=(0, 4), textcoords="offset points",
                    ha="center", va="bottom", fontsize=10, fontweight="bold")
    if rows:
        line = float(rows) * float(target)
        ax.axhline(line, color="crimson", linestyle="--",
                   label=f"$B\\,g_B$ = {line:.4g}\n(the apply divides by $B$ = {int(rows)}: $g_B$ = {float(target):.4g})")
        ax.set_title("The accumulator adds up the sums; the apply divides once by B")
    else:
        line = float(target)
        ax.axhline(line, color="crimson", linestyle="--", label=f"large batch $g_B$ = {line:.4g}")
        ax.set_title("The accumulator adds up to the large-batch gradient")
    ax.set_xticks(steps, ["zero"] + [f"after {i}" for i in steps[1:]])
    ax.set_xlim(-0.6, len(parts) + 0.6)  # a bar's width of room around the first and last step
    ax.set_xlabel("micro-batches accumulated")
    ax.set_ylabel("accumulator value")
    lo, hi = min(0.0, *np.cumsum(parts)) * 1.15, max(0.0, line, *np.cumsum(parts)) * 1.15
    pad = 0.08 * (hi - lo)  # room below the zero line, so the "0" of the empty accumulator
    ax.set_ylim(lo - pad, hi)  # stands clear of the x axis
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.legend(loc="center left", fontsize="small")
    return fig


def plot_learning_rates(rates, accum_steps):
    """The learning rate after each update, one line per distinct schedule, on a log2 axis.

        gradlab:  lr_k = schedule(k)            Keras's accumulation:  lr_k = schedule(N k)

    Strategies whose rates are identical share one line, labelled with all their names and
    how many they are (six lines drawn on top of each other would show as one).

    Args:
        rates: dict `{strategy name: [lr after update 1, 2, ...]}`.
        accum_steps: N, the micro-batches per update (for the title).
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/07-pitfalls-what-to-count.ipynb
    """
    if not rates:
        raise ValueError("rates needs at least one strategy, got an empty dict")
    groups = {}  # identical rates -> the strategies that have them, in order
    for name, lrs in rates.items():
        groups.setdefault(tuple(float(lr) for lr in lrs), []).append(name)
    fig, ax = _figure()
    for (lrs, names), color, marker in zip(groups.items(), _colors(len(groups)), "osD^v<>"):
        updates = np.arange(1, len(lrs) + 1)
        label = names[0] if len(names) == 1 else f"{', '.join(names)} ({len(names)} identical)"
        style = dict(color="crimson", linestyle="--") if names == ["keras"] else dict(color=color)
        ax.plot(updates, lrs, marker=marker, label=label, **style)
    ax.set_xticks(updates)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("update")
    ax.set_ylabel("learning rate after the update")
    ax.set_title(f"ExponentialDecay(1.0, 1, 0.5) with {accum_steps} micro-batches per update")
    ax.legend(fontsize="small", loc="lower left")  # decaying lines leave that corner empty
    return fig


DASHES = ("-", "--", ":", "-.")


def finite(value):
    """`value` as a float if it is a finite number, else None (JSON stores NaN as null)."""
    return float(value) if value is not None and np.isfinite(value) else None


def coinciding(curves, rtol=1e-3):
    """Each curve that retraces an earlier one: `{label: the earlier label}`.

    Two curves coincide when they have the same length and every loss agrees within `rtol`
    of the earlier curve's (lesson 04's mean at N = 16 retraces N = 1). A plot draws such a
    curve as dots on the earlier line, which a line on top would hide.
    """
    items = [(label, np.asarray(losses, dtype=np.float64)) for label, losses in curves.items()]
    same = {}
    for i, (label, losses) in enumerate(items):
        for earlier, before in items[:i]:
            if earlier not in same and losses.shape == before.shape and np.allclose(losses, before, rtol=rtol, atol=0):
                same[label] = earlier
                break
    return same


def plot_training_loss(curves, window=51, title="Training loss per update", shade=None, faint=None):
    """Training loss per update, as a centred moving average per curve, and raw (faint) for the chosen curves.

    A curve that retraces an earlier one (`coinciding`) is drawn as dots on the earlier line,
    labelled "same as" it, so that neither hides the other.

        smooth_t = mean(loss_{t-h} ... loss_{t+h}),   h = window // 2

    The smoothed line is drawn only where the whole window fits: near the ends a shorter
    window would follow single updates and look like a trend.

    Args:
        curves: dict `{label: losses}`, e.g. `{"N = 5": result.losses}`, in legend order.
        window: moving-average width in updates.
        title: the Axes title.
        shade: `(first, last)` updates to shade grey (e.g. the ones a lesson averages), or None.
        faint: the labels whose per-update losses are drawn faint beneath their line; None: every curve's.
    Returns:
        a matplotlib Figure with 1 Axes (log-scaled loss).

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    if not curves:
        raise ValueError("curves needs at least one {label: losses} entry, got an empty dict")
    faint = list(curves) if faint is None else list(faint)
    if set(faint) - set(curves):
        raise ValueError(f"faint names curves that are not drawn: {sorted(set(faint) - set(curves))}")
    fig, ax = _figure(figsize=(8.0, 4.2))
    same = coinciding(curves)
    for i, ((label, losses), color) in enumerate(zip(curves.items(), _colors(len(curves)))):
        losses = np.asarray(losses, dtype=np.float64)
        t = np.arange(1, len(losses) + 1)
        if label in faint:
            ax.plot(t, losses, color=color, alpha=0.35, linewidth=0.7)  # faint, in the series' own colour
        # Paired runs nearly coincide: dashes keep every smoothed curve visible on top of the others.
        h = min(window, len(losses)) // 2
        inner = slice(h, len(losses) - h) if len(losses) > 2 * h else slice(None)
        # a retraced curve: dots on the earlier line, which stays visible between them
        style = (dict(linestyle="none", marker="o", markersize=4, markevery=3, zorder=3,
                      label=f"{label}, same as {same[label]}") if label in same
                 else dict(linewidth=1.8, linestyle=DASHES[i % 4], label=label))
        ax.plot(t[inner], moving_average(losses, window)[inner], color=color, **style)
    if shade is not None:
        first, last = shade
        ax.axvspan(first, last, color="0.5", alpha=0.12, linewidth=0, label=f"updates {first}-{last}")
    ax.set_yscale("log")
    # Ticks at 1, 2 and 5 times each power of ten, written plainly (0.5, not 5e-1), so that
    # values a lesson quotes can be read off the axis.
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("update")
    ax.set_ylabel("mean loss of the update's batch")
    ax.set_title(title)
    # An even window is centred by taking one more: 50 averages 51 updates. The legend sits
    # outside the Axes, right of it, so that it covers no data.
    legend = f"lines: {2 * (window // 2) + 1}-update moving average"
    if faint:
        legend += "\nfaint: per update" + ("" if len(faint) == len(curves) else f" ({', '.join(faint)})")
    ax.legend(title=legend,
              fontsize="small",
              title_fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def plot_accuracy(rows, reference=None, *, title="Accuracy against N", ylabel="test accuracy (%)",
                  min_height=4.0):
    """Final test accuracy against the accumulation count N: every run a dot, the mean a line.

    No ± bar for gradlab's rows: a std from 2 runs would draw a precise-looking bar that the
    data cannot support, so the dots show the spread as it is, whatever the number of runs.

    Args:
        rows: dicts with `accum_steps`, `micro_batch`, `updates`, `runs`, `accuracy_mean` and
            `accuracies` (one per run, drawn as dots), as the rows of
            `gradlab.studies.runs.table.table` (accuracies as fractions).
        reference: optional `{N: (micro_batch, iterations, mean, std)}` drawn beside them with
            its published ± std bars, e.g. `table.REFERENCE`.
        title, ylabel: the axes' title and y label.
        min_height: the y axis spans at least this many points, centred on the data's range.
    Returns:
        a matplotlib Figure with 1 Axes (accuracy in %, N on a log2 axis) and the legend
        below it, outside the data.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows needs at least one row, got none")
    fig, ax = _figure(figsize=(6.4, 4.8))
    n = np.array([r["accum_steps"] for r in rows], dtype=np.float64)
    mean = 100 * np.array([r["accuracy_mean"] for r in rows])
    for i, (x, r) in enumerate(zip(n, rows)):
        accs = 100 * np.asarray(r["accuracies"], dtype=np.float64)
        spread = x * 1.06 ** np.linspace(-1, 1, len(accs)) if len(accs) > 1 else [x]  # side by side
        ax.plot(spread, accs, ".", color="tab:blue", alpha=0.5, markersize=7,
                label=f"gradlab: one run ({rows[0]['runs']} per row)" if i == 0 else None)
    ax.plot(n, mean, "_-", color="tab:blue", markersize=18, markeredgewidth=2, linewidth=1.5,
            label=f"gradlab, {rows[0]['updates']:,} updates: mean of the runs")
    counts = [int(v) for v in n]
    if reference:
        ref = sorted(reference.items())
        rn = np.array([k for k, _ in ref], dtype=np.float64) * 1.12
        ax.errorbar(rn, [100 * v[2] for _, v in ref], yerr=[100 * v[3] for _, v in ref],
                    fmt="s--", color="tab:orange", capsize=4, linewidth=1.0, alpha=0.9,
                    label="Chlebus 2018 (different setup: convnet, dropout, Adam,\n"
                          "best of checkpoints): published mean ± std of 10 runs")
        counts = sorted(set(counts) | set(reference))
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [f"{k}" for k in counts])
    ax.minorticks_off()
    ax.set_xlim(min(counts) / 1.5, max(counts) * 1.5)
    lo, hi = ax.get_ylim()
    mid = (lo + hi) / 2
    ax.set_ylim(min(lo, mid - min_height / 2), max(hi, mid + min_height / 2))  # noise at its size
    ax.set_xlabel("accumulation count N  (micro-batch = effective batch / N)"
                  if len({r["accum_steps"] * r["micro_batch"] for r in rows}) == 1
                  else "accumulation count N")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.legend(fontsize="small", loc="outside lower center")  # below the axes: it hides no data
    return fig


def plot_bench(sweep, memory="peak_mb"):
    """Seconds per update and peak memory against N, one line per strategy.

        time(N) ~ N * (dispatch + compute of one micro-batch)      for per-call strategies
        memory(N) ~ N * b  for large_batch;  ~ b, flat, for accumulation

    Left: median seconds per update (bars: the interquartile range over rounds), log
    scale. Right: peak memory of one update (each strategy measured in a fresh process);
    absent when the sweep skipped memory.

    Args:
        sweep: the dict of `gradlab.studies.bench.step.run_sweep`.
        memory: `"peak_mb"` (resident memory on a CPU, tracing included) or `"tf_peak_mb"`
            (the TensorFlow allocator's peak during an update: activations and gradients).
    Returns:
        a matplotlib Figure with 2 Axes (1 without memory).

    Lesson: notebooks/17-the-lab.ipynb
    """
    if not isinstance(sweep, dict) or "accum_steps" not in sweep or "strategies" not in sweep:
        raise ValueError("plot_bench needs the dict of gradlab.studies.bench.step.run_sweep (with 'accum_steps' "
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


def plot_step_ratios(ratios, accum_steps):
    """One bar per optimizer: the step taken with the summed gradient over the step with the mean,
    and beside it how far each ratio is from 1, on a log axis (Adam's 1.006 is invisible at 4's scale).

        ratio = |Δw(N g_B)| / |Δw(g_B)|     (plain SGD: exactly N, the dashed line; 1: no change)

    Args:
        ratios: `{optimizer name: ratio}`, in the order to draw.
        accum_steps: N, the number of micro-batch gradients the sum adds.
    Returns:
        a matplotlib Figure with 2 Axes (the ratios; |ratio - 1| on a log axis), already closed in pyplot.

    Lesson: notebooks/04-accumulating-in-variables.ipynb
    """
    names, values = list(ratios), [float(v) for v in ratios.values()]
    if not names or accum_steps < 1:
        raise ValueError(f"ratios needs at least one optimizer and accum_steps >= 1, got {ratios!r}, {accum_steps!r}")
    if any(v == 1 for v in values):
        raise ValueError(f"a ratio of exactly 1 has no place on the log axis of |ratio - 1|, got {ratios!r}")
    fig, (ax, off) = _figure(ncols=2, figsize=(10.0, 3.8))
    pos, colors = np.arange(len(names)), _colors(len(names))
    labels = [name.replace(", ", ",\n") for name in names]
    ax.bar(pos, values, width=0.6, color=colors, edgecolor="black", linewidth=0.6)
    for x, value in zip(pos, values):
        ax.annotate(f"{value:.3f}", (x, value), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=10, fontweight="bold")
    ax.axhline(float(accum_steps), color="crimson", linestyle="--", label=f"N = {accum_steps}")
    ax.axhline(1.0, color="gray", linewidth=0.8, label="1: the sum changes nothing")
    ax.set_xticks(pos, labels, fontsize="small")
    ax.set_ylim(0, max(float(accum_steps), *values) * 1.3)  # room for the legend above the line at N
    ax.set_ylabel("step with the sum / step with the mean")
    ax.set_title(f"The summed recipe's step, N = {accum_steps}")
    ax.legend(loc="upper right", fontsize="small")
    gaps = [abs(v - 1) for v in values]
    off.bar(pos, gaps, width=0.6, color=colors, edgecolor="black", linewidth=0.6)
    for x, gap in zip(pos, gaps):
        off.annotate(f"{gap:.1e}", (x, gap), xytext=(0, 3), textcoords="offset points",
                     ha="center", va="bottom", fontsize=10, fontweight="bold")
    off.axhline(float(accum_steps - 1), color="crimson", linestyle="--", label=f"N - 1 = {accum_steps - 1}")
    off.set_yscale("log")
    off.set_ylim(min(gaps) / 5, max(float(accum_steps - 1), *gaps) * 8)
    off.set_xticks(pos, labels, fontsize="small")
    off.set_ylabel("|ratio - 1| (log scale)")
    off.set_title("How far each ratio is from 1")
    off.legend(loc="upper right", fontsize="small")
    return fig


def plot_accumulation_budget(models, crossing, Ns=(1, 2, 4, 8, 16, 32), relative=False):
    """The float32 SGD budget of accumulation, `memory_budget.budget(P, "sgd", B, N, activation_bytes_per_row=a)`:

        budget(N) = 4P (2 + [N > 1]) + ceil(B / N) a     bytes

    Left: each model's budget against N at its fixed B (log axis), with its one-large-batch
    level (N = 1, dashed) and its floor with accumulators, 4P * 3 (dotted), which no N goes under.
    Right: one model's budget against B for N = 1 and N = n; the first B where N = n holds less,
    4P < a (B - ceil(B / n)), is marked.

    Args:
        models: `{label: (P, a, B)}`: trainable weights, activation bytes a row, the effective batch.
        crossing: `(label, n, B_max)`: the model of the right panel, its N, and the B axis's end.
        Ns: the N axis of the left panel (starting at 1).
        relative: if True, the left panel shows each budget over its model's N = 1 budget on a linear
            axis (the N = 1 level is then 1 for every model), so models of any size share one readable scale.
    Returns:
        a matplotlib Figure with 2 Axes, already closed in pyplot; `fig.break_even` is the marked B.

    Lesson: notebooks/04-accumulating-in-variables.ipynb
    """
    from ..memory_budget import budget

    label, n, B_max = crossing
    if label not in models or n < 2 or list(Ns)[0] != 1:
        raise ValueError(f"crossing names one of the models with n >= 2 and Ns starts at 1; got {crossing!r}, Ns={Ns!r}")

    def mib(P, a, B, N):
        return budget(P, "sgd", B, N, activation_bytes_per_row=a)["total"] / 2**20

    fig, (left, right) = _figure(ncols=2, figsize=(10.5, 4.0))
    colors = plt.get_cmap("tab10")(np.arange(len(models)))  # distinct hues, not a ramp: the models are not ordered
    for (name, (P, a, B)), color in zip(models.items(), colors):
        unit = mib(P, a, B, 1) if relative else 1.0  # relative: over this model's N = 1 budget
        left.plot(Ns, [mib(P, a, B, N) / unit for N in Ns], "o-", color=color,
                  label=f"{name}, B = {B} (accumulators {4 * P / 2**20:.2f} MiB)")
        left.axhline(mib(P, a, B, 1) / unit, color=color, linestyle="--", linewidth=1)
        left.axhline(3 * 4 * P / 2**20 / unit, color=color, linestyle=":", linewidth=1.2)
    left.plot([], [], "k--", linewidth=1, label="N = 1: one large batch")
    left.plot([], [], "k:", linewidth=1.2, label="floor: weights, gradients, accumulators")
    left.set_xscale("log", base=2)
    left.set_xticks(Ns, [str(N) for N in Ns])
    left.xaxis.set_minor_locator(NullLocator())
    if relative:
        left.set_ylim(0, left.get_ylim()[1] * 1.35)  # room for the legend above the curves
    else:
        left.set_yscale("log")
        low, high = left.get_ylim()
        left.set_ylim(low, high * 40)  # room for the legend above the curves
    left.set_xlabel("micro-batches N (B fixed)")
    left.set_ylabel("budget / budget at N = 1" if relative else "budget, MiB (log scale)")
    left.set_title("Budget against N: activations shrink, accumulators stay")
    left.legend(fontsize="small", loc="upper right")

    P, a, _ = models[label]
    Bs = np.arange(1, B_max + 1)
    one = np.array([mib(P, a, int(B), 1) for B in Bs])
    acc = np.array([mib(P, a, int(B), n) for B in Bs])
    pays = np.flatnonzero(acc < one)  # MiB of the same byte totals: the comparison is exact
    if not pays.size:
        raise ValueError(f"N = {n} never holds less than N = 1 up to B = {B_max} for {label!r}: no crossing")
    even = int(Bs[pays[0]])
    right.plot(Bs, one, color="black", label="N = 1")
    right.plot(Bs, acc, color="crimson", label=f"N = {n}")
    right.axvline(even, color="gray", linestyle="--", linewidth=1)
    right.annotate(f"N = {n} holds less\nfrom B = {even}", (even, float(one[even - 1])), xytext=(8, -30),
                   textcoords="offset points", fontsize="small")
    right.set_xlabel("effective batch B (rows)")
    right.set_ylabel("budget, MiB")
    right.set_title(f"{label}: where N = {n} starts to pay")
    right.legend(fontsize="small", loc="upper left")
    fig.break_even = even
    return fig
