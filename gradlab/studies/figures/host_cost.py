"""Where a host-averaged update's time goes: `plot_host_timeline` draws one
host-averaged update on a device, a bus and a host, per micro-batch, one stage after another
against overlapped, with or without a limit on the gradients waiting between stages (`host_schedule`).

Lesson: notebooks/20-host-cost.ipynb
"""
from __future__ import annotations

import math
import numbers


def _check_times(rows):
    """A ValueError for no case, a case with no part, or a time that is not finite and >= 0."""
    if not rows or any(not costs for costs in rows.values()):
        raise ValueError("rows must hold at least one case, each with at least one part")
    for case, costs in rows.items():
        if any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in costs.values()):
            raise ValueError(f"{case!r}: every part must be a finite time >= 0, got {costs}")


def _peak_held(spans):
    """The most of `spans` ((start, end) pairs) open at once; one ending as another starts is not both."""
    events = sorted([(end, -1) for _, end in spans] + [(start, 1) for start, _ in spans])
    held = peak = 0
    for _, step in events:
        held += step
        peak = max(peak, held)
    return peak


def host_schedule(device_ms, copy_ms, sum_ms, micro_batches, overlap=True, buffers=None):
    """Start and end of every stage of one host-averaged update on three resources.

    Each of the N = `micro_batches` micro-batches passes three stages, each on its own resource,
    which does one thing at a time: the device computes its gradient (d = `device_ms`), the bus
    copies it out (c = `copy_ms`), the host adds it into a running sum (s = `sum_ms`). After the
    last sum the bus copies the mean back (c again).

        one after another:  each stage waits for the one before it, micro-batch after micro-batch
                            total = N (d + c + s) + c
        overlapped:         a stage of micro-batch i starts once the stage before it (of i) has
                            ended and its resource is free (the same stage of i - 1 has ended):
                            start = max(end of the stage before, end of the same stage of i - 1)
                            the copy back starts once the last sum has ended and the bus is free
        with k = `buffers`: also, micro-batch i computes once the copy out of i - k has ended, and
                            is copied out once the sum of i - k has ended (k buffers a side)
        with (k_d, k_h):    as k, but k_d buffers on the device (compute waits for copy out of
                            i - k_d) and k_h on the host (copy out waits for the sum of i - k_h)

    so overlapped, max(N d, N c, N s) + c <= total <= N (d + c + s) + c: the slowest stream sets the
    pace, and the first micro-batch's earlier stages and the copy back are never hidden.

    A gradient is held on the device from the start of its compute to the end of its copy out, on
    the host (beside the running sum) from the start of its copy out to the end of its sum.

    Args:
        device_ms, copy_ms, sum_ms: d, c, s, ms per micro-batch (finite, >= 0).
        micro_batches: N, an integer >= 1.
        overlap: overlapped (True) or one after another (False).
        buffers: k, an integer >= 1, the most gradients held on each side; a pair (k_d, k_h) of
            such integers, the device's and the host's; None: no limit.
    Returns:
        dict `device`, `bus`, `host` (each a list of (stage, start, end), stage one of "compute",
        "copy out", "sum", "copy back"), `total` (ms: the end of the copy back) and `held` (dict
        `device`, `host`: the most gradients held there at once).
    """
    _check_times({"one micro-batch": {"device_ms": device_ms, "copy_ms": copy_ms, "sum_ms": sum_ms}})
    d, c, s = float(device_ms), float(copy_ms), float(sum_ms)
    pair = buffers if isinstance(buffers, tuple) else (buffers, buffers)  # (device's k, host's k)
    if len(pair) != 2:
        raise ValueError(f"buffers must be None, an integer >= 1 or a pair of them, got {buffers!r}")
    checked = [("micro_batches", micro_batches)] + ([] if buffers is None else [("buffers", k) for k in pair])
    for name, value in checked:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1 (or, for buffers, a pair of them), got {value!r}")
    rows = {"device": [], "bus": [], "host": []}
    frees = {"device": "bus", "bus": "host", "host": None}  # whose stage frees this stage's buffer
    limit = {"device": pair[0], "bus": pair[1]}  # the device's buffers bound compute, the host's the copy out
    t = 0.0  # one after another: the end of the last stage
    for i in range(micro_batches):
        ready = 0.0  # overlapped: the end of this micro-batch's stage before
        for stage, row, ms in (("compute", "device", d), ("copy out", "bus", c), ("sum", "host", s)):
            start = t
            if overlap:
                start = max(ready, rows[row][-1][2] if i else 0.0)
                if buffers is not None and frees[row] and i >= limit[row]:
                    start = max(start, rows[frees[row]][i - limit[row]][2])
            rows[row].append((stage, start, start + ms))
            ready = start + ms
            t = max(t, ready)
    start = max(rows["host"][-1][2], rows["bus"][-1][2]) if overlap else t
    rows["bus"].append(("copy back", start, start + c))
    held = {"device": _peak_held([(a[1], b[2]) for a, b in zip(rows["device"], rows["bus"])]),
            "host": _peak_held([(a[1], b[2]) for a, b in zip(rows["bus"], rows["host"])])}
    return {**rows, "total": start + c, "held": held}


