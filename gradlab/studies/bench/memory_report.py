"""The tables of `bench --fit --memory`: each run's row, the comparison at each N, a limit's outcome.

    format_bench_memory  one row per run (the CLI's table)
    format_limit         `fit_under_limit`'s outcomes

Lesson: notebooks/11-memory-budget.ipynb, notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations


def format_bench_memory(result):
    """One row per run of a `run_bench_memory` result: epoch and update memory, floors,
    compile memory, time per update, and the issue's ratios at the largest N."""
    c, rows = result["config"], result["rows"]
    where = ", ".join(c["gpus"]) or f"CPU ({c['cpu_count']} cores, BFC allocator)"
    lines = [f"memory of fit, {c['model']}: effective batch B={c['batch']}, SGD, {c['updates']} "
             f"updates per epoch, {c['epochs']} measured epoch(s) after one untimed, no XLA, "
             f"each run a fresh process, on {where}; TF {c['tensorflow']}"
             + (f"; load average {c['load_average'][0]:.1f} -> {c['load_average'][1]:.1f}"
                if c.get("load_average") else ""),
             f"{'contender':<28}{'N':>4}{'b':>5}{'epoch MB':>9}{'floor MB':>10}{'/floor':>8}"
             f"{'x plain':>9}{'update MB':>10}{'/floor':>8}{'compile MB':>12}{'ms/update':>11}"]
    for r in rows:
        if r["contender"] == "plain" and r["batch"] != c["batch"]:
            continue  # the floor's own runs: shown inside the floor column
        if "error" in r:
            lines.append(f"{r['label']:<28}{r['accum_steps']:>4}{r['micro_batch']:>5}  failed: {r['error']}")
            continue
        lines.append(f"{r['label']:<28}{r['accum_steps']:>4}{r['micro_batch']:>5}"
                     f"{r['train_mb']:>9.1f}{_num(r['floor_mb'], 10, '.1f')}{_num(r['vs_floor'], 8)}"
                     f"{_num(r['vs_plain'], 9)}{_num(r.get('step_mb'), 10, '.1f')}{_num(r['step_vs_floor'], 8)}"
                     f"{r['compile_peak_mb']:>12.1f}{r['ms_update']:>11.1f}")
    q = result["ratios"]
    lines += ["epoch = allocator peak over fit's measured epochs - what it held as they began "
              "(train_mb; memory_child)",
              "update = the same over train_on_batch on a batch already held (step_mb): the update "
              "without fit's input pipeline (batches of the rows fit is given; row indices for "
              "AccumulatingModel)",
              "floor = the same of plain fit at batch b + one gradient-sum buffer (measured, not computed)",
              f"at N={q['accum_steps']}: AccumulatingModel / Keras's accumulation, epoch "
              f"{_num(q['accumulating_vs_keras'], 0)}, update {_num(q['step_accumulating_vs_keras'], 0)}; "
              f"/ plain fit {_num(q['accumulating_vs_plain'], 0)}; "
              f"overlap=2 takes {_num(q['overlap2_time'], 0)}x the time and "
              f"{_num(q['overlap2_memory'], 0)}x the memory of overlap=1"]
    return "\n".join(lines)


def ratio(a, b):
    """a / b, None where either is missing (a failed run) or b is 0."""
    return None if a is None or not b else a / b


def format_limit(rows):
    """`fit_under_limit`'s results, one line each."""
    r0 = rows[0]
    lines = [f"{r0['model']}, B={r0['batch']}, allocator limit {r0['limit_mb']} MB, "
             "each run a fresh process (oneDNN off):"]
    for r in rows:
        name = f"{r['label']}" + (f" N={r['accum_steps']}" if r["contender"] == "accumulating" else "")
        what = (f"ran: peak {r['peak_mb']:.1f} MB, loss " + " -> ".join(f"{v:.3f}" for v in r["losses"])
                if r["outcome"] == "ran" else f"{r['outcome']}: {r['error']}")
        lines.append(f"  {name:<24}{what}")
    return "\n".join(lines)


def _num(v, width, fmt=".2f"):
    return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"


