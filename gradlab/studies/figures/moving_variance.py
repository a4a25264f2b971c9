"""BatchNorm's moving variance over the updates of a run, one line per way of moving it.

Each update moves the moving variance v once or several times:

    v <- rho v + (1 - rho) (a batch's variance)

Moved once from all B rows (the large batch) or from the window's merged moments, it follows the
large batch; moved once per micro-batch of b rows, it settles on the micro-batches' own variances,
about (b - 1)/b of the large batch's (B - 1)/B, leaving out the spread of their means.

Lesson: notebooks/09-moving-averages.ipynb
"""
from __future__ import annotations

import numpy as np

from .plots import DASHES, _figure


def settled_shortfall(reference, values, after):
    """How far `values` sit below `reference` on average over the updates after the first `after`.

        shortfall = 1 - mean(values[after:]) / mean(reference[after:])

    Args:
        reference, values: one value per update, of the same length K > after.
        after: updates left out at the start (while the start value is still being forgotten).
    Returns:
        the shortfall as a fraction (0.1: 10% low; negative: above the reference).
    """
    reference, values = np.asarray(reference, np.float64), np.asarray(values, np.float64)
    if reference.shape != values.shape or reference.ndim != 1 or not 0 <= after < len(reference):
        raise ValueError(f"needs two series of one length K > after, got {reference.shape}, {values.shape}, "
                         f"after={after}")
    return float(1 - values[after:].mean() / reference[after:].mean())


def plot_moving_variance(series, after=None, title="BatchNorm's moving variance, update by update"):
    """Each series' value after every update, one line each; the first series is the reference.

    Args:
        series: dict `{label: [value after update 1, ..., after update K]}`, every list of length K; the first
            entry is the reference (the large batch), drawn solid and widest so that a series on it shows.
        after: if given, a second panel draws the updates after the first `after` on their own y range, where a
            gap of a few percent shows; each later series' legend label gains its shortfall against the
            reference over those updates (`settled_shortfall`), e.g. "micro (10% low after update 50)"; and a
            dotted vertical line marks update `after` in the first panel.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes (2 with `after`: every update, then those after `after`).
    """
    if not series:
        raise ValueError("series needs at least one entry")
    lengths = {len(v) for v in series.values()}
    if len(lengths) != 1:
        raise ValueError(f"every series needs the same length, got lengths {sorted(lengths)}")
    updates = np.arange(1, lengths.pop() + 1)
    reference = next(iter(series.values()))
    if after is not None and not 0 <= after < len(updates):
        raise ValueError(f"after={after} must leave at least one of the {len(updates)} updates")
    fig, axes = _figure(ncols=1 if after is None else 2, figsize=(6.4, 3.6) if after is None else (9.6, 3.6))
    axes = [axes] if after is None else list(axes)
    for i, (label, values) in enumerate(series.items()):
        if after is not None and i > 0:
            short = settled_shortfall(reference, values, after)
            side = "off" if f"{abs(short):.0%}" == "0%" else "low" if short > 0 else "high"
            label = f"{label} ({abs(short):.0%} {side} after update {after})"
        style = dict(linestyle=DASHES[i % len(DASHES)], color=f"C{i}", linewidth=3.0 if i == 0 else 1.5)
        axes[0].plot(updates, values, label=label, **style)
        if after is not None:
            axes[1].plot(updates[after:], np.asarray(values)[after:], **style)
    if after is not None:
        axes[0].axvline(after, color="0.6", linestyle=":", linewidth=1)
        axes[0].set_title("every update", fontsize="medium")
        axes[1].set_title(f"after update {after}, on its own scale", fontsize="medium")
        fig.suptitle(title)
    else:
        axes[0].set_title(title)
    for ax in axes:  # both panels plot the same quantity, the second on its own range
        ax.set(xlabel="update", ylabel="moving variance, summed over features")
    axes[0].legend(fontsize="small")
    return fig
