"""One update's serial time, part by part, as stacked bars: where a host-averaged update goes.

Each row is one case (a model, a machine); its parts run one after another, so

    total = sum of the row's parts (ms)

and a bar's length is that total, each part drawn in its own colour, in the order given.

Lesson: notebooks/06-host-cost.ipynb
"""
from __future__ import annotations

import math


def plot_update_costs(rows, title="one update, its parts run one after another"):
    """Draw each case's parts as one horizontal stacked bar, in ms.

    Args:
        rows: `{case: {part: ms}}`; every case names the same parts, in the same order.
        title: the figure's title.
    Returns:
        (figure, totals): the matplotlib Figure, already closed in pyplot (a notebook cell
        ending with it shows it once), and `{case: total ms}`, each the sum of its parts.
    """
    if not rows:
        raise ValueError("rows must hold at least one case")
    parts = list(next(iter(rows.values())))
    for case, costs in rows.items():
        if list(costs) != parts:
            raise ValueError(f"every case needs the parts {parts} in that order; {case!r} has {list(costs)}")
        if any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in costs.values()):
            raise ValueError(f"{case!r}: every part must be a finite time >= 0 in ms, got {costs}")
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
