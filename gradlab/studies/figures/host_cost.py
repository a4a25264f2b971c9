"""One update's serial time, part by part, as stacked bars: where a host-averaged update goes.

Each row is one case (a model, a machine); its parts run one after another, so

    total = sum of the row's parts (ms)

and a bar's length is that total, each part drawn in its own colour, in the order given.

Lesson: notebooks/06-host-cost.ipynb
"""
from __future__ import annotations

import math


def _check_rows(rows):
    """The parts every case of `rows` names, in order; a ValueError for an empty or uneven `rows`."""
    if not rows:
        raise ValueError("rows must hold at least one case")
    parts = list(next(iter(rows.values())))
    for case, costs in rows.items():
        if list(costs) != parts:
            raise ValueError(f"every case needs the parts {parts} in that order; {case!r} has {list(costs)}")
        if any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in costs.values()):
            raise ValueError(f"{case!r}: every part must be a finite time >= 0 in ms, got {costs}")
    return parts


def plot_update_costs(rows, title="one update, its parts run one after another"):
    """Draw each case's parts as one horizontal stacked bar, in ms.

    Args:
        rows: `{case: {part: ms}}`; every case names the same parts, in the same order.
        title: the figure's title.
    Returns:
        (figure, totals): the matplotlib Figure, already closed in pyplot (a notebook cell
        ending with it shows it once), and `{case: total ms}`, each the sum of its parts.
    """
    parts = _check_rows(rows)
    totals = {case: float(sum(costs.values())) for case, costs in rows.items()}
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, ax = plt.subplots(figsize=(7.0, 1.3 + 0.6 * len(rows)), layout="constrained")
    plt.close(fig)
    cases = list(rows)[::-1]  # the first case on top
    left = [0.0] * len(cases)
    for part in parts:
        widths = [float(rows[case][part]) for case in cases]
        ax.barh(cases, widths, left=left, label=part, edgecolor="white")
        left = [a + w for a, w in zip(left, widths)]
    for y, case in enumerate(cases):
        ax.text(totals[case], y, f" {totals[case]:,.0f} ms", va="center", fontsize="small")
    ax.set_xlim(0, max(totals.values()) * 1.15 or 1)
    ax.set_xlabel("ms per update")
    ax.set_title(title)
    fig.legend(loc="outside lower center", ncols=len(parts), fontsize="small")
    return fig, totals


def plot_peak_and_measured(rows, measured, titles=("worked out at peak rates", "measured on this machine")):
    """Draw each case's parts in two panels, split by where each time comes from.

        left:  the parts not in `measured` (worked out from datasheet peaks), side by side,
               on a log ms axis, so a 0.1 ms part and a 100 ms part both show
        right: the parts in `measured` (timed on this machine), stacked, on a linear ms axis

    so a rate measured here is never laid end to end with a peak rate of another machine.

    Args:
        rows: `{case: {part: ms}}`, as `plot_update_costs`; the left panel's parts must be > 0 (log axis).
        measured: the names of the parts measured on this machine; at least one part must be left over.
        titles: the two panels' titles, left then right.
    Returns:
        the matplotlib Figure of 2 Axes (left, right), already closed in pyplot (a notebook
        cell ending with it shows it once). Each bar is labelled with its ms.
    """
    parts = _check_rows(rows)
    here = [p for p in parts if p in measured]
    peak = [p for p in parts if p not in measured]
    if set(measured) - set(parts) or not here or not peak:
        raise ValueError(f"measured must name some, not all, of the parts {parts}; got {list(measured)}")
    if any(rows[case][p] <= 0 for case in rows for p in peak):
        raise ValueError(f"the peak-rate parts {peak} need times > 0 ms (a log axis)")
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, (left, right) = plt.subplots(1, 2, sharey=True, figsize=(9.0, 1.6 + 0.7 * len(rows)),
                                      layout="constrained", width_ratios=(3, 2))
    plt.close(fig)
    cases = list(rows)[::-1]  # the first case on top
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    height = 0.8 / len(peak)
    for k, part in enumerate(peak):  # side by side within each case's row
        ys = [y + 0.4 - height * (k + 0.5) for y in range(len(cases))]
        widths = [float(rows[case][part]) for case in cases]
        left.barh(ys, widths, height=height, label=part, color=colours[k % len(colours)])
        for y, w in zip(ys, widths):
            left.text(w, y, f" {w:,.2f} ms", va="center", fontsize="x-small")
    left.set_xscale("log")
    left.set_xlim(min(rows[c][p] for c in rows for p in peak) / 3, max(rows[c][p] for c in rows for p in peak) * 30)
    left.set_yticks(range(len(cases)), cases)
    left.set_xlabel("ms per update (log scale)")
    left.set_title(titles[0], fontsize="medium")
    start = [0.0] * len(cases)
    for k, part in enumerate(here, start=len(peak)):  # stacked, one after another
        widths = [float(rows[case][part]) for case in cases]
        right.barh(range(len(cases)), widths, left=start, label=part, color=colours[k % len(colours)])
        start = [a + w for a, w in zip(start, widths)]
    for y, total in enumerate(start):
        right.text(total, y, f" {total:,.0f} ms", va="center", fontsize="x-small")
    right.set_xlim(0, max(start) * 1.3 or 1)
    right.set_xlabel("ms per update")
    right.set_title(titles[1], fontsize="medium")
    fig.legend(loc="outside lower center", ncols=len(parts), fontsize="small")  # peak parts, then measured
    return fig


