"""One GPU's update against its card, N by N: `plot_plan_memory` draws, for each number N of
micro-batches, the terms no micro-batch size shrinks (weights, gradients, optimizer slots,
accumulator, inputs) and the micro-batch's activations above them, against a line at the card's
memory, so the fewest N that fits can be read off.

Lesson: notebooks/23-planning-a-run.ipynb
"""
from __future__ import annotations

import math


def plot_plan_memory(micro_batches, fixed, totals, card, chosen=None, unit="GiB",
                     title="one GPU's update against the card", batch=None, extra=None):
    """Draw a stacked bar for each N: `fixed` at the bottom, `total - fixed` (activations) above it.

    Args:
        micro_batches: the N of each bar, in order.
        fixed: the terms that stay whatever N (one number, in `unit`).
        totals: the whole update's memory for each N (in `unit`), each >= `fixed`.
        card: the card's memory (in `unit`), drawn as a dashed line.
        chosen: the planned N, if any: its activations are drawn in a stronger colour, which the
            legend names ("activations, the plan: N = 8").
        unit: the unit of every size, for the labels.
        title: the figure's title.
        batch: the GPU's rows an update, if given: each bar is labelled by its micro-batch size
            b = batch / N first ("b = 16" above "N = 8"), as the lesson's table lists them.
        extra: (tick label, total, legend label), if given: one more bar after the others, its
            part above `fixed` hatched, for the same update planned another way (e.g. storing
            attention's scores); its total is labelled above it like the others.
    Returns:
        the matplotlib Figure of one Axes, already closed in pyplot. Its first two containers are the
        fixed bars and the activation bars; each bar carries its total as a label above it.
    """
    ns, totals = list(micro_batches), [float(t) for t in totals]
    if not ns or len(ns) != len(totals):
        raise ValueError("micro_batches and totals need one value each per bar, at least one")
    sizes = [float(fixed), float(card), *totals]
    if any(not math.isfinite(v) or v < 0 for v in sizes):
        raise ValueError("fixed, card and totals must be finite and >= 0")
    if any(t < fixed for t in totals):
        raise ValueError(f"every total must hold the fixed terms ({fixed}), got {totals}")
    if batch is not None and any(n <= 0 or batch % n for n in ns):
        raise ValueError(f"every N must divide the batch {batch!r} into equal micro-batches, got {ns}")
    if extra is not None and (not math.isfinite(float(extra[1])) or float(extra[1]) < fixed):
        raise ValueError(f"the extra bar's total must be finite and hold the fixed terms ({fixed}), got {extra[1]}")
    if chosen is not None and chosen not in ns:
        raise ValueError(f"chosen N {chosen!r} is not among the bars {ns}")
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, ax = plt.subplots(figsize=(6.4, 3.0), layout="constrained")
    plt.close(fig)
    xs = range(len(ns))
    ax.bar(xs, [float(fixed)] * len(ns), color="0.6", label="fixed: weights, gradients, slots, accumulator, inputs")
    colours = ["C0" if n == chosen else "C9" for n in ns]
    bars = ax.bar(xs, [t - fixed for t in totals], bottom=float(fixed), color=colours,
                  label="activations of one micro-batch")
    handles = ax.get_legend_handles_labels()[0]
    if chosen is not None:  # the plan's colour gets its own legend entry: a colour the legend lacks reads as unexplained
        from matplotlib.patches import Patch
        handles.append(Patch(color="C0", label="activations, the plan: " + ("" if batch is None else f"b = {batch // chosen}, ")
                             + f"N = {chosen}"))
        if len(ns) > 1:
            handles[1] = Patch(color="C9", label="activations of one micro-batch")
    labelled = list(zip(bars, totals))  # each bar with the total written above it
    plan = lambda n: " (plan)" if n == chosen else ""  # noqa: E731
    ticks = [f"N = {n}{plan(n)}" if batch is None else f"b = {batch // n}\nN = {n}{plan(n)}" for n in ns]
    if extra is not None:  # the same update planned another way: fixed below, its activations hatched
        label, total, meaning = extra[0], float(extra[1]), extra[2]
        ax.bar([len(ns)], [float(fixed)], color="0.6")
        hatched = ax.bar([len(ns)], [total - fixed], bottom=float(fixed), color="white", edgecolor="C0",
                         hatch="///", label=meaning)
        labelled.append((hatched[0], total))
        handles.append(hatched)
        ticks.append(label)
    for bar, total in labelled:
        ax.annotate(f"{total:.1f}", (bar.get_x() + bar.get_width() / 2, total), ha="center", va="bottom",
                    fontsize="small", xytext=(0, 2), textcoords="offset points")
    handles.append(ax.axhline(float(card), color="C3", linestyle="--", label=f"the card: {float(card):.1f} {unit}"))
    ax.set_xticks(list(range(len(ticks))), ticks)
    ax.set_ylabel(f"memory, {unit}")
    ax.set_ylim(0, 1.12 * max([total for _, total in labelled] + [float(card)]))
    ax.legend(handles=handles, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=2,
              frameon=False)  # below the axes: inside, it would hide the card's line
    ax.set_title(title)
    return fig
