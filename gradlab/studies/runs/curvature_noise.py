"""The noise scale weighed by curvature: McCandlish et al.'s B_noise, from Hessian-vector products.

    B_noise = tr(H S) / (G^T H G)        (McCandlish et al., 2018, Sec. 2.2)

    G = the full-data gradient, H = the Hessian of the full-data mean loss,
    S = (1/n) sum_i d_i d_i^T with d_i = g_i - G (the per-example covariance).

B_simple = tr(S) / |G|^2 (`noise.gradient_stats`) is the same ratio with H the identity: it
counts noise along every direction alike, where B_noise counts it by how much a step along
that direction changes the loss. Neither H nor S is written out (203,530 weights give a
41-billion-entry H): H v comes from differentiating the gradient's dot product with v
(double backprop), and tr(H S) from Rademacher probes over the examples,

    v = (1/sqrt(n)) sum_i z_i d_i,  z_i = +-1 at random:   E[v^T H v] = tr(H S)   (E z_i z_j = [i = j])

with sum_i z_i d_i = n (gradient of the loss weighted 1 + z'_i, minus G), z' = z - mean(z):
one weighted gradient and one H v per probe, whatever n is.

Lesson: notebooks/19-critical-batch.ipynb (B_simple itself: notebooks/18-batch-size-and-noise.ipynb)
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from ...core.gradients import densify
from ...core.loss_terms import mean_loss
from ...core.microbatch import batch_size, check_count


class CurvatureNoise(NamedTuple):
    noise_scale: float  # B_noise = tr(H S) / (G^T H G)
    stderr: float       # its standard error over the probes (G^T H G is exact)
    trace_hs: float     # tr(H S), the mean of the probes' v^T H v
    ghg: float          # G^T H G
    probes: int

    def text(self, breakdown=False):
        """`"83 ± 7"`: B_noise ± one standard error, to whole examples; with `breakdown`, its
        two factors too, `"83 ± 7 = tr(H Sigma) 126.7 / g^T H g 1.53"`."""
        head = f"{self.noise_scale:.0f} ± {self.stderr:.0f}"
        return head + (f" = tr(H Sigma) {self.trace_hs:.1f} / g^T H g {self.ghg:.2f}" if breakdown else "")


def curvature_noise_scale(model, loss_fn, x, y, probes=64, seed=0, chunk=1000):
    """B_noise of `model` on the population `(x, y)`, with its standard error.

    Args:
        model, loss_fn: as in `make_strategy` (the model built); `loss_fn` a per-example
            loss or a Keras loss that divides by the number of examples (its default).
        x, y: the population, e.g. the 4,000 training images (inference mode throughout).
        probes: Rademacher probes for tr(H S), at least 2 (the error falls as 1/sqrt(probes)).
        seed: seeds `np.random.default_rng` for the probes.
        chunk: examples per compiled call (the gradient and H v are sums over chunks).
    Returns:
        `CurvatureNoise(noise_scale, stderr, trace_hs, ghg, probes)`.
    """
    probes = check_count("probes", probes, minimum=2)
    chunk = check_count("chunk", chunk)
    reduction = getattr(loss_fn, "reduction", "sum_over_batch_size")
    if reduction not in ("sum_over_batch_size", "mean"):
        raise ValueError("curvature_noise_scale needs a loss that divides by the number of examples "
                         f"(reduction 'sum_over_batch_size'); got reduction={reduction!r}")
    n = batch_size(x, y)
    variables = model.trainable_variables

    @tf.function(reduce_retracing=True)
    def grad(xc, yc, wc):
        with tf.GradientTape() as tape:
            loss = mean_loss(model, loss_fn, xc, yc, training=False, sample_weight=wc)
        return densify(tape.gradient(loss, variables, unconnected_gradients=tf.UnconnectedGradients.ZERO))

    @tf.function(reduce_retracing=True)
    def hvp(xc, yc, v):  # H v = d/dw (grad . v): v held constant
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = mean_loss(model, loss_fn, xc, yc, training=False)
            g = densify(inner.gradient(loss, variables, unconnected_gradients=tf.UnconnectedGradients.ZERO))
            dot = tf.add_n([tf.reduce_sum(a * b) for a, b in zip(g, v)])
        return densify(outer.gradient(dot, variables, unconnected_gradients=tf.UnconnectedGradients.ZERO))

    def over_chunks(fn, third):  # sum_c (n_c / n) fn(x_c, y_c, third(rows of c)): the full-data mean
        total = 0.0
        for s in range(0, n, chunk):
            rows = slice(s, s + chunk)
            total = total + _flat(fn(x[rows], y[rows], third(rows))) * (min(chunk, n - s) / n)
        return total

    sizes = [int(np.prod(v.shape)) for v in variables]

    def weighted_grad(w):  # the gradient of the mean loss, example i weighted w_i
        return over_chunks(grad, lambda rows: w[rows])

    def hessian_times(flat):  # H v, v given flat
        v = [tf.constant(p.reshape(w.shape), w.dtype) for p, w in
             zip(np.split(flat.astype(np.float32), np.cumsum(sizes)[:-1]), variables)]
        return over_chunks(hvp, lambda rows: v)

    g = weighted_grad(np.ones(n, np.float32))
    ghg = float(g @ hessian_times(g))
    rng = np.random.default_rng(seed)
    quad = np.empty(probes)
    for k in range(probes):
        z = rng.choice([-1.0, 1.0], size=n)
        w = (1.0 + z - z.mean()).astype(np.float32)  # the loss weighted 1 + z': its gradient is G + (1/n) sum z'_i g_i
        v = (weighted_grad(w) - g) * np.sqrt(n)  # (1/sqrt n) sum z_i d_i
        quad[k] = v @ hessian_times(v)
    trace = float(quad.mean())
    return CurvatureNoise(trace / ghg, float(quad.std(ddof=1) / np.sqrt(probes) / abs(ghg)),
                          trace, ghg, probes)


def _flat(tensors):
    return np.concatenate([np.ravel(t) for t in tensors]).astype(np.float64)
