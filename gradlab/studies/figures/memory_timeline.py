"""Memory over one call, drawn: the traces of `gradlab.studies.memory_trace.trace`, one panel each.

Each panel draws one trace (MiB above the start against ms since the call began) as a step
line, and the allocator's own peak as a dashed line of the same colour, each panel's legend in
its colour: the samples are snapshots and can miss a short spike, the peak cannot. The panels share both axes, so levels
and times compare down the column.

Lesson: notebooks/11-memory-budget.ipynb, notebooks/12-recomputation.ipynb
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

COLORS = ("black", "tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:brown")


def plot_memory_trace(traces, labels, peaks=None, title="What the allocator holds during one update"):
    """One panel per trace, stacked on one time axis.

    Args:
        traces: a list of traces, each `(ms, mib)` or `(ms, mib, peak)` (a `memory_trace.Trace`):
            equal-length sequences of sample times (ms) and MiB above the start.
        labels: one name per trace, drawn in its panel.
        peaks: one allocator peak (MiB) per trace, drawn dashed; None takes each trace's third
            field, and traces without one draw no peak.
        title: the figure's title.
    Returns:
        a matplotlib Figure with one Axes per trace (closed: the caller shows it).
    Raises:
        ValueError: no traces, a count of labels or peaks that is not one per trace, a trace
            whose times and MiB differ in length or are empty, or a peak that is not finite.
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
    for ax, (label, ms, mib, peak), color in zip(axes[:, 0], series, COLORS * len(series)):
        ax.step(ms, mib, where="post", color=color, lw=1.2, label="sampled by a thread")
        text = label
        if peak is not None:
            ax.axhline(peak, color=color, ls="--", lw=1, label="allocator's own peak")
            text += f": peak {peak:.1f} MiB"
        ax.text(0.01, 0.92, text, transform=ax.transAxes, va="top", fontsize="small", color=color)
        ax.legend(loc="upper right", ncols=2, fontsize="x-small", frameon=False)  # in the panel's colour
        ax.grid(axis="y", alpha=0.3)
    top = max(max(float(mib.max()), peak or 0.0) for _, _, mib, peak in series)
    axes[0, 0].set_ylim(0, 1.35 * top if top > 0 else 1.0)  # shared: room above for each panel's label
    axes[-1, 0].set_xlabel("ms since the update began")
    fig.supylabel("MiB above the start", fontsize="medium")
    fig.suptitle(title, fontsize="medium")
    return fig
