"""Figures for the pitfall lessons: each token's weight under a way of accumulating against its
share, loss per token and per sequence over training, BatchNorm's
gradient error against the micro-batch size, dropout's gap against the number of draws averaged, the weights an EMA of the weights
puts on each update, the learning rate each update applies, a gradient against float16's range, which update applies each
micro-batch, clipping each micro-batch's miss against the threshold, and loss curves under clipping.

Lesson: notebooks/07-pitfalls-what-to-count.ipynb, notebooks/08-clipping-and-loss-scale.ipynb,
notebooks/09-moving-averages.ipynb
"""
from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from ..stats import moving_average
from .plots import DASHES, _colors, _figure


def _check_series(name, series):
    if not series:
        raise ValueError(f"{name} needs at least one entry, got {series!r}")


def plot_token_weights(tokens, ratios, title="A token's weight in the update, against its share 1/D",
                       zoom=None):
    """Each sequence's per-token weight over its share 1/D, against the sequence's tokens ω_j, log-log.

        ratio_j = (weight of one of sequence j's tokens) / (1 / D),   D = sum_j ω_j
        naive rule, sequence j in micro-batch i:  ratio_j = D / (N D_i),  D_i = sum_{j in i} ω_j;
        the large batch: 1

    One marker style per label, one point per sequence; a dashed line at 1 is the large batch's
    weight (and the fix's): a point above it is over-weighted, below it under-weighted. The y range
    runs from the lowest ratio / 1.5 to the highest x 1.5, and the highest point is labelled with its
    value (2 decimals).

    Args:
        tokens: ω_j, the tokens of each sequence (positive): its own weight in the count D.
        ratios: dict `{label: [ratio_j, one per sequence]}`, each as long as `tokens`.
        title: the figure's title.
        zoom: a label of `ratios` to draw again in a second panel on a linear y axis that spans
            only that series and 1 (padded by a tenth of its span each side), so a ratio a few
            percent off 1 is visible; None: one panel.
    Returns:
        a matplotlib Figure with 1 Axes (2 with `zoom`: the log-log panel, then the zoomed one).
    """
    _check_series("ratios", ratios)
    tokens = np.asarray(tokens, dtype=np.float64)
    for label, r in ratios.items():
        if np.shape(r) != tokens.shape:
            raise ValueError(f"{label!r}: needs one ratio per sequence ({tokens.shape}), got {np.shape(r)}")
    if np.any(tokens <= 0):
        raise ValueError(f"tokens must be positive, got {tokens.tolist()}")
    if zoom is not None and zoom not in ratios:
        raise ValueError(f"zoom={zoom!r} is not a label of ratios ({list(ratios)})")
    if zoom is None:
        fig, ax = _figure(figsize=(5.6, 3.8))
        panels = (ax,)
    else:
        fig, panels = _figure(ncols=2, figsize=(10.0, 3.8))
        ax, zax = panels
    colors, markers = _colors(len(ratios)), "os^d"

    def dots(axes, k, label):  # series k of `ratios`, the same marker and colour in either panel
        axes.plot(tokens, np.asarray(ratios[label], dtype=np.float64), markers[k % len(markers)],
                  color=colors[k], alpha=0.8, markersize=6 - k, linestyle="None", label=label)

    for k, label in enumerate(ratios):
        dots(ax, k, label)
    if zoom is not None:
        dots(zax, list(ratios).index(zoom), zoom)
    for axes in panels:
        axes.axhline(1.0, linestyle="--", color="black", linewidth=1, label="large batch, and the fix: 1")
        axes.set_xscale("log")
        axes.set_xlabel(r"tokens in the sequence $\omega_j$")
    ax.set_yscale("log")
    values = np.concatenate([np.asarray(r, dtype=np.float64) for r in ratios.values()] + [[1.0]])
    ax.set_ylim(values.min() / 1.5, values.max() * 1.5)  # room above the highest point: nothing clipped
    top = values.argmax()  # the highest weight, labelled with its value: it is off the 1-2-5 ticks
    x_top = np.tile(tokens, len(ratios))[top] if top < values.size - 1 else 1.0
    ax.annotate(f"{values[top]:.2f}", (x_top, values[top]), xytext=(6, 4), textcoords="offset points",
                fontsize="small")
    for axis in (ax.yaxis, *(p.xaxis for p in panels)):  # plain 0.5, 1, 2, 5, 10, not powers of ten
        axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_locator(NullLocator())
    ax.set_ylabel("a token's weight / its share $1/D$")
    ax.set_title(title)
    ax.legend(fontsize="small")
    if zoom is not None:
        r = np.asarray(ratios[zoom], dtype=np.float64)
        lo, hi = min(r.min(), 1.0), max(r.max(), 1.0)
        pad = 0.1 * (hi - lo) if hi > lo else 0.05
        zax.set_ylim(lo - pad, hi + pad)
        zax.set_ylabel("the same, linear scale")
        zax.set_title(f"Zoomed: {zoom}")
        zax.legend(fontsize="small")
    return fig


