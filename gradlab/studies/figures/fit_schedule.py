"""Which rows each update of `fit` averages, and the learning rate it used, over epochs:
the large batch, `AccumulatingModel`, and Keras's `gradient_accumulation_steps`.

    large batch, AccumulatingModel:  update k of batch_size rows (the last batch of an epoch
                                     shorter), learning rate read at k updates
    Keras accumulation:              micro-batch m of batch_size / accum_steps rows; an update
                                     every accum_steps-th micro-batch counted across epochs,
                                     averaging the last accum_steps micro-batches; learning
                                     rate read at m, the count of micro-batches before it

Rows are counted across epochs (epoch e's row r is e * rows + r), so an update that averages
the end of one epoch with the start of the next is one span.

Lesson: notebooks/10-accumulation-in-fit.ipynb; plot_shard_weights: notebooks/15-fit-across-replicas.ipynb
"""
from __future__ import annotations

import numbers

import matplotlib.pyplot as plt

CONTENDERS = ("large batch", "AccumulatingModel", "Keras accumulation")


def fit_schedule(rows, batch_size, accum_steps, epochs):
    """Each contender's updates as (first row, end row, schedule step) triples.

    Args:
        rows: examples per epoch (`fit(shuffle=False)` takes them in order).
        batch_size: B, the large batch (Keras's accumulation gets B / accum_steps).
        accum_steps: N, micro-batches per update; must divide `batch_size`.
        epochs: epochs trained.
    Returns:
        dict contender -> list of (first, end, step): rows [first, end) counted across epochs,
        and the optimizer's step counter when the update was applied (the schedule reads it).
    """
    rows, B, N, epochs = (_count(n, v) for n, v in
                          (("rows", rows), ("batch_size", batch_size), ("accum_steps", accum_steps), ("epochs", epochs)))
    if B % N:
        raise ValueError(f"accum_steps must divide batch_size, got {N} and {B}")
    large = [(e * rows + lo, e * rows + min(lo + B, rows)) for e in range(epochs) for lo in range(0, rows, B)]
    micro = [(e * rows + lo, e * rows + min(lo + B // N, rows)) for e in range(epochs) for lo in range(0, rows, B // N)]
    keras_updates = [(micro[m - N + 1][0], micro[m][1], m) for m in range(N - 1, len(micro), N)]
    spans = [(lo, hi, k) for k, (lo, hi) in enumerate(large)]
    return {"large batch": spans, "AccumulatingModel": list(spans), "Keras accumulation": keras_updates}


def plot_fit_schedule(rows=611, batch_size=60, accum_steps=4, epochs=2, rate=0.1, decay=0.9, measured=None):
    """Top: the rows each update averages, one lane per contender (epochs split by a line); a
    short batch is labelled with its rows, a window across an epoch's end with its two parts, and
    rows left after the last update as waiting.
    Bottom: the learning rate rate * decay**step each update used (log scale).

    Args:
        measured: None, or a dict contender -> the learning rate each of its updates used in a
            real run (e.g. read by a callback), one per update of the rule; drawn as hollow
            markers over the rule's line, so a run that leaves the rule shows.
    Returns:
        a matplotlib Figure with 2 Axes sharing the x axis (rows seen).
    """
    for name, value in (("rate", rate), ("decay", decay)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
            raise ValueError(f"{name} must be a number > 0, got {value!r}")
    schedule = fit_schedule(rows, batch_size, accum_steps, epochs)
    measured = dict(measured or {})
    for name, rates in measured.items():
        if name not in schedule or len(rates) != len(schedule[name]):
            raise ValueError(f"measured: one rate per update of {CONTENDERS}, got {len(rates)} for {name!r}"
                             + (f" ({len(schedule[name])} updates)" if name in schedule else ""))
    fig, (lanes, lr) = plt.subplots(2, 1, figsize=(9.0, 4.6), sharex=True, layout="constrained",
                                    height_ratios=(1, 1.2))
    plt.close(fig)  # owned by the caller
    colors = dict(zip(CONTENDERS, ("black", "tab:blue", "tab:orange")))
    for lane, name in enumerate(CONTENDERS):
        spans = schedule[name]
        lanes.broken_barh([(lo, hi - lo) for lo, hi, _ in spans], (lane - 0.35, 0.7),
                          facecolors=[colors[name] if i % 2 else "white" for i in range(len(spans))],
                          edgecolor=colors[name])
        for lo, hi, _ in spans:  # name the short batches and the windows across an epoch's end
            cut = (lo // rows + 1) * rows
            label = f"{cut - lo} + {hi - cut}" if hi > cut else f"{hi - lo}" if hi - lo < batch_size else ""
            if label:  # a short batch's label sits left of its narrow bar, off the epoch line
                lanes.annotate(label, ((lo + hi) / 2 if "+" in label else lo, lane),
                               ha="center" if "+" in label else "right", va="center", fontsize="small",
                               color=colors[name], annotation_clip=False,
                               bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=colors[name], lw=0.8))
        ends = [hi for _, hi, _ in spans]
        if ends[-1] < epochs * rows:  # rows that reach no update: they wait in the accumulators
            lanes.annotate(f"{epochs * rows - ends[-1]} rows waiting", ((ends[-1] + epochs * rows) / 2, lane + 0.35),
                           (epochs * rows, lane + 0.62), ha="right", va="center", fontsize="small", color=colors[name],
                           arrowprops=dict(arrowstyle="-", color=colors[name], lw=0.8))
        lr.plot(ends, [rate * decay ** k for _, _, k in spans], "o-" if lane != 1 else "x--",
                color=colors[name], label=f"{name}: {len(spans)} updates"
                + (" (under AccumulatingModel's line)" if lane == 0 else ""))
        if name in measured:  # the run's rates, hollow, over the rule's line
            lr.plot(ends, [float(r) for r in measured[name]], "o", ms=9, mfc="none", color=colors[name],
                    label=f"{name}, measured")
    for ax in (lanes, lr):
        for e in range(1, epochs):
            ax.axvline(e * rows, color="grey", lw=1, ls=":")
    lanes.set_yticks(range(len(CONTENDERS)), CONTENDERS)
    lanes.set_ylim(len(CONTENDERS) - 0.2, -0.5)  # inverted, with room under the last lane for its waiting rows
    lanes.set_title(f"Each bar: the rows one update draws from, by the documented rule (Keras: the mean of its\n"
                    f"{accum_steps} micro-batch means, 1/{accum_steps} each; {epochs} epochs of {rows}, B = {batch_size}, "
                    f"Keras: {accum_steps} x {batch_size // accum_steps})",
                    fontsize="medium")
    lr.set_yscale("log")
    lr.set_ylabel("learning rate used")
    lr.set_xlabel("rows seen (the dotted line: a new epoch)")
    lr.legend(fontsize="small", frameon=False)
    lr.set_xlim(0, epochs * rows)
    return fig


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def plot_shard_weights(shards=(6, 5)):
    """The weight each row of one batch gets in its update: the large batch gives every row 1 / B
    (B = sum(shards)); an average of the replicas' shard means gives a row of shard r
    1 / (R * n_r), R = len(shards); the legend numbers the replicas r = 0, 1, ... as the course does.

    Args:
        shards: the rows each replica holds, e.g. (6, 5) for a batch of 11 on 2 replicas.

    Returns:
        a matplotlib Figure with 1 Axes: one bar per row, coloured by shard, and the 1 / B line.

    Lesson: notebooks/15-fit-across-replicas.ipynb
    """
    sizes = [_count("a shard's rows", n) for n in shards]
    total, replicas = sum(sizes), len(sizes)
    fig, ax = plt.subplots(figsize=(8.4, 2.6), layout="constrained")
    plt.close(fig)  # owned by the caller
    start = 0
    for r, n in enumerate(sizes):
        ax.bar(range(start, start + n), [1 / (replicas * n)] * n, width=0.8, color=f"C{r}",
               label=f"replica {r}: {n} rows, each 1/{replicas * n}")  # r = 0, 1, ... as in the course
        start += n
    ax.axhline(1 / total, color="black", ls="--", lw=1, label=f"the large batch: each 1/{total}")
    ax.set_xticks(range(total), [str(i + 1) for i in range(total)])
    ax.set_xlabel("row of the batch")
    ax.set_ylabel("weight in the update")
    ax.set_ylim(0, 1.15 / (replicas * min(sizes)))
    ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))  # off the bars and line
    ax.set_title("An average of shard means weighs the rows unequally", fontsize="medium")
    return fig
