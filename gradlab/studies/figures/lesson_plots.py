"""Lesson figures: the replicas schematic, the time of an update against accum_steps, and the
weight each example gets in the combined gradient, a hub's link against a ring's, and the
learning rate each update applies.

    replicas:   replica r sums its micro-batches -> one all-reduce of [sums, rows] -> sums / B = g_B
    update ms:  median and middle half of each schedule's timed updates, per accum_steps
    loop peaks: the allocator's peak rise against N, one line per loop, a right-hand axis in gradients
    fused saving: ms per update of accumulate and fused against N, each N labelled accumulate / fused
    call timeline: one update's calls and micro-batches in time, accumulate's N + 1 calls against fused's one
    weights:    example j of micro-batch i gets 1 / (k n_i) from a mean of means, 1 / B from n_i / B
    hub, ring:  per update each way, a hub's link carries (R - 1) G bytes, a ring device's 2 (R - 1) / R G
    rates:      the learning rate each update applies, one line per schedule (raw, PerUpdate)

Like `gradlab.studies.figures.plots`, every function returns a Figure already closed in pyplot, so a
notebook cell ending with the call shows it exactly once.

Lessons: notebooks/01-why-average.ipynb, notebooks/02-tower-averaging.ipynb, notebooks/06-keras-accumulation.ipynb,
notebooks/05-fused-accumulation.ipynb, notebooks/13-across-replicas.ipynb
"""
from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from ..distributed.comm_cost import ring_bytes


def _figure(figsize):
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    plt.close(fig)
    return fig, ax


def _box(ax, x, y, w, h, text, color, fontsize=9):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", facecolor=color,
                                edgecolor="black", linewidth=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, **style):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10,
                                 linewidth=0.9, color=style.pop("color", "black"), **style))


def draw_replicas(shards, accum_steps):
    """A schematic of one update as sum-and-count does it: sums in each replica, one all-reduce, one division.

        replica r:  [sum_i G_ri, sum_i L_ri, n_r]     (G, L: a micro-batch's summed gradient and loss; no communication)
        all-reduce: [sum_r sums, B = sum_r n_r]       (once per update)
        every replica: divide the sums by the rows B, update its copy by g_B   (identical weights stay identical;
                       not through Keras's `apply`, which would all-reduce g_B again)

    Args:
        shards: the examples per replica `[n_1, ..., n_R]` (for example
            `gradlab.core.distribute.check_batch(B, R, accum_steps)`).
        accum_steps: micro-batches per replica and update.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/13-across-replicas.ipynb
    """
    shards = [int(n) for n in shards]
    if not shards or min(shards) < 1:
        raise ValueError(f"shards must list at least one replica of >= 1 example, got {shards!r}")
    if int(accum_steps) != accum_steps or accum_steps < 1:
        raise ValueError(f"accum_steps must be an integer >= 1, got {accum_steps!r}")
    from ...core.microbatch import split_sizes  # layer 1, no TensorFlow work
    B, R, k = sum(shards), len(shards), int(accum_steps)
    fig, ax = _figure((9.0, 1.3 + 1.25 * R))
    colors = plt.get_cmap("Pastel1")(np.arange(R) % 9)
    lane = 1.25
    top = R * lane
    _box(ax, 0.0, top / 2 - 0.4, 1.3, 0.8, f"batch\nB = {B}", "whitesmoke")
    reduce_x = 2.7 + 1.05 * k
    _box(ax, reduce_x, 0.15, 1.35, top - 0.3, "all-reduce\n(SUM)\n[sums, rows]\nonce per\nupdate", "mistyrose")
    for r, (n_r, color) in enumerate(zip(shards, colors)):
        y = top - (r + 1) * lane + 0.25
        _arrow(ax, (1.3, top / 2), (1.75, y + 0.35))
        ax.text(1.8, y + 0.76, f"replica {r}: {n_r} rows", fontsize=8)
        for i, n in enumerate(split_sizes(n_r, k)):
            x = 1.8 + 1.05 * i
            _box(ax, x, y, 0.9, 0.7, f"{n} rows\nsum", color, fontsize=8)
            if i:
                _arrow(ax, (x - 0.15, y + 0.35), (x, y + 0.35), color="dimgray")
        x_end = 1.8 + 1.05 * k - 0.15
        ax.text((1.8 + x_end) / 2, y - 0.14, f"add up in replica {r}: no communication",
                ha="center", va="center", fontsize=7, color="dimgray")
        _arrow(ax, (x_end, y + 0.35), (reduce_x, y + 0.35))
        ax.text((x_end + reduce_x) / 2, y + 0.45, f"[sums, {n_r}]", ha="center", va="bottom", fontsize=7)
        _box(ax, reduce_x + 1.75, y, 1.1, 0.7, f"÷ rows\n= {B}", "lightyellow", fontsize=8)
        _arrow(ax, (reduce_x + 1.35, y + 0.35), (reduce_x + 1.75, y + 0.35))
        _box(ax, reduce_x + 3.25, y, 1.2, 0.7, f"update by $g_B$\nreplica {r}", "honeydew", fontsize=8)
        _arrow(ax, (reduce_x + 2.85, y + 0.35), (reduce_x + 3.25, y + 0.35))
    ax.set_xlim(-0.1, reduce_x + 4.55)
    ax.set_ylim(-0.1, top + 0.35)
    ax.set_axis_off()
    ax.set_title(f"{R} replicas × {k} micro-batches: local sums, 1 all-reduce per update, then ÷ {B}", fontsize=10)
    return fig


