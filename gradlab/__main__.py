"""The command line: `python -m gradlab {table,reproduce,noise,bench,multiworker,doctor} [--json] ...`.

Each command lives beside the study it runs; this file only dispatches, importing the
module (and so TensorFlow) for the command that was asked for.
"""
import importlib
import sys

COMMANDS = {
    "table": ("gradlab.studies.table", "cli", "the accumulation table: accuracy at a fixed effective batch"),
    "noise": ("gradlab.studies.noise_study", "cli", "gradient-noise measurements against N and N*b"),
    "bench": ("gradlab.studies.bench", "cli", "every strategy on the same work: ms/update, ratios, training and compilation memory (mlp beside conv); --fit: model.fit timed; --fit --memory: fit's memory against accum_steps"),
    "multiworker": ("gradlab.studies.multiworker", "cli", "K worker processes on loopback, accumulation vs one large batch"),
    "reproduce": ("gradlab.studies.reproduction", "cli", "Chlebus (2018) in kind: his convnet, Adam and best-of-checkpoints metric, N = 1, 5, 10, 20"),
    "doctor": ("gradlab.doctor", "cli", "what a bug report needs: versions, devices, XLA, the GPU allocator, each private-name probe"),
}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        width = max(map(len, COMMANDS))
        lines = [f"  {name:<{width}}  {help_}" for name, (_, _, help_) in COMMANDS.items()]
        print("usage: python -m gradlab COMMAND [options]   (COMMAND --help for its options)\n\n"
              "commands:\n" + "\n".join(lines))
        if argv and argv[0] not in ("-h", "--help"):
            print(f"\nerror: unknown command {argv[0]!r}", file=sys.stderr)
            return 2
        return 0
    module, function, _ = COMMANDS[argv[0]]
    return getattr(importlib.import_module(module), function)(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
