"""Where one update divides, clips and all-reduces on R replicas: Keras's plain `fit` under a strategy
against the three routes that divide once by the global rows B (lesson 15's unclipped one division, lesson 16's
clipped two-all-reduce route and its one-all-reduce route, the learner's and gradlab's; S_{r,i} is replica r's
micro-batch i's summed loss, as in the lessons). `DATAFLOWS` holds all four and `plot_replica_dataflow()` draws
them all; lesson 16 draws two, `routes=(0, 2)`: mirrored fit and the clipped two-all-reduce route.

    mirrored fit:  each replica  mean loss / R -> gradient -> [apply: clip its part | all-reduce: gradient | update]
    one division:  each replica  sum_i S_{r,i} -> gradient, rows n_r | all-reduce 1: rows (4 bytes) | each replica
                   / B | [apply: all-reduce 2: gradient | update]
    two all-reduces: each replica  sum_i S_{r,i} -> gradient, rows n_r | all-reduce 1: rows, gradient | each
                   replica / B -> clip -> / R | [apply: all-reduce 2: gradient | update]
    one all-reduce: each replica  sum_i S_{r,i} -> gradient, rows n_r | all-reduce: rows, gradient (gradlab's adds S) | / B
                   -> clip -> [apply, its all-reduce passed through: update]

Arrows give the order the update runs in. Steps before a route's last all-reduce run on each replica's own
shard (the one-division route's first all-reduce sums only the rows n_r, and its arrow goes to "/ B", where each replica divides
its own gradient by their sum B: an all-reduce whose label names no gradient is passed by a dashed arrow that
carries each replica's gradient around it); those after it run on the sum, the same on every replica. A dashed
frame, [apply: ...] above, holds what runs inside `optimizer.apply`: Keras 3's `base_optimizer.apply` calls
`_clip_gradients`, then `_backend_update_step` calls `_all_reduce_sum_gradients`, then updates. So mirrored fit's
clip and every public route's gradient all-reduce run inside it; the one-all-reduce route clips before it and its
`apply` sends nothing.

Lesson: notebooks/16-clipping-across-replicas.ipynb
"""
from __future__ import annotations

import re

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

# route -> (steps on each replica, all-reduce, [steps on each replica, all-reduce, ...] steps on the sum):
# tuples of steps and all-reduce labels alternate, a tuple first and last
DATAFLOWS = {
    "mirrored fit (Keras)": (("mean loss ÷ R", "gradient", "clip its part"), "all-reduce:\ngradient", ("update",)),
    "unclipped, one division: public calls": (("$\\Sigma_i\\, S_{r,i}$", "gradient,\nrows $n_r$"),
                                         "all-reduce 1:\nrows, 4 bytes", ("÷ B",), "all-reduce 2:\ngradient", ("update",)),
    "clipped, two all-reduces: public calls": (("$\\Sigma_i\\, S_{r,i}$", "gradient,\nrows $n_r$"),
                                               "all-reduce 1:\nrows, gradient", ("÷ B", "clip", "÷ R"),
                                               "all-reduce 2:\ngradient", ("update",)),
    "one all-reduce, yours and gradlab's (a private Keras hook)": (("$\\Sigma_i\\, S_{r,i}$", "gradient,\nrows $n_r$"),
                                                                   "all-reduce:\nrows, gradient",
                                                                   ("÷ B", "clip", "update")),
}
# route -> (its first box inside optimizer.apply, the frame's caption): from that box to the route's last, one frame
APPLY = {
    "mirrored fit (Keras)": ("clip its part", "optimizer.apply"),
    "unclipped, one division: public calls": ("all-reduce 2:\ngradient", "optimizer.apply"),
    "clipped, two all-reduces: public calls": ("all-reduce 2:\ngradient", "optimizer.apply"),
    "one all-reduce, yours and gradlab's (a private Keras hook)": ("update", "optimizer.apply, its all-reduce passed through"),
}
_MISSES, _EXACT, _REDUCE = "#f6c4c4", "#c4e8c4", "#fdd49e"  # red: mirrored fit's clip; green: the routes'
# mirrored fit's "mean loss ÷ R" stays white: with even shards (lesson 16) it is the large batch's; only its clip leaves it
_MARKED = {"clip its part": _MISSES, "÷ B": _EXACT, "clip": _EXACT}
LEGEND = ((_MISSES, "where mirrored fit leaves the large batch"),  # the figure's colour key, below the panels
          (_EXACT, "where a route divides or clips as the large batch does"), (_REDUCE, "an all-reduce"))