def plot_update_ms(ms, accum_steps, title="Milliseconds per update",
                   xlabel="accum_steps (micro-batches per replica per update)"):
    """Milliseconds per update against accum_steps, one line per schedule.

        point = median of the schedule's timed updates at that accum_steps
        bar   = their middle half (25th to 75th percentile)

    Args:
        ms: `{label: [timings at accum_steps[0], timings at accum_steps[1], ...]}`, each entry
            an array of milliseconds (for example from `gradlab.studies.bench.interleaved_ms`).
        accum_steps: the micro-batches per replica and update of each entry, increasing.
        title: the figure's title.
        xlabel: the x-axis label; the default reads accum_steps across replicas, so a one-device
            lesson names its N instead.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/05-fused-accumulation.ipynb (one device: its own xlabel)
    """
    ns = [int(n) for n in accum_steps]
    if not ns or min(ns) < 1 or ns != sorted(set(ns)):
        raise ValueError(f"accum_steps must be increasing integers >= 1, got {accum_steps!r}")
    if not ms or any(len(rows) != len(ns) or min(map(len, rows)) == 0 for rows in ms.values()):
        raise ValueError(f"ms needs, per label, one non-empty array of timings per accum_steps ({len(ns)})")
    fig, ax = _figure((6.4, 3.6))
    for (label, rows), marker in zip(ms.items(), "osD^v"):
        q25, med, q75 = np.array([np.percentile(np.asarray(r, dtype=float), [25, 50, 75]) for r in rows]).T
        ax.errorbar(ns, med, yerr=[med - q25, q75 - med], marker=marker, capsize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ms per update (median; bars: middle half)")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    return fig


def plot_loop_peaks(peaks, gradient_mib=None, title="How far one gradient lifts the peak, against N"):
    """Lines of the allocator's peak rise (MiB) against the micro-batches N, one per loop.

        line k:  x = the N of peaks[label_k] (log 2 axis, ticked at every N), y = its MiB
        gradient_mib, if given: a right-hand axis reading MiB / gradient_mib, in gradients

    Args:
        peaks: `{label: {N: MiB}}`, for example `{"range (unrolled)": {2: 1.6, 8: 6.7}}`; every N a
            positive integer, every MiB finite.
        gradient_mib: MiB of one gradient (> 0), or None for no right-hand axis.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes (`ax.lines`: one per label, in order; the right-hand axis,
        if any, is `ax.child_axes[0]`).

    Lesson: notebooks/05-fused-accumulation.ipynb
    """
    if not peaks or not all(by_n for by_n in peaks.values()):
        raise ValueError(f"peaks needs at least one loop with at least one N, got {peaks!r}")
    for label, by_n in peaks.items():
        if not all(isinstance(n, (int, np.integer)) and n > 0 for n in by_n) or not np.all(np.isfinite(list(by_n.values()))):
            raise ValueError(f"{label}: N must be positive integers and MiB finite, got {by_n!r}")
    if gradient_mib is not None and not (np.isfinite(gradient_mib) and gradient_mib > 0):
        raise ValueError(f"gradient_mib must be positive, got {gradient_mib!r}")
    fig, ax = _figure((6.4, 3.2))
    for (label, by_n), marker in zip(peaks.items(), itertools.cycle("osD^v")):
        ns = sorted(by_n)
        ax.plot(ns, [by_n[n] for n in ns], marker=marker, label=label)
    ns = sorted({n for by_n in peaks.values() for n in by_n})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("N (micro-batches of one gradient)")
    ax.set_ylabel("peak rise, MiB (median)")
    if gradient_mib is not None:
        g = float(gradient_mib)
        ax.secondary_yaxis("right", functions=(lambda m: m / g, lambda k: k * g)).set_ylabel("gradients")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    return fig


def plot_example_weights(sizes):
    """The weight each example gets in the combined gradient, per micro-batch: plain mean vs n_i/B.

        plain mean of the N micro-batch gradients:  (1/N) (1/n_i) = 1 / (N n_i)
        weighted by n_i/B, as the large batch:      (n_i/B) (1/n_i) = 1/B

    The large batch gives every example 1/B; the plain mean gives the examples of a small
    micro-batch more and those of a large one less. Each pair of bars is labelled with the
    plain mean's factor, (1 / (N n_i)) / (1/B) = B / (N n_i).

    Args:
        sizes: the micro-batch sizes n_1, ..., n_N (positive integers).
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/01-why-average.ipynb
    """
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) <= 0:
        raise ValueError(f"sizes needs at least one positive micro-batch size, got {sizes}")
    N, B = len(sizes), sum(sizes)
    plain = [1 / (N * n) for n in sizes]
    at = np.arange(N)
    fig, ax = _figure((6.4, 3.4))
    ax.bar(at - 0.2, plain, width=0.4, color="tab:orange",
           label=f"plain mean of the {N} micro-batch gradients: 1/{N} × 1/n_i")
    ax.bar(at + 0.2, [1 / B] * N, width=0.4, color="tab:blue",
           label=f"weighted by n_i/B, as the large batch: 1/B = 1/{B}")
    for i, p in enumerate(plain):
        ax.annotate(f"x{p * B:.3g}", (i - 0.2, p), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=9)
    ax.set_xticks(at, [f"micro-batch {i + 1}\nn = {n}" for i, n in enumerate(sizes)])
    ax.set_ylabel("weight of one example")
    ax.set_ylim(0, 1.3 * max(max(plain), 1 / B))  # room above the bars for the factors and the legend
    ax.set_title(f"{' + '.join(map(str, sizes))} = {B}: what each example counts in the gradient", fontsize="medium")
    ax.legend(fontsize="small", frameon=False, loc="upper left")
    return fig


