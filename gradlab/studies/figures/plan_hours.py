"""A run's plans by their two costs: `plot_plan_hours` places each plan at its wall-clock hours (x)
and GPU-hours (y), one marker at each end of a range (e.g. the critical batch's two estimates) and a
bar between them, so "faster" and "cheaper" can be read off together.

Lesson: notebooks/23-planning-a-run.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt


def plot_plan_hours(plans, ends=("low end", "high end"), title="each plan's wall time against its GPU-hours"):
    """Draw each plan as two markers joined by a bar: (hours, GPU-hours) at each end of a range.

        GPU-hours = GPUs x hours, so plans on one ray from the origin use the same number of GPUs.

    Args:
        plans: {label: ((hours, gpu_hours), (hours, gpu_hours))}, the plan at each end of the range;
            the two points may coincide (the plan does not depend on the range).
        ends: the legend's names of the two ends (open and filled markers).
        title: the figure's title.
    Returns:
        the matplotlib Figure of one Axes, already closed in pyplot. Its lines are, for each plan in
        order, the bar between the ends; then one marker line per end across the plans. Each plan's
        label is an annotation right of its later end.
    """
    points = {label: [tuple(float(v) for v in end) for end in pair] for label, pair in plans.items()}
    if not points or any(len(pair) != 2 or any(len(end) != 2 for end in pair) for pair in points.values()):
        raise ValueError("plans needs at least one plan, each two (hours, gpu_hours) ends")
    if any(not math.isfinite(v) or v <= 0 for pair in points.values() for end in pair for v in end):
        raise ValueError("hours and GPU-hours must be finite and > 0")
    fig, ax = plt.subplots(figsize=(7.0, 4.0), layout="constrained")
    plt.close(fig)
    for i, (label, (a, b)) in enumerate(points.items()):
        ax.plot([a[0], b[0]], [a[1], b[1]], "-", color=f"C{i}", linewidth=3, alpha=0.5)
        right = max(a, b)  # labelled right of its later end, clear of the bar
        ax.annotate(label, right, xytext=(9, -3), textcoords="offset points", fontsize="small", color=f"C{i}")
    for k, (name, face) in enumerate(zip(ends, ("white", "black"))):
        xs, ys = zip(*(pair[k] for pair in points.values()))
        ax.plot(xs, ys, "o", color="black", markerfacecolor=face, markersize=7, linestyle="none", label=name)
    ax.set_xlabel("wall-clock hours")
    ax.set_ylabel("GPU-hours")
    ax.set_xlim(0, 1.4 * max(end[0] for pair in points.values() for end in pair))
    ax.set_ylim(0, 1.15 * max(end[1] for pair in points.values() for end in pair))
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    return fig
