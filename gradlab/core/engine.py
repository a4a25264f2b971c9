"""One update from one batch, the same for `step(x, y)` and for `AccumulatingModel.fit`.

    batch -> split_sizes(B, accum_steps) -> (S_i, D_i) and dS_i per micro-batch
          -> summed where the batch runs (one device, towers, tf.distribute replicas)
          -> one all-reduce of the sums (replicas)
          -> guard (the contract held? finite?) -> w <- opt(w, G / D), once

    S = S_1 + ... + S_k,   G = dS_1 + ... + dS_k,   D = D_1 + ... + D_k

`S_i` is micro-batch i's unnormalised loss and `D_i` what its mean divides by
(`normaliser`). Sums add up in any order and over any split, so micro-batches, towers and
replicas all give the large-batch update; the division happens once. `update` is that
composition, for every strategy of both faces (`strategy.Strategy`, `fit.AccumulatingModel`):
they supply a `Task` (`micro(part) -> (S_i, D_i)` and what to update) and two small objects,
where the sum lives (`homes`: loop-carried tensors, variables, numpy, Keras's optimizer) and
where the batch runs (`places`: one device, towers, replicas).

Lesson: notebooks/04-accumulating-in-variables.ipynb, notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from .accumulate import batch_rows
from .apply import APPLIED, CONTRACT_BROKEN, GRADS_NOT_FINITE, LOSS_NOT_FINITE
from .apply import apply_once, apply_replicated, status_of
from .homes import Loop
from .places import ONE, reduce_replicas


class Task(NamedTuple):
    """What one update does, fixed while a face's trace lives.

    micro: `micro(part) -> (S_i, D_i)` of one micro-batch `part` (a nest like the batch's
        parts), or `(S_i, D_i, holds)` with the contract's check of its loss (`contract`).
    variables, optimizer: what to update, and how.
    accum_steps: micro-batches per update (per tower or per replica).
    clip_norm: clip the global norm of the update (not of each micro-batch).
    guard: apply only when every micro-batch's contract check held and the loss and every
        gradient are finite (a tf.cond; a skipped update changes no weight, slot or counter).
        False with a LossScaleOptimizer, which skips and lowers its scale itself (then a
        broken contract is skipped by a guard of its own).
    after: runs with the update (BatchNorm statistics of the whole batch, once).
    on_skip: `on_skip(status)` runs when the guard skips the update.
    """
    micro: Callable
    variables: list
    optimizer: object
    accum_steps: int
    clip_norm: Optional[float] = None
    guard: bool = True
    after: Optional[Callable] = None
    on_skip: Optional[Callable] = None


LOOP = Loop()
__all__ = ["Task", "LOOP", "ONE", "update", "apply_once", "apply_replicated", "status_of",
           "reduce_replicas", "APPLIED", "LOSS_NOT_FINITE", "GRADS_NOT_FINITE", "CONTRACT_BROKEN"]


def update(task, parts, home=LOOP, place=ONE):
    """`w <- optimizer(w, G / D)` once, from the batch `parts`; returns `(S / D, status)`.

        unit = place.unit(B)                                  what the sums are kept in
        sums = place.sums(home.sum(task, part, unit) ...)     over the place's parts
        return place.apply(home, task, sums)                  guard, then one apply

    With `homes.Loop` call inside `tf.function` (on `places.Replicas`, in a tf.distribute
    replica context); the other homes run eagerly, on one device, and compile their own calls.

    Args:
        task: a `Task`.
        parts: the batch, a nest of tensors sharing the first dimension (x, y, weights).
        home: where the sum lives (`homes`).
        place: where the batch runs (`places`).
    Returns:
        `(loss, status)`: `APPLIED`, `LOSS_NOT_FINITE`, `GRADS_NOT_FINITE` or `CONTRACT_BROKEN`.
    Raises:
        TypeError: an eager home on towers or replicas.
    """
    if not (home.in_graph or place.eager_homes):
        raise TypeError(f"{place!r} runs the batch in one compiled call: its sum lives in "
                        f"loop-carried tensors (homes.Loop), not in {home!r}")
    rows = batch_rows(parts)
    unit = place.unit(rows)
    sums = place.sums(lambda part: home.sum(task, part, unit), parts, rows, unit, task.variables)
    return place.apply(home, task, sums)
