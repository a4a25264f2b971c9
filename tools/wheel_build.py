"""What `make test-wheel` and `make test-oldest` share: a wheel built from a copy of the
sources, venvs without pip of their own, and timed steps that exit with the reason.

    with scratch("test-wheel") as tmp:          # a temp dir outside the checkout, removed after
        wheel = build_wheel(tmp, env, "test-wheel")
        fresh_venv(venv, env, "test-wheel");  step("test-wheel", "...", [*pip(venv), wheel])

Imported by the two scripts beside it (run as `python tools/X.py`, so tools/ is on sys.path).
"""
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a wheel is built from; the rest of the checkout (notebooks, app, data, tests) stays out.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE-MNIST", "gradlab")
STARTED = time.monotonic()


def step(who, title, cmd, capture=True, **kwargs):
    """Run `cmd`, print its time, exit naming `who` on failure; return its stdout (None if
    not captured). pytest's exit 5 (no test collected) is named as such."""
    start = time.monotonic()
    print(f"--- {title}", flush=True)
    done = subprocess.run([str(c) for c in cmd], text=True, capture_output=capture, **kwargs)
    if capture and done.stdout.strip():
        print(done.stdout.rstrip())
    if done.returncode:
        if capture:
            print(done.stderr[-4000:], file=sys.stderr)
        why = " (pytest collected no tests)" if done.returncode == 5 and "pytest" in map(str, cmd) else ""
        sys.exit(f"{who}: {title} failed (exit {done.returncode}){why}: {' '.join(map(str, cmd))}")
    print(f"    {time.monotonic() - start:.1f} s", flush=True)
    return done.stdout if capture else None


@contextlib.contextmanager
def scratch(who):
    """A temp dir outside the checkout, removed afterwards; prints `who: passed in N s` when
    the block ends without an exception."""
    tmp = Path(tempfile.mkdtemp(prefix=f"gradlab-{who}-"))
    if ROOT in tmp.parents:
        sys.exit(f"{who}: the temp dir {tmp} is inside the checkout {ROOT}")
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{who}: passed in {time.monotonic() - STARTED:.0f} s")


def copy(names, source, target):
    """`names` (files or folders, without __pycache__) from `source` into a new `target`."""
    target.mkdir(parents=True)
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source / name, target / name)


def build_wheel(tmp, env, who):
    """The wheel of this checkout, built in `tmp` (returns its path)."""
    # A copy, because setuptools writes build/ and *.egg-info beside the sources it builds.
    copy(SOURCES, ROOT, tmp / "src")
    step(who, "build the wheel", [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                                  "--wheel-dir", tmp / "dist", tmp / "src"], env=env)
    wheel, = (tmp / "dist").glob("gradlab-*.whl")
    print(f"    {wheel.name} ({wheel.stat().st_size:,} bytes)")
    return wheel


def fresh_venv(venv, env, who):
    # Without pip of its own: this pip installs into it (`pip --python`), saving ensurepip's time.
    step(who, f"fresh venv {venv}", [sys.executable, "-m", "venv", "--without-pip", venv], env=env)


def pip(venv, command="install"):
    """This Python's pip acting on `venv`; installs skip byte-compiling (most of TensorFlow's
    install time)."""
    extra = ["--quiet", "--no-compile"] if command == "install" else ["--quiet"]
    return [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", command, *extra]
