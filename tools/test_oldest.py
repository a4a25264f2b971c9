"""The oldest supported pair, outside the checkout: `make test-oldest`.

    venv (cached, outside the checkout)  <-  TensorFlow 2.18, Keras 3.8, pytest, pytest-xdist
    pip wheel (from a copy of the sources)  ->  installed with the pair (pip's resolver
    checks that pyproject.toml's range admits it)  ->  `python -m gradlab doctor`
    ->  pytest on a copy of the engine and training tests, against the installed gradlab:
        the fast tier and the tests marked `oldest` (AccumulatingModel.fit on one device and
        under MirroredStrategy on two logical CPUs, and `step`, each against Keras's own
        fit / train_on_batch)

The venv lives in $XDG_CACHE_HOME/gradlab-ci (~/.cache/gradlab-ci), named for the pair and
the Python, and is reused while its stamp matches; gradlab itself is reinstalled every run.
Each step prints its time; exit status 1 with the reason on any failure, including a pytest
run that collected no test (pytest's exit 5).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from wheel_build import ROOT, build_wheel, copy, fresh_venv, pip, scratch
from wheel_build import step as _step

PAIR = ("tensorflow==2.18.*", "keras==3.8.*")
TOOLS = ("pytest", "pytest-xdist")
# What the engine and training tests need: their folders and what they import from tests/.
TESTS = ("conftest.py", "common.py", "test_compat.py", "core", "training")
SELECT = "(not slow or oldest) and not gpu"
WHO = "test-oldest"


def step(title, cmd, capture=True, **kwargs):
    return _step(WHO, title, cmd, capture, **kwargs)


def cached_venv(env):
    """The oldest pair's venv, made unless one with the same stamp is there already."""
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gradlab-ci"
    if ROOT == home or ROOT in home.parents:
        sys.exit(f"test-oldest: the venv cache {home} is inside the checkout {ROOT}")
    stamp_text = "\n".join((sys.version.split()[0], *PAIR, *TOOLS)) + "\n"
    venv = home / f"oldest-py{sys.version_info[0]}{sys.version_info[1]}-" \
                  f"{hashlib.sha256(stamp_text.encode()).hexdigest()[:12]}"
    stamp = venv / "gradlab-ci-stamp"
    if stamp.is_file() and stamp.read_text() == stamp_text and (venv / "bin" / "python").exists():
        print(f"--- reuse {venv}")
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    fresh_venv(venv, env, WHO)
    step(f"install {' '.join(PAIR + TOOLS)}", [*pip(venv), *PAIR, *TOOLS], env=env)
    stamp.write_text(stamp_text)
    return venv


def pytest_ini(path):
    """pyproject.toml's pytest settings (markers, warning filters) for the copied tests."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    lines = ["[pytest]", f"addopts = {options['addopts']}", "markers ="]
    lines += [f"    {m}" for m in options["markers"]]
    lines += ["filterwarnings ="] + [f"    {f}" for f in options["filterwarnings"]]
    path.write_text("\n".join(lines) + "\n")


def main():
    with scratch(WHO) as tmp:
        run(tmp)


def run(tmp):
    env = {k: v for k, v in os.environ.items() if k not in ("GRADLAB_CACHE", "GRADLAB_DATA", "PYTHONPATH")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    venv = cached_venv(env)
    py = venv / "bin" / "python"
    wheel = build_wheel(tmp, env, WHO)
    # Uninstalled first: pip would keep an installed gradlab of the same version.
    subprocess.run([*pip(venv, "uninstall"), "--yes", "gradlab"], capture_output=True, env=env)
    step("install the wheel with the oldest pair", [*pip(venv), wheel, *PAIR], env=env)

    work = tmp / "work"
    copy(TESTS, ROOT / "tests", work / "tests")
    pytest_ini(work / "pytest.ini")
    env.update(GRADLAB_CACHE=str(tmp / "cache"), XDG_CACHE_HOME=str(tmp / "xdg-cache"))
    # From where the tests run: the gradlab they import, its versions and its probes.
    doctor = step("python -m gradlab doctor", [py, "-m", "gradlab", "doctor"], env=env, cwd=work)
    reported = dict(line.split()[:2] for line in doctor.splitlines() if len(line.split()) == 2)
    if not Path(reported.get("location", "/")).is_relative_to(venv):
        sys.exit(f"test-oldest: the tests would import gradlab from {reported.get('location')}, "
                 "not the installed wheel")
    for pin in PAIR:
        name, version = pin.split("==")
        if not reported.get(name, "").startswith(version.rstrip("*")):
            sys.exit(f"test-oldest: doctor reports {name} {reported.get(name)}, not {pin}")
    # Two workers, as `make test-unit` runs them: one took 704 s, most of it tracing on one core.
    jobs = os.environ.get("JOBS", "2")
    step(f"pytest -m '{SELECT}' -n {jobs} (engine and training tests, installed gradlab)",
         [py, "-m", "pytest", "-q", "-n", jobs, "--dist", "worksteal", "-m", SELECT,
          "tests/core", "tests/training", "tests/test_compat.py"],
         capture=False, env=env, cwd=work)


if __name__ == "__main__":
    main()
