"""A real browser drives the lab in JupyterLab: run the lesson, move a slider, press Run.

Then every other lesson is opened and its stored plots must render. Screenshots of the lab
before and after go to test-artifacts/.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

LAB_NOTEBOOK = "17-the-lab.ipynb"
RUN_ALL_LIMIT = 900_000   # ms for "Run All Cells" on the lab lesson (about 25 runs, fresh cache)
RUN_LIMIT = 120_000       # ms for one press of Run
LAB = ".gradlab-lab"
ERROR_OUTPUTS = (".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                 ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")


def open_notebook(page, jupyter_lab, name):
    page.goto(jupyter_lab.url(name, workspace=re.sub(r"\W", "-", name)))
    page.wait_for_function(
        f"""() => {{
            const tab = document.querySelector('.jp-mod-current.lm-TabBar-tab .lm-TabBar-tabLabel');
            return tab && tab.textContent.trim() === {json.dumps(name)}
                && document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell');
        }}""")
    wait_idle(page)


def wait_idle(page, timeout=60_000):
    """Until the notebook's kernel is connected and idle (the execution indicator alone says
    "idle" while JupyterLab is still starting the kernel)."""
    page.wait_for_function(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const indicator = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
            const status = [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                .map(e => e.textContent.trim()).find(t => t.includes(' | '));
            return indicator && indicator.dataset.status === 'idle' && status
                && !status.startsWith('No Kernel') && status.endsWith('| Idle');
        }""", timeout=timeout, polling=250)


def menu(page, top, item):
    page.locator(f".lm-MenuBar-itemLabel:text-is('{top}')").click()
    page.locator(f".lm-Menu-content .lm-Menu-item:has(.lm-Menu-itemLabel:text-is('{item}'))").click()


def run_all(page):
    """Clear every stored output, Run All Cells, and wait until each code cell has run."""
    menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length === 0")
    menu(page, "Run", "Run All Cells")
    page.wait_for_function(
        """() => {
            const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
            return p.length > 0 && p.every(e => /^\\[\\d+\\]:$/.test(e.textContent.trim()));
        }""", timeout=RUN_ALL_LIMIT, polling=500)
    wait_idle(page, RUN_ALL_LIMIT)


def tracebacks(page):
    texts = page.locator(ERROR_OUTPUTS).all_inner_texts()
    return [t for t in texts if "Traceback" in t or "Error" in t]


def plot_src(page):
    return page.locator(f"{LAB} img.gradlab-plot").get_attribute("src")


def wait_plot_rendered(page):
    page.wait_for_function(
        f"""() => {{ const img = document.querySelector('{LAB} img.gradlab-plot');
                     return img && img.complete && img.naturalWidth > 0; }}""")


def status(page):
    return page.locator(f"{LAB} .gradlab-status").inner_text()


def test_lab_runs_in_jupyterlab(page, jupyter_lab, artifacts, move_slider):
    open_notebook(page, jupyter_lab, LAB_NOTEBOOK)
    run_all(page)
    lab = page.locator(LAB)
    lab.wait_for()
    wait_plot_rendered(page)
    assert not tracebacks(page), tracebacks(page)
    assert "error" not in status(page).lower(), status(page)
    lab.scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "lab-before.png")
    before_src, before_png = plot_src(page), page.locator(f"{LAB} img.gradlab-plot").screenshot()

    # Move the accumulation-count slider with the keyboard on its real handle: N goes up by 3.
    n = move_slider("accum-steps", "ArrowRight", 3)

    # Record every width the progress bar takes, then press Run.
    page.evaluate(f"""() => {{
        const bar = document.querySelector('{LAB} .gradlab-progress .progress-bar');
        window.__gradlabWidths = [bar.style.width];
        new MutationObserver(() => window.__gradlabWidths.push(bar.style.width))
            .observe(bar, {{attributes: true, attributeFilter: ['style']}});
    }}""")
    page.locator(f"{LAB} button.gradlab-run").click()
    page.wait_for_function(
        f"""() => {{ const img = document.querySelector('{LAB} img.gradlab-plot');
                     return img.src !== {json.dumps(before_src)} && img.complete && img.naturalWidth > 0; }}""",
        timeout=RUN_LIMIT)
    page.wait_for_function(
        f"() => !document.querySelector('{LAB} button.gradlab-run').disabled", timeout=RUN_LIMIT)
    wait_idle(page, RUN_LIMIT)
    page.screenshot(path=artifacts / "lab-after.png")

    text = status(page)
    assert "error" not in text.lower(), text
    assert f"N={n}" in text, text
    widths = page.evaluate("() => window.__gradlabWidths")
    percents = [float(w.rstrip("%")) for w in widths if w]
    assert percents[-1] == 100.0, widths
    assert any(0.0 < p < 100.0 for p in percents), f"no progress in between: {widths}"
    assert page.locator(f"{LAB} img.gradlab-plot").screenshot() != before_png
    assert not tracebacks(page), tracebacks(page)
    assert not page.page_errors, page.page_errors


def stored_images(path):
    """How many image outputs the notebook file holds in cells whose outputs are shown (a folded
    answer's outputs, `jupyter.outputs_hidden`, stay collapsed until the reader opens them)."""
    nb = json.loads(path.read_text())
    return sum(1 for cell in nb["cells"] for out in cell.get("outputs", [])
               if not cell.get("metadata", {}).get("jupyter", {}).get("outputs_hidden")
               and any(k.startswith("image/") for k in out.get("data", {})))


OTHER_NOTEBOOKS = sorted(p.name for p in NOTEBOOKS.glob("[0-9]*.ipynb") if p.name != LAB_NOTEBOOK)


@pytest.mark.parametrize("name", OTHER_NOTEBOOKS)
def test_stored_plots_render(page, jupyter_lab, artifacts, name):
    expected = stored_images(jupyter_lab.root / name)  # the copy JupyterLab serves
    open_notebook(page, jupyter_lab, name)
    # Image outputs only: a widget restored from the notebook's stored state (lesson 11's
    # budget) draws its own <img>, which is not a stored image output.
    images = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                          ".jp-OutputArea-output[data-mime-type^='image/'] img")
    deadline = time.monotonic() + 60
    while images.count() < expected and time.monotonic() < deadline:
        time.sleep(0.25)
    assert images.count() == expected, f"{name}: {images.count()} images shown, {expected} stored"
    for i in range(expected):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        img.evaluate("img => img.decode ? img.decode().catch(() => {}) : null")
        size = img.evaluate("img => [img.naturalWidth, img.naturalHeight]")
        assert min(size) > 0, f"{name}: image {i} does not render ({size})"
    assert not page.page_errors, page.page_errors
    page.screenshot(path=artifacts / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.png")
