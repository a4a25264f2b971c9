"""The accumulation table: test accuracy against N, `runs` seeds per row, as published.

    fixed effective batch B:  micro_batch = B / N, every row the same experiment if N
                              changes nothing (one-way ANOVA, Student's t, pooled variance)
    fixed micro-batch b:      B = N * b grows with N (Welch's t against the first row)

The reference (`REFERENCE`: Grzegorz Chlebus, "Gradient averaging with TensorFlow", 2018)
trained a LeNet-like convnet with dropout, Adam 1e-3, on full MNIST, one update per 100
samples, 1,000 updates, and reported the mean over 10 runs of each run's best test accuracy
over checkpoints (population std). `table(...)` runs the same design (fixed effective batch,
1,000 updates) in a different setup, gradlab's MLP with SGD on the shipped subset, final
accuracy; every run is cached (`experiments.run`).

    python -m gradlab table --runs 10 --updates 1000      # or: make table

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from ..cache import to_json
from ..arguments import parse_counts, positive
from .experiments import add_run_arguments, run_many
from .run_config import REFERENCE_BATCH, SAMPLINGS, TRAIN_SIZE, RunConfig
from ...core.microbatch import check_count
from ..stats import anova, mean_std, pooled_t, pooled_var, welch_t
from ...training.strategies import STRATEGIES

# accum_steps -> (micro_batch, iterations, mean accuracy, std) over 10 runs, as published.
REFERENCE = {1: (100, 1_000, 0.950, 0.0017), 5: (20, 5_000, 0.949, 0.0033),
             10: (10, 10_000, 0.951, 0.0036), 20: (5, 20_000, 0.952, 0.0030)}


def table(accum=(1, 5, 10, 20), effective_batch=REFERENCE_BATCH, micro_batch=None, runs=10,
          cache=True, progress=True, **common):
    """Accuracy for each accumulation count N, `runs` seeds each: the reference table.

    Fixed effective batch (the default): micro_batch = effective_batch / N, so every row
    sees the same number of examples per update. Fixed micro-batch (`micro_batch=b`, the
    memory-bound case): the effective batch N*b grows with N and its noise falls.

    Args:
        accum: accumulation counts, one row each.
        effective_batch: B, divisible by every N (ignored when micro_batch is given).
        micro_batch: b, to compare at a fixed micro-batch instead.
        runs: seeds 0..runs-1 (offset by `seed` in common) per row.
        cache, progress: as in `run_many`.
        **common: other `RunConfig` fields (updates, lr, optimizer, sampling, model, ...).
    Returns:
        `(rows, results)`: one dict per row (the `--json` fields, accuracies as fractions,
        plus `accuracies`, `p_value` of `pooled_t` and `welch_p` of `welch_t` against
        the first row, `loss_noise_var`, and the run settings), and `{N: [RunResult per run]}`.
        `print(format_table(rows))` shows them.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    return compare(table_configs(accum, effective_batch, micro_batch, runs, **common),
                   cache, progress)


def compare(configs, cache=True, progress=True):
    """`(rows, results)` of `table` for `[[RunConfig per run] per row]` (`table_configs`)."""
    runs = len(configs[0])
    flat = run_many([c for row in configs for c in row], cache, progress)
    results = {row[0].accum_steps: flat[i * runs:(i + 1) * runs] for i, row in enumerate(configs)}
    rows = [_row(rs) for rs in results.values()]
    accs = [row["accuracies"] for row in rows]
    for row, pooled in zip(rows, pooled_t(accs)):
        row["p_value"] = None if pooled is None else pooled[2]
        row["welch_p"] = (welch_t(row["accuracies"], accs[0])[2]
                          if runs > 1 and row is not rows[0] else None)
    return rows, results


