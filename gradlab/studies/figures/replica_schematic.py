"""One update across replicas as sum-and-count does it, as a schematic.

    replicas:   replica r sums its micro-batches -> one all-reduce of [sums, rows] -> sums / B = g_B

Lesson: notebooks/13-across-replicas.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ._draw import arrow, box, figure


def draw_replicas(shards, accum_steps):
    """A schematic of one update as sum-and-count does it: sums in each replica, one all-reduce, one division.

        replica r:  [sum_i G_ri, sum_i L_ri, n_r]     (G, L: a micro-batch's summed gradient and loss; no communication)
        all-reduce: [sum_r sums, B = sum_r n_r]       (once per update)
        every replica: divide the sums by the rows B, update its copy by g_B   (identical weights stay identical;
                       not through Keras's `apply`, which would all-reduce g_B again)

    Args:
        shards: the examples per replica `[n_1, ..., n_R]` (for example
            `gradlab.core.distribute.check_batch(B, R, accum_steps)`).
        accum_steps: micro-batches per replica and update.
    Returns:
        a matplotlib Figure with 1 Axes.

    Lesson: notebooks/13-across-replicas.ipynb
    """
    shards = [int(n) for n in shards]
    if not shards or min(shards) < 1:
        raise ValueError(f"shards must list at least one replica of >= 1 example, got {shards!r}")
    if int(accum_steps) != accum_steps or accum_steps < 1:
        raise ValueError(f"accum_steps must be an integer >= 1, got {accum_steps!r}")
    from ...core.microbatch import split_sizes  # layer 1, no TensorFlow work
    B, R, k = sum(shards), len(shards), int(accum_steps)
    fig, ax = figure((9.0, 1.3 + 1.25 * R))
    colors = plt.get_cmap("Pastel1")(np.arange(R) % 9)
    lane = 1.25
    top = R * lane
    box(ax, 0.0, top / 2 - 0.4, 1.3, 0.8, f"batch\nB = {B}", "whitesmoke")
    reduce_x = 2.7 + 1.05 * k
    box(ax, reduce_x, 0.15, 1.35, top - 0.3, "all-reduce\n(SUM)\n[sums, rows]\nonce per\nupdate", "mistyrose")
    for r, (n_r, color) in enumerate(zip(shards, colors)):
        y = top - (r + 1) * lane + 0.25
        arrow(ax, (1.3, top / 2), (1.75, y + 0.35))
        ax.text(1.8, y + 0.76, f"replica {r}: {n_r} rows", fontsize=8)
        for i, n in enumerate(split_sizes(n_r, k)):
            x = 1.8 + 1.05 * i
            box(ax, x, y, 0.9, 0.7, f"{n} rows\nsum", color, fontsize=8)
            if i:
                arrow(ax, (x - 0.15, y + 0.35), (x, y + 0.35), color="dimgray")
        x_end = 1.8 + 1.05 * k - 0.15
        ax.text((1.8 + x_end) / 2, y - 0.14, f"add up in replica {r}: no communication",
                ha="center", va="center", fontsize=7, color="dimgray")
        arrow(ax, (x_end, y + 0.35), (reduce_x, y + 0.35))
        ax.text((x_end + reduce_x) / 2, y + 0.45, f"[sums, {n_r}]", ha="center", va="bottom", fontsize=7)
        box(ax, reduce_x + 1.75, y, 1.1, 0.7, f"÷ rows\n= {B}", "lightyellow", fontsize=8)
        arrow(ax, (reduce_x + 1.35, y + 0.35), (reduce_x + 1.75, y + 0.35))
        box(ax, reduce_x + 3.25, y, 1.2, 0.7, f"update by $g_B$\nreplica {r}", "honeydew", fontsize=8)
        arrow(ax, (reduce_x + 2.85, y + 0.35), (reduce_x + 3.25, y + 0.35))
    ax.set_xlim(-0.1, reduce_x + 4.55)
    ax.set_ylim(-0.1, top + 0.35)
    ax.set_axis_off()
    ax.set_title(f"{R} replicas × {k} micro-batches: local sums, 1 all-reduce per update, then ÷ {B}", fontsize=10)
    return fig
