"""`python -m gradlab` and `python -m gradlab bench`: argparse sub-commands, each module parsing
the rest of the line; the documented spellings (`bench`, `bench --fit`, `bench --fit --memory`)
reach the same sub-commands as `bench step`, `bench fit`, `bench memory`."""
import pytest

from gradlab import __main__ as gradlab_main
from gradlab.studies.bench import cli


@pytest.mark.parametrize("argv, prog", [
    (["--help"], "python -m gradlab bench [-h] {step,fit,memory}"),
    (["step", "--help"], "python -m gradlab bench step"),
    (["--fit", "--help"], "python -m gradlab bench fit"),
    (["fit", "--help"], "python -m gradlab bench fit"),
    (["--fit", "--memory", "--help"], "python -m gradlab bench memory"),
    (["--memory", "--help", "--fit"], "python -m gradlab bench memory"),
    (["memory", "--help"], "python -m gradlab bench memory"),
])
def test_each_spelling_reaches_its_sub_command(argv, prog, capsys):
    with pytest.raises(SystemExit) as e:
        cli.cli(argv)
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {prog}")


def test_a_flag_of_another_sub_command_is_a_usage_error_naming_it(capsys):
    with pytest.raises(SystemExit) as e:
        cli.cli(["step", "--limit", "5"])
    assert e.value.code == 2 and "--limit" in capsys.readouterr().err


def test_the_command_line_lists_its_commands_and_refuses_an_unknown_one(capsys):
    assert gradlab_main.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in gradlab_main.COMMANDS)
    assert gradlab_main.main(["nope"]) == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    assert gradlab_main.main([]) == 2  # a command is required


def test_a_command_gets_the_rest_of_the_line(capsys):
    with pytest.raises(SystemExit) as e:
        gradlab_main.main(["bench", "--fit", "--help"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("usage: python -m gradlab bench fit")
