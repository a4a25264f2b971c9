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


def plot_tower_copies(layer_compute_us, layer_copy_us):
    """One tower's backward pass and its gradient copies in microseconds: `plot_overlap` for a
    step far below a millisecond, its lower row named for the copies.

    The rule is `schedule`'s, every time in µs, each layer's gradient copy (to the variables'
    device, as in the classic tower recipe) in place of its all-reduce.

    Args:
        layer_compute_us: backward µs of each layer, in forward order.
        layer_copy_us: µs to copy each layer's gradient out, in forward order.
    Returns:
        (figure, (total without overlap, total with overlap)): as `plot_overlap`, totals in µs.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    fig, totals = plot_overlap(layer_compute_us, layer_copy_us)
    for ax in fig.axes:
        ax.set_title(ax.get_title().replace(" ms of backward + all-reduce", " µs of backward + gradient copies"))
        ax.set_yticks([0.5, 1.5], ["gradient copy", "backward"])
    fig.axes[-1].set_xlabel("µs")
    return fig, totals


def _check_int(name, value, least):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")


def plot_tower_step(batch_compute_ms, copy_ms, towers=2):
    """One update of the classic tower recipe against one device, on a compute row and a link row.

    One device runs the whole batch's forward and backward in C = `batch_compute_ms`. With
    R = `towers`, the towers run their 1/R of the batch at once, in C / R; then GPU 0's link takes
    the R - 1 other towers' gradients in and sends R - 1 copies of the new weights back, one at a
    time, `copy_ms` = m each (the update itself is left out):

        one device:  total = C
        R towers:    total = C / R + 2 (R - 1) m

    Args:
        batch_compute_ms: C, the whole batch's forward and backward on one device (ms).
        copy_ms: m, one gradient's (or one copy of the weights') transfer over GPU 0's link (ms).
        towers: R, 2 or more.
    Returns:
        (figure, (one device's total, the towers' total)) in ms: a Figure of 2 Axes on one ms
        axis, already closed in pyplot (a notebook cell ending with it shows it once).

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    c, m = _times("batch_compute_ms", [batch_compute_ms])[0], _times("copy_ms", [copy_ms])[0]
    _check_int("towers", towers, 2)
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7.0, 3.4), layout="constrained")
    plt.close(fig)
    t = c / towers + 2 * (towers - 1) * m
    wide = 0.15 * max(c, t)  # a bar this wide holds its label
    top.broken_barh([(0, c)], (1.1, 0.8), color="tab:blue", edgecolor="white")
    _label(top, "whole batch", 0, c, 1.5)
    top.set_title(f"one device: {c:.3g} ms")
    bottom.broken_barh([(0, c / towers)], (1.1, 0.8), color="tab:blue", edgecolor="white")
    if c / towers >= wide:
        _label(bottom, f"{towers} towers at once", 0, c / towers, 1.5)
    start = c / towers
    for name, color in (("gradients in", "tab:orange"), ("weights out", "tab:red")):
        bottom.broken_barh([(start + j * m, m) for j in range(towers - 1)], (0.1, 0.8), color=color,
                           edgecolor="white", label=f"{name} ({towers - 1} x {m:.3g} ms)")
        start += (towers - 1) * m
    bottom.legend(loc="upper right", fontsize="small")
    bottom.set_title(f"{towers} towers: {c / towers:.3g} + 2 x {towers - 1} x {m:.3g} = {t:.3g} ms")
    for ax in (top, bottom):
        ax.set_yticks([0.5, 1.5], ["GPU 0's link", "compute"])
        ax.set_ylim(0, 2)
    bottom.set_xlim(0, max(c, t) * 1.05)
    bottom.set_xlabel("ms")
    return fig, (c, t)


TOWER_LAYOUTS = ("GPU 0, copies after", "GPU 0, overlapped", "ring, copies after", "ring, overlapped")


