"""The install story stays in step: pyproject.toml is the one source of dependencies."""
import pathlib
import re
import subprocess
import sys
import textwrap
import tomllib

from packaging.specifiers import SpecifierSet

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# What only the lessons, the lab and the studies' progress bars use: the [lab] extra.
LAB_ONLY = ("matplotlib", "tqdm", "ipywidgets", "IPython", "jupyterlab", "voila")


def _split(requirement):
    """("name", "specifier") of a pip requirement or a conda match spec; extras dropped."""
    name, spec = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(.*)$", requirement.strip()).groups()
    return name.lower(), spec.replace(" ", "")


def _pip_spec(conda_spec):
    """conda's `=X` (any X.*) in pip's spelling `==X.*`; other specifiers are spelled alike."""
    return re.sub(r"(^|,)=(?!=)([^,]+)", r"\1==\2.*", conda_spec)


def test_environment_yml_pins_the_same_versions_as_pyproject():
    extras = PROJECT["optional-dependencies"]
    wanted = dict(map(_split, PROJECT["dependencies"] + extras["lab"] + extras["test"]))
    lines = (ROOT / "environment.yml").read_text().splitlines()
    deps = lines[lines.index("dependencies:") + 1:]
    conda = dict(_split(l[4:]) for l in deps if re.match(r"^  - [a-z][^:]*$", l))
    assert conda.pop("python") == "=3.11" and conda.pop("pip") == ""
    assert conda.keys() == wanted.keys()
    for name, spec in wanted.items():
        assert SpecifierSet(_pip_spec(conda[name])) == SpecifierSet(spec), \
            f"{name}: environment.yml says {conda[name]!r}, pyproject.toml {spec!r}"
    text = (ROOT / "environment.yml").read_text()
    assert "conda-forge" in text and "coalesce_streams" in text  # says why nbval is pinned
    assert any(l.strip() == "- -e ." for l in lines), "the pip section installs gradlab itself"


def test_the_conda_spelling_maps_to_pip():
    assert _pip_spec("=0.11") == "==0.11.*"
    assert _pip_spec(">=2.21,<2.22") == ">=2.21,<2.22"
    assert _split("tensorflow[and-cuda]>=2.21,<2.22") == ("tensorflow", ">=2.21,<2.22")


def test_core_dependencies_are_the_engines_and_the_ranges_are_the_tested_ones():
    import keras
    import tensorflow as tf
    deps = dict(map(_split, PROJECT["dependencies"]))
    assert sorted(deps) == ["keras", "numpy", "tensorflow"]
    assert tf.__version__ in SpecifierSet(deps["tensorflow"])
    assert keras.__version__ in SpecifierSet(deps["keras"])
    # From the oldest pair `make test-oldest` installs to the newest `make test` does
    # (supported = tested); the [gpu] extra admits the same TensorFlow.
    assert SpecifierSet(deps["tensorflow"]) == SpecifierSet(">=2.18,<2.22")
    assert SpecifierSet(deps["keras"]) == SpecifierSet(">=3.8,<3.16")
    gpu = dict(map(_split, PROJECT["optional-dependencies"]["gpu"]))
    assert gpu == {"tensorflow": deps["tensorflow"]}
    oldest = (ROOT / "tools" / "test_oldest.py").read_text()
    assert '"tensorflow==2.18.*"' in oldest and '"keras==3.8.*"' in oldest
    assert PROJECT["requires-python"] == ">=3.11"  # tomllib, imported above, is 3.11+


def test_the_wheel_declares_both_licences_and_ships_the_data():
    assert PROJECT["license"] == "Apache-2.0 AND CC-BY-SA-3.0"
    for name in PROJECT["license-files"]:
        assert (ROOT / name).is_file()
    assert "CC BY-SA 3.0" in (ROOT / "LICENSE-MNIST").read_text()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert package_data["package-data"] == {"gradlab.datasets": ["*.npz"]}
    assert (ROOT / "gradlab" / "datasets" / "mnist_5k.npz").is_file()


def test_the_engine_runs_without_the_lab_extra():
    """`import gradlab`, a fit, and the engine-only CLI, with the [lab] packages unimportable."""
    script = textwrap.dedent(f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {LAB_ONLY!r}:
                    raise ImportError(f"blocked: {{name}} is in the [lab] extra")
        sys.meta_path.insert(0, Block())
        import numpy as np, keras, gradlab as gl
        import gradlab.__main__, gradlab.studies.distributed.multiworker, gradlab.studies.data
        x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
        model = gl.AccumulatingModel(keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)]),
                                     accum_steps=2)
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, x[:, :1], batch_size=8, epochs=1, verbose=0)
        assert int(model.optimizer.iterations) == 2
        assert gl.studies.data.load_mnist().x_train.shape == (4000, 28, 28)
        print("ok", sorted(m for m in sys.modules if m.split(".")[0] in {LAB_ONLY!r}))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "ok []"


def test_readme_gives_the_two_commands_and_lists_every_notebook():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert nb.name in readme, f"README's lesson table misses {nb.name}"