def plot_token_and_sequence_loss(curves, window=21, title="Loss of the update's batch"):
    """Loss per token (left) and per sequence (right) of each update's batch, raw and smoothed.

        per token:    sum_j sum_t l_jt / sum_j T_j    (every token counts once)
        per sequence: mean_j (sum_t l_jt / T_j)       (every sequence counts once)
        smoothed_t = mean(loss_{t-h} ... loss_{t+h}),  h = window // 2, drawn where the window fits

    Each panel draws every curve faint per update and as a centred moving average, dashed in
    turn so that coinciding runs stay visible; log y, ticked plainly at 1, 2, 3, 5, 7 x 10^k.

    Args:
        curves: dict `{label: array of shape (updates, 2)}`: column 0 per token, column 1 per sequence.
        window: moving-average width in updates (odd; an even one takes one more).
        title: the figure's title, above both panels.
    Returns:
        a matplotlib Figure with 2 Axes.
    """
    _check_series("curves", curves)
    curves = {label: np.asarray(c, dtype=np.float64) for label, c in curves.items()}
    for label, c in curves.items():
        if c.ndim != 2 or c.shape[1] != 2:
            raise ValueError(f"{label!r}: needs shape (updates, 2), got {c.shape}")
    fig, axes = _figure(ncols=2, figsize=(10.0, 3.8))
    h = window // 2
    for column, (ax, counted) in enumerate(zip(axes, ("token", "sequence"))):
        for k, ((label, c), color) in enumerate(zip(curves.items(), _colors(len(curves)))):
            losses, t = c[:, column], np.arange(1, len(c) + 1)
            ax.plot(t, losses, color=color, alpha=0.2, linewidth=0.7)
            inner = slice(h, len(losses) - h) if len(losses) > 2 * h else slice(None)
            ax.plot(t[inner], moving_average(losses, window)[inner], color=color, linewidth=1.8,
                    linestyle=DASHES[k % len(DASHES)], label=label)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 3, 5, 7)))  # plain 0.3, 0.5, 1, 2
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("update")
        ax.set_ylabel(f"mean loss per {counted} (log scale)")
        ax.set_title(f"every {counted} counts once")
        ax.legend(title=f"faint: per update; line: mean of {2 * h + 1}", fontsize="small",
                  title_fontsize="small")
    fig.suptitle(title)
    return fig


