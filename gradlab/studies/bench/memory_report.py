"""The tables of `bench --fit --memory`: each run's row, the comparison at each N, a limit's outcome.

    format_bench_memory  one row per run (the CLI's table)
    format_comparison    AccumulatingModel beside Keras's accumulation at each N, epoch and update
    format_limit         `fit_under_limit`'s outcomes
    memory_peaks         each run's peak, keyed (contender, N, overlap)
    format_memory_peaks  lesson 05's table: epoch and update peaks at each N

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


def format_comparison(result):
    """AccumulatingModel ("ours", overlap 1) beside Keras's accumulation at each N of one
    `run_bench_memory` result: epoch and update memory, each against its floor."""
    c, q = result["config"], result["ratios"]
    measured = [r for r in result["rows"] if "train_mb" in r]
    # plain fit's rows (one per micro-batch, all N = 1) are keyed by batch, the others by N
    rows = {(r["contender"], r["accum_steps"], r["overlap"]): r for r in measured if r["contender"] != "plain"}
    plain = next((r for r in measured if r["contender"] == "plain" and r["batch"] == c["batch"]), {})
    control = rows.get(("input", 1, 1), {})
    held = [r["base_mb"] for r in result["rows"] if "base_mb" in r]
    lines = [f"{c['model']}, B={c['batch']}: plain fit epoch {_num(plain.get('train_mb'), 0, '.1f')} MB, "
             f"update {_num(plain.get('step_mb'), 0, '.1f')} MB; weights {_num(plain.get('trainable_mb'), 0)} MB; "
             f"fit's input alone {_num(control.get('train_mb'), 0, '.1f')} MB "
             f"(one input batch {_num(plain.get('batch_input_mb'), 0, '.3f')} MB)",
             f"  overlap=2 at N={q['accum_steps']}: {_num(q['overlap2_memory'], 0)}x the epoch memory, "
             f"{_num(q['overlap2_time'], 0)}x the time of overlap=1; held before the measured epochs: "
             f"{min(held):.1f} to {max(held):.1f} MB",
             f"{'N':>4}{'b':>6} |{'epoch MB: floor':>16}{'ours':>7}{'Keras':>7}{'ours/K':>8}"
             f"{'ours/plain':>11} |{'update MB: floor':>17}{'ours':>7}{'Keras':>7}{'ours/K':>8}{'ours/floor':>11}"]
    for n in sorted(k[1] for k in rows if k[0] == "keras"):
        a, k = rows.get(("accumulating", n, 1), {}), rows[("keras", n, 1)]
        lines.append(f"{n:>4}{k['micro_batch']:>6} |{_num(a.get('floor_mb'), 16, '.1f')}"
                     f"{_num(a.get('train_mb'), 7, '.1f')}{k['train_mb']:>7.1f}"
                     f"{_num(ratio(a.get('train_mb'), k['train_mb']), 8)}{_num(a.get('vs_plain'), 11)} |"
                     f"{_num(a.get('step_floor_mb'), 17, '.1f')}{_num(a.get('step_mb'), 7, '.1f')}"
                     f"{k['step_mb']:>7.1f}{_num(ratio(a.get('step_mb'), k['step_mb']), 8)}"
                     f"{_num(a.get('step_vs_floor'), 11)}")
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


def memory_peaks(result, key="train_mb"):
    """Each run's allocator peak (MiB) of one `run_bench_memory` result, keyed by what it was:

        (contender, N, overlap) -> row[key],   N = B // b for plain fit at batch b, else accum_steps

    Plain fit has no N: its run at b = B/N rows stands in at N, one micro-batch alone. Runs
    that failed or did not measure `key` are left out.

    Args:
        result: the dict `run_bench_memory` returns (or one of `--json`'s `workloads`).
        key: "train_mb" (fit's epochs) or "step_mb" (the update alone, `train_on_batch`).
    Returns:
        a dict `{(contender, N, overlap): MiB}`.

    Lesson: notebooks/05-fused-accumulation.ipynb
    """
    batch = result["config"]["batch"]
    return {(r["contender"], batch // r["batch"] if r["contender"] == "plain" else r["accum_steps"], r["overlap"]):
            r[key] for r in result["rows"] if r.get(key) is not None}


# the columns of `format_memory_peaks`: contender, overlap -> header
PEAK_COLUMNS = {("plain", 1): "plain fit on B/N", ("accumulating", 1): "fused, overlap 1",
                ("accumulating", 2): "fused, overlap 2", ("keras", 1): "keras"}


def format_memory_peaks(result):
    """Lesson 05's table of one `run_bench_memory` result: for each N, the epoch peak (fit's
    epochs) and the update peak (`train_on_batch` alone) of plain fit on B/N rows, fused
    (`AccumulatingModel`) with overlap 1 and 2, and Keras's accumulation; "-" where none ran."""
    peaks = {label: memory_peaks(result, key) for label, key in (("epoch", "train_mb"), ("update", "step_mb"))}
    ns = sorted({n for (contender, n, _) in peaks["epoch"] if contender != "input"})
    lines = [f"peak MiB, B = {result['config']['batch']}   " + "".join(f"{h:>18}" for h in PEAK_COLUMNS.values())]
    for n in ns:
        for label, values in peaks.items():
            lines.append(f"N = {n:<3} {label:<10}" + "".join(
                _num(values.get((contender, n, overlap)), 18, ".1f") for contender, overlap in PEAK_COLUMNS))
    return "\n".join(lines)
