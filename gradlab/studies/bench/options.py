"""The options every `python -m gradlab bench` sub-command shares, as argparse parents.

Lesson: notebooks/17-the-lab.ipynb
"""
import argparse


def output_options():
    """`--no-progress` and `--json`, which every `bench` mode takes, as an argparse parent.

    Lesson: notebooks/17-the-lab.ipynb
    """
    return _add_output(argparse.ArgumentParser(add_help=False))


def _add_output(p):
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return p


def shared_options(rounds, rounds_help):
    """`--accum`, `--micro-batch` and `--rounds` (default `rounds`) and the `output_options`:
    what `bench` and `bench --fit` both take, as an argparse parent (made afresh per call:
    argparse shares a parent's actions with its children).

    Lesson: notebooks/17-the-lab.ipynb
    """
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--accum", type=int, default=10, help="N, micro-batches per update (10)")
    p.add_argument("--micro-batch", type=int, default=10, help="b, examples per micro-batch (10)")
    p.add_argument("--rounds", type=int, default=rounds, help=f"{rounds_help} ({rounds})")
    return _add_output(p)
