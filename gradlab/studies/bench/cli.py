"""`python -m gradlab bench {step,fit,memory}`: one command, a sub-command per benchmark.

    bench [step] ...   every strategy's `step` on the same work: ms/update, ratios, memory
    bench fit ...      `model.fit` timed: AccumulatingModel, Keras's accumulation, plain fit
    bench memory ...   the memory of `fit` against accum_steps, each run in a fresh process

`bench` alone is `bench step`; `bench --fit` and `bench --fit --memory`, the spellings the
lessons' outputs show, are `bench fit` and `bench memory`. Each sub-command's module is
imported only when it is asked for, and parses its own options (`bench fit --help`).

Lesson: notebooks/17-the-lab.ipynb
"""
import argparse
import importlib
import sys

KINDS = {
    "step": ("gradlab.studies.bench.step", "every strategy's step on the same work: ms/update, "
             "ratios, training and compilation memory (the default)"),
    "fit": ("gradlab.studies.bench.fit", "model.fit timed: AccumulatingModel against Keras's "
            "accumulation, plain fit and a hand-written loop"),
    "memory": ("gradlab.studies.bench.fit_memory", "fit's memory against accum_steps, each run "
               "in a fresh process"),
}
# The earlier spellings, as flags: `bench --fit` and `bench --fit --memory`.
FLAGS = {("--fit",): "fit", ("--fit", "--memory"): "memory"}


def parser():
    """The sub-commands of `python -m gradlab bench`; each parses the rest of the line."""
    p = argparse.ArgumentParser(prog="python -m gradlab bench", description=(
        "Benchmarks: `bench KIND --help` for a kind's options; `bench` alone is `bench step`."))
    sub = p.add_subparsers(dest="kind", metavar="{step,fit,memory}")
    for name, (_, help_) in KINDS.items():
        sub.add_parser(name, help=help_, add_help=False)
    return p


def cli(argv=None):
    """Run the sub-command `argv` names (`step` when it names none) with the rest of `argv`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    flags = tuple(sorted(a for a in argv if a in ("--fit", "--memory")))
    if flags in FLAGS:
        argv = [FLAGS[flags], *(a for a in argv if a not in flags)]
    if not argv or argv[0] not in (*KINDS, "-h", "--help"):
        argv = ["step", *argv]
    args, rest = parser().parse_known_args(argv)
    return importlib.import_module(KINDS[args.kind][0]).cli(rest)