FRAME = "inside optimizer.apply"  # the legend's last entry: the dashed frame


def all_reduces(route):
    """The all-reduce labels of a route (a value of `DATAFLOWS`), in order."""
    return list(route[1::2])


FONT = 11  # points: box, replica and legend text (titles 13), readable at the figure's display width


def _box(ax, x, y, text, color):
    return ax.text(x, y, text, ha="center", va="center", fontsize=FONT,
                   bbox={"boxstyle": "round,pad=0.3", "facecolor": color, "edgecolor": "0.4"})


def _half_width(text):
    """About half a box's width in points: its longest line at FONT (mathtext counted by what it shows), the pad."""
    shown = re.sub(r"\\[A-Za-z]+|\\,|[${}_^ ]", lambda m: "S" if m.group().startswith("\\") and len(m.group()) > 2 else "",
                   text)
    return 0.28 * FONT * max(len(line) for line in shown.split("\n")) + 0.3 * FONT + 2


def _arrow(ax, start, end, linestyle="-", texts=("", "")):
    """An arrow from box to box, starting and ending a few points off each box's edge (`texts`: the two labels)."""
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=11, color="0.4",
                                 shrinkA=max(14, _half_width(texts[0])), shrinkB=max(14, _half_width(texts[1])),
                                 linestyle=linestyle))


def _frame(ax, left, right, replicas, caption):
    """The dashed frame from x = left to x = right (the boxes' outer edges), all replicas' rows, its caption above it."""
    ax.add_patch(FancyBboxPatch((left, -0.42), right - left, replicas - 1 + 0.84,
                                boxstyle="round,pad=0,rounding_size=0.12", facecolor="none", edgecolor="0.35",
                                linestyle="--", linewidth=1.0, label=FRAME))
    ax.text((left + right) / 2, replicas - 1 + 0.47, caption, ha="center", va="bottom", fontsize=FONT - 1,
            color="0.25", family="monospace")


GAP = 0.34  # inches between neighbouring boxes: room for an arrow


def _labels(route):
    """Each column's label, left to right: a route's steps and all-reduces flattened."""
    return [label for segment in route for label in ((segment,) if isinstance(segment, str) else segment)]


def _columns(route):
    """Each column's centre in inches, the first box's left edge at 0: box edges GAP apart."""
    halves = [_half_width(label) / 72 for label in _labels(route)]
    centres = [halves[0]]
    for before, after in zip(halves, halves[1:]):
        centres.append(centres[-1] + before + GAP + after)
    return centres


def _check(route, name):
    if len(route) % 2 == 0 or not all(isinstance(s, tuple) for s in route[::2]) or \
            not all(isinstance(s, str) for s in route[1::2]):
        raise ValueError(f"{name!r}: steps (tuples) and all-reduces (strings) must alternate, steps first and last")


