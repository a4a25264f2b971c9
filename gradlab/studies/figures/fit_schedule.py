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

recorded_updates and plot_recorded_updates draw the same lanes from a recorded run instead of
the rule: each micro-batch's rows and the optimizer's `iterations` after it (a callback reads it).

Lesson: notebooks/10-accumulation-in-fit.ipynb; plot_shard_weights: notebooks/15-fit-across-replicas.ipynb;
plot_recorded_updates: notebooks/06-keras-accumulation.ipynb
"""
from __future__ import annotations

import numbers

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba

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


def recorded_updates(epoch_rows, iterations, rows):
    """The rows each update of a recorded `fit` averaged, read from the run, not from a rule.

    Args:
        epoch_rows: per epoch, each micro-batch's rows in the order `fit` took them, e.g.
            [[16] * 16 + [6]] * 2 for 262 rows at `batch_size=16`, 2 epochs.
        iterations: a fresh optimizer's `iterations` after each micro-batch, all epochs in
            order (a callback reads it); it rises by 1 on a micro-batch that applies an update.
        rows: examples per epoch. Epoch e's row r is drawn at e * rows + r, so rows that a
            dropped remainder never reaches leave a gap before the next epoch.
    Returns:
        (updates, waiting): one (first, end, parts) per update, rows [first, end) and `parts`
        the rows it took from each epoch it touched, e.g. (6, 48); `waiting`, the same triple
        for the micro-batches taken after the last update (they stay in the accumulators),
        or None.
    """
    rows = _count("rows", rows)
    micro = [(e * rows + sum(sizes[:i]), _count("a micro-batch's rows", n), e)
             for e, sizes in enumerate(epoch_rows) for i, n in enumerate(sizes)]
    iterations = [int(k) for k in iterations]
    if len(iterations) != len(micro) or not micro:
        raise ValueError(f"iterations: one per micro-batch, got {len(iterations)} for {len(micro)} micro-batches")
    if any(sum(sizes) > rows for sizes in epoch_rows):
        raise ValueError(f"an epoch takes at most rows = {rows} rows, got {[sum(sizes) for sizes in epoch_rows]}")
    updates, window, before = [], [], 0
    for (start, n, epoch), after in zip(micro, iterations):
        if after not in (before, before + 1):
            raise ValueError(f"iterations must start at 0 or 1 and rise by 0 or 1 a micro-batch, got {iterations}")
        window.append((start, n, epoch))
        if after == before + 1:  # this micro-batch applied an update: it averaged the window
            updates.append(_span(window))
            window = []
        before = after
    return updates, (_span(window) if window else None)


def _span(window):
    parts = {}
    for _, n, epoch in window:
        parts[epoch] = parts.get(epoch, 0) + n
    return window[0][0], window[-1][0] + window[-1][1], tuple(parts.values())


def plot_recorded_updates(runs, rows):
    """One lane per recorded run: a bar per update over the rows it averaged (light and dark in
    turn; a dotted line at each new epoch). A bar across an epoch's end is labelled with its
    parts ("6 + 48"), a bar shorter than the lane's longest with its rows, rows taken after
    the last update as waiting, and an epoch's rows that no micro-batch took (a dropped remainder) as dropped.

    Args:
        runs: dict name -> (epoch_rows, iterations), as `recorded_updates` takes them.
        rows: examples per epoch.
    Returns:
        a matplotlib Figure with 1 Axes, x: rows seen, counted across epochs.
    """
    lanes = {name: recorded_updates(*run, rows) for name, run in runs.items()}
    if not lanes:
        raise ValueError("runs: at least one recorded run")
    epochs = max(len(run[0]) for run in runs.values())
    fig, ax = plt.subplots(figsize=(9.0, 1.0 + 0.75 * len(lanes)), layout="constrained")
    plt.close(fig)  # owned by the caller
    for lane, (name, (updates, waiting)) in enumerate(lanes.items()):
        color, longest = f"C{lane}", max((hi - lo for lo, hi, _ in updates), default=0)
        ax.broken_barh([(lo, hi - lo) for lo, hi, _ in updates], (lane - 0.3, 0.6), edgecolor=color,
                       facecolors=[to_rgba(color, 1.0 if i % 2 else 0.3) for i in range(len(updates))])
        for lo, hi, parts in updates:
            label = " + ".join(map(str, parts)) if len(parts) > 1 else str(hi - lo) if hi - lo < longest else ""
            if label:
                ax.annotate(label, ((lo + hi) / 2, lane), ha="center", va="center", fontsize="small",
                            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=color, lw=0.8))
        if waiting:
            lo, hi, parts = waiting
            ax.broken_barh([(lo, hi - lo)], (lane - 0.3, 0.6), facecolors="none", edgecolor=color, hatch="///")
            ax.annotate(f"{sum(parts)} rows waiting", (hi, lane + 0.34), ha="right", va="top", fontsize="small")
        spans = updates + ([waiting] if waiting else [])
        for e in range(len(runs[name][0])):  # an epoch's rows that no update or waiting micro-batch took: dropped
            reached = max((hi for lo, hi, _ in spans if lo < (e + 1) * rows), default=e * rows)
            if e * rows <= reached < (e + 1) * rows:
                ax.annotate(f"{(e + 1) * rows - reached} rows dropped", ((e + 1) * rows, lane + 0.34), ha="right",
                            va="top", fontsize="small")
        ax.annotate(f"{name}: {len(updates)} updates", (0, lane - 0.34), ha="left", va="bottom", fontsize="small")
    for e in range(1, epochs):
        ax.axvline(e * rows, color="grey", lw=1, ls=":")
    ax.set_yticks([])
    ax.set_ylim(len(lanes) - 0.35, -0.8)  # inverted: the first run on top, room for the labels
    ax.set_xlim(0, epochs * rows)
    ax.set_xlabel("rows seen, counted across epochs (the dotted line: a new epoch)")
    ax.set_title("Each bar: the rows one update averaged, as the run recorded them (hatched: waiting; a gap: dropped)",
                 fontsize="medium")
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
