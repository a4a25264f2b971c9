"""A real browser drives the standalone lab (`make app`): Voila serves app/lab.ipynb.

The page is loaded once (each load starts a kernel): the title and the lab appear without
any code, a slider moves, Run trains while the plot follows, and no error shows. A
screenshot of the app after the run goes to test-artifacts/app-after.png.
"""
from __future__ import annotations

import json

LAB = ".gradlab-lab"
LOAD_LIMIT = 240_000  # ms for the page: a kernel, TensorFlow's import, the first plot
RUN_LIMIT = 120_000   # ms for one press of Run
ERROR_OUTPUTS = (".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                 ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
CODE = ".jp-CodeCell .jp-InputArea, .jp-CodeMirrorEditor, .cm-editor, .CodeMirror"


def plot_rendered(src=None):
    """JavaScript: the lab's plot is a decoded image (with a src other than `src`)."""
    other = "" if src is None else f"img.src !== {json.dumps(src)} && "
    return f"""() => {{ const img = document.querySelector('{LAB} img.gradlab-plot');
                       return img && {other}img.complete && img.naturalWidth > 0; }}"""


def test_app_serves_the_lab_without_code_and_runs(page, voila_app, artifacts, move_slider):
    page.goto(voila_app.base + "/", timeout=LOAD_LIMIT)
    # The lab, or an error in its place (Voila shows a failed cell as an error output).
    page.wait_for_function(f"() => document.querySelector('{LAB}') || "
                           f"document.querySelector({json.dumps(ERROR_OUTPUTS)})", timeout=LOAD_LIMIT)
    errors = [t for t in page.locator(ERROR_OUTPUTS).all_inner_texts() if t.strip()]
    assert not errors, f"{errors}\n{voila_app.log_tail()}"
    page.wait_for_function(plot_rendered(), timeout=LOAD_LIMIT)
    assert "The gradlab lab" in page.locator("h1").first.inner_text()
    assert page.locator(CODE).count() == 0, "the app shows a code cell"
    assert "tower_devices" not in page.locator("body").inner_text(), "the app shows code"
    status = page.locator(f"{LAB} .gradlab-status")
    assert status.inner_text().startswith("Ready"), status.inner_text()
    before_src = page.locator(f"{LAB} img.gradlab-plot").get_attribute("src")

    # Move the micro-batch slider with the keyboard on its real handle: b goes down by 5.
    b = move_slider("micro-batch", "ArrowLeft", 5)

    page.locator(f"{LAB} button.gradlab-run").click()
    page.wait_for_function(plot_rendered(before_src), timeout=RUN_LIMIT)
    page.wait_for_function(
        f"""() => {{ const s = document.querySelector('{LAB} .gradlab-status').textContent;
                     return s.startsWith('Done') || s.startsWith('Error') || s.startsWith('Stopped'); }}""",
        timeout=RUN_LIMIT)
    page.wait_for_function(
        f"() => !document.querySelector('{LAB} button.gradlab-run').disabled", timeout=RUN_LIMIT)
    page.locator(LAB).scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "app-after.png", full_page=True)

    text = status.inner_text()
    assert text.startswith(f"Done: fused N=4 b={b} "), text
    assert page.locator(f"{LAB} .gradlab-runs .gradlab-run-row").count() == 1
    assert page.locator(f"{LAB} img.gradlab-plot").get_attribute("src") != before_src
    errors = [t for t in page.locator(ERROR_OUTPUTS).all_inner_texts() if t.strip()]
    assert not errors, errors
    assert not page.page_errors, page.page_errors
