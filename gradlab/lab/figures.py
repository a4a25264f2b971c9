"""The lab's figures: its live curves, its summary against the batch, and its picture.

    plot_lab         loss | test accuracy | Δ from one large batch, against x  (live)
    plot_lab_batches accuracy against B | loss noise against B | time per update and memory
    plot_picture     loss | Δ | accuracy against B  (three panels, for a stored notebook)
    plot_one_seed    loss against examples seen | accuracy against B  (each group's first seed)

Every legend sits under its row of panels, outside the data. Drawn from the lab's thread, so
the figures never enter pyplot (`matplotlib.figure.Figure`); the lab shows them as PNGs.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ..studies.figures.plots import finite
from . import curves, families
from .settings import X_AXES

PICTURE_WIDTH, PICTURE_DPI = 9.6, 100  # inches, dots per inch: 960 pixels, a notebook's width


def plot_lab(groups, x="updates", current=None, window=15):
    """The lab's curves: every configuration shown, each over its seeds, against x.

    Left: the training loss (faint: each update; line: moving average, band ± std over
    seeds); middle: the test accuracy; right: Δ, the largest |loss - loss of the large batch
    with the same B and seed|, on a log scale, where an exact strategy sits at float rounding
    (1e-7) and a failure mode far above it. The legend under the panels names each
    configuration with its largest Δ and change of final accuracy.

    Args:
        groups: configurations, as `Lab.groups`: each has `results` (one RunResult per seed;
            a running one may be partial), `label`, and optionally `color` and `reference`
            (`{seed: RunResult}` of its large-batch twin).
        x: "updates", "examples" or "seconds".
        current: index in `groups` of the configuration to draw bold.
        window: moving-average width in updates.
    Returns:
        a matplotlib Figure with 3 Axes.

    Lesson: notebooks/17-the-lab.ipynb
    """
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}; got {x!r}")
    drawn = [(i, g) for i, g in enumerate(groups) if g.results]
    fig, [(axes, legend_y)] = _rows(14.0, [(3, math.ceil(len(drawn) / 2))], panel=3.4)
    ax_loss, ax_acc, ax_diff = axes
    _curves(ax_loss, ax_diff, groups, x, current, window, ax_acc=ax_acc)
    ax_acc.set_ylabel("test accuracy (%)")
    ax_acc.set_title("Test accuracy while training" + (" (± std over seeds)" if _seeded(groups) else ", one seed"))
    ax_acc.set_xlabel(curves.X_LABELS[x])
    _legend(fig, ax_loss.get_lines(), legend_y, ncol=2)
    return fig


def plot_lab_batches(groups):
    """The lab's summary: the finished configurations against the effective batch B = N·b.

    Left: final test accuracy; middle: loss noise (the std of the loss around its moving
    average), mean ± std over seeds, one colour per family (`families`), each fixed-b
    family's noise with its fitted log-log slope. Right: milliseconds per update and the
    allocator peak of a fresh process for each configuration (`run_memory`).

    Args:
        groups: as in `plot_lab`; unfinished ones are left out.
    Returns:
        a matplotlib Figure with 3 Axes.

    Lesson: notebooks/17-the-lab.ipynb
    """
    colors = _colors(groups)
    done = [g for g in groups if g.results and _finished(g)]
    fig, [(axes, legend_y)] = _rows(14.0, [(3, len(families.families(done)))], panel=3.4)
    families.against_batch(axes[0], axes[1], done)
    _cost(axes[2], done, [colors[id(g)] for g in done])
    _legend(fig, axes[0].get_legend_handles_labels()[0], legend_y, ncol=1)
    return fig


def plot_picture(groups, x="updates", current=None, window=15, labels=None, title=None):
    """The lab at a notebook's width, in three panels: the training loss and Δ from one large
    batch against x, and the final test accuracy against B by family. One legend under them:
    each configuration with its largest Δ and change of final accuracy, then the families.
    (Loss noise, time and memory stay in the live lab; lesson 11 measures memory.)

    With `labels`, one name per group: each group is one legend entry under its name, and the
    right panel shows, on its own row, each later group's final accuracy minus the first
    group's with the same seed (`_paired_rows`), so that runs at one B are told apart and
    a gap is read seed by seed, as the lesson judges it.

    Args:
        groups, x, current, window: as in `plot_lab`.
        labels: None, or one short name per group, in order; the first group is the reference.
        title: None, or a line over the panels (the setting the picture shows).
    Returns:
        a matplotlib Figure with 3 Axes.

    Lesson: notebooks/17-the-lab.ipynb
    """
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}; got {x!r}")
    if labels is not None and len(labels) != len(groups):
        raise ValueError(f"one label per group: {len(groups)} groups, {len(labels)} labels")
    done = [g for g in groups if g.results and _finished(g)]
    lines = sum(1 for g in groups if g.results) + (0 if labels else len(families.families(done)))
    fig, [(axes, legend_y)] = _rows(PICTURE_WIDTH, [(3, lines)], panel=2.8, gap=0.8,
                                    top=0.75 if title is None else 1.1)
    ax_loss, ax_diff, ax_acc = axes
    _curves(ax_loss, ax_diff, groups, x, current, window, labels=labels)
    if labels is None:
        families.against_batch(ax_acc, None, done)
    else:
        _paired_rows(ax_acc, groups, labels)
    if title is not None:
        fig.suptitle(title, y=1 - 0.2 / fig.get_size_inches()[1], va="top", fontsize="large")
    # Shorter titles than the live lab's: three panels share a notebook's width.
    seeded = _seeded(groups)
    ax_loss.set_title(f"Training loss (mean of {2 * (window // 2) + 1} updates)" + ("" if seeded else ", one seed"))
    # On two lines: on one, the middle title runs into its neighbours' titles.
    ax_diff.set_title("|Δ| from one large batch,\n" + ("max over seeds" if seeded else "one seed"),
                      fontsize="medium")
    low, high = ax_diff.get_ylim()
    if 0 < low and high < 30 * low:
        # Within about a decade a log axis labels its minor ticks in wide 6 × 10⁻² style, and
        # they run into the y label: label 1, 2 and 5 of each decade, written short (0.02).
        # (Over many decades the default labels each decade; a 1-2-5 locator there labels none.)
        ax_diff.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax_diff.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax_diff.yaxis.set_minor_formatter(NullFormatter())
    if labels is None:
        ax_acc.set_title("Final test accuracy against B")
    handles = [*ax_loss.get_lines(), *ax_acc.get_legend_handles_labels()[0]]
    _legend(fig, handles, legend_y, ncol=1)
    return fig


def _curves(ax_loss, ax_diff, groups, x, current, window, ax_acc=None, labels=None):
    """The loss and Δ panels (and the accuracy panel if given); each loss line is labelled
    with its group (or its name in `labels`) and, where a twin is known, its difference."""
    colors = _colors(groups)
    for i, g in enumerate(groups):
        if not g.results:
            continue
        color, bold = colors[id(g)], i == current
        line = curves.loss_band(ax_loss, g, x, color, bold, window)
        name = g.label if labels is None else labels[i]
        line.set_label(name)
        if ax_acc is not None:
            curves.accuracy_band(ax_acc, g, x, color, bold)
        found = curves.reference_difference(g)
        if found is not None:
            curves.difference_line(ax_diff, g, x, color, bold, found)
            line.set_label(f"{name}: {curves.difference_text(curves.difference_verdict(g), found[2])}")
    if not ax_loss.lines:
        for ax in (ax_loss,) if ax_acc is None else (ax_loss, ax_acc):
            ax.text(0.5, 0.5, "press Run", transform=ax.transAxes, ha="center", va="center",
                    color="grey", fontsize="large")
    if not ax_diff.lines:
        ax_diff.text(0.5, 0.5, "run large_batch with the same B\n(or press Measure)",
                     transform=ax_diff.transAxes, ha="center", va="center", color="grey")
    ax_loss.set_ylabel("training loss of the update's batch")
    ax_loss.set_title(f"Training loss (mean of {2 * (window // 2) + 1} updates"
                      + ("; ± std over seeds)" if _seeded(groups) else "), one seed"))
    ax_diff.set_yscale("log")
    if ax_diff.lines and any(np.min(line.get_ydata()) <= curves.FLOOR for line in ax_diff.lines):
        _floor_note(ax_diff)  # a log axis has no 0
    ax_diff.set_ylabel("|loss - loss of the large batch|")
    ax_diff.set_title("Difference from one large batch (same B, seed)")
    for ax in (ax_loss, ax_diff):
        ax.set_xlabel(curves.X_LABELS[x])


def _floor_note(ax, share=0.12):
    """Say where an exact 0 is drawn, under the curves: the log axis's bottom is lowered until
    `curves.FLOOR` sits `share` of the axis's height above it, and the note is written in the
    strip below the floor, where no line can reach."""
    low, high = np.log10(ax.get_ylim())
    floor = math.log10(curves.FLOOR)
    ax.set_ylim(bottom=10 ** min(low, floor - share / (1 - share) * (high - floor)))
    ax.axhline(curves.FLOOR, color="grey", linewidth=0.6, linestyle=":")
    ax.text(0.02, 0.01, f"an exact 0 is drawn at {curves.FLOOR:g}", transform=ax.transAxes,
            ha="left", va="bottom", color="grey", fontsize="small")


def _paired_rows(ax, groups, labels):
    """Each later finished group's final test accuracy minus the first group's with the same
    seed, in points, on its own row (top down, in the groups' order and colours): a small dot a
    seed, a large one their mean. The first group's row is its zero line. Each label is written
    inside the panel above its row, broken before a parenthesis where it would run past the
    frame (`_fit_label`; lesson 17's reference row once did). Seeds the first group lacks are left out."""
    colors = _colors(groups)
    rows = [(i, g) for i, g in enumerate(groups) if g.results and _finished(g)]
    reference = {r.config.seed: r.accuracy for r in groups[0].results} if rows and rows[0][0] == 0 else {}
    ax.axvline(0.0, color="grey", linewidth=0.8, linestyle=":")
    top = 0.7  # the top row's label on one or two lines; each further line raises the frame
    for row, (i, g) in enumerate(rows):
        gaps = [100 * (r.accuracy - reference[r.config.seed]) for r in g.results if r.config.seed in reference]
        if i == 0:
            gaps = [0.0]
        elif gaps:
            ax.plot(gaps, [-row] * len(gaps), "o", color=colors[id(g)], markersize=4, alpha=0.6)
        if gaps:
            ax.plot([np.mean(gaps)], [-row], "o", color=colors[id(g)], markersize=8)
        name = _fit_label(labels[i] + (" (the reference)" if i == 0 else ""), ax, 0.94, "small")
        top = max(top, 0.7 + 0.2 * (name.count("\n") - 1)) if row == 0 else top
        ax.text(0.03, -row + 0.18, name,
                transform=ax.get_yaxis_transform(), fontsize="small", va="bottom", color=colors[id(g)])
    ax.set_yticks([])
    ax.set_ylim(-len(rows) + 0.5, top)
    ax.margins(x=0.25)
    ax.set_xlabel("accuracy gap, same seed (points)")
    ax.set_title("Final accuracy gap\nto the reference", fontsize="medium")  # two lines, as the middle title


def _fit_label(text, ax, share, fontsize):
    """`text` on as few lines as keep each within `share` of the Axes' width at `fontsize`,
    broken only before a " (": the parenthesis goes to the next line, whole."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties
    prop, dpi = FontProperties(size=fontsize), ax.figure.dpi
    room = share * ax.get_position().width * ax.figure.get_figwidth() * dpi  # pixels, as Agg draws the PNG
    measure = RendererAgg(1, 1, dpi).get_text_width_height_descent
    fits = lambda line: measure(line, prop, ismath=False)[0] <= room
    pieces = text.split(" (")
    lines = [pieces[0]]
    for piece in pieces[1:]:
        joined = f"{lines[-1]} ({piece}"
        lines[-1:] = [joined] if fits(joined) else [lines[-1], f"({piece}"]
    return "\n".join(lines)


def _seeded(groups):
    """Whether any group has more than one seed: a "± std" or "max over seeds" needs two."""
    return any(len(g.results) > 1 for g in groups)


def _rows(width, rows, panel=3.2, left=0.85, right=0.3, gap=0.95, top=0.6, below=0.6, line=0.26):
    """A Figure of rows of panels, `rows` = [(panels, legend lines)], each row with room under
    it for its legend, all in inches. A fixed layout, not "constrained": the lab redraws while
    it trains, and the layout solver would double the time of every draw.

    Returns:
        the Figure and, per row, `(axes, y)`: y is where the row's legend hangs from.
    """
    panels = panel if isinstance(panel, list) else [panel] * len(rows)
    heights = [top + h + below + line * lines + 0.15 * bool(lines)
               for (_, lines), h in zip(rows, panels)]
    total = sum(heights)
    fig = Figure(figsize=(width, total))
    placed, y = [], total
    for (count, _), h, height in zip(rows, panels, heights):
        bottom = y - top - h
        w = (width - left - right - gap * (count - 1)) / count
        axes = [fig.add_axes([(left + i * (w + gap)) / width, bottom / total, w / width, h / total])
                for i in range(count)]
        placed.append((axes, (bottom - below) / total))
        y -= height
    return fig, placed


def _legend(fig, handles, y, ncol):
    handles = [h for h in handles if not h.get_label().startswith("_")]
    if handles:
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, y), ncol=ncol,
                   frameon=False, fontsize="medium", handlelength=2.2, columnspacing=2.0)


def _colors(groups):
    palette = colormaps["tab10"].colors
    return {id(g): getattr(g, "color", None) or palette[i % 10] for i, g in enumerate(groups)}


def _finished(group):
    return all(len(r.losses) == r.config.updates for r in group.results)


def _cost(ax, groups, colors):
    """Milliseconds per update (bars) and, once measured, the allocator peak of a fresh
    process for the configuration's settings (text; `run_memory`): the same whatever ran
    before it, unlike the memory a run adds to a long-lived kernel."""
    rows = [(getattr(g, "short", g.label),
             1000 * float(np.nanmean([r.seconds_per_update for r in g.results])),
             finite(getattr(g, "peak_mb", None))) for g in groups]
    measured = any(mb is not None for *_, mb in rows)
    ax.set_title("Time per update (mean over seeds;\non a shared CPU, load moves it)"
                 + (" · allocator peak (fresh process)" if measured else ""))
    ax.set_yticks([])
    if not rows:
        ax.text(0.5, 0.5, "no finished runs yet", transform=ax.transAxes, ha="center",
                va="center", color="grey")
        return
    texts = [f"{name}:  {ms:.1f} ms" + ("" if mb is None else f" · {mb:.0f} MiB")
             for name, ms, mb in rows]
    _bars(ax, [ms for _, ms, _ in rows], texts, colors)
    ax.set_xlabel("milliseconds per update")


def _bars(ax, values, texts, colors):
    """Light horizontal bars, top down, each named by its text at the axis' left edge."""
    y = np.arange(len(values))[::-1]
    ax.barh(y, values, color=colors, alpha=0.35, height=0.8)
    for yi, text in zip(y, texts):
        ax.text(0.01, yi, text, va="center", transform=ax.get_yaxis_transform())
    ax.set_ylim(-0.6, len(values) - 0.4)
    ax.set_xlim(0, max(values) * 1.1)


def plot_one_seed(groups, labels, upto, window=15, span=None, seeds=False, batch_ticks=False,
                  window_examples=None):
    """Hold b, raise N, at one seed: each group's first seed only, whatever seeds it gathered
    before (a group keeps the seeds of earlier runs, so a mean over them would depend on run
    order). Left: the training loss (mean of `window` updates) against examples seen
    (updates × B), from 0 to `upto`; right: the final test accuracy against B = N·b.

    Args:
        groups: finished Groups (as `Lab.groups`), each drawn from `results[0]`.
        labels: one name per group, in order.
        upto: the last example seen on the left panel's x axis.
        window: moving-average width in updates.
        span: None, or `(first, last)` examples seen to shade on the left panel.
        seeds: False (the right panel draws the first seed), or True: the right panel draws the
            mean ± std (ddof=1) of the final test accuracy over each group's seeds instead.
        batch_ticks: True ticks the right panel's log2 axis at the groups' B themselves
            (25, 50, ...) instead of at powers of two.
        window_examples: None (each group's mean spans `window` updates), or a number E of
            examples: each group's mean spans the largest odd number of updates w with
            w·B <= E (at least 1), so that every curve averages about as many examples.
    Returns:
        a matplotlib Figure with 2 Axes.

    Lesson: notebooks/17-the-lab.ipynb
    """
    if len(labels) != len(groups):
        raise ValueError(f"one label per group: {len(groups)} groups, {len(labels)} labels")
    odd = 2 * (window // 2) + 1  # the updates a centred mean of `window` spans
    widths = [window_updates(g.results[0].config.effective_batch, window_examples)
              if window_examples is not None else odd for g in groups]
    fig, [(axes, legend_y)] = _rows(PICTURE_WIDTH, [(2, len(groups))], panel=2.8, gap=0.8)
    ax_loss, ax_acc = axes
    colors = _colors(groups)
    for g, name, width in zip(groups, labels, widths):
        first = g.results[0]
        line = curves.loss_band(ax_loss, SimpleNamespace(results=[first], label=name), "examples",
                                colors[id(g)], False, width)
        line.set_label(name)
        if seeds:  # mean ± std over the group's seeds (std 0 for one seed)
            accs = 100 * np.array([r.accuracy for r in g.results])
            ax_acc.errorbar([first.config.effective_batch], [accs.mean()],
                            yerr=[accs.std(ddof=1) if len(accs) > 1 else 0.0], fmt="o", capsize=4,
                            color=colors[id(g)], markersize=7)
        else:
            ax_acc.plot([first.config.effective_batch], [100 * first.accuracy], "o",
                        color=colors[id(g)], markersize=7)
    if span is not None:
        ax_loss.axvspan(*span, color="grey", alpha=0.15, linewidth=0)
    ax_loss.set_xlim(0, upto)
    ax_loss.set_xlabel(curves.X_LABELS["examples"])
    ax_loss.set_ylabel("training loss of the update's batch")
    if window_examples is None:
        ax_loss.set_title(f"Training loss (mean of {odd} updates), one seed")
    else:
        spans = sorted({w * g.results[0].config.effective_batch for g, w in zip(groups, widths)})
        ax_loss.set_title(f"Training loss (centred mean of {spans[0]:,}"
                          + (f"–{spans[-1]:,}" if len(spans) > 1 else "") + " examples), one seed")
    ax_acc.set_xscale("log", base=2)
    if batch_ticks:
        batches = sorted({g.results[0].config.effective_batch for g in groups})
        ax_acc.set_xticks(batches, [str(b) for b in batches])
        ax_acc.minorticks_off()
    ax_acc.set_xlabel("effective batch B = N·b")
    ax_acc.set_ylabel("final test accuracy (%)")
    n_seeds = sorted({len(g.results) for g in groups})
    ax_acc.set_title(f"Final test accuracy, mean ± std of {'/'.join(map(str, n_seeds))} seeds" if seeds
                     else "Final test accuracy, one seed")
    ax_acc.margins(x=0.15, y=0.2)
    _legend(fig, ax_loss.get_lines(), legend_y, ncol=1)
    return fig


def window_updates(batch, examples):
    """The largest odd number of updates w with w·batch <= examples, at least 1: a centred
    moving average over w updates of `batch` rows spans about `examples` examples.

    Lesson: notebooks/17-the-lab.ipynb
    """
    w = max(1, int(examples) // int(batch))
    return w if w % 2 else w - 1


def controls_rows(lab):
    """The lab's controls as (label, value) text pairs, in the widget's order: what a picture
    of its controls shows (`plot_controls`)."""
    names = ("strategy", "accum_steps", "micro_batch", "lr", "setting", "seeds", "x_axis")
    rows = []
    for name in names:
        widget = getattr(lab, name)
        value = widget.value
        rows.append((widget.description, f"{value:.3g}" if isinstance(value, float) else str(value)))
    return rows + [("effective batch", str(lab.batch.value).removeprefix("effective batch "))]


def plot_controls(rows, buttons=("Run", "Stop", "Measure"), status=""):
    """A still of the lab's controls: each (label, value) of `rows` as a labelled box, then its
    buttons and status line. Stored beside the widget, it shows a reader without widgets (GitHub,
    a terminal) what the controls were set to."""
    height = 0.42 * (len(rows) + 2) + 0.3
    fig = Figure(figsize=(PICTURE_WIDTH * 0.6, height))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 1), ax.set_ylim(len(rows) + 2, 0), ax.axis("off")
    for i, (label, value) in enumerate(rows):
        y = i + 0.6
        ax.text(0.27, y, label, ha="right", va="center", fontsize=10)
        ax.add_patch(_box(0.29, y - 0.36, 0.5, 0.72, "#f6f8fa", "#8c959f"))
        ax.text(0.31, y, value, ha="left", va="center", fontsize=10, family="monospace")
    y = len(rows) + 0.6
    for j, name in enumerate(buttons):
        ax.add_patch(_box(0.29 + 0.17 * j, y - 0.36, 0.15, 0.72, "#0969da" if j == 0 else "#eaeef2", "#57606a"))
        ax.text(0.29 + 0.17 * j + 0.075, y, name, ha="center", va="center", fontsize=10,
                color="white" if j == 0 else "black")
    ax.text(0.02, len(rows) + 1.5, status, ha="left", va="center", fontsize=9, style="italic")
    return fig


def _box(x, y, width, height, face, edge):
    from matplotlib.patches import FancyBboxPatch
    return FancyBboxPatch((x, y), width, height, boxstyle="round,pad=0,rounding_size=0.01",
                          facecolor=face, edgecolor=edge, linewidth=0.8, mutation_aspect=20)
