"""How far each variant's weights land from one reference, in float32 spacings, with the rounding band.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import numpy as np

from ._draw import figure


def plot_spacings_to_reference(gaps, reference="the large batch's weights", rounding=10, floor=0.1):
    """How far each variant's weights land from one reference, in float32 spacings, on a log axis:
    one horizontal bar per variant, the rounding band (up to `rounding` spacings) shaded, so a
    miscount, thousands of spacings off, stands out from steps that differ only by rounding.

        a gap of 0 (bit for bit) cannot sit on a log axis: its bar is a hatched, unfilled stub ending at `floor`,
        labelled "0 (bit for bit), drawn at <floor>"

    Args:
        gaps: `{label: spacings}`, each a finite number >= 0 (e.g. gradlab's `spacings`), drawn top down.
        reference: what the gaps are measured to, named on the x axis.
        rounding: the band's upper edge, spacings (the README's "Two yardsticks": 10).
        floor: where a bar of 0 ends (positive, below 1).
    Returns:
        a matplotlib Figure with 1 Axes, log-scaled in x; each bar labelled with its value.

    Lesson: notebooks/10-accumulation-in-fit.ipynb
    """
    if not gaps:
        raise ValueError("gaps needs at least one {label: spacings}")
    for label, k in gaps.items():
        if isinstance(k, bool) or not np.isfinite(k) or k < 0:
            raise ValueError(f"gaps[{label!r}] must be a finite number of spacings >= 0, got {k!r}")
    if not 0 < floor < 1 or not rounding > floor:
        raise ValueError(f"need 0 < floor < 1 and rounding > floor, got floor {floor!r}, rounding {rounding!r}")
    labels, values = list(gaps), np.array([float(k) for k in gaps.values()])
    fig, ax = figure((7.0, 0.45 * len(labels) + 1.6))
    at = np.arange(len(labels))[::-1]  # the first label on top
    ax.axvspan(floor / 10, rounding, color="tab:green", alpha=0.15, label=f"rounding: up to {rounding:g} spacings")
    colors = ["tab:green" if k <= rounding else "tab:red" for k in values]
    bars = ax.barh(at, np.maximum(values, floor) - floor / 10, left=floor / 10, color=colors, height=0.6)  # each ends at its gap
    for bar, k in zip(bars, values):
        if k == 0:  # not a distance of `floor`: a hatched, unfilled stub, labelled so
            bar.set(facecolor="none", edgecolor="tab:green", hatch="///")
    for y, k in zip(at, values):
        text = f"0 (bit for bit), drawn at {floor:g}" if k == 0 else (f"{k:.1f}" if k < 100 else f"{k:,.0f}")
        ax.text(max(k, floor) * 1.3, y, text, va="center", fontsize=10)
    ax.set_xscale("log")
    ax.set_xlim(floor / 10, max(values.max(), rounding) * 30)
    ax.set_yticks(at, labels, fontsize=10)
    ax.set_xlabel(f"distance to {reference}, float32 spacings (log scale)", fontsize=10)
    ax.set_title(f"How far each step lands from {reference}", fontsize=11)
    ax.legend(fontsize=9, frameon=False, loc="upper right")  # the top bars are short: room there
    return fig