def table_configs(accum, effective_batch=REFERENCE_BATCH, micro_batch=None, runs=10, **common):
    """`[[RunConfig per run] per N]`; checks every argument before any TensorFlow work."""
    accum = [check_count("accum_steps", n) for n in accum]
    if not accum:
        raise ValueError("accum must list at least one accumulation count, got []")
    if len(set(accum)) != len(accum):  # rows are keyed by N: a repeat would vanish
        raise ValueError(f"accum must list each accumulation count once, got {accum}")
    runs = check_count("runs", runs)
    seed = common.pop("seed", 0)
    if micro_batch is None:
        effective_batch = check_count("effective_batch", effective_batch)
        check_divisible(effective_batch, accum)
        micro = {n: effective_batch // n for n in accum}
    else:
        micro = {n: check_count("micro_batch", micro_batch) for n in accum}
    return [[RunConfig(accum_steps=n, micro_batch=micro[n], seed=seed + r, **common)
             for r in range(runs)] for n in accum]


def check_divisible(effective_batch, accum):
    """ValueError naming the counts in `accum` that do not divide `effective_batch`."""
    bad = [n for n in accum if effective_batch % n]
    if bad:
        raise ValueError(f"effective batch {effective_batch} is not divisible by "
                         f"accumulation count(s) {bad}")


def _row(results):
    c = results[0].config
    accs = [r.accuracy for r in results]
    mean, std = mean_std(accs)
    return {"accum_steps": c.accum_steps, "micro_batch": c.micro_batch, "updates": c.updates,
            "runs": len(results), "accuracy_mean": mean, "accuracy_std": std,
            "seconds_per_run": float(np.mean([r.seconds for r in results])),
            "effective_batch": c.effective_batch, "iterations": c.updates * c.accum_steps,
            "seconds_per_update": float(np.mean([r.seconds_per_update for r in results])),
            "loss_noise_var": _nanmean([r.loss_noise["var"] for r in results]),
            "accuracies": accs, **{k: getattr(c, k) for k in _SETTINGS}}


_SETTINGS = ("strategy", "model", "optimizer", "lr", "sampling")


def _nanmean(values):
    """Mean of the values that are not NaN; NaN (without numpy's warning) if all are."""
    values = np.asarray(values, dtype=np.float64)
    measured = values[~np.isnan(values)]
    return float(measured.mean()) if measured.size else math.nan


def format_table(rows, tests=True, seconds=True, reference=True):
    """The rows of `table` as aligned text, the reference beside them where it applies.

    At a fixed effective batch every row is, if N changes nothing, the same experiment:
    "p vs first" is `pooled_t` and the verdict a one-way `anova`. At a fixed micro-batch the
    rows are different experiments with different spreads: "p vs first" is `welch_t`.

    Args:
        rows: what `table` returns first (or the `rows` of its JSON).
        tests: False leaves out the "p vs first" column and the tests' lines, keeping the
            spreads (a lesson's main text states what the spread supports; the tests are
            its method).
        seconds: False leaves out the "s/run" column, the one number that changes from run
            to run of the same rows (so a lesson's checked output can print the rest).
        reference: False leaves out the "Chlebus 2018 %" column and its note (a lesson that
            prints the published rows itself, in its own ± convention).
    """
    fixed_b = len({r["effective_batch"] for r in rows}) == 1
    s, first = rows[0], rows[0]["accum_steps"]
    head = (f"gradlab on the shipped MNIST subset ({TRAIN_SIZE:,} train / 1,000 test): "
            f"{s['model']}, {s['optimizer']} lr={s['lr']:g}, {s['strategy']} strategy, "
            f"{s['sampling']} sampling, {s['updates']:,} updates, {s['runs']} run(s) per row, "
            + (f"fixed effective batch {s['effective_batch']}" if fixed_b
               else f"fixed micro-batch {s['micro_batch']}"))
    p_key = "p_value" if fixed_b else "welch_p"
    cols = ["accum", "micro", "eff.", "iterations", "accuracy %", "p vs first",
            "loss noise", "s/run", "Chlebus 2018 %"]
    p_col = cols.index("p vs first")
    lines = []
    for r in rows:
        ref = REFERENCE.get(r["accum_steps"])
        matches = fixed_b and r["effective_batch"] == REFERENCE_BATCH and r["updates"] == 1000
        lines.append([str(r["accum_steps"]), str(r["micro_batch"]), str(r["effective_batch"]),
                      f"{r['iterations']:,}",
                      f"{100 * r['accuracy_mean']:.2f} ± {100 * r['accuracy_std']:.2f}",
                      "-" if r.get(p_key) is None else f"{r[p_key]:.3f}",
                      f"{math.sqrt(r['loss_noise_var']):.3f}" if r["loss_noise_var"] >= 0 else "-",
                      f"{r['seconds_per_run']:.1f}",
                      f"{100 * ref[2]:.1f} ± {100 * ref[3]:.2f}" if ref and matches else "-"])
    drop = ({p_col} if not tests else set()) | ({cols.index("s/run")} if not seconds else set())
    drop |= {cols.index("Chlebus 2018 %")} if not reference else set()
    cols, lines = [c for i, c in enumerate(cols) if i not in drop], [
        [c for i, c in enumerate(line) if i not in drop] for line in lines]
    out = [head, "", *text_table(cols, lines, rule=True), ""]
    if fixed_b and not tests:
        spread = math.sqrt(pooled_var([r["accuracies"] for r in rows])[0])
        largest = max(abs(r["accuracy_mean"] - s["accuracy_mean"]) for r in rows)
        out.append(f"largest |difference| from N={first}: {100 * largest:.2f} points; run-to-run "
                   f"std (pooled over rows): {100 * spread:.2f} points")
    test = anova([r["accuracies"] for r in rows]) if fixed_b and tests else None
    if test is not None:
        spread = math.sqrt(pooled_var([r["accuracies"] for r in rows])[0])
        largest = max(abs(r["accuracy_mean"] - s["accuracy_mean"]) for r in rows)
        out += [f"largest |difference| from N={first}: {100 * largest:.2f} points; run-to-run "
                f"std (pooled over rows): {100 * spread:.2f} points",
                f"one-way ANOVA over the rows: F = {test[0]:.2f}, p = {test[3]:.3f}: "
                + ("the rows differ beyond run-to-run noise (p < 0.05)" if test[3] < 0.05
                   else "no difference beyond run-to-run noise"),
                f"p vs first: Student's t against N={first}, variance pooled over all rows"]
    elif tests and not fixed_b and any(r.get("welch_p") is not None for r in rows):
        differ = [r["accum_steps"] for r in rows[1:] if r["welch_p"] < 0.05]
        out += [f"p vs first: Welch's t-test against N={first} (each row its own spread); "
                + (f"N={differ} differ at p < 0.05" if differ else "none differs at p < 0.05")]
    out.append(f"accuracy %: final test accuracy, mean ± sample std (ddof = 1) over the {s['runs']} run(s)")
    out.append("loss noise: std of the per-update training loss around its moving average")
    if reference and any(line[-1] != "-" for line in lines):
        out.append("Chlebus 2018 %: the published table, a different setup (LeNet-like convnet with "
                   "dropout, Adam 1e-3, full MNIST, best test accuracy over checkpoints every 100 "
                   "micro-batches, population std)")
    return "\n".join(out)


def text_table(cols, lines, rule=False):
    """`cols` and the rows of cells `lines`, right-aligned: one string per line."""
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(cols)]
    rows = [cols, ["-" * w for w in widths]] if rule else [cols]
    return ["  ".join(s.rjust(w) for s, w in zip(cells, widths)) for cells in rows + lines]


