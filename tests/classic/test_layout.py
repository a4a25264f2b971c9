"""The layered layout on plain data (strings and pairs): no TensorFlow, no matplotlib."""
import ast
import inspect
import itertools
import random
import sys

import pytest

from gradlab.classic.layout import DX, DY, H, LANE, W, layered_layout, layers, transitive_reduction


def test_walk_through_by_hand():
    # x -> m -> l -> r and x -> l. Columns are longest paths: x 0, m 1, l 2, r 3. The arrow
    # x -> l crosses column 1, so it takes a lane there: column 1 stacks m (DY = 1.2) above
    # the lane (LANE = 0.3), 1.5 high and centred on 0: m at 0.75 - 0.6 = 0.15, the lane at
    # 0.75 - 1.2 - 0.15 = -0.6. Every other column holds one box, at 0.
    layout = layered_layout(["x", "m", "l", "r"], {("x", "m"), ("x", "l"), ("m", "l"), ("l", "r")})
    assert layout.columns == {"x": 0, "m": 1, "l": 2, "r": 3}
    expected = {"x": (0, 0), "m": (DX, 0.15), "l": (2 * DX, 0), "r": (3 * DX, 0)}
    assert layout.pos.keys() == expected.keys()
    for n, xy in expected.items():
        assert layout.pos[n] == pytest.approx(xy), n
    (waypoint,) = layout.routes[("x", "l")]
    assert waypoint == pytest.approx((DX, -0.6))
    assert layout.routes[("x", "m")] == layout.routes[("m", "l")] == layout.routes[("l", "r")] == []
    assert layout.height == pytest.approx(DY + LANE) and layout.width == pytest.approx(3 * DX + W)
    # x sends two arrows: the one going higher (to m, at 0.15) leaves higher, 0.2 apart.
    assert layout.ends[("x", "m")][0] == pytest.approx((0, 0.1))
    assert layout.ends[("x", "l")][0] == pytest.approx((0, -0.1))


def test_a_node_moves_right_to_just_before_its_first_reader():
    # v has no input, so its longest path is 0; it feeds only c (column 2), so it sits in 1.
    columns = layers(["a", "b", "v", "c"], [("a", "b"), ("b", "c"), ("v", "c")])
    assert columns == {"a": 0, "b": 1, "v": 1, "c": 2}


def test_a_cycle_still_gets_layers():
    assert layers(["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "a")]) == {"a": 0, "b": 1, "c": 2}


def test_transitive_reduction_keeps_what_no_longer_path_implies():
    edges = {("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")}
    assert transitive_reduction(edges) == {("a", "b"), ("b", "c"), ("c", "d")}
    assert transitive_reduction(edges, keep=lambda n: n == "a") == edges


def random_dag(seed, n=12, p=0.25):
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(n)]
    return nodes, {(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:] if rng.random() < p}


@pytest.mark.parametrize("seed", range(8))
def test_layers_are_ordered_and_nothing_overlaps(seed):
    nodes, edges = random_dag(seed)
    layout = layered_layout(nodes, edges, band=lambda n: int(n[1:]) % 2)
    for a, b in edges:  # data flows left to right
        assert layout.columns[a] < layout.columns[b]
        assert len(layout.routes[(a, b)]) == layout.columns[b] - layout.columns[a] - 1
    # Per column, every box (DY high, with a margin around its H) and lane (LANE high) has
    # its own interval of heights.
    spans = {}
    for n, (x, y) in layout.pos.items():
        spans.setdefault(x, []).append((y - DY / 2, y + DY / 2, n))
    for e, route in layout.routes.items():
        for x, y in route:
            spans.setdefault(x, []).append((y - LANE / 2, y + LANE / 2, e))
    for column in spans.values():
        for (lo1, hi1, s1), (lo2, hi2, s2) in itertools.combinations(column, 2):
            assert hi1 <= lo2 + 1e-9 or hi2 <= lo1 + 1e-9, (s1, s2)
        assert max(hi for _, hi, _ in column) - min(lo for lo, _, _ in column) <= layout.height + 1e-9
    # Arrows leave and enter each box at distinct heights, inside the box.
    for side in (0, 1):
        at = {}
        for e, ends in layout.ends.items():
            node = e[side]
            x, y = ends[side]
            assert x == layout.pos[node][0] and abs(y - layout.pos[node][1]) <= H / 2, (e, side)
            assert y not in at.setdefault(node, set()), (node, y)
            at[node].add(y)


def test_layout_needs_no_matplotlib_nor_tensorflow():
    tree = ast.parse(inspect.getsource(sys.modules["gradlab.classic.layout"]))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "collections", "dataclasses"}
