"""A real JupyterLab, the Voila app and a real Chromium for the browser tests (`make test-browser`).

`pytest tests` skips this folder (tests/conftest.py); run it with `pytest tests/browser`.

- `jupyter_lab`: `python -m jupyterlab` from this environment on a free 127.0.0.1 port,
  its root a temporary copy of notebooks/, with a temporary GRADLAB_CACHE and its own
  settings (no news, no update checks, every cell rendered), stopped on every exit path.
- `voila_app`: `python -m voila app/lab.ipynb` (what `make app` serves) on a free port, with
  a temporary GRADLAB_CACHE; ready when its port accepts connections (a page load would
  start a kernel), stopped on every exit path.
- `page`: headless Debian Chromium (/usr/bin/chromium) through Playwright, with a fresh
  profile; Playwright never downloads a browser here.
- A watchdog ends the whole run (JupyterLab included) if it hangs past RUN_LIMIT seconds.

Screenshots go to test-artifacts/ (git-ignored).
"""
from __future__ import annotations

import faulthandler
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
APP = ROOT / "app" / "lab.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-gpu", "--disable-quic", "--no-first-run"]
RUN_LIMIT = 1800     # seconds for the whole browser session before the watchdog ends it
START_LIMIT = 60     # seconds for JupyterLab to answer
TOKEN = "gradlab-browser-test"
# JupyterLab settings for the test server: no network calls, and every cell in the DOM
# (windowed rendering would leave cells that are scrolled away without their outputs).
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}

_process_groups = []  # JupyterLab's, for the watchdog


def _stop_group(proc, grace=15):
    """SIGTERM the process group (JupyterLab shuts its kernels down), SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _watchdog():
    sys.stderr.write(f"\nbrowser tests: still running after {RUN_LIMIT} s, aborting\n")
    faulthandler.dump_traceback(all_threads=True)
    for proc in list(_process_groups):
        _stop_group(proc, grace=5)
    os._exit(3)  # Playwright's driver sees its pipe close and kills Chromium


@pytest.fixture(scope="session", autouse=True)
def watchdog():
    timer = threading.Timer(RUN_LIMIT, _watchdog)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: `url(path)`, its notebook root, and its log file."""

    def __init__(self, port, root, log):
        self.base = f"http://127.0.0.1:{port}"
        self.root = root
        self.log = log

    def url(self, path="", workspace="default"):
        """`path` opened alone: `reset` drops the tabs a previous page left in the workspace."""
        return f"{self.base}/lab/workspaces/{workspace}/tree/{path}?reset&token={TOKEN}"

    def api(self, path, method="GET"):
        req = urllib.request.Request(f"{self.base}/api/{path}?token={TOKEN}", method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def log_tail(self, lines=40):
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def jupyter_lab():
    tmp = Path(tempfile.mkdtemp(prefix="gradlab-browser-"))
    root = tmp / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name, values in SETTINGS.items():
        path = tmp / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ, GRADLAB_CACHE=str(tmp / "cache"), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), PYTHONUNBUFFERED="1")
    port = _free_port()
    log = tmp / "jupyterlab.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
           "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
           f"--LabApp.user_settings_dir={tmp / 'settings'}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
           "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    _process_groups.append(proc)
    lab = Lab(port, root, log)
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{lab.log_tail()}")
            try:
                lab.api("status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer in {START_LIMIT} s:\n{lab.log_tail()}")
                time.sleep(0.5)
        yield lab
    finally:
        try:  # kernels run in sessions of their own: shut them down through the server
            for kernel in lab.api("kernels"):
                lab.api(f"kernels/{kernel['id']}", method="DELETE")
        except Exception:
            pass  # the server is gone or hung: its kernels exit when their parent does
        _stop_group(proc)
        _process_groups.remove(proc)
        shutil.rmtree(tmp, ignore_errors=True)


class App:
    """A running Voila server: its page at `base`, and its log file."""

    def __init__(self, port, log):
        self.base = f"http://127.0.0.1:{port}"
        self.log = log

    def log_tail(self, lines=40):
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def voila_app():
    tmp = Path(tempfile.mkdtemp(prefix="gradlab-voila-"))
    env = dict(os.environ, GRADLAB_CACHE=str(tmp / "cache"), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), PYTHONUNBUFFERED="1")
    port = _free_port()
    log = tmp / "voila.log"
    cmd = [sys.executable, "-m", "voila", str(APP), f"--port={port}", "--no-browser",
           "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", "--show_tracebacks=True"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=APP.parent, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    _process_groups.append(proc)
    app = App(port, log)
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"Voila exited with {proc.returncode}:\n{app.log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"Voila did not listen in {START_LIMIT} s:\n{app.log_tail()}")
                time.sleep(0.5)
        yield app
    finally:
        _stop_group(proc)  # Voila shuts its kernels down on SIGTERM
        _process_groups.remove(proc)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def browser_context():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: `make test-browser` installs Debian's chromium")
    from playwright.sync_api import sync_playwright
    profile = tempfile.mkdtemp(prefix="gradlab-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000}, timeout=60_000)
        try:
            context.set_default_timeout(60_000)
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.call_report = report  # for `page` to see whether the test failed
    return report


@pytest.fixture
def page(browser_context, request, artifacts):
    """A new tab; on failure its screenshot is saved as test-artifacts/failed-<test>.png."""
    page = browser_context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.page_errors = errors
    try:
        yield page
    finally:
        report = getattr(request.node, "call_report", None)
        if report is not None and report.failed:
            name = "".join(c if c.isalnum() or c in "-_." else "_" for c in request.node.name)
            try:
                page.screenshot(path=artifacts / f"failed-{name}.png", timeout=10_000)
            except Exception:
                pass  # the page may be what broke; the test's own error says more
        page.close()


@pytest.fixture
def move_slider(page):
    """Press an arrow key `presses` times on a lab slider's real handle, then wait for the kernel.

    The readout changes in the browser at once, but ipywidgets holds back a model's updates
    while one is unanswered, so a click right after can reach the kernel before the last
    value. The effective-batch label is written by the kernel, so once it shows N·b the
    kernel has both values. Returns the slider's new value.
    """
    def move(name, key, presses):
        lab = ".gradlab-lab"
        handle = page.locator(f"{lab} .gradlab-{name} .noUi-handle")
        start = int(float(handle.get_attribute("aria-valuenow")))
        handle.focus()
        for _ in range(presses):
            page.keyboard.press(key)
        value = start + (presses if key == "ArrowRight" else -presses)
        readout = f"document.querySelector('{lab} .gradlab-{name} .widget-readout').textContent.trim()"
        page.wait_for_function(f"() => {readout} === '{value}'")
        n, b = (f"document.querySelector('{lab} .gradlab-{s} .widget-readout').textContent.trim()"
                for s in ("accum-steps", "micro-batch"))
        page.wait_for_function(f"""() => document.querySelector('{lab} .gradlab-effective-batch')
                                   .textContent.includes(`${{{n}}}·${{{b}}} `)""")
        return value
    return move
