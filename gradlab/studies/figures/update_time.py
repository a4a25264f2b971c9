"""The time of one update against N: accumulate's N + 1 calls against fused's one.

    update ms:     median and middle half of each schedule's timed updates, per accum_steps
    fused saving:  ms per update of accumulate and fused against N, each N labelled accumulate / fused
    call timeline: one update's calls and micro-batches in time, accumulate's N + 1 calls against fused's one

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch

from ._draw import figure


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
    fig, ax = figure((6.4, 3.6))
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
    fig, ax = figure((6.4, 3.4))
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


def plot_call_timeline(n, work_us, once_us, extra_us, title="One update in time: accumulate's N + 1 calls against fused's one"):
    """One update on one time axis, from measured medians: `accumulate` is `fused` plus N extra calls.

        fused:       [once][work] x N                        ends at once_us + N work_us
        accumulate:  [once] then ([extra parts...][work]) x N  ends at once_us + N (sum(extra_us) + work_us)

    `once_us` is what `fused` pays once beyond its micro-batches' work (its call from Python, the apply, the
    rest), drawn at the start of both lanes; each of `accumulate`'s N extra calls is drawn split into the parts
    of `extra_us`, in order, before a micro-batch's work. Boxes follow one another: on a CPU nothing overlaps.

    Args:
        n: N, micro-batches an update (a positive integer).
        work_us: microseconds of one micro-batch's work (> 0).
        once_us: microseconds `fused` spends beyond its N micro-batches' work (> 0).
        extra_us: `{label: microseconds}`, the parts of one extra call (at least one, each > 0), e.g.
            `{"a bare call": 133, "writing the sums": 244, "the rest": 264}`.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes; `ax.patches`: the boxes, accumulate's lane (y = 1) first, in time order;
        `ax.texts`: each lane's end time in ms, accumulate's first; the legend: the once box, each part of an
        extra call with its microseconds, the work.

    Lesson: notebooks/05-fused-accumulation.ipynb
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(extra_us, dict) or not extra_us or not all(isinstance(k, str) for k in extra_us):
        raise ValueError(f"extra_us must be a non-empty dict of label -> microseconds, got {extra_us!r}")
    values = (work_us, once_us, *extra_us.values())
    if not all(isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) and np.isfinite(v) and v > 0
               for v in values):
        raise ValueError(f"work_us, once_us and every part of extra_us must be finite and > 0, got {values!r}")
    parts = list(extra_us)
    lanes = {1: ["once"] + (parts + ["work"]) * n, 0: ["once"] + ["work"] * n}  # y -> boxes in time order
    width = {"once": float(once_us), "work": float(work_us), **{k: float(v) for k, v in extra_us.items()}}
    part_colors = ["tab:red", "tab:orange", "lightcoral", "tab:pink", "tab:brown"]
    colors = {"once": "tab:gray", "work": "tab:blue", **{k: part_colors[i % len(part_colors)] for i, k in enumerate(parts)}}
    fig, ax = figure((7.0, 2.5))
    for y, boxes in lanes.items():
        t = 0.0
        for kind in boxes:
            ax.barh(y, width[kind] / 1000, left=t / 1000, height=0.6, color=colors[kind], edgecolor="white", linewidth=0.4)
            t += width[kind]
        ax.text(t / 1000, y, f"  {t / 1000:.1f} ms", va="center", fontsize=8)
    end = (once_us + n * (sum(extra_us.values()) + work_us)) / 1000
    ax.set_xlim(0, 1.15 * end)
    ax.set_yticks([1, 0], [f"accumulate\n({n + 1} calls)", "fused\n(1 call)"])
    ax.set_xlabel("ms from the update's start")
    keys = [Patch(color=colors["once"], label=f"fused's update less its work ({once_us:.0f} µs, both)")]
    keys += [Patch(color=colors[k], label=f"extra call: {k} ({extra_us[k]:.0f} µs)") for k in parts]
    keys += [Patch(color=colors["work"], label=f"a micro-batch's work ({work_us:.0f} µs)")]
    ax.legend(handles=keys, fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.4), ncol=2)
    ax.set_title(title, fontsize=10)
    return fig
