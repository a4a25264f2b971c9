"""A learning-rate schedule as Keras's `gradient_accumulation_steps=N` reads it, in one panel.

    read at micro-step s:   schedule(s)            (Keras's private counter)
    applied by update k:    schedule(kN + N - 1)   (the value at the update's N-th call)
    meant for update k:     schedule_in_updates(k)

Lesson: notebooks/09-fused-accumulation.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_schedule(schedules, meant, accum_steps, updates=3):
    """Each schedule's value at every micro-step (a line), the value each update applies (a
    hollow ring at its N-th call) and the rates meant for the updates (black crosses, on top).

    Args:
        schedules: {label: callable of the micro-step}, as passed to a Keras optimizer.
        meant: the rates the `updates` updates should apply.
        accum_steps: N; updates: how many updates to draw.
    Returns:
        a matplotlib Figure with one Axes (log rate against micro-step).
    """
    if not isinstance(accum_steps, int) or accum_steps < 1:
        raise ValueError(f"accum_steps must be an int >= 1, got {accum_steps!r}")
    if len(meant) != updates:
        raise ValueError(f"meant needs one rate per update ({updates}), got {len(meant)}")
    steps = np.arange(updates * accum_steps)
    applied = steps[accum_steps - 1::accum_steps]
    fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    plt.close(fig)  # owned by the caller: a cell ending with the call shows it once
    colours = ("tab:red", "tab:orange", "tab:green", "tab:blue")
    for k, ((label, schedule), colour) in enumerate(zip(schedules.items(), colours)):
        values = np.array([float(schedule(int(s))) for s in steps])
        ax.step(steps, values, where="post", color=colour, alpha=0.5)
        # hollow, shrinking rings: a schedule that coincides with an earlier one, or with the
        # meant rate's cross drawn on top, leaves its ring visible
        ax.plot(applied, values[applied], "o", color=colour, markerfacecolor="none", markeredgewidth=1.5,
                markersize=14 - 2.5 * k, label=label)
    ax.plot(applied, meant, "kx", markersize=7, zorder=5, label="meant for updates 1, 2, 3")
    ax.set_yscale("log")
    ax.set_xticks(steps)
    ax.set_xlabel(f"micro-step (apply_gradients call); an update every {accum_steps}th")
    ax.set_ylabel("learning rate read")
    ax.set_title(f"The rate each update applies with gradient_accumulation_steps={accum_steps}")
    ax.legend(fontsize=8, loc="lower left")
    return fig
