"""The command line: `python -m gradlab {table,reproduce,noise,bench,multiworker,doctor} [--json] ...`.

Each command lives beside the study it runs; this file only dispatches: argparse picks the
sub-command, and the module that runs it (and so TensorFlow, its start-up logs quieted)
is imported only then, and parses the rest of the line itself (`python -m gradlab table --help`).
"""
import argparse
import importlib
import sys

from ._quiet import quiet

COMMANDS = {
    "table": ("gradlab.studies.runs.table", "cli", "the accumulation table: accuracy at a fixed effective batch"),
    "noise": ("gradlab.studies.runs.noise_study", "cli", "gradient-noise measurements against N and N*b"),
    "bench": ("gradlab.studies.bench.cli", "cli", "every strategy on the same work: ms/update, ratios, training and compilation memory (mlp beside conv); bench fit (or --fit): model.fit timed; bench memory (or --fit --memory): fit's memory against accum_steps"),
    "multiworker": ("gradlab.studies.distributed.multiworker", "cli", "K worker processes on loopback, accumulation vs one large batch"),
    "reproduce": ("gradlab.studies.runs.reproduction", "cli", "Chlebus (2018) in kind: his convnet, Adam and best-of-checkpoints metric, N = 1, 5, 10, 20"),
    "doctor": ("gradlab.doctor", "cli", "what a bug report needs: versions, devices, XLA, the GPU allocator, each private-name probe"),
}


def parser():
    """`python -m gradlab COMMAND ...`: one sub-command per entry of `COMMANDS`."""
    p = argparse.ArgumentParser(prog="python -m gradlab",
                                description="COMMAND --help for a command's options.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, _, help_) in COMMANDS.items():
        sub.add_parser(name, help=help_, add_help=False)  # its module parses the rest
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args, rest = parser().parse_known_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2), printed by argparse
        return e.code
    module, function, _ = COMMANDS[args.command]
    quiet()  # a command's output without TensorFlow's start-up logs
    return getattr(importlib.import_module(module), function)(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
