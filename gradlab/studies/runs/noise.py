"""Gradient noise: how far the gradient of one update strays from the full-data gradient.

    g_i = gradient of example i,   G = (1/n) sum_i g_i            (the full-data gradient)
    tr(S) = (1/n) sum_i |g_i - G|^2                           (per-example covariance trace)
    g_B = mean gradient of B examples drawn with replacement:  E |g_B - G|^2 = tr(S) / B
    B_simple = tr(S) / |G|^2      (McCandlish et al., 2018, "An Empirical Model of
                                   Large-Batch Training": the batch at which noise ~ signal)

Accumulating N micro-batches of b examples gives exactly the gradient of B = N*b examples,
so its variance falls as 1/(N*b) whatever N is: fixed effective batch, fixed noise; fixed
micro-batch, noise falls as 1/N. The n training examples are the population sampled from,
so tr(S) and |G|^2 computed over all of them are exact, not estimates.

Lesson: notebooks/21-reproducing-the-table.ipynb (the 1/b law itself: notebooks/18-batch-size-and-noise.ipynb)
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from ...core.accumulate import fused_grads
from ...core.gradients import densify
from ...core.loss_terms import mean_loss
from ...core.microbatch import check_count, batch_size
from ..stats import moving_average


# -- loss noise: the wiggle of a training curve around its trend ---------------------------

class LossNoise(NamedTuple):
    var: float       # variance of one update's loss around the trend (NaN if too short)
    std: float       # sqrt(var)
    relative: float  # std / mean trend over the same updates
    window: int      # moving-average width used (odd)
    count: int       # residuals measured


def loss_noise(losses, window=51, start=None):
    """The spread of per-update losses around their centred moving average.

        r_t = loss_t - moving_average(loss, w)_t,   var = mean(r_t^2) / (1 - 1/w)

    If loss_t = trend_t + e_t with independent e_t of variance s^2 and a trend that is
    straight over w updates, then E r_t^2 = s^2 (1 - 1/w): the division makes `var` an
    estimate of s^2 itself. Only full windows from update `start` on are used (default:
    skip the first quarter, where the curve bends too fast for any window).

    Args:
        losses: the loss of each update, in order.
        window: the moving-average width; made odd and no longer than the series.
        start: first update counted (default `len(losses) // 4`).
    Returns:
        `LossNoise(var, std, relative, window, count)`.
    """
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 1:
        raise ValueError(f"losses must be one loss per update (1-D), got shape {losses.shape}")
    window = check_count("window", window)
    size = len(losses)
    start = size // 4 if start is None else check_count("start", start, minimum=0)
    w = min(window, size - start)
    w -= 1 - w % 2  # odd, so that the window is centred
    if w < 3:
        return LossNoise(float("nan"), float("nan"), float("nan"), max(w, 0), 0)
    half = w // 2
    trend = moving_average(losses, w)[start + half:size - half]
    resid = losses[start + half:size - half] - trend
    var = float(np.mean(resid ** 2) / (1.0 - 1.0 / w))
    return LossNoise(var, var ** 0.5, var ** 0.5 / float(np.mean(trend)), w, len(resid))


# -- per-example gradients over a dataset -------------------------------------------------

def per_example_grads(model, loss_fn, x, y):
    """`[stack_i g_i]` per trainable variable: tensors of shape (n, *variable.shape).

    g_i = d loss_fn(y_i, model(x_i)) / d weights, all examples in one `tf.vectorized_map`
    (inference mode: a batch of one must not update BatchNormalization statistics).
    """
    variables = model.trainable_variables

    def one(xy):
        xi, yi = xy
        with tf.GradientTape() as tape:
            loss = mean_loss(model, loss_fn, xi[None], yi[None], training=False)
        grads = tape.gradient(loss, variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return densify(grads)

    return tf.vectorized_map(one, (tf.convert_to_tensor(x), tf.convert_to_tensor(y)))


class GradientStats(NamedTuple):
    n: int               # examples
    grad: np.ndarray     # G, the flattened full-data gradient (float64)
    grad_sq_norm: float  # |G|^2
    trace_cov: float     # tr(S) = (1/n) sum_i |g_i - G|^2
    noise_scale: float   # B_simple = tr(S) / |G|^2


def gradient_stats(model, loss_fn, x, y, chunk=50):
    """G, |G|^2, tr(S) and B_simple from per-example gradients, `chunk` examples at a time.

    Each chunk gives its mean gradient and its sum of squared deviations M2; chunks merge
    by Chan's rule, M2 = M2_a + M2_b + |m_a - m_b|^2 n_a n_b / (n_a + n_b), in float64,
    which avoids the cancellation of sum |g_i|^2 - n |G|^2. Small chunks are faster on a
    CPU: the (chunk, parameters) block of gradients stays in cache.

    Args:
        model, loss_fn: as in `make_strategy` (the model built).
        x, y: the population, e.g. the 4,000 training images.
        chunk: examples per compiled call.
    Returns:
        `GradientStats(n, grad, grad_sq_norm, trace_cov, noise_scale)`.
    """
    n = batch_size(x, y)
    chunk = check_count("chunk", chunk)

    @tf.function(reduce_retracing=True)
    def moments(xc, yc):
        grads = per_example_grads(model, loss_fn, xc, yc)
        flat = tf.concat([tf.reshape(g, [tf.shape(g)[0], -1]) for g in grads], axis=1)
        mean = tf.reduce_mean(flat, axis=0)
        return mean, tf.reduce_sum(tf.square(flat - mean))

    count, mean, m2 = 0, None, 0.0
    for s in range(0, n, chunk):
        m_c, m2_c = moments(x[s:s + chunk], y[s:s + chunk])
        m_c, n_c = m_c.numpy().astype(np.float64), min(chunk, n - s)
        if mean is None:
            count, mean, m2 = n_c, m_c, float(m2_c)
            continue
        delta = m_c - mean
        total = count + n_c
        m2 += float(m2_c) + float(delta @ delta) * count * n_c / total
        mean = mean + delta * (n_c / total)
        count = total
    sq = float(mean @ mean)
    trace = m2 / n
    return GradientStats(n, mean, sq, trace, trace / sq)


# -- gradients of accumulated batches, drawn many times at one point ------------------------

def sample_gradients(model, loss_fn, x, y, accum_steps, micro_batch, draws, full_grad, seed=0):
    """Draw `draws` effective batches and compare each accumulated gradient with G.

    Each draw takes `accum_steps * micro_batch` examples with replacement (independent
    examples, so that E |g_B - G|^2 = tr(S) / B holds exactly) and accumulates the
    gradients of its `accum_steps` micro-batches in one compiled loop (`fused_grads`, the
    `fused` strategy's own code). Nothing is applied: the weights stay where they are.

    Args:
        model, loss_fn: as in `make_strategy` (the model built).
        x, y: the population the draws come from.
        accum_steps, micro_batch: N and b.
        draws: number of effective batches.
        full_grad: G as a flat array (`GradientStats.grad`).
        seed: seeds `np.random.default_rng` for the draws.
    Returns:
        dict of float64 arrays of length `draws`: `sq_dev` |g_B - G|^2, `sq_norm` |g_B|^2,
        `cosine` cos(g_B, G), and `loss`, the mean loss of the effective batch.
    """
    n = batch_size(x, y)
    accum_steps = check_count("accum_steps", accum_steps)
    micro_batch = check_count("micro_batch", micro_batch)
    draws = check_count("draws", draws)
    full = tf.constant(np.asarray(full_grad, dtype=np.float32).ravel())
    sizes = tf.constant([micro_batch] * accum_steps, tf.int32)

    @tf.function
    def compare(xb, yb):
        loss, grads = fused_grads(model, loss_fn, xb, yb, sizes)
        v = model.trainable_variables
        flat = tf.concat([tf.reshape(tf.zeros_like(w) if g is None else g, [-1])
                          for g, w in zip(grads, v)], axis=0)
        sq_norm = tf.reduce_sum(tf.square(flat))
        cosine = tf.reduce_sum(flat * full) / tf.sqrt(sq_norm * tf.reduce_sum(tf.square(full)))
        return tf.reduce_sum(tf.square(flat - full)), sq_norm, cosine, loss

    rng = np.random.default_rng(seed)
    out = np.empty((draws, 4))
    for d in range(draws):
        idx = rng.integers(0, n, size=accum_steps * micro_batch)
        out[d] = [float(v) for v in compare(x[idx], y[idx])]
    return {"sq_dev": out[:, 0], "sq_norm": out[:, 1], "cosine": out[:, 2], "loss": out[:, 3]}


def two_batch_noise_scale(sq_norm_small, sq_norm_big, b_small, b_big):
    """McCandlish et al.'s unbiased estimates from |g_B|^2 at two batch sizes (Appendix A.1).

        E|g_B|^2 = |G|^2 + tr(S)/B   for B in {b_small, b_big}, solved for the two unknowns:
        |G|^2 ~ (b_big |g_big|^2 - b_small |g_small|^2) / (b_big - b_small)
        tr(S) ~ (|g_small|^2 - |g_big|^2) / (1/b_small - 1/b_big)

    Args:
        sq_norm_small, sq_norm_big: |g_B|^2 of draws at each size (arrays or scalars; averaged).
        b_small, b_big: the two batch sizes, b_small < b_big.
    Returns:
        `(grad_sq_norm, trace_cov, noise_scale)`; B_simple is the ratio of the two averages
        (each unbiased; their ratio is what the paper reports).
    """
    b_small, b_big = check_count("b_small", b_small), check_count("b_big", b_big)
    if b_small >= b_big:
        raise ValueError(f"b_small must be smaller than b_big, got {b_small} and {b_big}")
    small, big = float(np.mean(sq_norm_small)), float(np.mean(sq_norm_big))
    grad_sq = (b_big * big - b_small * small) / (b_big - b_small)
    trace = (small - big) / (1.0 / b_small - 1.0 / b_big)
    return grad_sq, trace, trace / grad_sq


def loglog_slope(x, y):
    """`(p, c)` of the least-squares fit log y = p log x + log c (so y ~ c x^p).

    Variance against N*b should give p = -1.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError(f"need two 1-D arrays of the same length >= 2, got shapes "
                         f"{x.shape} and {y.shape}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError(f"a log-log fit needs positive values, got x={x.tolist()} y={y.tolist()}")
    p, logc = np.polyfit(np.log(x), np.log(y), 1)
    return float(p), float(np.exp(logc))
