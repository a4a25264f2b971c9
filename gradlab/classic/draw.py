"""Draw a classic TF1 graph as a readable summary with matplotlib: one box per name scope.

    boxes  = gradlab.classic.scopes.groups(graph)            one per name scope, variable, placeholder
    arrows = transitive_reduction(scopes.edges(boxes))       the real op inputs, implied ones left out
    where  = gradlab.classic.layout.layered_layout(...)      columns are topological depths

Arrows leaving the placeholders or a variable group are always kept: they show who is fed
and who reads and updates the state. Data flows left to right. Steps done in Python between
`sess.run` calls (host averaging's numpy mean, the order zero -> accumulate -> apply) are dashed.
The edge variables -> apply has a head at both ends: `apply` reads the variables and writes them.
With `cross_device=True`, an arrow between two boxes placed on different devices is red: a copy.

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-accumulating-in-variables.ipynb
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.path import Path

from . import scopes
from .layout import H, W, layered_layout, transitive_reduction

KEEP = scopes.STATE + ("placeholders",)  # groups whose every reader gets an arrow
HOST = "host"
# Python-side steps of each classic graph, drawn dashed: they are not graph edges.
_PYTHON_STEPS = {
    "host_average": [("gradients", HOST, "fetch"), (HOST, "averaged", "feed")],
    "accumulation": [("zero", "accum", "then"), ("accum", "apply", "then")],
}
_TOWER_COLORS = ["#8cb8e0", "#ffbe7d", "#8fd1c7", "#ffb3bb", "#c6a98f", "#f6dd7a"]
_ROLES = {  # group -> (legend label, colour)
    "placeholders": ("input (fed)", "#dcdcdc"),
    "split": ("input (fed)", "#dcdcdc"),
    "variables": ("variables", "#f1ce63"),
    "optimizer state": ("optimizer state", "#f8ebc4"),
    "accumulators": ("accumulators", "#f4a259"),
    "zero": ("zero / accumulate", "#9fd88f"),
    "accum": ("zero / accumulate", "#9fd88f"),
    "average": ("averaging", "#f08a8c"),
    "averaged": ("input (fed)", "#dcdcdc"),  # placeholders: the host feeds the mean
    HOST: ("averaging", "#f08a8c"),
    "apply": ("apply (one update)", "#c9a3d9"),
    "large_batch": ("large-batch check", "#d5e8d4"),  # a lesson's reference beside the towers
}
_COMPUTE = ("forward / loss / gradients", "#b9cfe6")
_NOTES = {"average": "average_gradients", "averaged": "placeholders",
          "apply": "apply_gradients", HOST: "mean of fetched grads", "accum": "assign_add(w*g)",
          "zero": "assign(0)", "split": "tf.split"}
UPDATE_LABEL = "reads and updates"  # on the two-headed arrow between variables and apply
INCH = 0.56                         # inches per data unit of a figure draw_graph makes
CROSS_COLOR = "#d62728"             # an arrow between boxes on two devices, with cross_device=True
CROSS_LABEL = "crosses devices (a copy)"


def draw_graph(parts_or_graph, ax=None, title=None, skip=("init",), cross_device=False, cross_label=None):
    """Draw a classic graph (a builder's parts, or a `tf.Graph`) as boxes and arrows.

    A box is a name scope (see `gradlab.classic.scopes.summarize_graph`) with its op count
    and device. Colour: its tower for `tower_t/...`, else its role (input, variables,
    averaging, apply, ...), explained in the legend; the legend has a swatch only for a
    colour some box is filled with (the host's box is white and dashed, named by the dashed entry).

    Args:
        parts_or_graph: what `build_towers`, `build_host_average` or `build_accumulation`
            returns, or a `tf.Graph`.
        ax: matplotlib Axes to draw in (default: a new figure sized to the graph).
        title: the title (default: the kind of graph and its size).
        skip: groups left out (default: the initializer, which reads every variable).
        cross_device: draw red each arrow whose two boxes asked for different devices (a box
            with no device is never counted), and name the colour in the legend.
        cross_label: the legend's name for the red arrows (default: CROSS_LABEL), for a
            figure whose red arrows are not every crossing (an op with no device is not counted).
    Returns:
        the matplotlib Figure.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    graph = scopes.graph_of(parts_or_graph)
    kind = getattr(parts_or_graph, "kind", None)
    every = scopes.groups(graph)
    groups = {g: ops for g, ops in every.items() if g not in skip}
    if not groups:
        raise ValueError(f"nothing to draw: the graph has {len(graph.get_operations())} ops, "
                         f"none outside skip={skip!r}")
    steps = _PYTHON_STEPS.get(kind, [])
    if any(HOST in step[:2] for step in steps):
        groups[HOST] = []
    dashed = {(a, b): label for a, b, label in steps if a in groups and b in groups}
    edges = transitive_reduction(scopes.edges(groups), keep=lambda g: g.split("/")[0] in KEEP)
    nodes = list(groups)
    # Towers start in tower order, below the other boxes and the lanes.
    where = layered_layout(nodes, edges | set(dashed),
                           band=lambda g: 0 if scopes.tower(g) is None else scopes.tower(g) + 1)

    if ax is None:
        size = (INCH * where.width + 0.3, INCH * where.height + 1.5)
        fig, ax = plt.subplots(figsize=size, layout="constrained")
        plt.close(fig)  # owned by the caller: a notebook cell shows it once, as its value
    crossed = False
    for (a, b), route in where.routes.items():
        update = (a, b) == ("variables", "apply")  # apply reads the variables and writes them
        label = dashed.get((a, b)) or (UPDATE_LABEL if update else None)
        start, end = where.ends[(a, b)]
        cross = cross_device and _crosses(groups.get(a, []), groups.get(b, []))
        crossed = crossed or cross
        _arrow(ax, [start, *route, end], dashed=(a, b) in dashed, label=label, both=update,
               color=CROSS_COLOR if cross else "#505050")
    legend = {}
    for name in nodes:
        role, color = _role(name, groups[name])
        if name != HOST:  # the host box is drawn white and dashed: the dashed entry below names it
            legend.setdefault(role, color)
        _box(ax, name, groups[name], where.pos[name], color)

    ax.set_xlim(-W / 2 - 0.1, where.width - W / 2 + 0.1)
    ax.set_ylim(-where.height / 2 - 0.05, where.height / 2 + 0.05)
    ax.axis("off")
    handles = [Patch(facecolor=c, edgecolor="#555555", label=r) for r, c in legend.items()]
    if dashed:
        handles.append(Patch(facecolor="white", edgecolor="#555555", linestyle="--",
                             label="Python, between sess.run calls"))
    if crossed:
        handles.append(Line2D([], [], color=CROSS_COLOR, linewidth=1.5, label=cross_label or CROSS_LABEL))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
              ncol=min(len(handles), 4), fontsize=8.5)
    # the ops and scopes drawn; a skipped scope is named, so the count adds up to the boxes
    hidden = [g for g in every if g in skip]
    ax.set_title(title or f"{kind or 'graph'}: {sum(len(ops) for ops in groups.values())} ops "
                          f"in {len(groups) - (HOST in groups)} name scopes"
                          + (f" ({', '.join(hidden)} not drawn)" if hidden else ""), fontsize=11)
    return ax.figure


def _crosses(ops_a, ops_b):
    a, b = scopes.device(ops_a), scopes.device(ops_b)
    return bool(a and b and a != b)


def _role(name, ops):
    t = scopes.tower(name)
    if t is not None:
        return f"tower {t}" + _short(scopes.device(ops), " on "), _TOWER_COLORS[t % len(_TOWER_COLORS)]
    return _ROLES.get(name.split("/")[0], _COMPUTE)


def _short(device, prefix=""):
    return prefix + device.replace("/device:", "") if device else ""


def _box(ax, name, ops, xy, color):
    x, y = xy
    host = name == HOST
    patch = FancyBboxPatch((x - W / 2, y - H / 2), W, H, boxstyle="round,pad=0,rounding_size=0.15",
                           facecolor="white" if host else color, edgecolor="#444444",
                           linewidth=1.4 if host else 0.8, linestyle="--" if host else "-", zorder=3)
    patch.set_gid(name)
    ax.add_patch(patch)
    title, note = name, _NOTES.get(name)
    if name.startswith("placeholders/"):
        title, note = name.split("/", 1)[1], "placeholder"
    detail = ("numpy, not a graph op" if host else
              f"{len(ops)} op{'s' * (len(ops) != 1)}" + _short(scopes.device(ops), " · "))
    lines = [(title, dict(fontsize=9 if len(title) < 15 else 8.5, fontweight="bold"))]
    if note:
        lines.append((note, dict(fontsize=7.5, family="monospace")))
    lines.append((detail, dict(fontsize=7.5, color="#333333")))
    for i, (text, style) in enumerate(lines):
        ax.text(x, y + 0.21 * ((len(lines) - 1) / 2 - i), text, ha="center", va="center",
                zorder=4, **style)


def _arrow(ax, points, dashed=False, label=None, both=False, color="#505050"):
    """An arrow from the right of the first box to the left of the last, through the lanes:
    cubic segments with horizontal tangents, straight across each lane's column; with
    `both`, a head at each end."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    knots = [(x0 + W / 2, y0)]
    for x, y in points[1:-1]:
        knots += [(x - W / 2, y), (x + W / 2, y)]
    knots.append((x1 - W / 2, y1))
    verts, codes = [knots[0]], [Path.MOVETO]
    for i, ((xa, ya), (xb, yb)) in enumerate(zip(knots, knots[1:])):
        if i % 2:  # across a lane
            verts.append((xb, yb))
            codes.append(Path.LINETO)
        else:
            mid = (xa + xb) / 2
            verts += [(mid, ya), (mid, yb), (xb, yb)]
            codes += [Path.CURVE4] * 3
    ax.add_patch(FancyArrowPatch(path=Path(verts, codes), arrowstyle="<|-|>" if both else "-|>",
                                 mutation_scale=11, color=color, linewidth=1.2 if dashed else 0.9,
                                 linestyle="--" if dashed else "-", zorder=2))
    if label:  # above mid-way (the line stays visible, dashes too), or where the last curve
        (xa, ya), (xb, yb) = knots[-2], knots[-1]  # leaves its lane (clear of arrow heads)
        if len(knots) == 2 and both and ya != yb:  # a slope between neighbouring columns: left of
            # it, under the upper box, clear of the level arrows that leave or reach either box
            x, y, ha, va = (xa + xb) / 2 - 0.1, max(ya, yb) - H / 2 - 0.05, "right", "top"
        elif len(knots) == 2 and ya < yb:  # rising to a box above: at the start, clear of what
            # reaches the upper box level from its left
            x, y, ha, va = xa + 0.04, ya + 0.04, "left", "bottom"
        elif len(knots) == 2:
            x, y, ha, va = (xa + xb) / 2, max(ya, yb) + 0.06, "center", "bottom"
        else:
            x, y, ha, va = xa + 0.12, ya + 0.04, "left", "bottom"
        ax.text(x, y, label, ha=ha, va=va,
                fontsize=7.5, style="italic", color="#333333", zorder=4,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.5, alpha=0.8))
