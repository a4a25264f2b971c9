"""The report of `python -m gradlab bench`: the tables of `run_bench` and `run_sweep` results.

    x large     median(s) / median(large_batch)      (time ratio: 2.0 means twice as slow)
    x keras     median(s) / median(keras)            (0.25 means four times faster)
    train MB    the TensorFlow allocator's peak during the steady updates (`step_memory`)
    compile MB  the first update's resident high-water mark, paid once per shape: apart

A missing value (a strategy absent, a memory process that failed) prints as `-`.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

from .step_timing import LR
from ...classic.optimizers import describe


def format_bench(result, verdict=True):
    """The table of one `run_bench` result, with (if `verdict`) the `headline` for `fused`.

    Lesson: notebooks/17-the-lab.ipynb
    """
    c, rows = result["config"], result["strategies"]
    where = ", ".join(c["gpus"]) if c["gpus"] else f"CPU ({c['cpu_count']} cores)"
    lines = [f"gradlab bench: model {c['model']}, N={c['accum_steps']} micro-batches of "
             f"{c['micro_batch']} (effective batch {c['batch']}), "
             f"{describe(c['optimizer'], LR[c['optimizer']])}, {c['inputs']} inputs, "
             f"{c['rounds']} rounds x {c['updates']} updates after {c['warmup']} warm-up",
             f"on {where}; devices {len(c['devices'])}; load average "
             f"{c['load_average'][0]:.1f} -> {c['load_average'][1]:.1f}; TF {c['tensorflow']}",
             "",
             f"{'strategy':<16}{'ms/update':>10}  {'IQR':>13}{'x large':>9}{'x keras':>9}"
             + (f"{'train MB':>10}{'x large':>9}{'compile MB':>12}" if c["memory"] else "")
             + f"{'traces':>8}"]
    for name, r in rows.items():
        line = (f"{name:<16}{r['ms_median']:>10.2f}  {r['ms_q25']:>6.2f}-{r['ms_q75']:<6.2f}"
                f"{_num(r['vs_large_batch'], 9)}{_num(r['vs_keras'], 9)}")
        if c["memory"]:
            line += (f"{_num(r['peak_mb'], 10, '.1f')}{_num(r['peak_vs_large_batch'], 9)}"
                     f"{_num(r['compile_mb'], 12, '.1f')}")
        lines.append(line + f"{r['traces']:>6}+{r['retraces']}")
    errors = [f"  {n}: memory not measured ({r['memory_error']})" for n, r in rows.items()
              if r.get("memory_error")]
    return "\n".join(lines + errors + ([""] + headline([result]) if verdict else []))


def headline(results, strategy="fused"):
    """One line per workload: `strategy`'s time and training memory against `large_batch`,
    its compilation memory apart (paid once, not per update).

    Lesson: notebooks/17-the-lab.ipynb
    """
    lines = []
    for result in results:
        c, r = result["config"], result["strategies"].get(strategy)
        large = result["strategies"].get("large_batch")
        if r is None:
            continue
        parts = []
        if r["vs_keras"]:
            parts.append(f"{1 / r['vs_keras']:.1f}x faster than keras" if r["vs_keras"] < 1
                         else f"{r['vs_keras']:.2f}x the time of keras")
        if r["vs_large_batch"]:
            parts.append(f"{r['vs_large_batch']:.2f}x the time of large_batch")
        if r.get("peak_vs_large_batch"):
            parts.append(f"{r['peak_vs_large_batch']:.2f}x its training memory "
                         f"({r['peak_mb']:.1f} vs {large['peak_mb']:.1f} MB)")
        if r.get("compile_mb") is not None and large and large.get("compile_mb") is not None:
            parts.append(f"compiling took {r['compile_mb']:.0f} MB once "
                         f"(large_batch {large['compile_mb']:.0f} MB)")
        if parts:
            lines.append(f"{strategy} on {c['model']} (N={c['accum_steps']}, "
                         f"b={c['micro_batch']}): " + ", ".join(parts))
    return lines


def format_sweep(sweep):
    """ms/update, x keras and memory against N, one row per strategy, for a `run_sweep` result.

    Lesson: notebooks/17-the-lab.ipynb
    """
    c, ns, rows = sweep["config"], sweep["accum_steps"], sweep["strategies"]
    head = f"{'strategy':<16}" + "".join(f"{'N=' + str(n):>9}" for n in ns)
    out = [f"gradlab bench sweep: model {c['model']}, micro-batch {c['micro_batch']}, "
           f"{describe(c['optimizer'], LR[c['optimizer']])}, {c['rounds']} rounds x "
           f"{c['updates']} updates"]
    tables = [("ms/update (median)", "ms_median", ".2f"), ("x keras (time ratio)", "vs_keras", ".2f"),
              ("x large_batch (time ratio)", "vs_large_batch", ".2f")]
    if c["memory"]:
        tables += [("train MB (TF allocator peak of an update)", "peak_mb", ".1f"),
                   ("compile MB (first update, once)", "compile_mb", ".1f")]
    for title, field, fmt in tables:
        out += ["", title, head] + [f"{n:<16}" + "".join(_num(v, 9, fmt) for v in r[field])
                                    for n, r in rows.items()]
    return "\n".join(out)


def _num(v, width, fmt=".2f"):
    return f"{'-':>{width}}" if v is None else f"{v:>{width}{fmt}}"