# -- command line ----------------------------------------------------------------------------

def cli(argv=None):
    """`python -m gradlab table`: the accumulation table, text or `--json`."""
    parser = argparse.ArgumentParser(prog="python -m gradlab table", description=(
        "Test accuracy against the accumulation count N at a fixed effective batch "
        "(the published table), or at a fixed micro-batch with --micro-batch."))
    parser.add_argument("--runs", type=positive(int), default=10, help="seeds per row (10)")
    parser.add_argument("--updates", type=positive(int), default=1000, help="optimizer updates (1000)")
    parser.add_argument("--accum", type=parse_counts, default=[1, 5, 10, 20], help="N values (1,5,10,20)")
    batch = parser.add_mutually_exclusive_group()
    batch.add_argument("--effective-batch", type=positive(int), default=None,
                       help=f"examples per update ({REFERENCE_BATCH})")
    batch.add_argument("--micro-batch", type=positive(int), default=None,
                       help="compare at this fixed micro-batch instead")
    parser.add_argument("--sampling", choices=SAMPLINGS, default="independent")
    parser.add_argument("--strategy", choices=STRATEGIES, default="fused")
    parser.add_argument("--eval-every", type=positive(int), default=100)
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    settings = {k: getattr(args, k) for k in _SETTINGS}
    try:
        configs = table_configs(args.accum, args.effective_batch or REFERENCE_BATCH,
                                args.micro_batch, args.runs,
                                seed=args.seed, updates=args.updates,
                                eval_every=args.eval_every, **settings)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    rows, _ = compare(configs, cache=not args.no_cache, progress=not args.no_progress)
    if args.json:
        test = anova([r["accuracies"] for r in rows])
        print(to_json({"rows": rows, "anova": None if test is None else
                     dict(zip(("F", "dof_between", "dof_within", "p_value"), test))}))
    else:
        print(format_table(rows))
    return 0
