"""The trade-off of accumulating in `fit`, in one figure: memory and time against accum_steps.

    memory(N) ~ weights + activations(B / N)   falls with N, towards the weights
    time(N)   ~ N * time(one micro-batch of B / N)   rises once a micro-batch stops
                filling the machine

Left, on a log scale: the allocator peak of each run above what it held at the start (MiB):
over fit's epochs (`train_mb`) solid, over the update alone (`step_mb`, `train_on_batch` on a
batch already held) dashed, fit's input alone (the control, a whole-fit peak) a grey dash-dotted
line. With `peak="update"` the update alone is the solid series, and plain fit and the reference
read it too (`step_mb`, `step_floor_mb`): one measure throughout, as a table of updates reads,
so the control is left out.
Right: milliseconds per update, the median epoch joined by a line (`time_stat="fastest"`: the
fastest epoch, for runs whose epochs came at two speeds on a shared machine) and every measured
epoch a faint dot. Both against N on a log2 axis. Plain fit at the whole batch B is a horizontal line
(it has no N; its epochs' range shaded), Keras's own accumulation a second series, the reference
(`bench_memory`) a grey dotted one with crosses.

Options for a table of updates: the update alone (`peak="update"`), memory only (`time=False`), the
1/N line (`ideal=True`), and (`table=True`) plain fit on B/N rows a series at N in place of the
reference and of plain fit's horizontal line, each peak over the large batch's (`relative=True`).

Lesson: notebooks/11-memory-budget.ipynb measures these updates one at a time against the budget;
this figure draws the memory benchmark's sweep over N.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

# contender, overlap -> label, colour, marker
SERIES = {("accumulating", 1): ("AccumulatingModel", "tab:blue", "o"),
          ("accumulating", 2): ("AccumulatingModel, overlap=2", "tab:cyan", "^"),
          ("keras", 1): ("Keras gradient_accumulation_steps", "tab:orange", "s")}
# tf.while_loop's default parallel_iterations, drawn where a result holds it
SERIES[("accumulating", 10)] = ("AccumulatingModel, overlap=10 (the default)", "tab:red", "D")


def plot_memory(result, time=True, peak="epoch", ideal=False, time_stat="median", table=False,
                relative=False):
    """Peak memory (MiB) and time per update (ms) against accum_steps, one result of
    `bench_memory.run_bench_memory`.

    Args:
        result: the dict `run_bench_memory` returns (or one of `--json`'s `workloads`).
        time: draw the time panel; False draws memory alone (times of contenders run one
            after another are not ratios of interleaved runs).
        peak: "epoch" (fit's epochs solid, the update dashed beside them) or "update" (the
            update alone, `train_on_batch`, for every series, plain fit and the reference).
        ideal: also draw plain fit's peak / N, black and dashed: a peak that falls like 1/N.
        time_stat: which epoch the time panel joins by a line, and where plain fit's black line
            stands: "median" (`ms_update`) or "fastest" (the least of `ms_epochs`); then plain
            fit's legend entry gives its fastest epoch in ms too.
        table: with `peak="update"`, draw the series a table of update peaks names: plain fit on
            b = B/N rows as a series at N = B/b (its update peak, `step_mb`) instead of the
            reference and plain fit's horizontal line; `AccumulatingModel`'s series are named
            by their overlap ("AccumulatingModel, overlap 1"), as a table of updates names them.
        relative: with `table=True`, draw each peak divided by plain fit's at the whole batch B
            (the large batch), so the ideal line is 1/N; legend entries drop ", update".
    Returns:
        a matplotlib Figure with 2 Axes (1 without time) and the legend below, outside the data.
    """
    if not isinstance(result, dict) or "rows" not in result or "config" not in result:
        raise ValueError("plot_memory needs a result of gradlab.studies.bench.fit_memory.run_bench_memory "
                         f"(with 'config' and 'rows'), got {type(result).__name__}")
    c = result["config"]
    rows = [r for r in result["rows"] if r.get("train_mb") is not None]
    plain = next((r for r in rows if r["contender"] == "plain" and r["batch"] == c["batch"]), None)
    if not isinstance(time, bool):
        raise TypeError(f"time must be True or False, got {time!r}")
    if peak not in ("epoch", "update"):
        raise ValueError(f"peak must be 'epoch' or 'update', got {peak!r}")
    if not isinstance(ideal, bool):
        raise TypeError(f"ideal must be True or False, got {ideal!r}")
    if time_stat not in ("median", "fastest"):
        raise ValueError(f"time_stat must be 'median' or 'fastest', got {time_stat!r}")
    if not isinstance(table, bool):
        raise TypeError(f"table must be True or False, got {table!r}")
    if table and peak != "update":
        raise ValueError("table=True draws update peaks: pass peak='update'")
    if not isinstance(relative, bool):
        raise TypeError(f"relative must be True or False, got {relative!r}")
    if relative and (not table or plain is None):
        raise ValueError("relative=True divides by the large batch's update peak: pass table=True, "
                         "with plain fit at B among the rows")
    timed = (lambda r: min(_epochs(r))) if time_stat == "fastest" else (lambda r: r["ms_update"])
    value, reference = ("train_mb", "floor_mb") if peak == "epoch" else ("step_mb", "step_floor_mb")
    fig, axes = plt.subplots(1, 1 + time, figsize=(9.0 if time else 5.5, 3.8), layout="constrained", squeeze=False)
    ax_mb, ax_ms = axes[0][0], (axes[0][1] if time else _Nowhere())
    plt.close(fig)  # owned by the caller: a cell ending with the call shows it once
    scale = plain[value] if relative else 1.0  # relative: every peak over the large batch's
    tag = "" if relative else f", {peak}"
    for key, (label, color, marker) in SERIES.items():
        series = sorted((r["accum_steps"], r.get(value), timed(r), r.get(reference),
                         r.get("step_mb"), _epochs(r)) for r in rows if (r["contender"], r["overlap"]) == key)
        if not series:
            continue
        ns, mb, ms, floor, step, epochs = zip(*series)
        hollow = {"mfc": "none"} if key == ("accumulating", 10) else {}  # overlap=2's point shows through
        if table and key[0] == "accumulating":  # named as a table of updates names its columns
            label = f"AccumulatingModel, overlap {key[1]}"
        ax_mb.plot(ns, [m / scale for m in mb], marker=marker, color=color, label=f"{label}{tag}", **hollow)
        ax_ms.plot(ns, ms, marker=marker, color=color)
        for n, times in zip(ns, epochs):  # every epoch: on a shared machine they may come at two speeds
            ax_ms.plot([n] * len(times), times, marker, color=color, alpha=0.35, ms=4)
        if peak == "epoch" and key != ("accumulating", 2) and None not in step:
            ax_mb.plot(ns, step, "--", marker=marker, mfc="none", color=color, label=f"{label}, update (train_on_batch)")
        if key == ("accumulating", 1) and None not in floor and not table:
            # drawn over the series: at the reference they would hide it
            ax_mb.plot(ns, floor, ":", marker="x", color="grey", zorder=3,
                       label=f"reference ({peak}): plain fit at b = B/N + one gradient sum")
    if table:  # plain fit on b rows stands at N = B / b, as the table reads it
        small = sorted((c["batch"] // r["batch"], r["step_mb"]) for r in rows if r["contender"] == "plain")
        if small:
            n_small, mb_small = zip(*small)  # large hollow rings, drawn first: seen around the others
            ax_mb.plot(n_small, [m / scale for m in mb_small], marker="o", ms=11, mfc="none", mew=1.5,
                       color="grey", zorder=1, label=f"plain fit on B/N rows{tag}")
    if plain is not None:
        fastest = f"; fastest epoch {timed(plain):.0f} ms" if time and time_stat == "fastest" else ""
        if not table:  # the table has plain fit at B/N rows instead
            ax_mb.axhline(plain[value], color="black", lw=1,
                          label=f"plain fit at B = {c['batch']}, {peak}: {plain[value]:.0f} MiB{fastest}")
        ax_ms.axhline(timed(plain), color="black", lw=1)
        times = _epochs(plain)
        if max(times) > min(times):
            ax_ms.axhspan(min(times), max(times), color="black", alpha=0.1, label="plain fit's epochs (range)")
    if ideal and plain is not None:
        ideal_ns = sorted({r["accum_steps"] for r in rows})
        ax_mb.plot(ideal_ns, [plain[value] / scale / n for n in ideal_ns], "--", color="black", lw=1,
                   label="1/N" if relative else f"plain fit's {plain[value]:.0f} MiB / N")
    control = next((r for r in rows if r["contender"] == "input"), None)
    if control is not None and peak == "epoch":  # a whole-fit peak: not drawn among update peaks
        ax_mb.axhline(control["train_mb"], color="grey", lw=1, ls="-.",
                      label=f"fit's input alone (a linear model at B = {c['batch']})")
    ns = sorted({r["accum_steps"] for r in rows}) or [1]
    mb_label = "update peak / the large batch's" if relative else "allocator peak above its start (MiB)"
    for ax, ylabel in ((ax_mb, mb_label), (ax_ms, "ms per update"))[:1 + time]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("accum_steps N (micro-batch B/N)")
        ax.set_ylabel(ylabel)
    # log memory: activations(B/N) fall as 1/N, a straight line, and the few MB that part
    # the contenders at large N stay visible beside plain fit's hundreds
    ax_mb.set_yscale("log")
    ax_mb.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax_mb.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax_mb.yaxis.set_minor_locator(NullLocator())
    ax_ms.set_ylim(bottom=0)
    ax_mb.set_title(f"Memory, {c['model']}, B = {c['batch']}", fontsize="medium")
    ax_ms.set_title("Time per update" + (", fastest epoch joined" if time_stat == "fastest" else ""), fontsize="medium")
    fig.legend(loc="outside lower center", ncols=2, fontsize="small", frameon=False)
    return fig


class _Nowhere:
    """Stands in for the time panel when it is not drawn: every call draws nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _epochs(row):
    """The row's ms per update of each measured epoch (its median alone for a row measured
    before epochs were kept)."""
    return list(row.get("ms_epochs") or [row["ms_update"]])
