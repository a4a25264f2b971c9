"""A lesson's "your turn": check the learner's function, or fall back to the solution.

    f = yours_or_solution(my_f, solution_f, check_f)

`check_f(my_f)` runs; if it passes, the lesson goes on with `my_f`. A stub that still raises
`NotImplementedError` is replaced by `solution_f` (which must pass the same check), so "Run all"
works before the learner has written anything, and a solution cell never overwrites the learner's
name. A function that runs and fails the check stops the lesson: its AssertionError says where.

Lesson: 01 (and every lesson with a "Your turn" cell).
"""


def yours_or_solution(yours, solution, check):
    """`check(yours)` and return `yours`; while `yours` is a stub, check and return `solution`.

    Args:
        yours: the learner's function (a stub raising NotImplementedError until written).
        solution: the lesson's solution, with the same signature.
        check: a function of one argument that raises AssertionError when its argument is wrong.
    Returns:
        `yours` if it passes `check`, `solution` if `yours` raises NotImplementedError.
    """
    for name, f in (("yours", yours), ("solution", solution), ("check", check)):
        if not callable(f):
            raise TypeError(f"yours_or_solution: {name} must be callable, got {f!r}")
    try:
        check(yours)
    except NotImplementedError:
        check(solution)
        print(f"{_name(yours)}: not written yet; the lesson uses the solution (it passes)")
        return solution
    print(f"{_name(yours)}: yours passes")
    return yours


def _name(f):
    return getattr(f, "__name__", repr(f))
