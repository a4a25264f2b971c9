"""CONTRIBUTING.md's layer table holds: no gradlab module imports from a higher layer."""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _layers():
    table = {}
    for line in (ROOT / "CONTRIBUTING.md").read_text().splitlines():
        row = re.match(r"\| (\d) [a-z ]+\| (.+?) \|", line)
        if row:
            for module in re.findall(r"`(\w+)\.py`", row.group(2)):
                table[module] = int(row.group(1))
    return table


def _imports(path):
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradlab."):
            found.add(node.module.split(".")[1])
    return found


def test_every_module_is_in_the_table_and_imports_only_from_its_layer_or_below():
    layers = _layers()
    modules = {p.stem: p for p in (ROOT / "gradlab").glob("*.py") if p.stem not in ("__init__", "_quiet")}
    assert set(modules) <= set(layers), f"not in CONTRIBUTING.md's table: {sorted(set(modules) - set(layers))}"
    crossings = [f"{m} ({layers[m]}) imports {i} ({layers[i]})"
                 for m, path in modules.items() for i in _imports(path)
                 if i in layers and layers[i] > layers[m]]
    assert crossings == []
