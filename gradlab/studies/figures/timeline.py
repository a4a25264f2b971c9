"""One update's backward pass and its all-reduces on a timeline, with and without overlap.

The backward pass runs the layers last to first: layer l (of L, forward order) computes its
gradient in c_l ms, and all-reducing that gradient takes m_l ms. Gradients are sent in
buckets of `bucket_layers` consecutive layers (in backward order), one at a time on the link,
and every bucket pays a fixed start-up cost `latency_ms` (alpha) once, however many layers it holds:

    comm of bucket j = latency_ms + sum_(l in j) m_l

    without overlap:  every all-reduce waits for the whole backward pass
                      total = sum_l c_l + sum_j comm_j
    with overlap:     bucket j is sent once its last layer's gradient exists and the link
                      is free:
                      ready_j = end of bucket j's compute
                      start_j = max(ready_j, end_(j-1)),   end_j = start_j + comm_j
                      total   = end of the last bucket      (the critical path)

so sum_l c_l + (the last bucket's comm) <= total (overlapped) <= sum_l c_l + sum_j comm_j:
overlap hides all communication but the last bucket's (it holds layer 0, computed last) as
long as the link keeps up with the compute; one bucket of every layer is no overlap at all.
Bucketing trades the two: small buckets overlap more but pay alpha more often.

Lesson: notebooks/14-communication.ipynb
"""
from __future__ import annotations

import math
import numbers

from matplotlib.figure import Figure


def schedule(layer_compute_ms, layer_comm_ms, overlap=True, bucket_layers=1, latency_ms=0.0):
    """Start and end of every backward computation and all-reduce (the module's rule).

    Args:
        layer_compute_ms: c_l, backward milliseconds of each layer, in forward order.
        layer_comm_ms: m_l, all-reduce milliseconds of each layer's gradient, in forward order.
        overlap: send each bucket as soon as it is ready (True), or after the backward pass.
        bucket_layers: layers per bucket, counted in backward order (the last one may be short).
        latency_ms: alpha, the fixed cost of starting one bucket's all-reduce (ms, >= 0).
    Returns:
        dict `compute` (list of (layer, start, end) in backward order), `comm` (list of
        (layers, start, end), one per bucket, `layers` a tuple in backward order) and `total`
        (ms: the end of the last of them).
    """
    c, m = _times("layer_compute_ms", layer_compute_ms), _times("layer_comm_ms", layer_comm_ms)
    if len(c) != len(m):
        raise ValueError(f"one compute and one comm time per layer: {len(c)} compute, {len(m)} comm")
    if isinstance(bucket_layers, bool) or not isinstance(bucket_layers, numbers.Integral) or bucket_layers < 1:
        raise ValueError(f"bucket_layers must be an integer >= 1, got {bucket_layers!r}")
    latency = _times("latency_ms", [latency_ms])[0]
    order = list(range(len(c)))[::-1]  # backward: the last layer first
    compute, t = [], 0.0
    for layer in order:
        compute.append((layer, t, t + c[layer]))
        t += c[layer]
    backward_end = t
    ends = {layer: end for layer, _, end in compute}
    comm, link_free = [], 0.0
    for k in range(0, len(order), bucket_layers):
        layers = tuple(order[k:k + bucket_layers])
        ready = ends[layers[-1]] if overlap else backward_end
        start = max(ready, link_free)
        link_free = start + latency + sum(m[layer] for layer in layers)
        comm.append((layers, start, link_free))
    return dict(compute=compute, comm=comm, total=max(backward_end, link_free))


def plot_timeline(layer_compute_ms, layer_comm_ms, overlap=True, bucket_layers=1, ax=None, latency_ms=0.0):
    """Draw `schedule(...)`: backward compute on one row, all-reduces on the row below.

    Args:
        layer_compute_ms, layer_comm_ms, overlap, bucket_layers, latency_ms: as `schedule`.
        ax: an Axes to draw on (e.g. one of two, to show both schedules); None: a new figure.
    Returns:
        (figure, total): the matplotlib Figure (not registered with pyplot) and the step's
        total time in ms, as `schedule` computes it.
    """
    s = schedule(layer_compute_ms, layer_comm_ms, overlap, bucket_layers, latency_ms)
    if ax is None:
        fig = Figure(figsize=(7.0, 2.2), layout="constrained")
        ax, right = fig.subplots(), 0.0
    else:  # an axis shared with a longer schedule's keeps its reach
        fig, right = ax.figure, ax.get_xlim()[1] if len(ax.get_shared_x_axes().get_siblings(ax)) > 1 else 0.0
    _draw_schedule(ax, s)
    ax.axvline(s["total"], color="black", lw=1, ls="--")
    ax.set_yticks([0.5, 1.5], ["all-reduce", "backward"])
    ax.set_ylim(0, 2)
    ax.set_xlim(0, max(right, s["total"] * 1.05) or 1)
    ax.set_xlabel("ms")
    ax.set_title(f"{'with' if overlap else 'without'} overlap: {s['total']:.3g} ms of backward + all-reduce"
                 + (f" (buckets of {bucket_layers} layers)" if bucket_layers > 1 else ""))
    return fig, s["total"]


