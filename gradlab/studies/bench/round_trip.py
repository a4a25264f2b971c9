"""Time a host-averaged update against an in-graph one, part by part (lesson 20's round trip).

    ms, parts = round_trip_ms(fetch, mean, apply, in_graph_step, grads_fn, x, y, accum_steps)

Ten calls run in interleaved rounds (`interleaved_ms`), so a slow moment of a shared machine
falls on all of them alike:

    host_step            apply(mean(*fetch(x, y, N)))       the whole host-averaged update
    in-graph step        in_graph_step(x, y, N)             the whole in-graph update
    in-graph loop        in_graph_step(x, y, N, apply=False)
    N graph calls        grads_fn on each micro-batch, each loss fetched
    fetch                fetch(x, y, N)                     the graph calls and the copies out
    fetch + mean         mean(*fetch(x, y, N))              no apply
    apply fed numpy      apply(a numpy mean)                numpy into the call, and the apply
    apply fed tensors    apply(the same mean as tensors)    the apply alone
    tf.constant          [tf.constant(g) for g in mean]     the mean to tensors (a copy; small: per-call cost)
    empty call           a compiled call that does nothing

`round_trip_parts` reads each part of an update as one call's median, or as the median over
rounds of one call's time less another's (`fetch` less the graph calls: the copies out), floored
at 0. Medians of differences need not add up to the median of a total. A call fed numpy pays more
than converting the mean to tensors: `tf.function` converts each array and matches its signature, so that excess
("numpy into the call": fed numpy less fed tensors, less the `tf.constant` copies) is call overhead,
not bytes moved.

Lesson: notebooks/20-host-cost.ipynb
"""
from __future__ import annotations

import numpy as np
import tensorflow as tf

from .interleaved import interleaved_ms


def round_trip_ms(fetch, mean, apply, in_graph_step, grads_fn, x, y, accum_steps, rounds=20):
    """Time the ten calls above in `rounds` interleaved rounds.

    Args: fetch(x, y, N) -> (fetched, counts); mean(fetched, counts) -> list of numpy arrays;
        apply(list of arrays or tensors), one compiled call; in_graph_step(x, y, N, apply=True);
        grads_fn(x_i, y_i) -> (loss, gradients), one graph call; x, y: one batch; accum_steps: N.
    Returns: (ms, parts): ms, dict name -> array of `rounds` milliseconds; parts, as
        `round_trip_parts(ms, accum_steps)`.
    """
    micro = list(zip(np.array_split(x, accum_steps), np.array_split(y, accum_steps)))
    mean_np = mean(*fetch(x, y, accum_steps))  # one mean, to time the applies alone
    mean_tf = [tf.constant(g) for g in mean_np]  # the same mean, already copied back
    empty_call = tf.function(lambda: tf.constant(0.0))
    runs = {"host_step": lambda: apply(mean(*fetch(x, y, accum_steps))),
            "in-graph step": lambda: in_graph_step(x, y, accum_steps),
            "in-graph loop": lambda: in_graph_step(x, y, accum_steps, apply=False),
            f"{accum_steps} graph calls": lambda: [grads_fn(a, b)[0].numpy() for a, b in micro],
            "fetch": lambda: fetch(x, y, accum_steps),
            "fetch + mean": lambda: mean(*fetch(x, y, accum_steps)),
            "apply fed numpy": lambda: apply(mean_np),
            "apply fed tensors": lambda: apply(mean_tf),
            "empty call": empty_call,
            "tf.constant": lambda: [tf.constant(g) for g in mean_np]}
    ms = interleaved_ms(runs, rounds)
    return ms, round_trip_parts(ms, accum_steps)


def round_trip_parts(ms, accum_steps):
    """Each step's parts in ms: {"in-graph step": {...}, "host_step": {...}}."""
    calls = f"{accum_steps} graph calls"

    def med(a):
        return float(np.median(ms[a]))

    def over(a, b):  # a's time over b's in each round: the median, floored at 0
        return max(0.0, float(np.median(np.asarray(ms[a]) - np.asarray(ms[b]))))

    return {"in-graph step": {"your one call: the loop": med("in-graph loop"),
                              "apply": over("in-graph step", "in-graph loop")},
            "host_step": {calls: med(calls),
                          "copies out": over("fetch", calls),
                          "numpy's mean": over("fetch + mean", "fetch"),
                          "mean to tensors": med("tf.constant"),
                          "numpy into the call": max(0.0, over("apply fed numpy", "apply fed tensors")
                                                     - med("tf.constant")),
                          "second call": med("empty call"),  # the apply's own call
                          "apply": over("apply fed tensors", "empty call")}}
