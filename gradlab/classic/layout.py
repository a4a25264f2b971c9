"""A layered (Sugiyama-style) layout of a directed graph, on plain data: no TensorFlow, no drawing.

    column(n) = longest path from a source to n, then moved right to just before its first reader
    y         = boxes stacked per column, ordered by the mean height of their neighbours
    lanes     = an edge spanning columns c_a < c < c_b takes a slot of height LANE in each column c

Nodes are boxes `W` wide and `H` high, columns `DX` apart, rows `DY` apart; any hashable
nodes (the drawing uses name-scope strings).

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-accumulating-in-variables.ipynb
"""
from __future__ import annotations

import collections
import dataclasses

W, H, DX, DY = 2.4, 0.9, 3.1, 1.2   # box width and height, column and row spacing
LANE = 0.3                          # height of the lane a long arrow takes in a column


@dataclasses.dataclass
class Layout:
    """Where the boxes and arrows go: `pos[node] = (x, y)` (box centre), `routes[edge]` the
    waypoints of a long arrow (one per column crossed), `ends[edge] = (start, end)` its ports."""
    columns: dict
    pos: dict
    routes: dict
    ends: dict
    width: float
    height: float


def layered_layout(nodes, edges, band=None):
    """Columns, then heights, then arrow ports of `nodes` and `edges` (see the module).

    Args:
        nodes: the nodes, in the order that breaks ties.
        edges: `(a, b)` pairs of nodes; cycles are allowed (a back edge gets no layering).
        band: `band(node) -> int` that orders each column before the sweeps (default: all 0):
            by band, then in the order of `nodes`; the lanes start after band 0, before band 1.
    Returns:
        `Layout`; `width` spans the box edges, `height` the tallest column.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    nodes, edges = list(nodes), sorted(edges)
    columns = layers(nodes, edges)
    pos, routes, height = _place(nodes, columns, edges, band or (lambda n: 0))
    width = max(columns.values()) * DX + W
    return Layout(columns, pos, routes, _ports(pos, routes), width, height)


def transitive_reduction(edges, keep=lambda node: False):
    """`edges` without `a -> b` when a longer path leads from a to b, unless `keep(a)`.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
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

    return {(a, b) for a, b in edges
            if keep(a) or not any(b in reachable(m) for m in succ[a] - {b})}


def layers(nodes, edges):
    """Column of each node: its longest path from a source; then every node that feeds
    another moves right to sit just before its first reader (the variables beside the
    towers that read them, `zero` just before `accum`), which keeps arrows short.
    The leftmost column is 0.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
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


def _place(nodes, columns, edges, band):
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
    # Lanes are (a, b, column) triples; boxes are the nodes themselves.
    lanes = {w for lane in routes.values() for w in lane}

    def initial(s):  # boxes by band; lanes (in the order of their sources) after band 0
        if s in lanes:
            return (-1, len(nodes) + first[s[0]])
        return (band(s) - 1, first[s])

    rank = {s: initial(s) for c in slots for s in slots[c]}
    for c in slots:
        slots[c].sort(key=rank.get)
    size = {s: LANE if s in lanes else DY for c in slots for s in slots[c]}
    y = _stack(slots, size)
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
            y.update(_stack({c: slots[c]}, size))
    for lane in routes.values():
        _straighten(lane, slots, col, y, size)
    height = max(sum(size[s] for s in column) for column in slots.values())
    pos = {n: (col[n] * DX, y[n]) for n in nodes}
    routes = {e: [(col[w] * DX, y[w]) for w in lane] for e, lane in routes.items()}
    return pos, routes, height


def _straighten(lane, slots, col, y, size):
    """Put every waypoint of one long arrow at the same height when that height is free in
    all the columns it crosses (between its neighbours there), so it runs straight."""
    if len(lane) < 2:
        return
    low, high = -float("inf"), float("inf")
    for w in lane:
        column = slots[col[w]]
        i = column.index(w)
        if i > 0:  # the slot above: stay below it
            high = min(high, y[column[i - 1]] - size[column[i - 1]] / 2 - LANE / 2)
        if i + 1 < len(column):
            low = max(low, y[column[i + 1]] + size[column[i + 1]] / 2 + LANE / 2)
    if low <= high:
        mean = sum(y[w] for w in lane) / len(lane)
        for w in lane:
            y[w] = min(max(mean, low), high)


def _stack(slots, size):
    """`{slot: y}`: each column's slots top to bottom, centred on y = 0."""
    y = {}
    for column in slots.values():
        top = sum(size[s] for s in column) / 2
        for s in column:
            y[s] = top - size[s] / 2
            top -= size[s]
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
    return {e: tuple(se) for e, se in ends.items()}