def plot_streams_with_pace(rows, measured, pace, title="one update's streams", pace_label="bus pace"):
    """Draw each case's parts side by side on ONE log ms axis, with a pace line through each case.

        bar (case, part) = rows[case][part] ms, hatched when part is in `measured`
        pace line of a case: a dashed vertical mark at x = rows[case][pace]

    One shared axis lets the eye compare a measured part with the peak-rate parts (a part that ends
    right of its case's pace line is slower than that stream); the hatch keeps the two sources apart.

    Args:
        rows: `{case: {part: ms}}`, as `plot_update_costs`; every part > 0 (log axis).
        measured: the names of the parts timed on this machine (hatched); may be empty.
        pace: the part whose time draws each case's pace line, e.g. the bus's copies.
        title: the figure's title.
        pace_label: the pace line's name in the legend.
    Returns:
        the matplotlib Figure of 1 Axes, already closed in pyplot (a notebook cell ending with it
        shows it once). Each bar is labelled with its ms; the x axis runs from a third of the
        smallest part to 4 times the largest (room for the labels), no empty decade beyond.
    """
    parts = _check_rows(rows)
    if set(measured) - set(parts) or pace not in parts:
        raise ValueError(f"measured and pace must name parts of {parts}; got {list(measured)}, {pace!r}")
    if any(rows[case][p] <= 0 for case in rows for p in parts):
        raise ValueError("every part needs a time > 0 ms (a log axis)")
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, ax = plt.subplots(figsize=(8.0, 1.6 + 0.8 * len(rows)), layout="constrained")
    plt.close(fig)
    cases = list(rows)[::-1]  # the first case on top
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    height = 0.8 / len(parts)
    for k, part in enumerate(parts):  # side by side within each case's row, the first part on top
        ys = [y + 0.4 - height * (k + 0.5) for y in range(len(cases))]
        widths = [float(rows[case][part]) for case in cases]
        hatched = part in measured
        ax.barh(ys, widths, height=height, color=colours[k % len(colours)], hatch="//" if hatched else None,
                edgecolor="white" if hatched else None, label=f"{part} (measured here)" if hatched else part)
        for y, w in zip(ys, widths):
            ax.text(w, y, f" {w:,.2f} ms" if w < 100 else f" {w:,.0f} ms", va="center", fontsize=8,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})  # over the pace line
    ax.vlines([float(rows[case][pace]) for case in cases], [y - 0.45 for y in range(len(cases))],
              [y + 0.45 for y in range(len(cases))], colors="black", linestyles="--", label=pace_label)
    ax.set_xscale("log")
    times = [float(v) for costs in rows.values() for v in costs.values()]
    ax.set_xlim(min(times) / 3, max(times) * 4)
    ax.set_yticks(range(len(cases)), cases)
    ax.set_xlabel("ms per update (log scale)")
    ax.set_title(title, fontsize="medium")
    handles, labels = ax.get_legend_handles_labels()  # the pace line first: matplotlib lists lines before bars
    fig.legend(handles[1:] + handles[:1], labels[1:] + labels[:1], loc="outside lower center",
               ncols=len(parts) + 1, fontsize=8)
    return fig
