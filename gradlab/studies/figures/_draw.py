"""Drawing helpers shared by the lesson figures: a closed figure, a labelled box, an arrow."""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch


def figure(figsize):
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    plt.close(fig)
    return fig, ax


def box(ax, x, y, w, h, text, color, fontsize=9):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", facecolor=color,
                                edgecolor="black", linewidth=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def arrow(ax, start, end, **style):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10,
                                 linewidth=0.9, color=style.pop("color", "black"), **style))