def plot_replica_dataflow(replicas=2, dataflows=None, routes=None):
    """One panel per route, left to right in the order the update runs: one row per replica for the steps
    before an all-reduce, one box spanning the rows for each all-reduce, then the steps on the sum once; a
    dashed frame (a FancyBboxPatch labelled `FRAME`) around the boxes that run inside `optimizer.apply` (`APPLY`).

    Args:
        replicas: rows of per-replica steps drawn (2 in the lesson).
        dataflows: route -> (steps, all-reduce label, steps, ..., steps); `DATAFLOWS` if None.
        routes: which of them to draw: a number n draws the first n; a sequence of positions in `dataflows`
            (or names) draws those, in that order (lesson 16 calls `routes=(0, 2)`: mirrored fit and the clipped
            two-all-reduce route); all if None.

    Returns:
        a matplotlib Figure, one Axes per route (its title the route's name); each box is a Text artist.
    """
    dataflows = DATAFLOWS if dataflows is None else dataflows
    if replicas < 1:
        raise ValueError(f"replicas must be at least 1, got {replicas!r}")
    if isinstance(routes, int):
        if not 1 <= routes <= len(dataflows):
            raise ValueError(f"routes must be 1 to {len(dataflows)}, got {routes!r}")
        dataflows = dict(list(dataflows.items())[:routes])
    elif routes is not None:
        names = list(dataflows)
        chosen = [names[r] if isinstance(r, int) and 0 <= r < len(names) else r for r in routes]
        if not chosen or any(c not in dataflows for c in chosen):
            raise ValueError(f"routes must name routes of {names} or their positions, got {routes!r}")
        dataflows = {c: dataflows[c] for c in chosen}
    for name, route in dataflows.items():
        _check(route, name)
    # x in inches: each column as wide as its widest box, GAP between neighbouring boxes for the arrow
    places = {route: _columns(segments) for route, segments in dataflows.items()}
    span = max(p[-1] + _half_width(_labels(s)[-1]) / 72 for p, s in zip(places.values(), dataflows.values()))
    width = span + 1.2  # the frame and the replica labels' margin at the left
    fig, axes = plt.subplots(len(dataflows), 1, figsize=(width, 1.75 * len(dataflows) * (1 + 0.35 * (replicas - 1))),
                             layout="constrained", squeeze=False)
    plt.close(fig)  # owned by the caller
    rows = [replicas - 1 - r for r in range(replicas)]  # replica 0 on top
    middle = (replicas - 1) / 2
    for ax, (route, segments) in zip(axes[:, 0], dataflows.items()):
        pos, column = places[route], 0
        x, previous = pos[0], None  # previous: where the last box stood and its label, (x, [y of each replica] or [middle], label)
        first_in_apply, caption = APPLY.get(route, (None, None))
        framed = None  # the x of the first box inside optimizer.apply, once drawn
        bypass = None  # the replicas' boxes before an all-reduce that carries no gradient: it goes around
        for k, segment in enumerate(segments):
            if isinstance(segment, str):  # an all-reduce: one box, fed by every replica
                _box(ax, x, middle, segment, _REDUCE)
                framed = (x, segment) if segment == first_in_apply and framed is None else framed
                for y in previous[1]:
                    _arrow(ax, (previous[0], y), (x, middle), texts=(previous[2], segment))
                bypass = previous if "gradient" not in segment else None
                previous, column = (x, [middle], segment), column + 1
                x = pos[min(column, len(pos) - 1)]
                continue
            ys = [middle] if k == len(segments) - 1 else rows  # after the last all-reduce: once, on the sum
            for step in segment:
                for r, y in enumerate(ys):
                    _box(ax, x, y, step, _MARKED.get(step, "white"))
                    if previous is not None:
                        _arrow(ax, (previous[0], previous[1][r] if len(previous[1]) == len(ys) else middle), (x, y),
                               texts=(previous[2], step))
                    if bypass is not None and len(bypass[1]) == len(ys):  # each replica's own gradient
                        _arrow(ax, (bypass[0], bypass[1][r]), (x, y), linestyle="--", texts=(bypass[2], step))
                framed = (x, step) if step == first_in_apply and framed is None else framed
                previous, column, bypass = (x, ys, step), column + 1, None
                x = pos[min(column, len(pos) - 1)]
        if framed is not None:
            margin = 0.12  # inches between the frame and the boxes inside it
            _frame(ax, framed[0] - _half_width(framed[1]) / 72 - margin,
                   previous[0] + _half_width(previous[2]) / 72 + margin, replicas, caption)
        for r, y in enumerate(rows):
            ax.text(-0.12, y, f"replica {r}", ha="right", va="center", fontsize=FONT, color="0.3")
        ax.set_xlim(-0.95, span + 0.16)  # room for the dashed frame at the right
        ax.set_ylim(-0.6, replicas - 0.4 + 0.35)  # room above for the frame's caption
        ax.set_axis_off()
        ax.set_title(route, fontsize=FONT + 2, loc="left")
    fig.legend(handles=[Patch(facecolor=c, edgecolor="0.4", label=label) for c, label in LEGEND]
               + [Patch(facecolor="none", edgecolor="0.35", linestyle="--", label=FRAME)],
               loc="outside lower center", ncols=2, fontsize=FONT, frameon=False)
    return fig