def plot_batchnorm_error(errors, batch):
    """Relative error of the accumulated gradient against the micro-batch size n, log-log.

        error(n) = ||sum_i (n/B) grad L_i - grad L|| / ||grad L||,  each L_i normalised over n rows

    One dot per seed, the mean as a line. No power law is drawn: the error follows none, since it
    must reach exactly 0 at n = B (one micro-batch is the batch), which a log axis cannot show;
    a dashed vertical line marks n = B instead.

    Args:
        errors: dict `{micro-batch size n: [relative error per seed]}`.
        batch: B, the examples per update (for the title).
    Returns:
        a matplotlib Figure with 1 Axes.
    """
    _check_series("errors", errors)
    sizes = np.array(sorted(errors), dtype=float)
    means = np.array([np.mean(errors[n]) for n in sorted(errors)])
    fig, ax = _figure(figsize=(5.6, 3.8))
    for k, n in enumerate(sorted(errors)):  # one legend entry for all the seeds' dots
        ax.plot([n] * len(errors[n]), errors[n], "o", color="grey", alpha=0.5, markersize=4,
                label="one seed" if k == 0 else None)
    ax.plot(sizes, means, "o-", color=_colors(1)[0], label="mean over seeds")
    ax.axvline(batch, linestyle="--", color="black", linewidth=1, label=f"n = B = {batch}: exact (error 0)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted(set(sizes) | {float(batch)})
    ax.set_xticks(ticks, [str(int(n)) for n in ticks])
    ax.set_xlabel("micro-batch size n (examples)")
    ax.set_ylabel("relative error of the gradient")
    ax.set_title(f"BatchNorm over micro-batches vs one batch of {batch}")
    ax.legend(fontsize="small")
    return fig


def plot_dropout_gap(gaps, yardstick, ratio=False):
    """Gap between the means of S accumulated and S large-batch gradients, against S, log-log.

        gap(S) = ||mean_S(g_accumulated) - mean_S(g_large)|| / ||mean_S(g_large)||

    The yardstick is the same gap for a second set of large batches: noise only, the baseline.
    No 1/sqrt(S) guide: the denominator shrinks with S too, so noise alone falls more slowly.
    With `ratio=True` a second panel draws gap / yardstick against S beside a guide at 1 (the
    gap noise alone leaves): a bias would hold the ratio above the guide as S grows.

    Args:
        gaps, yardstick: dicts `{S: gap}` over the same S.
        ratio: also draw the gap / yardstick panel (False: the one panel alone).
    Returns:
        a matplotlib Figure with 1 Axes (2 with `ratio`).
    """
    _check_series("gaps", gaps)
    if sorted(gaps) != sorted(yardstick):
        raise ValueError(f"gaps and yardstick need the same S, got {sorted(gaps)} and {sorted(yardstick)}")
    s = np.array(sorted(gaps), dtype=float)
    fig, axes = _figure(ncols=1 + bool(ratio), figsize=(10.0 if ratio else 5.6, 3.8))
    ax = axes[0] if ratio else axes
    ax.plot(s, [gaps[k] for k in sorted(gaps)], "o-", color="crimson", label="accumulate vs large batch")
    ax.plot(s, [yardstick[k] for k in sorted(gaps)], "s--", color=_colors(1)[0],
            label="second large batch vs large batch: noise only")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    # ticks at 1, 2, 5 x 10^k, written plainly: the smallest gaps (about 0.1) get a labelled tick
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    lowest = min(min(gaps.values()), min(yardstick.values()))
    # down to the decade's tick below every point, a little past it so that its label is drawn
    ax.set_ylim(bottom=0.9 * 10 ** np.floor(np.log10(lowest)))
    ax.set_xticks(s, [str(int(k)) for k in s])
    ax.set_xlabel("gradients averaged S (draws)")
    ax.set_ylabel("relative gap of the means")
    ax.set_title("Dropout under accumulation: the gap against noise alone")
    ax.legend(fontsize="small")
    if ratio:
        _plot_gap_ratio(axes[1], s, [gaps[k] / yardstick[k] for k in sorted(gaps)])
    return fig


def _plot_gap_ratio(ax, s, ratios):
    """gap / yardstick against S, a guide at 1: where the gap is the noise alone."""
    ax.plot(s, ratios, "o-", color="crimson", label="gap / yardstick")
    ax.axhline(1.0, linestyle="--", color="black", linewidth=1, label="1: the gap noise alone leaves")
    ax.set_xscale("log", base=2)
    ax.set_xticks(s, [str(int(k)) for k in s])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(0, max(2.0, 1.1 * max(ratios)))
    ax.set_xlabel("gradients averaged S (draws)")
    ax.set_ylabel("gap / yardstick")
    ax.set_title("The gap in units of the noise")
    ax.legend(fontsize="small")


def plot_ema_coefficients(coefficients):
    """The weight an average of the weights puts on theta_1 ... theta_K, grouped bars.

        once per update:  c_k = (1 - rho) rho^(K - k)  (c_1 = rho^(K-1)), rho the decay, k the update

    Args:
        coefficients: dict `{label: [c_1, ..., c_K]}`, every list of the same length K.
    Returns:
        a matplotlib Figure with 1 Axes.
    """
    _check_series("coefficients", coefficients)
    lengths = {len(c) for c in coefficients.values()}
    if len(lengths) != 1:
        raise ValueError(f"every coefficient list needs the same length, got lengths {sorted(lengths)}")
    updates = lengths.pop()
    fig, ax = _figure(figsize=(6.4, 3.8))
    width = 0.8 / len(coefficients)
    for i, ((label, c), color) in enumerate(zip(coefficients.items(), _colors(len(coefficients)))):
        ax.bar(np.arange(1, updates + 1) + (i - (len(coefficients) - 1) / 2) * width, c, width, label=label,
               color=color)
    ax.set_xticks(np.arange(1, updates + 1), [rf"$\theta_{k}$" for k in range(1, updates + 1)])
    ax.set_xlabel("the weights after update k")
    ax.set_ylabel("weight in the average (no unit)")
    ax.set_title(f"The average of the weights after {updates} updates")
    ax.legend(fontsize="small")
    return fig


def plot_update_timeline(micro_batches, accum_steps, updates):
    """Which update each micro-batch goes into, one row per optimizer, in the order they are fed.

        micro-batch j is fed in step j // accum_steps + 1 (one step: one batch of accum_steps micro-batches)

    A box per micro-batch, coloured by the update that applies it; a hatched box is skipped (never
    applied), a dashed one is still held when the steps end. Dotted lines separate the steps.

    Args:
        micro_batches: the micro-batches' labels, in the order they are fed.
        accum_steps: micro-batches per step.
        updates: dict `{row label: [update number, None (skipped) or "held", one per micro-batch]}`.
    Returns:
        a matplotlib Figure with 1 Axes.
    """
    _check_series("updates", updates)
    if any(len(row) != len(micro_batches) for row in updates.values()):
        raise ValueError(f"every row of updates needs one entry per micro-batch ({len(micro_batches)}), "
                         f"got lengths {[len(row) for row in updates.values()]}")
    numbers = sorted({u for row in updates.values() for u in row if isinstance(u, int)})
    color_of = dict(zip(numbers, _colors(len(numbers))))
    fig, ax = _figure(figsize=(1.4 * len(micro_batches) + 1.5, 0.9 * len(updates) + 1.4))
    for r, (label, row) in enumerate(updates.items()):
        y = len(updates) - 1 - r  # the first row on top
        for j, (name, u) in enumerate(zip(micro_batches, row)):
            skipped, held = u is None, u == "held"
            ax.add_patch(Rectangle((j + 0.05, y + 0.1), 0.9, 0.8, linewidth=1.2, edgecolor="black",
                                   facecolor="white" if skipped or held else color_of[u],
                                   hatch="xx" if skipped else None, linestyle="--" if held else "-"))
            text = "skipped" if skipped else "held" if held else f"update {u}"
            dark = not (skipped or held) and u == numbers[0]  # viridis' first colour is dark
            ax.text(j + 0.5, y + 0.5, f"{name}\n{text}", ha="center", va="center", fontsize="small",
                    color="white" if dark else "black",
                    bbox=dict(facecolor="white", edgecolor="none", pad=1) if skipped else None)
    for c in range(accum_steps, len(micro_batches), accum_steps):
        ax.axvline(c, linestyle=":", color="grey")
    ax.set_xlim(0, len(micro_batches))
    ax.set_ylim(0, len(updates))
    ax.set_xticks([accum_steps * (c + 0.5) for c in range(-(-len(micro_batches) // accum_steps))],
                  [f"step {c + 1}" for c in range(-(-len(micro_batches) // accum_steps))])
    ax.set_yticks([len(updates) - 0.5 - r for r in range(len(updates))], list(updates))
    ax.tick_params(length=0)
    ax.set_title("Which update applies each micro-batch")
    return fig


FLOAT16_LINES = {"smallest subnormal, 6.0e-08": -24.0, "smallest normal, 6.1e-05": -14.0,
                 "largest, 65504": float(np.log2(65504.0))}


def plot_float16_range(magnitudes, title="A gradient's entries against float16's range"):
    """Histograms of log2 |g|, one bin per power of two, with float16's limits drawn as vertical lines.

        bin k holds the entries with k <= log2 |g| < k + 1;  lines at -24 (2^-24, the smallest subnormal),
        -14 (2^-14, the smallest normal) and log2(65504) = 15.9993 (the largest finite value)

    In float16 an entry below 2^-25 (half the smallest subnormal) rounds to 0; between -24 and -14 it keeps fewer
    digits; past the last line it is inf. One filled step outline per label (a loss scale λ shifts log2 |λ g| by log2 λ).

    Args:
        magnitudes: dict `{label: array of |g|}`, each entry positive (leave out the zeros).
    Returns:
        a matplotlib Figure with 1 Axes; `fig.counts` is `{label: (counts, edges)}` as drawn.
    """
    _check_series("magnitudes", magnitudes)
    logs = {}
    for label, m in magnitudes.items():
        m = np.ravel(np.asarray(m, np.float64))
        if m.size == 0 or not np.all(m > 0):
            raise ValueError(f"magnitudes[{label!r}] needs positive entries (leave out the zeros)")
        logs[label] = np.log2(m)
    lo = int(np.floor(min(min(v.min() for v in logs.values()), -25.0)))
    hi = int(np.ceil(max(max(v.max() for v in logs.values()), 17.0))) + 1
    edges = np.arange(lo, hi + 1, dtype=np.float64)
    fig, ax = _figure(figsize=(8.0, 3.8))
    fig.counts = {}
    for (label, v), color in zip(logs.items(), _colors(len(logs))):
        counts, _ = np.histogram(v, bins=edges)  # the last edge lies past every value: all bins half-open
        ax.stairs(counts, edges, fill=True, alpha=0.45, color=color, label=label)
        fig.counts[label] = (counts, edges)
    for (name, x), style in zip(FLOAT16_LINES.items(), DASHES[1:]):
        ax.axvline(x, color="black", linestyle=style, linewidth=1.2, label=f"float16 {name}")
    ax.set_xlabel("log2 |λ g|, a gradient entry times the loss scale λ")
    ax.set_ylabel("entries per power of two")
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper left")
    return fig


def plot_clip_sweep(misses, micro_norms, window_norm, title="Clipping each micro-batch against clipping once"):
    """Clipping each micro-batch's miss against the threshold c, with the norms that set it marked.

        miss(c) = ||u_each(c) - u_once(c)|| / ||u_once(c)||,
        u_each = sum_i (n_i / B) clip(g_i, c),  u_once = clip(sum_i (n_i / B) g_i, c)

    One point per threshold, joined, on a log2 x axis; a dotted vertical line at each micro-batch's
    norm ||g_i|| (clip each bites where c is below some of them) and a dashed one at the window's
    norm (below it both updates are clipped and scale alike, so the miss is flat). The y axis is in
    percent, from 0.

    Args:
        misses: dict `{c: miss as a fraction}`, c > 0.
        micro_norms: the micro-batch gradients' norms ||g_i||, before clipping.
        window_norm: the norm of the window's weighted sum, before clipping.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes; the joined line's data are (c, 100 x miss), sorted by c.
    """
    _check_series("misses", misses)
    cs = np.array(sorted(misses), dtype=np.float64)
    if np.any(cs <= 0):
        raise ValueError(f"thresholds must be positive, got {cs.tolist()}")
    percent = np.array([100.0 * misses[c] for c in sorted(misses)])
    fig, ax = _figure(figsize=(5.6, 3.6))
    ax.plot(cs, percent, "o-", color=_colors(1)[0], label="clip each vs clip once")
    for k, m in enumerate(micro_norms):
        ax.axvline(m, color="grey", linestyle=":", linewidth=1.2,
                   label="a micro-batch's norm" if k == 0 else None)
    ax.axvline(window_norm, color="black", linestyle="--", linewidth=1.2, label="the window's norm")
    ax.set_xscale("log", base=2)
    ax.set_xticks(cs, [f"{c:g}" for c in cs])
    ax.set_ylim(0, max(percent.max(), 1.0) * 1.15)
    ax.set_xlabel("clipping threshold c (log scale)")
    ax.set_ylabel("miss (%)")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return fig


def plot_clip_curves(curves, title="Loss after each update, clipping at c = 0.5"):
    """Loss curves of runs that clip each micro-batch or clip once, one colour per N.

        curve[t] = the loss after update t + 1 (t = 0, 1, ...), drawn at x = t + 1

    Args:
        curves: dict `{(N, way): [loss after each update]}`, way "each" (clip each micro-batch,
            solid) or "once" (clip the window's sum, dashed); N = 1 is the large batch.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes; one line per entry, labelled "N = n, clip each|once".
    """
    _check_series("curves", curves)
    ways = {"each": "-", "once": "--"}
    for (N, way), c in curves.items():
        if way not in ways:
            raise ValueError(f"way must be 'each' or 'once', got {way!r}")
        if len(c) == 0:
            raise ValueError(f"curve {(N, way)!r} is empty")
    sizes = sorted({N for N, _ in curves})
    color = dict(zip(sizes, _colors(len(sizes))))
    fig, ax = _figure(figsize=(5.6, 3.6))
    for (N, way), c in curves.items():
        ax.plot(np.arange(1, len(c) + 1), np.asarray(c, np.float64), color=color[N], linestyle=ways[way],
                linewidth=1.8, label=f"N = {N}, clip {way}")
    ax.set_xlabel("update")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return fig
