"""Draw a classic TF1 graph as a readable summary: one box per name scope.

    group(op) = 'variables' | 'optimizer state' | 'accumulators'   (a variable and its ops)
              | 'tower_t/<scope>'                                   (ops of tower t)
              | 'placeholders/<name>'                               (each fed tensor)
              | '<top-level scope>'                                 (everything else)

An arrow `a -> b` means an op in `b` reads a tensor of (or waits for) an op in `a`: arrows
come from the graph's real op inputs. Those implied by a longer path are left out
(a transitive reduction), except the ones leaving the placeholders or a variable group,
which show who is fed and who reads and updates the state. Columns are topological
depths, so data flows left to right.
Steps done in Python between `sess.run` calls (host averaging's numpy mean, the order
zero -> accumulate -> apply) are dashed.

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import collections
import re

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.path import Path

_TOWER = re.compile(r"^tower_(\d+)$")
_VARIABLE_OPS = ("VarHandleOp", "VariableV2")
STATE = ("variables", "optimizer state", "accumulators")
KEEP = STATE + ("placeholders",)  # groups whose every reader gets an arrow
HOST = "host"
# Python-side steps of each classic graph, drawn dashed: they are not graph edges.
_PYTHON_STEPS = {
    "host_average": [("gradients", HOST, "fetch"), (HOST, "averaged", "feed")],
    "accumulation": [("zero", "accum", "then"), ("accum", "apply", "then")],
}
_TOWER_COLORS = ["#8cb8e0", "#ffbe7d", "#8fd1c7", "#ffb3bb", "#c6a98f", "#f6dd7a"]
_ROLES = {  # group -> (legend label, colour)
    "placeholders": ("input", "#dcdcdc"),
    "split": ("input", "#dcdcdc"),
    "variables": ("shared variables", "#f1ce63"),
    "optimizer state": ("optimizer state", "#f8ebc4"),
    "accumulators": ("accumulators", "#f4a259"),
    "zero": ("zero / accumulate", "#9fd88f"),
    "accum": ("zero / accumulate", "#9fd88f"),
    "average": ("averaging", "#f08a8c"),
    "averaged": ("averaging", "#f08a8c"),
    HOST: ("averaging", "#f08a8c"),
    "apply": ("apply (one update)", "#c9a3d9"),
}
_COMPUTE = ("forward / loss / gradients", "#b9cfe6")
_NOTES = {"average": "average_gradients", "averaged": "placeholders",
          "apply": "apply_gradients", HOST: "host_average", "accum": "assign_add(w*g)",
          "zero": "assign(0)", "split": "tf.split"}
W, H, DX, DY = 2.4, 0.9, 3.1, 1.2   # box width and height, column and row spacing
LANE = 0.3                          # height of the lane a long arrow takes in a column
INCH = 0.56                         # inches per data unit of a figure draw_graph makes


def summarize_graph(parts_or_graph):
    """`[(scope, op_count, device), ...]` in order of first appearance in the graph.

    `device` is the device most of the group's placed ops asked for ('' if none asked).
    """
    return [(name, len(ops), _device(ops)) for name, ops in _groups(_graph_of(parts_or_graph)).items()]


def draw_graph(parts_or_graph, ax=None, title=None, skip=("init",)):
    """Draw a classic graph (the parts from `gradlab.classic.graphs_v1`, or a `tf.Graph`) as boxes.

    A box is a name scope (see `summarize_graph`) with its op count and device. Colour:
    its tower for `tower_t/...`, else its role (input, variables, averaging, apply, ...),
    explained in the legend.

    Args:
        parts_or_graph: what `build_towers`, `build_host_average` or `build_accumulation`
            returns, or a `tf.Graph`.
        ax: matplotlib Axes to draw in (default: a new figure sized to the graph).
        title: the title (default: the kind of graph and its size).
        skip: groups left out (default: the initializer, which reads every variable).
    Returns:
        the matplotlib Figure.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    graph = _graph_of(parts_or_graph)
    kind = getattr(parts_or_graph, "kind", None)
    groups = {g: ops for g, ops in _groups(graph).items() if g not in skip}
    if not groups:
        raise ValueError(f"nothing to draw: the graph has {len(graph.get_operations())} ops, "
                         f"none outside skip={skip!r}")
    steps = _PYTHON_STEPS.get(kind, [])
    if any(HOST in step[:2] for step in steps):
        groups[HOST] = []
    dashed = {(a, b): label for a, b, label in steps if a in groups and b in groups}
    edges = _reduce(_edges(groups))
    nodes = list(groups)
    columns = _layers(nodes, edges | set(dashed))
    pos, routes, height = _place(nodes, columns, sorted(edges | set(dashed)))

    n_cols = max(columns.values()) + 1
    if ax is None:
        size = (INCH * ((n_cols - 1) * DX + W) + 0.3, INCH * height + 1.5)
        fig, ax = plt.subplots(figsize=size, layout="constrained")
        plt.close(fig)  # owned by the caller: a notebook cell shows it once, as its value
    ends = _ports(pos, routes)
    for (a, b), route in routes.items():
        label = dashed.get((a, b)) or ("updates" if (a, b) == ("variables", "apply") else None)
        _arrow(ax, [ends[(a, b)][0], *route, ends[(a, b)][1]], dashed=(a, b) in dashed, label=label)
    legend = {}
    for name in nodes:
        role, color = _role(name, groups[name])
        legend.setdefault(role, color)
        _box(ax, name, groups[name], pos[name], color)

    ax.set_xlim(-W / 2 - 0.1, (n_cols - 1) * DX + W / 2 + 0.1)
    ax.set_ylim(-height / 2 - 0.05, height / 2 + 0.05)
    ax.axis("off")
    handles = [Patch(facecolor=c, edgecolor="#555555", label=r) for r, c in legend.items()]
    if dashed:
        handles.append(Patch(facecolor="white", edgecolor="#555555", linestyle="--",
                             label="Python, between sess.run calls"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
              ncol=min(len(handles), 4), fontsize=8.5)
    ax.set_title(title or f"{kind or 'graph'}: {len(graph.get_operations())} ops "
                          f"in {len(groups) - (HOST in groups)} name scopes", fontsize=11)
    return ax.figure


# -- grouping --------------------------------------------------------------------------------
def _graph_of(parts_or_graph):
    graph = getattr(parts_or_graph, "graph", parts_or_graph)
    if not hasattr(graph, "get_operations"):
        raise TypeError(f"expected a tf.Graph or the parts of a classic graph, got {parts_or_graph!r}")
    return graph


def _groups(graph):
    """`{group: [ops]}` in order of first appearance."""
    ops = graph.get_operations()
    trainable = {v.op.name for v in graph.get_collection("trainable_variables")}
    # Longest first, so that a slot `model/dense/kernel/Momentum` is not its variable's.
    variables = sorted((op.name for op in ops if op.type in _VARIABLE_OPS), key=len, reverse=True)
    groups = {}
    for op in ops:
        groups.setdefault(_group(op.name, variables, trainable), []).append(op)
    return groups


def _group(name, variables, trainable):
    for v in variables:
        if name == v or name.startswith(v + "/"):
            if v in trainable:
                return "variables"
            return "accumulators" if v.startswith("accumulators/") else "optimizer state"
    parts = name.split("/")
    if (_TOWER.match(parts[0]) or parts[0] == "placeholders") and len(parts) > 1:
        return "/".join(parts[:2])  # one box per tower scope, one per placeholder
    return parts[0]


def _edges(groups):
    where = {op.name: g for g, ops in groups.items() for op in ops}
    edges = set()
    for g, ops in groups.items():
        for op in ops:
            for src in [t.op for t in op.inputs] + list(op.control_inputs):
                a = where.get(src.name)
                if a is not None and a != g:
                    edges.add((a, g))
    return edges


def _reduce(edges):
    """Drop `a -> b` when a longer path leads from a to b, unless a is in `KEEP`."""
    succ = collections.defaultdict(set)
    for a, b in edges:
        succ[a].add(b)

    def reachable(start):
        seen, todo = {start}, [start]
        while todo:
            for m in succ[todo.pop()] - seen:
                seen.add(m)
                todo.append(m)
        return seen

    kept = set()
    for a, b in edges:
        if a.split("/")[0] in KEEP or not any(b in reachable(m) for m in succ[a] - {b}):
            kept.add((a, b))
    return kept


def _device(ops):
    placed = collections.Counter(op.device for op in ops if op.device)
    return placed.most_common(1)[0][0] if placed else ""


def _tower(name):
    m = _TOWER.match(name.split("/")[0])
    return int(m.group(1)) if m else None


def _role(name, ops):
    t = _tower(name)
    if t is not None:
        return f"tower {t}" + _short(_device(ops), " on "), _TOWER_COLORS[t % len(_TOWER_COLORS)]
    return _ROLES.get(name.split("/")[0], _COMPUTE)


def _short(device, prefix=""):
    return prefix + device.replace("/device:", "") if device else ""


# -- layout ----------------------------------------------------------------------------------
def _layers(nodes, edges):
    """Column of each node: its longest path from a source; then every node that feeds
    another moves right to sit just before its first reader (the variables beside the
    towers that read them, `zero` just before `accum`), which keeps arrows short."""
    succ, pred = collections.defaultdict(set), collections.defaultdict(set)
    for a, b in _acyclic(nodes, edges):
        succ[a].add(b)
        pred[b].add(a)
    order, depth = _topological(nodes, pred, succ), {}
    for n in order:
        depth[n] = max((depth[p] + 1 for p in pred[n]), default=0)
    for n in reversed(order):
        if succ[n]:
            depth[n] = min(depth[s] for s in succ[n]) - 1
    low = min(depth.values())
    return {n: d - low for n, d in depth.items()}


def _acyclic(nodes, edges):
    """`edges` without the back edges of a depth-first search (a cycle still gets layers)."""
    out = collections.defaultdict(list)
    for a, b in sorted(edges):
        out[a].append(b)
    state, keep = {}, set()

    def visit(n):
        state[n] = "open"
        for m in out[n]:
            if state.get(m) != "open":
                keep.add((n, m))
                if m not in state:
                    visit(m)
        state[n] = "done"

    for n in nodes:
        if n not in state:
            visit(n)
    return keep


def _topological(nodes, pred, succ):
    waiting = {n: len(pred[n]) for n in nodes}
    ready, order = [n for n in nodes if waiting[n] == 0], []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for m in sorted(succ[n], key=nodes.index):
            waiting[m] -= 1
            if waiting[m] == 0:
                ready.append(m)
    return order


def _place(nodes, columns, edges):
    """Positions of the boxes, and of the lanes long arrows take through the columns they
    cross (one waypoint per column, ordered with the boxes so that few arrows cross).

    Returns `(pos, routes, height)`: `{node: (x, y)}`, `{edge: [waypoints]}`, total height.
    """
    col = dict(columns)
    slots = collections.defaultdict(list)
    for n in nodes:
        slots[col[n]].append(n)
    links, routes = [], {}
    for a, b in edges:
        lane = [(a, b, c) for c in range(col[a] + 1, col[b])]  # empty unless b is columns away
        for w in lane:
            col[w] = w[2]
            slots[w[2]].append(w)
        chain = [a, *lane, b]
        links += list(zip(chain, chain[1:]))
        routes[(a, b)] = lane
    first = {n: i for i, n in enumerate(nodes)}

    def initial(s):  # boxes in tower order, then lanes in the order of their sources
        if isinstance(s, tuple):
            return (-1, len(nodes) + first[s[0]])
        t = _tower(s)
        return (-1 if t is None else t, first[s])

    rank = {s: initial(s) for c in slots for s in slots[c]}
    for c in slots:
        slots[c].sort(key=rank.get)
    y = _stack(slots)
    for sweep in range(6):  # barycentre ordering, alternately from the left and the right
        forward = sweep % 2 == 0
        for c in sorted(slots, reverse=not forward):
            near = collections.defaultdict(list)
            for a, b in links:
                if forward and col[b] == c and col[a] < c:
                    near[b].append(y[a])
                elif not forward and col[a] == c and col[b] > c:
                    near[a].append(y[b])
            slots[c].sort(key=lambda s: (-sum(near[s]) / len(near[s]) if near[s] else -y[s], rank[s]))
            y.update(_stack({c: slots[c]}))
    for lane in routes.values():
        _straighten(lane, slots, col, y)
    height = max(sum(_size(s) for s in column) for column in slots.values())
    pos = {n: (col[n] * DX, y[n]) for n in nodes}
    routes = {e: [(col[w] * DX, y[w]) for w in lane] for e, lane in routes.items()}
    return pos, routes, height


def _straighten(lane, slots, col, y):
    """Put every waypoint of one long arrow at the same height when that height is free in
    all the columns it crosses (between its neighbours there), so it runs straight."""
    if len(lane) < 2:
        return
    low, high = -float("inf"), float("inf")
    for w in lane:
        column = slots[col[w]]
        i = column.index(w)
        if i > 0:  # the slot above: stay below it
            high = min(high, y[column[i - 1]] - _size(column[i - 1]) / 2 - LANE / 2)
        if i + 1 < len(column):
            low = max(low, y[column[i + 1]] + _size(column[i + 1]) / 2 + LANE / 2)
    if low <= high:
        mean = sum(y[w] for w in lane) / len(lane)
        for w in lane:
            y[w] = min(max(mean, low), high)


def _size(slot):
    return LANE if isinstance(slot, tuple) else DY


def _stack(slots):
    """`{slot: y}`: each column's slots top to bottom, centred on y = 0."""
    y = {}
    for column in slots.values():
        top = sum(_size(s) for s in column) / 2
        for s in column:
            y[s] = top - _size(s) / 2
            top -= _size(s)
    return y


def _ports(pos, routes):
    """`{edge: (start, end)}`: arrows leave and enter a box at distinct heights, in the order
    of where they go or come from, so that they neither meet nor cross at the box."""
    out, into = collections.defaultdict(list), collections.defaultdict(list)
    for (a, b), route in routes.items():
        out[a].append(((route or [pos[b]])[0][1], (a, b)))
        into[b].append(((route or [pos[a]])[-1][1], (a, b)))
    ends = {e: [pos[e[0]], pos[e[1]]] for e in routes}
    for side, table in ((0, out), (1, into)):
        for node, items in table.items():
            items.sort(key=lambda item: -item[0])
            step = min(0.2, 0.7 * H / max(len(items) - 1, 1))
            for i, (_, e) in enumerate(items):
                x, y = pos[node]
                ends[e][side] = (x, y + ((len(items) - 1) / 2 - i) * step)
    return ends


# -- drawing ---------------------------------------------------------------------------------
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
              f"{len(ops)} op{'s' * (len(ops) != 1)}" + _short(_device(ops), " · "))
    lines = [(title, dict(fontsize=9 if len(title) < 15 else 8.5, fontweight="bold"))]
    if note:
        lines.append((note, dict(fontsize=7.5, family="monospace")))
    lines.append((detail, dict(fontsize=7.5, color="#333333")))
    for i, (text, style) in enumerate(lines):
        ax.text(x, y + 0.21 * ((len(lines) - 1) / 2 - i), text, ha="center", va="center",
                zorder=4, **style)


def _arrow(ax, points, dashed=False, label=None):
    """An arrow from the right of the first box to the left of the last, through the lanes:
    cubic segments with horizontal tangents, straight across each lane's column."""
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
    ax.add_patch(FancyArrowPatch(path=Path(verts, codes), arrowstyle="-|>", mutation_scale=11,
                                 color="#505050", linewidth=1.2 if dashed else 0.9,
                                 linestyle="--" if dashed else "-", zorder=2))
    if label:  # mid-way, or where the last curve leaves its lane (clear of arrow heads)
        (xa, ya), (xb, yb) = knots[-2], knots[-1]
        if len(knots) == 2:
            x, y, ha, va = (xa + xb) / 2, (ya + yb) / 2, "center", "center"
        else:
            x, y, ha, va = xa + 0.12, ya + 0.04, "left", "bottom"
        ax.text(x, y, label, ha=ha, va=va,
                fontsize=7.5, style="italic", color="#333333", zorder=4,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.5, alpha=0.8))
