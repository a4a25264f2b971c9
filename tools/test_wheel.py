"""Install gradlab as a user would and check it, outside the checkout: `make test-wheel`.

    pip wheel (from a copy of the sources)  ->  fresh venv in a temp dir  ->  core install
    -> tools/wheel_smoke.py (fit == Keras's plain fit, no [lab] package present)
    -> pip install 'gradlab[lab]'  ->  `python -m gradlab table --runs 1 --updates 20`
       from another directory  ->  site-packages unchanged by either run

pip's own cache is kept (downloads are the slow part), and each step prints its time.
pip installs with --no-compile (byte-compiling all of TensorFlow is most of an install's
time) and the runs set PYTHONDONTWRITEBYTECODE, so any file that appears in site-packages
was written by gradlab, not by Python caching bytecode.
The runs see a fresh XDG_CACHE_HOME and no GRADLAB_CACHE/GRADLAB_DATA (the Makefile exports
GRADLAB_CACHE), so the table is computed, not read from a cache, and lands where a user's
would. Exit status 1 with the reason on any failure.
"""
import os
import subprocess
import sys
from pathlib import Path

from wheel_build import ROOT, build_wheel, fresh_venv, pip, scratch
from wheel_build import step as _step

SMOKE = ROOT / "tools" / "wheel_smoke.py"
WHO = "test-wheel"


def step(title, cmd, **kwargs):
    return _step(WHO, title, cmd, **kwargs)


def listing(folder):
    """Every file under `folder` (relative paths), to show that a run wrote nothing there."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}


def site_packages(venv):
    return Path(subprocess.check_output(
        [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        text=True).strip())


def unchanged(before, venv, what):
    after = listing(site_packages(venv))
    if after != before:
        added, removed = sorted(after - before), sorted(before - after)
        sys.exit(f"test-wheel: {what} changed site-packages: added {added[:20]}, "
                 f"removed {removed[:20]}")
    print(f"    site-packages unchanged by {what} ({len(after)} files)")


def main():
    with scratch(WHO) as tmp:
        run(tmp)


def run(tmp):
    venv, elsewhere = tmp / "venv", tmp / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("GRADLAB_CACHE", "GRADLAB_DATA")}
    env.update(XDG_CACHE_HOME=str(tmp / "xdg-cache"), XDG_DATA_HOME=str(tmp / "xdg-data"),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)  # the checkout must not be importable
    py = venv / "bin" / "python"

    wheel = build_wheel(tmp, env, WHO)
    fresh_venv(venv, env, WHO)
    step("install the wheel, core dependencies only", [*pip(venv), wheel], env=env)
    before = listing(site_packages(venv))
    step("fit on core dependencies", [py, SMOKE], env=env, cwd=elsewhere)
    unchanged(before, venv, "the fit")

    step("install the [lab] extra", [*pip(venv), f"{wheel}[lab]"], env=env)
    before = listing(site_packages(venv))
    step("python -m gradlab table --runs 1 --updates 20 (from another directory)",
         [py, "-m", "gradlab", "table", "--runs", "1", "--updates", "20"], env=env, cwd=elsewhere)
    unchanged(before, venv, "the table")
    cached = listing(tmp / "xdg-cache" / "gradlab") if (tmp / "xdg-cache").exists() else set()
    if not cached:
        sys.exit("test-wheel: the table cached nothing in $XDG_CACHE_HOME/gradlab")
    print(f"    {len(cached)} results cached in $XDG_CACHE_HOME/gradlab, the user's cache dir")
    if listing(elsewhere):
        sys.exit(f"test-wheel: the run wrote into its working directory: {sorted(listing(elsewhere))}")


if __name__ == "__main__":
    main()
