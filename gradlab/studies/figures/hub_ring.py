"""A hub's busiest link against a ring's, per update, beside one tower's compute.

    hub, ring:  per update each way, a hub's link carries (R - 1) G bytes, a ring device's 2 (R - 1) / R G

Lesson: notebooks/02-tower-averaging.ipynb
"""
from __future__ import annotations

import numpy as np

from ..distributed.comm_cost import ring_bytes
from ._draw import figure


def plot_hub_vs_ring(copy_bytes, link_bytes_per_s, compute_ms, towers=range(2, 9),
                     compute_label="one tower's compute, at peak"):
    """Microseconds per update on the busiest link against the number of towers R.

        hub:   R - 1 copies out (the weights), then R - 1 back (the gradients)   t = 2 (R - 1) G / beta
        ring:  each device sends 2 (R - 1) / R copies while it receives as many   t = 2 (R - 1) / R * G / beta

    The hub's two phases come one after the other in an update (weights before the forward pass, gradients after
    the backward), so their times add; a ring's sends and receives run at once on a full-duplex link.

    (bandwidth only; lesson 14 adds each step's latency), beside one tower's compute as a flat line.

    Args:
        copy_bytes: G, the bytes of one copy of the weights or of a gradient (positive).
        link_bytes_per_s: beta, each link's bandwidth one way (positive).
        compute_ms: one tower's compute per update, ms (positive).
        towers: the values of R to draw (integers >= 2).
        compute_label: the legend's words for the flat compute line.
    Returns:
        a matplotlib Figure with 1 Axes, log-scaled in y, in µs.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    for name, value in (("copy_bytes", copy_bytes), ("link_bytes_per_s", link_bytes_per_s),
                        ("compute_ms", compute_ms)):
        if isinstance(value, bool) or not np.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    R = np.array([int(r) for r in towers])
    if R.size == 0 or R.min() < 2:
        raise ValueError(f"towers needs integers >= 2, got {list(towers)}")
    one_copy_us = copy_bytes / link_bytes_per_s * 1e6
    fig, ax = figure((6.4, 3.4))
    ax.plot(R, 2 * (R - 1) * one_copy_us, "o-", label="hub: R - 1 copies out, then R - 1 back")
    ring_us = [ring_bytes(copy_bytes, r) / link_bytes_per_s * 1e6 for r in R]  # 14's ring, bandwidth only
    ax.plot(R, ring_us, "s-", label="ring: each device's link, 2 (R - 1) / R copies, both ways at once")
    ax.axhline(compute_ms * 1e3, color="gray", linestyle="--", label=compute_label)
    ax.set(yscale="log", xlabel="R (towers)", ylabel="µs per update")
    ax.set_title(f"Copies vs compute per update: G = {copy_bytes / 2**20:.2f} MiB at "
                 f"{link_bytes_per_s / 1e9:.0f} GB/s", fontsize="medium")
    ax.legend(fontsize="small")
    return fig
