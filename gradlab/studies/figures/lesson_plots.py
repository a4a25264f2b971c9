"""Lesson figures: rounding between two equal trainings, the replicas schematic, and the
reproduction of the reference table.

    rounding:   d_k = max |w_accum(k) - w_large(k)|  after update k, on a log axis
    replicas:   replica r:  acc_r = sum_i (n_ri / B) g_ri   ->   one all-reduce: g_B = sum_r acc_r

Like `gradlab.studies.figures.plots`, every function returns a Figure already closed in pyplot, so a
notebook cell ending with the call shows it exactly once.

Lessons: notebooks/01-why-average.ipynb, notebooks/07-reproducing-the-table.ipynb,
notebooks/13-across-replicas.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..runs import reproduction


def _figure(figsize):
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    plt.close(fig)
    return fig, ax


def plot_rounding(curves, tolerance=None, scale=None, ylabel="max |w_accum - w_large|",
                  title="Two equal trainings: the largest weight difference after each update",
                  scale_label="float32 spacing of the weights"):
    """The largest weight difference between two trainings after each update, log scale.

        d_k = max_j |w_accum(k)_j - w_large(k)_j|

    Rounding stays within a small multiple of `scale` (the float32 spacing of the weights,
    `np.spacing(max |w|)`) and changes in steps; the axis starts at or below the decade under the
    smallest difference, `10 ** floor(log10(min d))`, so a labelled tick sits under every curve; a real error (a wrong weight, a schedule running
    too fast) is far larger from the first update, or grows with every update.

    Args:
        curves: dict `{label: [d_1, d_2, ...]}`, one difference per update (zeros are drawn
            at the bottom of the axis, where a log scale cannot show them, labelled
            "0 (identical)").
        tolerance: the bound the lesson asserts, drawn as a dashed line (optional): one
            number for every curve, or a dict `{label: bound}` with one bound per curve,
            each drawn in its curve's colour (SGD and Adam are asserted against different
            bounds).
        scale: the float32 spacing of the weights, drawn as a dotted line (optional).
        scale_label: what `scale` is the spacing of (lesson 07: the losses).
        ylabel, title: what is compared (lesson 07 draws the |difference| of two loss curves).
    Returns:
        a matplotlib Figure with 1 Axes.

    Lessons: notebooks/01-why-average.ipynb, notebooks/07-reproducing-the-table.ipynb
    """
    if not curves:
        raise ValueError("curves needs at least one training, got an empty dict")
    values = {name: np.asarray(d, dtype=float) for name, d in curves.items()}
    for name, d in values.items():
        if d.ndim != 1 or d.size == 0 or np.any(d < 0) or not np.all(np.isfinite(d)):
            raise ValueError(f"curve {name!r} must be a non-empty list of finite values >= 0, got {d!r}")
    positive = np.concatenate([d[d > 0] for d in values.values()])
    floor = 10 ** np.floor(np.log10(positive.min() if positive.size else 1e-9)) / 3
    fig, ax = _figure((8.6, 3.8))
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.75, len(values)))
    for (name, d), color in zip(values.items(), colors):
        updates = np.arange(1, d.size + 1)
        ax.plot(updates, np.where(d > 0, d, floor), marker="o", markersize=3, color=color, label=name)
    for name, bound, color in _tolerances(tolerance, list(values), colors):
        ax.axhline(bound, color=color, linestyle="--",
                   label=f"tolerance {bound:.0e}" + (f" ({name})" if name is not None else ""))
    if scale is not None:
        ax.axhline(scale, color="gray", linestyle=":", label=f"{scale_label} {scale:.1e}")
    if any(np.any(d == 0) for d in values.values()):
        ax.text(0.01, floor, "0 (identical)", transform=ax.get_yaxis_transform(), fontsize="small",
                va="bottom", color="dimgray")
    ax.set_yscale("log")
    # The axis reaches down to the decade below the smallest difference, so that a labelled tick
    # sits under every curve and its level can be read (autoscale may stop above the last decade).
    decade = 10 ** np.floor(np.log10(floor * 3 if np.any(np.concatenate(list(values.values())) == 0)
                                     else positive.min()))
    ax.set_ylim(bottom=min(ax.get_ylim()[0], decade))
    ax.set_xlabel("update")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside the data
    return fig


def _tolerances(tolerance, names, colors):
    # (curve name or None, bound, colour) for each dashed line; refuses a bound for no curve.
    if tolerance is None:
        return []
    pairs = tolerance.items() if isinstance(tolerance, dict) else [(None, tolerance)]
    lines = []
    for name, bound in pairs:
        if name is not None and name not in names:
            raise ValueError(f"tolerance names a curve that is not drawn: {name!r} (curves: {names})")
        if not np.isfinite(bound) or bound <= 0:
            raise ValueError(f"a tolerance must be a finite number > 0, got {bound!r}")
        lines.append((name, float(bound), "crimson" if name is None else colors[names.index(name)]))
    return lines


def _box(ax, x, y, w, h, text, color, fontsize=9):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", facecolor=color,
                                edgecolor="black", linewidth=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, **style):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10,
                                 linewidth=0.9, color=style.pop("color", "black"), **style))


def draw_replicas(shards, accum_steps):
    """A schematic of one update: replicas accumulate micro-batches, then one all-reduce.

        replica r:  acc_r = sum_i (n_ri / B) g_ri    (no communication)
        all-reduce: g_B = sum_r acc_r                (once per update)
        every replica: apply g_B                     (identical weights stay identical)

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
    fig, ax = _figure((8.0, 1.3 + 1.25 * R))
    colors = plt.get_cmap("Pastel1")(np.arange(R) % 9)
    lane = 1.25
    top = R * lane
    _box(ax, 0.0, top / 2 - 0.4, 1.3, 0.8, f"batch\nB = {B}", "whitesmoke")
    reduce_x = 2.4 + 1.05 * k + 0.3
    _box(ax, reduce_x, 0.15, 1.35, top - 0.3, "all-reduce\n(SUM)\nonce per\nupdate", "mistyrose")
    for r, (n_r, color) in enumerate(zip(shards, colors)):
        y = top - (r + 1) * lane + 0.25
        _arrow(ax, (1.3, top / 2), (1.75, y + 0.35))
        ax.text(1.8, y + 0.76, f"replica {r}: {n_r} examples", fontsize=8)
        for i, n in enumerate(split_sizes(n_r, k)):
            x = 1.8 + 1.05 * i
            _box(ax, x, y, 0.9, 0.7, f"{n} ex.\n× {n}/{B}", color, fontsize=8)
            if i:
                _arrow(ax, (x - 0.15, y + 0.35), (x, y + 0.35), color="dimgray")
        x_end = 1.8 + 1.05 * k - 0.15
        ax.text((1.8 + x_end) / 2, y - 0.14, f"accumulate in replica {r}: no communication",
                ha="center", va="center", fontsize=7, color="dimgray")
        _arrow(ax, (x_end, y + 0.35), (reduce_x, y + 0.35))
        _box(ax, reduce_x + 1.75, y, 1.3, 0.7, f"apply $g_B$\nreplica {r}", "honeydew", fontsize=8)
        _arrow(ax, (reduce_x + 1.35, y + 0.35), (reduce_x + 1.75, y + 0.35))
    ax.set_xlim(-0.1, reduce_x + 3.2)
    ax.set_ylim(-0.1, top + 0.35)
    ax.set_axis_off()
    ax.set_title(f"{R} replicas × {k} micro-batches: {R * k} gradients, 1 all-reduce per update",
                 fontsize=10)
    return fig


