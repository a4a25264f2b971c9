"""Memory over one call, drawn: the traces of `gradlab.studies.memory_trace.trace`, one panel each.

Each panel draws one trace (MiB above the start against ms since the call began) as a step
line, and the allocator's own peak as a dashed line of the same colour, each panel's legend in
its colour: the samples are snapshots and can miss a short spike, the peak cannot. The panels share both axes, so levels
and times compare down the column. `plot_trace_with_levels` draws one trace against levels a model predicts
(lesson 11: the memory budget's terms, summed), each dotted and labelled with its value.

Lesson: notebooks/11-memory-budget.ipynb, notebooks/12-recomputation.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

COLORS = ("black", "tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:brown")


def plot_memory_trace(traces, labels, peaks=None, title="What the allocator holds during one update", marks=None):
    """One panel per trace, stacked on one time axis.

    Args:
        traces: a list of traces, each `(ms, mib)` or `(ms, mib, peak)` (a `memory_trace.Trace`):
            equal-length sequences of sample times (ms) and MiB above the start.
        labels: one name per trace, drawn in its panel.
        peaks: one allocator peak (MiB) per trace, drawn dashed; None takes each trace's third
            field, and traces without one draw no peak.
        title: the figure's title.
        marks: None, or one sequence of times (ms) per trace, each drawn as a dotted grey vertical line
            in that trace's panel (lesson 11: when each micro-batch's loss is computed); the panel's label
            sits on a white box above them, so no line crosses it.
    Returns:
        a matplotlib Figure with one Axes per trace (closed: the caller shows it).
    Raises:
        ValueError: no traces, a count of labels or peaks that is not one per trace, a trace
            whose times and MiB differ in length or are empty, a peak that is not finite, or a count
            of marks that is not one per trace.
    """
    traces = list(traces)
    labels = list(labels)
    if not traces:
        raise ValueError("plot_memory_trace needs at least one trace, got none")
    if len(labels) != len(traces):
        raise ValueError(f"need one label per trace: {len(labels)} labels for {len(traces)} traces")
    if peaks is None:
        peaks = [t[2] if len(t) > 2 else None for t in traces]
    peaks = list(peaks)
    if len(peaks) != len(traces):
        raise ValueError(f"need one peak per trace: {len(peaks)} peaks for {len(traces)} traces")
    marks = [()] * len(traces) if marks is None else [list(m) for m in marks]
    if len(marks) != len(traces):
        raise ValueError(f"need one list of marks per trace: {len(marks)} for {len(traces)} traces")
    series = []
    for label, t, peak in zip(labels, traces, peaks):
        ms, mib = np.asarray(t[0], dtype=float), np.asarray(t[1], dtype=float)
        if ms.ndim != 1 or ms.shape != mib.shape or ms.size == 0:
            raise ValueError(f"trace {label!r}: times and MiB must be two equal, non-empty sequences, "
                             f"got shapes {ms.shape} and {mib.shape}")
        if peak is not None and not math.isfinite(peak):
            raise ValueError(f"trace {label!r}: peak must be a finite number of MiB, got {peak!r}")
        series.append((label, ms, mib, peak))
    fig, axes = plt.subplots(len(series), 1, sharex=True, sharey=True, squeeze=False,
                             figsize=(7.0, 0.95 * len(series) + 1.0), layout="constrained")
    plt.close(fig)  # owned by the caller: a cell ending with the call shows it once
    for ax, (label, ms, mib, peak), color, times in zip(axes[:, 0], series, COLORS * len(series), marks):
        ax.step(ms, mib, where="post", color=color, lw=1.2, label="sampled by a thread")
        text = label
        if peak is not None:
            ax.axhline(peak, color=color, ls="--", lw=1, label="allocator's own peak")
            text += f": peak {peak:.1f} MiB"
        for at in times:
            ax.axvline(at, color="grey", ls=":", lw=1.5)
        ax.text(0.01, 0.92, text, transform=ax.transAxes, va="top", fontsize="small", color=color, zorder=5,
                bbox=dict(facecolor="white", edgecolor="none", pad=1.0))  # above any mark's line
        ax.legend(loc="upper right", ncols=2, fontsize="x-small", frameon=False)  # in the panel's colour
        ax.grid(axis="y", alpha=0.3)
    top = max(max(float(mib.max()), peak or 0.0) for _, _, mib, peak in series)
    axes[0, 0].set_ylim(0, 1.35 * top if top > 0 else 1.0)  # shared: room above for each panel's label
    axes[-1, 0].set_xlabel("ms since the update began")
    fig.supylabel("MiB above the start", fontsize="medium")
    fig.suptitle(title, fontsize="medium")
    return fig


LEVEL_COLORS = ("tab:olive", "tab:gray", "tab:green", "tab:purple", "tab:brown")
LABEL_CLEARANCE = 0.06  # a level's label is about this share of the panel's height tall


def trace_peak_above(peak, level, clear):
    """Whether a peak line at `peak` MiB runs through a label drawn just above `level`: at or
    above the level and less than `clear` MiB over it. `plot_trace_with_levels` then draws that label
    below its line."""
    return bool(peak) and 0.0 <= peak - level < clear


def plot_trace_with_levels(trace, label, levels, mark_at=None, title="What the allocator holds during one update"):
    """One trace's panel, as `plot_memory_trace` draws it, with predicted levels across it.

        each level:  a dotted horizontal line at its MiB, labelled "name: 18.54" at the trace's
                     first sample, in its own colour (olive, grey, green, ... in order); the label
                     sits above its line, or below it where the peak's dashed line would strike it
        mark_at:     a dash-dot vertical line at that time (lesson 11: where the loss is computed)

    The y axis runs from 0 to 1.35 times the highest of the trace, its peak and the levels, so the
    labels above the top level stay inside the panel.

    Args:
        trace: `(ms, mib)` or `(ms, mib, peak)` (a `memory_trace.Trace`), as `plot_memory_trace` takes.
        label: the trace's name, drawn in its panel.
        levels: {name: MiB above the start}, drawn in order; at most 5.
        mark_at: a time (ms) to mark with a vertical line, or None for none.
        title: the figure's title.
    Returns:
        a matplotlib Figure, 7.0 x 3.4 inches, with 1 Axes (closed: the caller shows it).
    Raises:
        ValueError: a level or `mark_at` that is not a finite number, more than 5 levels, or a
            trace `plot_memory_trace` refuses.

    Lesson: notebooks/11-memory-budget.ipynb
    """
    levels = dict(levels)
    if len(levels) > len(LEVEL_COLORS):
        raise ValueError(f"at most {len(LEVEL_COLORS)} levels, got {len(levels)}: {list(levels)}")
    for name, level in levels.items():
        if not isinstance(level, (int, float, np.number)) or not math.isfinite(level):
            raise ValueError(f"level {name!r} must be a finite number of MiB, got {level!r}")
    if mark_at is not None and (not isinstance(mark_at, (int, float, np.number)) or not math.isfinite(mark_at)):
        raise ValueError(f"mark_at must be a finite time in ms or None, got {mark_at!r}")
    fig = plot_memory_trace([trace], [label], title=title)
    fig.set_size_inches(7.0, 3.4)
    (ax,) = fig.axes
    ms, mib = np.asarray(trace[0], dtype=float), np.asarray(trace[1], dtype=float)
    peak = trace[2] if len(trace) > 2 and trace[2] is not None else 0.0
    top = max(float(mib.max()), peak, *levels.values())
    ax.set_ylim(0, 1.35 * top if top > 0 else 1.0)  # room above the top level for the labels
    clear = LABEL_CLEARANCE * ax.get_ylim()[1]  # about one x-small label's height, in MiB
    for (name, level), color in zip(levels.items(), LEVEL_COLORS):
        ax.axhline(level, color=color, ls=":", lw=1.5)
        below = trace_peak_above(peak, level, clear)  # the peak's dashed line would strike a label above
        ax.text(ms[0], level, f" {name}: {level:.2f}", va="top" if below else "bottom", ha="left",
                fontsize="x-small", color=color)
    if mark_at is not None:
        ax.axvline(mark_at, color="grey", ls="-.", lw=1)
    return fig
