"""The lessons' facade: every name it lists resolves, and the notebooks import gradlab only
through it (so a module that moves inside gradlab changes `gradlab/lessons.py`, not a lesson)."""
import json
import pathlib
import re
import subprocess
import sys

from gradlab import lessons

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("app/*.ipynb")])


def _code(path):
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_every_name_of_the_facade_resolves_to_its_home():
    for name in lessons.__all__:
        assert getattr(lessons, name) is not None, name
    assert lessons.load_mnist.__module__ == "gradlab.studies.data"


def test_an_unknown_name_is_an_attribute_error_naming_it():
    try:
        lessons.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("no AttributeError")


def test_the_notebooks_import_gradlab_only_through_the_facade():
    assert len(NOTEBOOKS) >= 9
    for path in NOTEBOOKS:
        code = _code(path)
        assert code.index("import gradlab.lessons") < code.index("import gradlab as gl"), path.name
        other = re.findall(r"^\s*(?:from|import) gradlab\.(?!lessons\b)[\w.]+", code, re.M)
        assert other == [], (path.name, other)
        for found in re.findall(r"from gradlab\.lessons import \(([^)]*)\)|from gradlab\.lessons import ([^\n(]*)", code):
            for part in "".join(found).split(","):
                name = part.split(" as ")[0].strip()
                assert name in lessons.__all__, (path.name, name)


def test_importing_the_facade_turns_tf32_off_and_gradlab_alone_does_not():
    # a fresh process: conftest turns TF32 off for the whole test session
    probe = ("import {0}, tensorflow as tf; "
             "print(tf.config.experimental.tensor_float_32_execution_enabled())")
    got = [subprocess.run([sys.executable, "-c", probe.format(m)], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.split()[-1] for m in ("gradlab.lessons", "gradlab")]
    assert got == ["False", "True"]


def test_the_lab_and_the_budget_store_a_widget_view_whose_model_is_in_the_stored_state():
    # tools/run_notebooks.py keeps a widget view, and the state it reaches, only where the cell's code says
    # "widget's state is stored with the notebook": without it a reader with no kernel sees no controls
    view, state = "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"
    for name in ("11-memory-budget.ipynb", "17-the-lab.ipynb"):
        nb = json.loads((ROOT / "notebooks" / name).read_text())
        stored = nb["metadata"].get("widgets", {}).get(state, {}).get("state", {})
        views = [out["data"][view]["model_id"] for cell in nb["cells"] if cell["cell_type"] == "code"
                 for out in cell["outputs"] if view in out.get("data", {})]
        assert stored and views, (name, len(stored), views)
        assert all(model in stored for model in views), (name, views)
