"""The install story stays in step: pyproject.toml is the one source of dependencies."""
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _name(requirement):
    return re.split(r"[<>=!~\[ ]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    lines = (ROOT / "environment.yml").read_text().splitlines()
    deps = lines[lines.index("dependencies:") + 1:]
    conda = {_name(l[4:]) for l in deps if re.match(r"^  - [a-z][^:]*$", l)} - {"python", "pip"}
    assert conda == wanted
    assert "conda-forge" in (ROOT / "environment.yml").read_text()
    assert any(l.strip() == "- -e ." for l in lines), "the pip section installs gradlab itself"


def test_readme_gives_the_two_commands_and_lists_every_notebook():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert nb.name in readme, f"README's lesson table misses {nb.name}"