def plot_hub_vs_ring(copy_bytes, link_bytes_per_s, compute_ms, towers=range(2, 9),
                     compute_label="one tower's compute, at peak"):
    """Microseconds per update on the busiest link against the number of towers R.

        hub:   R - 1 copies out (the weights), then R - 1 back (the gradients)   t = 2 (R - 1) G / beta
        ring:  each device sends 2 (R - 1) / R copies while it receives as many   t = 2 (R - 1) / R * G / beta

    The hub's two phases come one after the other in an update (weights before the forward pass, gradients after
    the backward), so their times add; a ring's sends and receives run at once on a full-duplex link.

    (bandwidth only; lesson 14 adds each step's latency), beside one tower's compute as a flat line.

    Args:
        copy_bytes: G, the bytes of one copy of the weights or of a gradient (positive).
        link_bytes_per_s: beta, each link's bandwidth one way (positive).
        compute_ms: one tower's compute per update, ms (positive).
        towers: the values of R to draw (integers >= 2).
        compute_label: the legend's words for the flat compute line.
    Returns:
        a matplotlib Figure with 1 Axes, log-scaled in y, in µs.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    for name, value in (("copy_bytes", copy_bytes), ("link_bytes_per_s", link_bytes_per_s),
                        ("compute_ms", compute_ms)):
        if isinstance(value, bool) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    R = np.array([int(r) for r in towers])
    if R.size == 0 or R.min() < 2:
        raise ValueError(f"towers needs integers >= 2, got {list(towers)}")
    one_copy_us = copy_bytes / link_bytes_per_s * 1e6
    fig, ax = _figure((6.4, 3.4))
    ax.plot(R, 2 * (R - 1) * one_copy_us, "o-", label="hub: R - 1 copies out, then R - 1 back")
    ring_us = [ring_bytes(copy_bytes, r) / link_bytes_per_s * 1e6 for r in R]  # 14's ring, bandwidth only
    ax.plot(R, ring_us, "s-", label="ring: each device's link, 2 (R - 1) / R copies, both ways at once")
    ax.axhline(compute_ms * 1e3, color="gray", linestyle="--", label=compute_label)
    ax.set(yscale="log", xlabel="R (towers)", ylabel="µs per update")
    ax.set_title(f"Copies vs compute per update: G = {copy_bytes / 2**20:.2f} MiB at "
                 f"{link_bytes_per_s / 1e9:.0f} GB/s", fontsize="medium")
    ax.legend(fontsize="small")
    return fig


def plot_applied_rates(rates, title="The learning rate each update applies"):
    """The learning rate each update applied, one line per label, against the update k (from 1):
    e.g. a schedule Keras's accumulation reads at its calls, and the same wrapped in `PerUpdate`.

    Args:
        rates: `{label: rates}`, each a non-empty 1-D sequence, entry k - 1 the rate update k applied.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/06-keras-accumulation.ipynb
    """
    if not rates or any(np.ndim(r) != 1 or len(r) == 0 for r in rates.values()):
        raise ValueError("rates needs, per label, a non-empty 1-D sequence of the rate each update applied")
    fig, ax = _figure((6.4, 3.4))
    for (label, r), style in zip(rates.items(), itertools.cycle(("o-", "s--", "^:", "x-."))):  # every label drawn
        ax.plot(np.arange(1, len(r) + 1), np.asarray(r, dtype=float), style, ms=3, label=label)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("update k (from 1)")
    ax.set_ylabel("learning rate applied")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", frameon=False)
    return fig


def plot_spacings_to_reference(gaps, reference="the large batch's weights", rounding=10, floor=0.1):
    """How far each variant's weights land from one reference, in float32 spacings, on a log axis:
    one horizontal bar per variant, the rounding band (up to `rounding` spacings) shaded, so a
    miscount, thousands of spacings off, stands out from steps that differ only by rounding.

        a gap of 0 (bit for bit) cannot sit on a log axis: its bar is a hatched, unfilled stub ending at `floor`,
        labelled "0 (bit for bit), drawn at <floor>"

    Args:
        gaps: `{label: spacings}`, each a finite number >= 0 (e.g. gradlab's `spacings`), drawn top down.
        reference: what the gaps are measured to, named on the x axis.
        rounding: the band's upper edge, spacings (the README's "Two yardsticks": 10).
        floor: where a bar of 0 ends (positive, below 1).
    Returns:
        a matplotlib Figure with 1 Axes, log-scaled in x; each bar labelled with its value.

    Lesson: notebooks/10-accumulation-in-fit.ipynb
    """
    if not gaps:
        raise ValueError("gaps needs at least one {label: spacings}")
    for label, k in gaps.items():
        if isinstance(k, bool) or not np.isfinite(k) or k < 0:
            raise ValueError(f"gaps[{label!r}] must be a finite number of spacings >= 0, got {k!r}")
    if not 0 < floor < 1 or not rounding > floor:
        raise ValueError(f"need 0 < floor < 1 and rounding > floor, got floor {floor!r}, rounding {rounding!r}")
    labels, values = list(gaps), np.array([float(k) for k in gaps.values()])
    fig, ax = _figure((7.0, 0.45 * len(labels) + 1.6))
    at = np.arange(len(labels))[::-1]  # the first label on top
    ax.axvspan(floor / 10, rounding, color="tab:green", alpha=0.15, label=f"rounding: up to {rounding:g} spacings")
    colors = ["tab:green" if k <= rounding else "tab:red" for k in values]
    bars = ax.barh(at, np.maximum(values, floor) - floor / 10, left=floor / 10, color=colors, height=0.6)  # each ends at its gap
    for bar, k in zip(bars, values):
        if k == 0:  # not a distance of `floor`: a hatched, unfilled stub, labelled so
            bar.set(facecolor="none", edgecolor="tab:green", hatch="///")
    for y, k in zip(at, values):
        text = f"0 (bit for bit), drawn at {floor:g}" if k == 0 else (f"{k:.1f}" if k < 100 else f"{k:,.0f}")
        ax.text(max(k, floor) * 1.3, y, text, va="center", fontsize=10)
    ax.set_xscale("log")
    ax.set_xlim(floor / 10, max(values.max(), rounding) * 30)
    ax.set_yticks(at, labels, fontsize=10)
    ax.set_xlabel(f"distance to {reference}, float32 spacings (log scale)", fontsize=10)
    ax.set_title(f"How far each step lands from {reference}", fontsize=11)
    ax.legend(fontsize=9, frameon=False, loc="upper right")  # the top bars are short: room there
    return fig


def plot_miss_against_imbalance(misses, tokens):
    """Each update's miss against its shards' token imbalance, one labelled dot per update: a mean per
    token on R replicas weighs shard r by 1/R instead of D_r/D, so the miss grows with the imbalance.

        imbalance = (max_r D_r - min_r D_r) / sum_r D_r        (|D_0 - D_1| / (D_0 + D_1) on two replicas)

    Args:
        misses: each update's miss, a fraction >= 0 (e.g. 0.041 for 4.1%).
        tokens: each update's tokens shard by shard, [D_0, D_1, ...], all > 0, as many as `misses`.
    Returns:
        a matplotlib Figure with 1 Axes: x the imbalance, y the miss in percent; each dot labelled "[D_0, D_1]".

    Lesson: notebooks/15-fit-across-replicas.ipynb
    """
    misses = np.asarray(misses, dtype=float)
    if misses.ndim != 1 or not misses.size or len(tokens) != misses.size:
        raise ValueError(f"need one miss per update and as many token lists, got {misses.size} and {len(tokens)}")
    if not np.all(np.isfinite(misses)) or np.any(misses < 0):
        raise ValueError(f"misses must be finite fractions >= 0, got {misses.tolist()}")
    shards = [np.asarray(d, dtype=float) for d in tokens]
    if any(d.ndim != 1 or d.size < 2 or np.any(d <= 0) for d in shards):
        raise ValueError("each update's tokens must list at least two shards, each > 0")
    imbalance = np.array([(d.max() - d.min()) / d.sum() for d in shards])
    fig, ax = _figure((6.4, 3.4))
    ax.scatter(imbalance, 100 * misses, color="tab:blue", zorder=3)
    for i, (x_, y_, d) in enumerate(zip(imbalance, 100 * misses, shards)):
        others = [j for j in range(len(shards)) if j != i]
        near = min(others, key=lambda j: abs(imbalance[j] - x_)) if others else i
        above = y_ >= 100 * misses[near]  # the higher of two close dots labelled above, the lower below
        ax.annotate(f"[{', '.join(f'{v:g}' for v in d)}]", (x_, y_), textcoords="offset points", ha="center",
                    va="bottom" if above else "top", xytext=(0, 5 if above else -5), fontsize=8)
    ax.set_xlim(-0.1 * imbalance.max(), imbalance.max() * 1.15)
    ax.set_ylim(-0.12 * 100 * misses.max(), 100 * misses.max() * 1.2)
    ax.set_xlabel("token imbalance |D_0 − D_1| / (D_0 + D_1)", fontsize=10)
    ax.set_ylabel("miss of the update (%)", fontsize=10)
    ax.set_title("A mean per token on 2 replicas: each update's miss", fontsize=11)
    ax.grid(alpha=0.3)
    return fig


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
    fig, ax = _figure((9.0, 1.0 + 0.9 * len(lanes)))
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


def plot_fused_saving(table, ratios=None, title="One update: accumulate's N + 1 calls against fused's one"):
    """Milliseconds per update against N for `accumulate` and `fused`, each N annotated with their ratio.

        x = N (log 2 axis, ticked at every N); y = table[N][0] (accumulate), table[N][1] (fused)
        label at N = "x{ratio:.2f}", ratio = ratios[N] if given, else table[N][0] / table[N][1]

    Args:
        table: `{N: (accumulate_ms, fused_ms)}`, medians per update; N positive integers, ms positive.
        ratios: optional `{N: accumulate / fused}` (for example the median of per-round ratios), one per N.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes (`ax.lines`: accumulate, fused; `ax.texts`: one ratio per N, by N).

    Lesson: notebooks/05-fused-accumulation.ipynb
    """
    ns = sorted(table)
    if not ns or not all(isinstance(n, (int, np.integer)) and n > 0 for n in ns):
        raise ValueError(f"table needs positive integer N, got {list(table)!r}")
    pairs = np.array([table[n] for n in ns], dtype=float)
    if pairs.shape != (len(ns), 2) or not np.all(np.isfinite(pairs)) or np.any(pairs <= 0):
        raise ValueError(f"table needs (accumulate_ms, fused_ms) > 0 per N, got {table!r}")
    if ratios is not None and sorted(ratios) != ns:
        raise ValueError(f"ratios needs one value per N of table {ns}, got {sorted(ratios)!r}")
    shown = [float(ratios[n]) if ratios is not None else pairs[i, 0] / pairs[i, 1] for i, n in enumerate(ns)]
    fig, ax = _figure((6.4, 3.4))
    ax.plot(ns, pairs[:, 0], marker="o", label="accumulate (N + 1 calls)")
    ax.plot(ns, pairs[:, 1], marker="s", label="fused (1 call)")
    for n, top, r in zip(ns, pairs[:, 0], shown):
        ax.annotate(f"x{r:.2f}", (n, top), (0, 6), textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_ylim(0, 1.15 * pairs.max())
    ax.set_xlabel("N (micro-batches an update, same rows)")
    ax.set_ylabel("ms per update (median)")
    ax.set_title(title + "\n(labels: accumulate / fused)", fontsize="medium")
    ax.legend(fontsize="small", loc="upper left")
    return fig


def plot_call_timeline(n, call_us, work_us, title="One update in time: accumulate's N + 1 calls against fused's one"):
    """A schematic of one update on one time axis: `accumulate`'s N + 1 calls from Python against `fused`'s one.

        accumulate:  [call][work] x N, then [call] (apply)   ends at (N + 1) call_us + N work_us
        fused:       [call][work][work]...[work]             ends at call_us + N work_us

    A call box is the round trip from Python into a compiled function (its fixed price); a work box is one
    micro-batch's forward and backward. Boxes are drawn one after another: on this CPU nothing overlaps.

    Args:
        n: N, micro-batches an update (a positive integer).
        call_us: microseconds a call costs beyond its work (> 0; for example accumulate's extra call).
        work_us: microseconds of one micro-batch's work (> 0).
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes; `ax.patches`: the boxes, accumulate's lane (y = 1) first, in time order;
        `ax.texts`: each lane's end time in ms, accumulate's first.

    Lesson: notebooks/05-fused-accumulation.ipynb
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not all(isinstance(v, (int, float)) and np.isfinite(v) and v > 0 for v in (call_us, work_us)):
        raise ValueError(f"call_us and work_us must be finite and > 0, got {call_us!r}, {work_us!r}")
    lanes = {1: ["call", "work"] * n + ["call"], 0: ["call"] + ["work"] * n}  # y -> boxes in time order
    colors = {"call": "tab:red", "work": "tab:blue"}
    fig, ax = _figure((7.0, 2.2))
    for y, boxes in lanes.items():
        t = 0.0
        for kind in boxes:
            width = call_us if kind == "call" else work_us
            ax.barh(y, width / 1000, left=t / 1000, height=0.6, color=colors[kind], edgecolor="white", linewidth=0.6)
            t += width
        ax.text(t / 1000, y, f"  {t / 1000:.1f} ms", va="center", fontsize=8)
    end = ((n + 1) * call_us + n * work_us) / 1000
    ax.set_xlim(0, 1.15 * end)
    ax.set_yticks([1, 0], [f"accumulate\n({n + 1} calls)", "fused\n(1 call)"])
    ax.set_xlabel("ms from the update's start")
    keys = [Patch(color=colors["call"], label="a call from Python (round trip)"),
            Patch(color=colors["work"], label="a micro-batch's work")]
    ax.legend(handles=keys, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=2)
    ax.set_title(title, fontsize=10)
    return fig