def plot_reproduction(record, ax=None):
    """Best-of-checkpoints and final accuracy against N, mean ± population std as error bars,
    with the published row beside; the legend sits outside the data.

    Args:
        record: what `reproduction.grid` returns (or its JSON, loaded).
        ax: matplotlib axes to draw on; default a new figure.
    Returns:
        The axes.

    Lesson: notebooks/07-reproducing-the-table.ipynb
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(9.5, 4.2))
    ns = np.array([r["accum_steps"] for r in record["rows"]])
    pos = np.arange(len(ns))
    series = [("best of checkpoints (gradlab)", "best_mean", "best_std", -0.12, "o"),
              ("final (gradlab)", "final_mean", "final_std", 0.0, "s")]
    for label, m, s, dx, marker in series:
        ax.errorbar(pos + dx, [100 * r[m] for r in record["rows"]],
                    [100 * r[s] for r in record["rows"]], marker=marker, capsize=4, label=label)
    ref = [record["seed_table"].get(str(n)) for n in ns]
    if all(ref):
        ax.errorbar(pos + 0.12, [r[0] for r in ref], [r[1] for r in ref], marker="^", capsize=4,
                    linestyle=":", color="gray", label="Chlebus 2018, best (full MNIST: other setup)")
    ax.set_xticks(pos, [f"N={n}\nb={reproduction.EFFECTIVE_BATCH // n}" for n in ns])
    ax.set_xlabel("accumulation count N, micro-batch b")
    ax.set_ylabel("test accuracy % (mean ± std)")
    ax.set_title(f"Effective batch {reproduction.EFFECTIVE_BATCH}, {record['updates']:,} updates, "
                 f"{record['runs']} runs per N")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    ax.figure.tight_layout()
    return ax


def plot_example_weights(sizes):
    """The weight each example gets in the combined gradient, per micro-batch: plain mean vs n_i/B.

        plain mean of the means:  (1/k) (1/n_i) = 1 / (k n_i)     weighted by n_i/B:  (n_i/B) (1/n_i) = 1/B

    The large batch gives every example 1/B; the plain mean gives the examples of a small
    micro-batch more and those of a large one less. Each pair of bars is labelled with the
    plain mean's factor, (1 / (k n_i)) / (1/B) = B / (k n_i).

    Args:
        sizes: the micro-batch sizes n_1, ..., n_k (positive integers).
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/01-why-average.ipynb
    """
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) <= 0:
        raise ValueError(f"sizes needs at least one positive micro-batch size, got {sizes}")
    k, B = len(sizes), sum(sizes)
    plain = [1 / (k * n) for n in sizes]
    at = np.arange(k)
    fig, ax = _figure((6.4, 3.4))
    ax.bar(at - 0.2, plain, width=0.4, color="tab:orange", label="plain mean of the means: 1/(k n_i)")
    ax.bar(at + 0.2, [1 / B] * k, width=0.4, color="tab:blue", label=f"weighted by n_i/B: 1/B = 1/{B}")
    for i, p in enumerate(plain):
        ax.annotate(f"x{p * B:.3g}", (i - 0.2, p), xytext=(0, 3), textcoords="offset points",
                    ha="center", va="bottom", fontsize=9)
    ax.set_xticks(at, [f"micro-batch {i + 1}\nn = {n}" for i, n in enumerate(sizes)])
    ax.set_ylabel("weight of one example")
    ax.set_ylim(0, 1.3 * max(max(plain), 1 / B))  # room above the bars for the factors and the legend
    ax.set_title(f"{' + '.join(map(str, sizes))} = {B}: what each example counts in the gradient", fontsize="medium")
    ax.legend(fontsize="small", frameon=False, loc="upper left")
    return fig


def plot_split_miss_panels(batches, miss, unequal, accum_steps, fixed=None, floor=1e-9):
    """Keras's one-step miss and the split's unequalness in two panels that share the B axis:

        top:     max(miss(B), floor) on a log axis,  miss(B) = |g_keras − g_B| / |g_B|,
                 g_keras = (1/N) sum_i g_i  (what Keras applies, computed),  g_B = sum_i (n_i/B) g_i
        bottom:  unequal(B) = sum_i |1/N − n_i/B|  as bars  (0 exactly when N divides B)

    Args:
        batches: the batch sizes B (the shared x axis).
        miss: the relative miss at each B (top, log axis).
        unequal: the split's unequalness at each B (bottom, bars).
        accum_steps: N, for the labels and the hollow markers of the B that N divides.
        fixed: optional misses of a corrected feed at each B, drawn as a second line.
        floor: the top axis's bottom, where exact zeros are drawn (a log axis cannot show 0).
    Returns:
        a matplotlib Figure (closed in pyplot) with 2 Axes, the miss above the bars.

    Lesson: notebooks/10-keras-accumulation.ipynb
    """
    batches = np.asarray(batches)
    if not (len(batches) == len(miss) == len(unequal)) or (fixed is not None and len(fixed) != len(batches)):
        raise ValueError("plot_split_miss_panels needs one miss and one unequalness per batch size")
    fig, (ax, bars) = plt.subplots(2, 1, sharex=True, figsize=(6.0, 4.2), layout="constrained",
                                   gridspec_kw={"height_ratios": [2, 1]})
    plt.close(fig)
    lifted = np.maximum(np.asarray(miss, float), floor)
    ax.plot(batches, lifted, "o-", color="tab:orange", label="Keras: sum / N")
    exact = batches % accum_steps == 0
    ax.plot(batches[exact], lifted[exact], "o", mfc="white", color="tab:orange", ms=9, zorder=3,
            label="N divides B: equal micro-batches")
    if fixed is not None:
        ax.plot(batches, np.maximum(np.asarray(fixed, float), floor), "s:", color="tab:blue", ms=4,
                label="fed N (n_i/B) g_i")
    ax.set_yscale("log")
    ax.set_ylim(floor, 10.0)  # room above Keras's misses for the legend
    ax.set_ylabel("|g_keras − g_B| / |g_B|")
    ax.legend(fontsize="small", frameon=False, loc="upper center", ncol=2)
    bars.bar(batches, unequal, color="0.6", width=0.6, label="unequalness Σ|1/N − n_i/B|")
    bars.set_ylim(0, 1.5 * max(max(unequal), 1e-12))
    bars.set_ylabel("unequalness")
    bars.legend(fontsize="small", frameon=False, loc="upper right")
    bars.set_xticks(batches)
    bars.set_xlabel(f"batch size B, split into N = {accum_steps} micro-batches")
    ax.set_title(f"What Keras applies (computed: sum / N) against one large batch, one step, N = {accum_steps}",
                 fontsize="medium")
    return fig
