import importlib

from gradlab.studies.figures import lesson_plots


def test_lesson_plots_names_each_figure_from_the_module_named_in_its_docstring():
    for name in lesson_plots.__all__:
        line = next(row for row in lesson_plots.__doc__.splitlines() if f".{name} " in row)
        module = next(word.split(".")[0] for word in line.split() if "." in word and not word.startswith("("))
        owner = importlib.import_module(f"gradlab.studies.figures.{module}")
        assert getattr(lesson_plots, name) is getattr(owner, name), (name, module)