def tower_layouts(batch_compute_ms, copy_ms, towers, buckets=4):
    """One update of R towers in four layouts: the bars of a compute row and a link row (an estimate).

    One device runs the whole batch in C = `batch_compute_ms`; the R = `towers` towers run their 1/R
    of it at once, in c = C / R: a forward pass of c / 3, then a backward pass of b = 2c / 3 (the
    backward costs about twice the forward: 4 of the 6 FLOPs per parameter and example). One gradient
    (or one copy of the weights) takes m = `copy_ms` on a link.

        GPU 0 holds the variables (the classic recipe): its link takes the R - 1 other towers'
        gradients in, V = (R - 1) m, then sends R - 1 copies of the new weights out, one at a time.
        ring all-reduce: every GPU sends and receives V = 2 (R - 1) / R m, all links at once.
        copies after: the link starts when the compute ends.
        overlapped: only the backward pass makes gradients. It makes them in K = `buckets` equal
        buckets; bucket j (0-based) is ready at c / 3 + (j + 1) b / K and goes out, V / K long, once
        ready and once the bucket before it has left. For equal buckets the last one ends at
        max(c / 3 + b / K + V, c + V / K): the link's total after the first bucket, or the compute
        and the last bucket. GPU 0's weights go out after its last gradient has come in.

        GPU 0, copies after:  c + 2 (R - 1) m
        GPU 0, overlapped:    max(c / 3 + b / K + V, c + V / K) + (R - 1) m,   V = (R - 1) m
        ring, copies after:   c + 2 (R - 1) / R m
        ring, overlapped:     max(c / 3 + b / K + V, c + V / K),             V = 2 (R - 1) / R m

    Args:
        batch_compute_ms: C (ms).  copy_ms: m (ms).  towers: R, 2 or more.
        buckets: K, the buckets the backward pass sends its gradients in when overlapped, 1 or more.
    Returns:
        dict layout (one of TOWER_LAYOUTS) -> dict `compute` and `link` (lists of (what, start, end);
        what is "forward", "backward", "gradient in", "weights out" or "all-reduce") and `total` (ms).

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    c, m = _times("batch_compute_ms", [batch_compute_ms])[0], _times("copy_ms", [copy_ms])[0]
    _check_int("towers", towers, 2)
    _check_int("buckets", buckets, 1)
    c, n, ring = c / towers, towers - 1, 2 * (towers - 1) / towers * m
    forward = c / 3
    compute = [("forward", 0.0, forward), ("backward", forward, c)]

    def sent_in_buckets(what, volume):  # bucket j leaves once ready and once the link is free
        bars, free = [], 0.0
        for j in range(buckets):
            start = max(forward + (j + 1) * (c - forward) / buckets, free)
            free = start + volume / buckets
            bars.append((what, start, free))
        return bars

    def after(what, volume, start):
        return [(what, start, start + volume)]

    layouts = {}
    for layout, gradients in ((TOWER_LAYOUTS[0], [("gradient in", c + j * m, c + (j + 1) * m) for j in range(n)]),
                              (TOWER_LAYOUTS[1], sent_in_buckets("gradient in", n * m))):
        end = gradients[-1][2]
        link = gradients + [("weights out", end + j * m, end + (j + 1) * m) for j in range(n)]
        layouts[layout] = dict(compute=list(compute), link=link, total=max(c, link[-1][2]))
    for layout, link in ((TOWER_LAYOUTS[2], after("all-reduce", ring, c)),
                         (TOWER_LAYOUTS[3], sent_in_buckets("all-reduce", ring))):
        layouts[layout] = dict(compute=list(compute), link=link, total=max(c, link[-1][2]))
    return layouts


def plot_tower_layouts(batch_compute_ms, links, towers=8, buckets=4):
    """Draw `tower_layouts` for every link: a column per link (each with its own ms axis), a panel
    per layout.

    Args:
        batch_compute_ms: C, as `tower_layouts`.
        links: dict link name -> m, the copy time of one gradient on that link (ms).
        towers: R, as `tower_layouts`.
        buckets: K, as `tower_layouts`.
    Returns:
        (figure, totals): a Figure (already closed in pyplot) and dict link -> dict layout -> total (ms).
    """
    if not links:
        raise ValueError("links must name at least one link and its copy time (ms)")
    drawn = {name: tower_layouts(batch_compute_ms, m, towers, buckets) for name, m in links.items()}
    colours = {"forward": "tab:cyan", "backward": "tab:blue", "gradient in": "tab:orange",
               "weights out": "tab:red", "all-reduce": "tab:green"}
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    from matplotlib.patches import Patch
    fig, axes = plt.subplots(len(TOWER_LAYOUTS), len(links), sharex="col", squeeze=False,
                             figsize=(4.2 * len(links) + 1.0, 5.6), layout="constrained")
    plt.close(fig)
    for col, (name, layouts) in enumerate(drawn.items()):
        for row, layout in enumerate(TOWER_LAYOUTS):
            ax, s = axes[row][col], layouts[layout]
            for y, bars in ((1.1, s["compute"]), (0.1, s["link"])):
                for what, start, end in bars:
                    ax.broken_barh([(start, end - start)], (y, 0.8), facecolor=colours[what],
                                   edgecolor="white", lw=0.5)
            ax.axvline(s["total"], color="black", lw=1, ls="--")
            ax.set_yticks([0.5, 1.5], ["GPU 0's link", "compute"])
            ax.set_ylim(0, 2)
            ax.set_title(("" if row else f"{name}\n") + f"{layout}: {s['total']:.3g} ms", fontsize="medium")
        axes[-1][col].set_xlabel("ms")
        axes[-1][col].set_xlim(0, max(s["total"] for s in layouts.values()) * 1.03)
    fig.legend(handles=[Patch(facecolor=c, label=w) for w, c in colours.items()], loc="outside lower center",
               ncols=len(colours), fontsize="small")
    fig.suptitle(f"one update on {towers} towers, {batch_compute_ms:.3g} ms of compute on one GPU, "
                 f"{buckets} buckets when overlapped (a prediction)", fontsize="medium")
    return fig, {name: {layout: s["total"] for layout, s in layouts.items()} for name, layouts in drawn.items()}


def _spaced_labels(k, min_decades=0.15, keep=()):
    """The k to label on a log axis, so that no two labels print on top of each other.

    Rule: the first and last k and those in `keep` are labelled first; then, from the left, each other k is
    labelled if it lies at least `min_decades` (log10) from every k already labelled. Neighbours such as 8,
    10, 11 and 12 (0.04 to 0.1 decades apart) thus keep one label, the one in `keep` if any.

    Args:
        k: the values ticked, increasing, all > 0.
        min_decades: the least distance, in decades, between two labelled values.
        keep: values that are always labelled (e.g. the least total's k).
    Returns:
        the set of k to label.
    """
    kept = {k[0], k[-1], *(v for v in keep if v in k)}
    for v in k:
        if v not in kept and all(abs(math.log10(v / u)) >= min_decades for u in kept):
            kept.add(v)
    return kept


def plot_bucket_sweep(tensors_per_bucket, totals_ms, tensors):
    """Draw an overlapped step's total (`schedule(...)["total"]`) against the tensors per bucket, log x,
    the least total marked and both ends labelled with their number of buckets, ceil(tensors / k).

    Args:
        tensors_per_bucket: k, the bucket sizes swept, increasing.
        totals_ms: the step's total at each k, ms.
        tensors: how many tensors the step sends (to count the buckets at each end).
    Returns:
        (figure, (k, total)): a Figure of one Axes, already closed in pyplot, and the least total with
        its k (the first k, if several tie).
    """
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    k, totals = [int(v) for v in tensors_per_bucket], _times("totals_ms", totals_ms)
    if len(k) != len(totals) or len(k) < 2 or any(b <= a for a, b in zip(k, k[1:])) or k[0] < 1:
        raise ValueError(f"one total per bucket size, at least two sizes, increasing from 1 on, got {k!r}")
    best = min(range(len(k)), key=totals.__getitem__)
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    plt.close(fig)
    ax.plot(k, totals, "o-", color="tab:blue")
    ax.plot([k[best]], [totals[best]], "*", ms=14, color="tab:red",
            label=f"least: {totals[best]:.1f} ms at {k[best]} per bucket")
    # the first label below its point; the last left of and below its point, clear of the top frame
    for i, ha, offset in ((0, "left", (0, -14)), (len(k) - 1, "right", (-8, -10))):
        buckets = -(-int(tensors) // k[i])
        ax.annotate(f"{buckets} bucket{'s' * (buckets > 1)}: {totals[i]:.1f} ms", (k[i], totals[i]),
                    textcoords="offset points", xytext=offset, ha=ha, va="center", fontsize="small")
    ax.set_xscale("log")
    labelled = _spaced_labels(k, keep=(k[best],))  # the least total's k always labelled
    ax.set_xticks(k, [str(v) if v in labelled else "" for v in k])  # a tick at every k, labelled when apart
    ax.set_xlabel("tensors per bucket (log scale)")
    ax.set_ylabel("backward + all-reduces, overlapped (ms)")
    ax.set_title("bucket size: latency against overlap")
    ax.legend(loc="upper left", fontsize="small")  # clear of the one-bucket label, upper right
    return fig, (k[best], totals[best])