def plot_overlap(layer_compute_ms, layer_comm_ms, bucket_layers=1, latency_ms=0.0):
    """Both schedules on one ms axis: without overlap above, with overlap below (`schedule`'s rule).

    Args:
        layer_compute_ms, layer_comm_ms, bucket_layers, latency_ms: as `schedule`.
    Returns:
        (figure, (total without overlap, total with overlap)): a Figure of 2 Axes, already
        closed in pyplot (a notebook cell ending with it shows it once), and the two totals in ms.
    """
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7.0, 3.8), layout="constrained")
    plt.close(fig)
    _, without = plot_timeline(layer_compute_ms, layer_comm_ms, False, bucket_layers, top, latency_ms)
    _, with_overlap = plot_timeline(layer_compute_ms, layer_comm_ms, True, bucket_layers, bottom, latency_ms)
    top.set_xlabel("")
    return fig, (without, with_overlap)


def plot_micro_batches(forward_ms, layer_compute_ms, layer_comm_ms, ax, sends=(True,)):
    """Micro-batches one after another on `ax`: each a forward pass of `forward_ms`, then
    `schedule(layer_compute_ms, layer_comm_ms)`'s overlapped backward blocks and, where its
    entry of `sends` is True, their all-reduces (False: it defers them to a later micro-batch).
    A micro-batch starts when the one before it ends, all-reduces included (each waits).

    Returns:
        the end of the last micro-batch, ms.
    """
    start = 0.0
    for send in sends:
        ax.broken_barh([(start, forward_ms)], (1.1, 0.8), color="tab:cyan", edgecolor="white")
        s = schedule(layer_compute_ms, layer_comm_ms if send else [0.0] * len(layer_comm_ms), overlap=True)
        _draw_schedule(ax, s if send else dict(s, comm=[]), start + forward_ms, labels=False)
        start += forward_ms + s["total"]
    return start


def plot_three_ways(forward_ms, layer_compute_ms, layer_comm_ms, micro_batches=8):
    """One update of `micro_batches` micro-batches, three ways, one row each: an all-reduce per
    micro-batch that the next waits for ("blocking"); an all-reduce per micro-batch queued on the
    link while the next computes ("not blocking"); one all-reduce, deferred to the last
    micro-batch ("deferred"). A micro-batch is a forward pass of `forward_ms`, then the backward
    blocks `layer_compute_ms` with their all-reduces `layer_comm_ms` overlapped (`schedule`).

    Returns:
        (figure, dict of ms: each row's end of the update, keyed "blocking", "not blocking",
        "deferred").
    """
    from matplotlib.patches import Patch

    c, m = _times("layer_compute_ms", layer_compute_ms), _times("layer_comm_ms", layer_comm_ms)
    n, k = micro_batches, len(c)
    shown = schedule(c, m, overlap=True)["total"] - sum(c)  # the all-reduce left after the backward pass
    fig = Figure(figsize=(7.0, 4.6), layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    ends = {"blocking": plot_micro_batches(forward_ms, c, m, axes[0], sends=(True,) * n)}
    chained = schedule((c + [forward_ms]) * n, (m + [0.0]) * n)  # a micro-batch's blocks, its forward pass last
    for layer, a, b in chained["compute"]:  # entries k, 2k + 1, ... of the lists are the forward passes
        color = "tab:cyan" if layer % (k + 1) == k else "tab:blue"
        axes[1].broken_barh([(a, b - a)], (1.1, 0.8), color=color, edgecolor="white")
    for _, a, b in chained["comm"]:
        axes[1].broken_barh([(a, b - a)], (0.1, 0.8), color="tab:orange", edgecolor="white")
    ends["not blocking"] = chained["total"]
    ends["deferred"] = plot_micro_batches(forward_ms, c, m, axes[2], sends=(False,) * (n - 1) + (True,))
    names = (f"per micro-batch, blocking (gaps of {shown:.1f} ms)", "per micro-batch, not blocking",
             "one, deferred to the last micro-batch")
    for ax, (key, total), name in zip(axes, ends.items(), names):
        ax.axvline(total, color="black", lw=1, ls="--")
        ax.set(yticks=[0.5, 1.5], yticklabels=["all-reduce", "compute"], ylim=(0, 2),
               title=f"N = {n}, {name}: update {total:.1f} ms")
    axes[2].set_xlabel("ms")
    fig.legend(handles=[Patch(color=col, label=w) for w, col in (("forward", "tab:cyan"), ("backward block", "tab:blue"),
               ("all-reduce", "tab:orange"))], loc="outside lower center", ncols=3, fontsize="small")
    return fig, ends


def _draw_schedule(ax, s, offset=0.0, labels=True):
    for layer, start, end in s["compute"]:
        ax.broken_barh([(offset + start, end - start)], (1.1, 0.8), color="tab:blue", edgecolor="white")
        if labels:
            _label(ax, f"{layer}", offset + start, offset + end, 1.5)
    for layers, start, end in s["comm"]:
        ax.broken_barh([(offset + start, end - start)], (0.1, 0.8), color="tab:orange", edgecolor="white")
        if labels:
            _label(ax, ",".join(map(str, layers)), offset + start, offset + end, 0.5)


def _label(ax, text, start, end, y):
    if end > start:
        ax.text((start + end) / 2, y, text, ha="center", va="center", fontsize="small", color="white")


def _times(name, values):
    try:
        values = [float(v) for v in values]
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of numbers (ms per layer), got {values!r}") from None
    if not values or any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError(f"{name} must be one finite time >= 0 per layer, at least one, got {values!r}")
    return values


