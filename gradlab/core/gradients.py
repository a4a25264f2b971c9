"""Gradients as the engine applies them: dense, clipped once per update, applied once.

    g = G / D   (engine);   apply_update(optimizer, g, variables, clip_norm)

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import math
import numbers

import tensorflow as tf


def densify(grads):
    """Dense gradients: `tf.IndexedSlices` (from `Embedding`, `gather`) become tensors.

    Keras's Adam adds the square of each occurrence of a duplicate row to its second moment,
    not the square of their sum, so a large batch through an Embedding would not be the
    mean-gradient update (a row of ones listed twice: 2, not 4); and
    slices of different lengths cannot be summed in a loop or all-reduced. Every gradlab
    strategy applies dense gradients, so all of them, large_batch included, agree.
    """
    return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]


def apply_update(optimizer, grads, variables, clip_norm=None):
    """One optimizer update from the accumulated `grads` (None entries are skipped).

    `clip_norm` clips the global norm of the whole update, once: clipping each micro-batch
    would not be clipping the update. Gradients of a scaled loss (`optimizer.scale_loss`)
    are clipped at `clip_norm * scale`, the same as clipping the unscaled update; a
    non-finite norm makes them NaN, which a `LossScaleOptimizer` skips.
    """
    pairs = [(g, v) for g, v in zip(densify(grads), variables) if g is not None]
    if clip_norm is not None:
        clipped, _ = tf.clip_by_global_norm([g for g, _ in pairs], optimizer.scale_loss(clip_norm))
        pairs = [(g, v) for g, (_, v) in zip(clipped, pairs)]
    optimizer.apply_gradients(pairs)


def check_clip_norm(clip_norm):
    """`clip_norm` as a float (or None): a positive, finite number, else TypeError/ValueError
    naming the value (before any TensorFlow work)."""
    if clip_norm is None:
        return None
    if isinstance(clip_norm, bool) or not isinstance(clip_norm, numbers.Real):
        raise TypeError(f"clip_norm must be a positive number or None, got {clip_norm!r}")
    if not (math.isfinite(clip_norm) and clip_norm > 0):
        raise ValueError(f"clip_norm must be a positive number or None, got {clip_norm!r}")
    return float(clip_norm)