def _panel_name(overlap, buffers):
    """A timeline panel's name: its schedule and buffers (as `host_schedule`'s arguments)."""
    plural = lambda k: f"{k} buffer{'s' if k > 1 else ''}"  # noqa: E731
    if not overlap:
        return "one after another"
    if buffers is None:
        return "overlapped, no limit"
    if isinstance(buffers, tuple):
        return f"overlapped, {plural(buffers[0])} on the device, {buffers[1]} on the host"
    return f"overlapped, {plural(buffers)} a side"


def _gradients(k):
    return f"{k} gradient" + ("" if k == 1 else "s")


def _rounded(ms, digits):
    """`ms` to `digits` significant digits, with thousands separators, and never fewer than the units:
    81.3, 160, 574, 8,314 at 3 digits."""
    if ms == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(ms))))
    return f"{round(ms, decimals):,.{decimals}f}"


def plot_host_timeline(device_ms, copy_ms, sum_ms, micro_batches, measured=("sum",), buffers=(None,),
                       min_width=0.005, serial=True, card_ms=None, total_in_legend=False, digits=None):
    """Draw `host_schedule` on one ms axis: one after another on top, then overlapped, once per entry
    of `buffers` (None: no limit on what waits between stages; k: k buffers a side).

    Each panel has three rows (device, bus, host); every stage of every micro-batch is one bar,
    coloured by stage and hatched when its time was measured on this machine (`measured`). A bar
    shorter than `min_width` of the axis is drawn `min_width` wide from its start, so a stage far
    shorter than the update (the device's, on a large model) stays visible; each title says how long
    the device is busy (ms) and the most gradient buffers held at once on the device and on the host,
    where the running total is held besides. `card_ms`, if given, marks in every panel the time the
    same update takes accumulating on the device (a dotted purple line, named in the legend).

    To compare hosts, `sum_ms` may be a dict {name: ms}: the figure then draws the schedules above
    once per host, top to bottom, each title led by the host's name, each panel on its own ms axis.

    Args:
        device_ms, copy_ms, micro_batches: as `host_schedule`.
        sum_ms: s, as `host_schedule`, or a dict {a host's name: its s}.
        measured: the stages ("compute", "copy out", "sum", "copy back") timed here, not predicted.
        buffers: one overlapped panel per entry, None, an integer >= 1 or a pair (as `host_schedule`).
        min_width: the narrowest bar drawn, a fraction of the longest total on its axis (0: true widths).
        serial: draw the one-after-another panel (False: only the overlapped ones).
        card_ms: the update's time accumulating on the device, ms, drawn for comparison (None: no line).
        total_in_legend: name each panel's dashed black line (its update's end) in the legend.
        digits: the significant digits of every time the titles and legend print, never fewer than the
            units (3: 81.3, 574, 8,314 ms); None: one decimal in the titles, two in the legend.
    Returns:
        (figure, totals): a Figure of (serial + len(buffers)) Axes per host, already closed in pyplot
        (a notebook cell ending with it shows it once), and each panel's total in ms, top to bottom.
    """
    hosts = dict(sum_ms) if isinstance(sum_ms, dict) else {None: sum_ms}
    panels = [(host, s_ms, overlap, b) for host, s_ms in hosts.items()
              for overlap, b in [(False, None)] * bool(serial) + [(True, b) for b in buffers]]
    if not panels:
        raise ValueError("nothing to draw: serial is False and buffers is empty")
    schedules = [host_schedule(device_ms, copy_ms, s_ms, micro_batches, overlap, b)
                 for _, s_ms, overlap, b in panels]
    if digits is not None and (not isinstance(digits, numbers.Integral) or digits < 1):
        raise ValueError(f"digits must be an integer >= 1 or None, got {digits!r}")
    legend_ms = (lambda ms: f"{ms:.2f}") if digits is None else (lambda ms: _rounded(ms, digits))  # noqa: E731
    title_ms = (lambda ms: f"{ms:,.1f}") if digits is None else (lambda ms: _rounded(ms, digits))  # noqa: E731
    sums = " or ".join(legend_ms(s_ms) for s_ms in hosts.values())
    stages = {"compute": ("tab:blue", f"device's work, {micro_batches} x {legend_ms(device_ms)} ms"),
              "copy out": ("tab:orange", f"copy out, {micro_batches} x {legend_ms(copy_ms)} ms"),
              "sum": ("tab:green", f"host's sum, {micro_batches} x {sums} ms"),
              "copy back": ("tab:red", f"copy back, {legend_ms(copy_ms)} ms")}
    if card_ms is not None and (not isinstance(card_ms, (int, float)) or not math.isfinite(card_ms)
                                or card_ms < 0):
        raise ValueError(f"card_ms must be a finite time >= 0, got {card_ms!r}")
    if set(measured) - set(stages):
        raise ValueError(f"measured must name stages of {list(stages)}, got {list(measured)}")
    import matplotlib.pyplot as plt  # pyplot: a notebook's inline backend then shows the figure
    shared = len(hosts) == 1  # one host: one ms axis; several: one axis a panel
    fig, axes = plt.subplots(len(panels), 1, sharex=shared, figsize=(8.0, 0.6 + 1.6 * len(panels)),
                             layout="constrained", squeeze=False)
    axes = axes[:, 0]
    plt.close(fig)
    totals = tuple(s["total"] for s in schedules)
    # one shared axis: every panel spans the longest total; one axis a panel: each its own
    spans = [max(totals)] * len(totals) if shared else list(totals)
    if card_ms is not None:  # the card's line stays inside every axis
        spans = [max(span, card_ms) for span in spans]
    for ax, (host, _, overlap, b), s, span in zip(axes, panels, schedules, spans):
        narrowest = min_width * span  # ms
        for y, row in enumerate(("host", "bus", "device")):
            for stage, start, end in s[row]:
                colour = stages[stage][0]
                ax.broken_barh([(start, max(end - start, narrowest))], (y + 0.1, 0.8), facecolor=colour,
                               edgecolor="white",
                               hatch="//" if stage in measured else None, lw=0.5)  # back-to-back blocks stay apart
        busy = sum(end - start for _, start, end in s["device"])
        ax.set_yticks([0.5, 1.5, 2.5], ["host", "bus", "device"])
        ax.set_ylim(0, 3)
        ax.axvline(s["total"], color="black", lw=1, ls="--")
        if card_ms is not None:
            ax.axvline(card_ms, color="tab:purple", lw=1.5, ls=":")
        name = _panel_name(overlap, b) if host is None else f"{host}, {_panel_name(overlap, b)}"
        ax.set_title(f"{name}: {title_ms(s['total'])} ms, the device busy {title_ms(busy)} ms\nat most "
                     f"{_gradients(s['held']['device'])} on the device, "
                     f"{_gradients(s['held']['host'])} + the running total on the host", fontsize="medium")
    for ax, span in zip(axes, spans):  # with a shared axis, each sets the same limits
        ax.set_xlim(0, span * 1.03)
    axes[-1].set_xlabel("ms")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=colour, edgecolor="white", hatch="//" if stage in measured else None)
               for stage, (colour, _) in stages.items()]
    labels = [label + (" (measured here)" if stage in measured else "") for stage, (_, label) in stages.items()]
    if total_in_legend:
        handles.append(Line2D([], [], color="black", lw=1, ls="--"))
        labels.append("the update's end, in each panel")
    if card_ms is not None:
        handles.append(Line2D([], [], color="tab:purple", lw=1.5, ls=":"))
        labels.append(f"accumulating on the device instead: {card_ms:,.0f} ms")
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8)
    return fig, totals
