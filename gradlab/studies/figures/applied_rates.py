"""The learning rate each update applies, one line per schedule (raw, `PerUpdate`).

Lesson: notebooks/06-keras-accumulation.ipynb
"""
from __future__ import annotations

import itertools

import numpy as np

from ._draw import figure


def plot_applied_rates(rates, title="The learning rate each update applies"):
    """The learning rate each update applied, one line per label, against the update k (from 1):
    e.g. a schedule Keras's accumulation reads at its calls, and the same wrapped in `PerUpdate`.

    Args:
        rates: `{label: rates}`, each a non-empty 1-D sequence, entry k - 1 the rate update k applied.
        title: the figure's title.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/06-keras-accumulation.ipynb
    """
    if not rates or any(np.ndim(r) != 1 or len(r) == 0 for r in rates.values()):
        raise ValueError("rates needs, per label, a non-empty 1-D sequence of the rate each update applied")
    fig, ax = figure((6.4, 3.4))
    for (label, r), style in zip(rates.items(), itertools.cycle(("o-", "s--", "^:", "x-."))):  # every label drawn
        ax.plot(np.arange(1, len(r) + 1), np.asarray(r, dtype=float), style, ms=3, label=label)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("update k (from 1)")
    ax.set_ylabel("learning rate applied")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small", frameon=False)
    return fig
