"""Execute lessons in place and store them clean: `python tools/run_notebooks.py [NB ...]`.

Lessons are stored executed (readers see plots without running anything) and nbval checks
them against a fresh run. This runs each notebook top to bottom in the project's kernel,
then keeps only kernelspec/language_info metadata (and whether a cell is folded), drops execution timings and stderr
(TensorFlow and tqdm noise), merges split stdout blocks, and refuses machine paths.

Widgets: a cell whose code says `STORED_MARK` keeps its widget view, and the notebook keeps the
state of the widgets that view reaches (so GitHub-less readers, JupyterLab and nbviewer, show
the lab's controls and last plots without running). Every other widget view is dropped with
no state (a reader would see a dead "0%" progress bar).
"""
import pathlib
import re
import subprocess
import sys
import time

import nbformat

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"
MACHINE_PATH = re.compile(r"/(work|tmp|root|home)/")
STORED_MARK = "widget's state is stored with the notebook"
STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]+)")


def execute(path):
    if not path.is_file():
        raise SystemExit(f"{path.name}: no such notebook in {NOTEBOOKS.name}/")
    start = time.time()
    proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                           "--execute", "--inplace", "--ExecutePreprocessor.timeout=600", path.name],
                          cwd=path.parent)
    if proc.returncode:  # nbconvert has printed the failing cell above
        raise SystemExit(f"{path.name}: execution failed (exit {proc.returncode})")
    # `%run -i checks/NN.py` shows a failing assert as an error output but the cell still succeeds,
    # so nbconvert exits 0: refuse to store a lesson whose checks (or any cell) raised.
    raised = [i for i, cell in enumerate(nbformat.read(path, as_version=4).cells)
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    if raised:
        raise SystemExit(f"{path.name}: cell(s) {raised} raised; the notebook is left as executed, not cleaned")
    clean(path)
    print(f"{path.name}: executed and cleaned in {time.time() - start:.0f} s")


def reachable(state, roots):
    """The ids of the widget models `roots` reach through their `IPY_MODEL_<id>` references."""
    seen, todo = set(), list(roots)
    while todo:
        model = todo.pop()
        if model in seen or model not in state:
            continue
        seen.add(model)
        todo += MODEL_REF.findall(str(state[model].get("state", {})))
    return seen


def clean(path):
    nb = nbformat.read(path, as_version=4)
    state = nb.metadata.get("widgets", {}).get(STATE, {}).get("state", {})
    kept_views = [out["data"][WIDGET]["model_id"]
                  for cell in nb.cells if cell.cell_type == "code" and STORED_MARK in cell.source
                  for out in cell.outputs if WIDGET in out.get("data", {})]
    keep = reachable(state, kept_views)
    metadata = {k: nb.metadata[k] for k in ("kernelspec", "language_info") if k in nb.metadata}
    if keep:
        metadata["widgets"] = {STATE: {"version_major": 2, "version_minor": 0,
                                       "state": {k: state[k] for k in sorted(keep)}}}
    nb.metadata = nbformat.NotebookNode(metadata)
    for cell in nb.cells:
        # Only whether a cell is folded (JupyterLab's `jupyter.source_hidden`: the lessons fold
        # their solutions' code) and its nbval tags ("nbval-ignore-output" for a cell whose output
        # moves between runs), which keep nbval's markers out of the code a learner reads.
        kept = {k: v for k, v in cell.metadata.items() if k == "jupyter"}
        tags = [t for t in cell.metadata.get("tags", []) if t.startswith("nbval-")]
        if tags:
            kept["tags"] = tags
        cell.metadata = nbformat.NotebookNode(kept)
        if cell.cell_type != "code":
            continue
        merged = []
        stored = STORED_MARK in cell.source
        for out in cell.outputs:
            if out.output_type == "stream" and out.name == "stderr":
                continue
            if WIDGET in out.get("data", {}) and not (stored and out["data"][WIDGET]["model_id"] in keep):
                continue
            if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == out.name):
                merged[-1].text += out.text
                continue
            if out.output_type == "stream":
                out.pop("metadata", None)
            merged.append(out)
        cell.outputs = merged
    nbformat.write(nb, path)
    # Checked after saving, so the cleaned file is there to inspect; the run still fails.
    text = path.read_text()
    found = MACHINE_PATH.search(text)
    if found:
        line = text.count("\n", 0, found.start()) + 1
        raise SystemExit(f"{path.name}: holds a machine path {found.group(0)!r} at line {line} "
                         "of the cleaned file; remove it from the output and run again")


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    for name in names:
        execute(NOTEBOOKS / pathlib.Path(name).name)
