import pytest

from gradlab.studies.exercise import yours_or_solution


def solution(n):
    return n * (n + 1) // 2


def check(f):
    for n, total in ((0, 0), (1, 1), (4, 10)):  # 1 + 2 + 3 + 4 = 10
        assert f(n) == total, (n, f(n))


def test_a_stub_falls_back_to_the_solution(capsys):
    def my_sum(n):
        raise NotImplementedError

    assert yours_or_solution(my_sum, solution, check) is solution
    assert "my_sum: not written yet" in capsys.readouterr().out


def test_a_written_function_that_passes_is_kept(capsys):
    def my_sum(n):
        return sum(range(n + 1))

    assert yours_or_solution(my_sum, solution, check) is my_sum
    assert "my_sum: yours passes" in capsys.readouterr().out


def test_a_wrong_function_stops_the_lesson():
    def my_sum(n):
        return n * n

    with pytest.raises(AssertionError, match="4"):
        yours_or_solution(my_sum, solution, check)


def test_a_wrong_solution_is_not_hidden():
    def my_sum(n):
        raise NotImplementedError

    with pytest.raises(AssertionError):
        yours_or_solution(my_sum, lambda n: n, check)


def test_arguments_that_are_not_functions_are_refused():
    with pytest.raises(TypeError, match="check must be callable"):
        yours_or_solution(solution, solution, None)
