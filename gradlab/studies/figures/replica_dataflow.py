"""Where one update divides, clips and all-reduces on R replicas: Keras's plain `fit` under a strategy
against the two steps that divide once by the global rows B (lesson 17's stages 1 and 2; S_{r,i} is replica r's
micro-batch i's summed loss, as in the lesson).

    mirrored fit:  each replica  mean loss / R -> gradient -> clip its part  | all-reduce: sum | apply
    stage 1:       each replica  sum_i S_{r,i} -> gradient -> / B            | all-reduce: sum | apply
    stage 2:       each replica  sum_i S_{r,i} -> gradient                    | all-reduce: sum | / B -> clip -> apply

Stage 1 learns B from a 4-byte all-reduce of the rows before it divides (not drawn); stage 2 sums the rows with
the gradients.

Steps left of the all-reduce run on each replica's own shard; those right of it run on the sum, the same on
every replica. Keras 3's `optimizer.apply` clips before its all-reduce (`base_optimizer.apply` calls
`_clip_gradients`, then `_backend_update_step` calls `_all_reduce_sum_gradients`).

Lesson: notebooks/17-fit-across-replicas.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch

# route -> (steps on each replica, the all-reduce, steps on the sum)
DATAFLOWS = {
    "mirrored fit (Keras)": (("mean loss ÷ R", "gradient", "clip its part"), "all-reduce:\nsum", ("apply",)),
    "stage 1 (public calls)": (("$\\Sigma_i\\, S_{r,i}$", "gradient", "÷ B"), "all-reduce:\nsum", ("apply",)),
    "stage 2 (optional: clips the mean)": (("$\\Sigma_i\\, S_{r,i}$", "gradient"), "all-reduce:\nsum, rows", ("÷ B", "clip", "apply")),
}
_MISSES, _EXACT, _REDUCE = "#f6c4c4", "#c4e8c4", "#fdd49e"  # red: mirrored fit's 1/R and clip; green: the stages'
_MARKED = {"mean loss ÷ R": _MISSES, "clip its part": _MISSES, "÷ B": _EXACT, "clip": _EXACT}


def _box(ax, x, y, text, color):
    return ax.text(x, y, text, ha="center", va="center", fontsize="small",
                   bbox={"boxstyle": "round,pad=0.3", "facecolor": color, "edgecolor": "0.4"})


def _arrow(ax, start, end):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=9, color="0.4",
                                 shrinkA=28, shrinkB=28))


def plot_replica_dataflow(replicas=2, dataflows=None):
    """One panel per route, left to right in the order the update runs; one row per replica for the steps
    before the all-reduce, one box spanning the rows for the all-reduce, then the steps on the sum.

    Args:
        replicas: rows of per-replica steps drawn (2 in the lesson).
        dataflows: route -> (per-replica steps, all-reduce label, steps on the sum); `DATAFLOWS` if None.

    Returns:
        a matplotlib Figure, one Axes per route (its title the route's name); each box is a Text artist.
    """
    dataflows = DATAFLOWS if dataflows is None else dataflows
    if replicas < 1:
        raise ValueError(f"replicas must be at least 1, got {replicas!r}")
    columns = max(len(before) + 1 + len(after) for before, _, after in dataflows.values())
    fig, axes = plt.subplots(len(dataflows), 1, figsize=(7.4, 1.35 * len(dataflows) * (1 + 0.35 * (replicas - 1))),
                             layout="constrained", squeeze=False)
    plt.close(fig)  # owned by the caller
    rows = [replicas - 1 - r for r in range(replicas)]  # replica 0 on top
    middle = (replicas - 1) / 2
    for ax, (route, (before, reduce, after)) in zip(axes[:, 0], dataflows.items()):
        for r, y in enumerate(rows):
            ax.text(-0.55, y, f"replica {r}", ha="right", va="center", fontsize="small", color="0.3")
            for x, step in enumerate(before):
                _box(ax, x, y, step, _MARKED.get(step, "white"))
                if x:
                    _arrow(ax, (x - 1, y), (x, y))
            _arrow(ax, (len(before) - 1, y), (len(before), middle))
        x_reduce = len(before)
        _box(ax, x_reduce, middle, reduce, _REDUCE)
        for x, step in enumerate(after, start=x_reduce + 1):
            _box(ax, x, middle, step, _MARKED.get(step, "white"))
            _arrow(ax, (x - 1, middle), (x, middle))
        ax.set_xlim(-1.5, columns - 0.4)
        ax.set_ylim(-0.6, replicas - 0.4)
        ax.set_axis_off()
        ax.set_title(route, fontsize="medium", loc="left")
    return fig
