"""Where accumulation is not a large batch: the naive ways, written out so they can be measured.

| pitfall                | the naive way                               | gradlab                                  |
|------------------------|---------------------------------------------|------------------------------------------|
| unequal micro-batches  | mean of per-micro-batch means               | weights n_i / B, or `sample_weight`      |
| schedules, counters    | advance per micro-batch (Keras 3)           | one `apply` per update                   |
| BatchNorm              | each micro-batch normalised on its own      | LayerNorm, GroupNorm; kept: `'micro'`    |
| dropout                | masks differ per micro-batch                | noise, not bias: seed it or turn it off  |
| gradient clipping      | clip each micro-batch                       | clip the accumulated update, once        |
| loss scaling           | skip the overflowing micro-batch only       | skip the whole update, lower the scale   |
| sparse gradients       | Adam on IndexedSlices with duplicate rows   | `densify`                                |
| losses under replicas  | Keras divides each replica's mean loss by R | switch that division off in the step     |
| weight EMA             | update it per micro-batch                   | once per update                          |

Each function here is the naive way or a measurement; the right way is a gradlab strategy.

BatchNorm is never exact under accumulation. Of its two modes, `batchnorm='window'` moves the
moving statistics once per update, as the large batch does (to compare with a large-batch run);
`'micro'`, the default, moves them towards the statistics the network normalised with in
training, the micro-batches'.

Lessons: notebooks/07-pitfalls-what-to-count.ipynb (what to count), notebooks/17-the-lab.ipynb
(BatchNorm, schedules, uneven weights),
notebooks/08-clipping-and-loss-scale.ipynb (clipping, loss scaling), notebooks/09-moving-averages.ipynb (EMA; the sparse-gradient row,
`adam_on_duplicate_rows`, is tested in tests/studies/runs/test_pitfalls.py, taught in no lesson),
notebooks/13-across-replicas.ipynb (losses under replicas)
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from ... import _compat

from ...core import distribute
from ...core.batchnorm import batchnorm_layers
from ...core.gradients import densify
from ...classic.weights import micro_batches
from ...core.microbatch import check_count


def per_example_loss(y, logits):
    """Cross-entropy of each example: the losses that sample weights multiply."""
    return keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True)


def update_of(strategy, x, y, sample_weight=None):
    """`before - after` for every trainable variable over one `strategy.step(x, y)`.

    With `SGD(1.0)` and no momentum this is exactly the gradient the strategy applied.
    """
    before = [v.numpy() for v in strategy.model.trainable_variables]
    strategy.step(x, y, sample_weight=sample_weight)
    return [b - v.numpy() for b, v in zip(before, strategy.model.trainable_variables)]


def relative_error(grads, reference):
    """`||grads - reference|| / ||reference||` over all variables together."""
    diff = sum(float(np.sum((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2))
               for a, b in zip(grads, reference))
    norm = sum(float(np.sum(np.asarray(b, np.float64) ** 2)) for b in reference)
    return float(np.sqrt(diff / norm))


def weighted_mean_grads(model, x, y, sample_weight):
    """The target, in one pass: the gradient of `sum_j w_j l_j / sum_j w_j`."""
    w = tf.constant(sample_weight, tf.float32)
    with tf.GradientTape() as tape:
        losses = per_example_loss(y, model(x, training=True))
        loss = tf.reduce_sum(w * losses) / tf.reduce_sum(w)
    return [g.numpy() for g in densify(tape.gradient(loss, model.trainable_variables))]


def keras_window_update(model, window, loss_of, learning_rate=1.0):
    """One update under Keras's accumulation, `SGD(learning_rate, gradient_accumulation_steps=N)`,
    over the `N` micro-batches of `window`, then `model`'s weights put back::

        D = sum of every w in the window (count first)
        for (inputs, targets, w) in window:  apply_gradients(grad loss_of(targets, model(inputs), w, D))

    `w` is micro-batch i's weights (per row or per token); `loss_of` decides what Keras is fed.
    Returns `before - after` for each trainable variable: the applied gradient times the rate.

    Lesson: notebooks/07-pitfalls-what-to-count.ipynb (Keras's divisors, checked)
    """
    start = [v.numpy() for v in model.trainable_variables]
    opt = keras.optimizers.SGD(learning_rate, gradient_accumulation_steps=len(window))
    D = sum(float(np.sum(w)) for *_, w in window)
    for inputs, targets, w in window:
        with tf.GradientTape() as tape:
            loss = loss_of(targets, model(inputs, training=True), w, D)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    update = [a - v.numpy() for a, v in zip(start, model.trainable_variables)]
    for v, a in zip(model.trainable_variables, start):
        v.assign(a)
    return update


def loss_table_row(model, window, loss, count, reference):
    """One row of 07's table of Keras losses, on one window under Keras's accumulation
    (`keras_window_update`, N = len(window) micro-batches, D counted first)::

        as it is:  loss(t, out, w)                     the row's Keras loss: S_i over count(w)
        scaled:    N count(w) / D * loss(t, out, w)    = N S_i / D, the table's multiple
        best multiple of the as-is update u:  k u,  k = <u, g_B> / |u|^2   (least squares)

    Args:
        model: the model (its weights are put back after each update).
        window: `[(inputs, targets, w), ...]`, one entry per micro-batch; w its weights or valid tokens.
        loss: `loss(targets, outputs, w)`, the row's loss as Keras computes it.
        count: `count(w)`, what that loss divides micro-batch i's summed loss S_i by.
        reference: g_B, the large batch's update (a list of arrays, one per trainable variable).
    Returns:
        dict: `as_is` (u), `length` (|u| / |g_B|), `best` (the verdict of k u against g_B, rounded at
        k times the weights before and after), `scaled` (the scaled update), `scaled_verdict`,
        `scaled_spacings` (both read at the weights before) and `scaled_error` (`relative_error`).

    Lesson: notebooks/07-pitfalls-what-to-count.ipynb (Keras's losses: what each divides by)
    """
    from ..yardstick import spacings, verdict

    n = len(window)
    at = [v.numpy() for v in model.trainable_variables]  # updates are read off these weights
    u = keras_window_update(model, window, lambda t, out, w, D: loss(t, out, w))
    scaled = keras_window_update(model, window, lambda t, out, w, D: n * count(w) / D * loss(t, out, w))
    length = lambda g: np.sqrt(sum(float(np.sum(np.asarray(a, np.float64) ** 2)) for a in g))  # noqa: E731
    k = sum(float(np.sum(np.asarray(a, np.float64) * b)) for a, b in zip(u, reference)) / length(u) ** 2
    before_after = at + [w - a for w, a in zip(at, u)]  # u = before - after: k u is rounded at the larger, times k
    return {"as_is": u, "length": length(u) / length(reference),
            "best": verdict([k * a for a in u], reference, at=[k * w for w in before_after]),
            "scaled": scaled, "scaled_verdict": verdict(scaled, reference, at=at),
            "scaled_spacings": spacings(scaled, reference, at=at), "scaled_error": relative_error(scaled, reference)}


def per_micro_batch_normalized_grads(model, x, y, sample_weight, accum_steps):
    """The 2024 loss-normalisation bug: each micro-batch divides by its own weight sum,
    then the micro-batches are averaged with equal weights::

        g = (1/k) sum_i grad( sum_{j in i} w_j l_j / sum_{j in i} w_j )
    """
    w = np.asarray(sample_weight, np.float32)
    batches = micro_batches(x, (y, w), accum_steps)
    total = None
    for x_i, (y_i, w_i), _ in batches:
        g = weighted_mean_grads(model, x_i, y_i, w_i)
        total = g if total is None else [a + b for a, b in zip(total, g)]
    return [t / len(batches) for t in total]


def per_micro_batch_clipped_grads(model, x, y, accum_steps, clip_norm):
    """Clipping each micro-batch, the naive way: `g = sum_i w_i clip(g_i, clip_norm)`
    (`ClipEachMicroBatch`'s gradient, as numpy)."""
    loss_fn = lambda y, logits: tf.reduce_mean(per_example_loss(y, logits))  # noqa: E731
    _, grads = ClipEachMicroBatch(model, loss_fn, None, accum_steps, clip_norm).grads(x, y)
    return [g.numpy() for g in grads]


# A hand-written loop, kept deliberately: the engine clips the update once and cannot be made
# to clip each micro-batch, and this is the naive way the lesson and the lab measure against it.
class ClipEachMicroBatch:
    """The naive clipping the lab measures: `g = sum_i (n_i / B) clip(g_i, c)`, applied once.

        clip(g) = g * min(1, c / |g|)   is not linear: clipping each micro-batch is not
        clipping their weighted sum, which is what gradlab's `clip_norm` does.

    The loop of `accumulate` (one compiled call per micro-batch, weights n_i / B), with each
    micro-batch's gradient clipped before it is added. Only `step(x, y)`, `grads` and `model`.

    Lesson: notebooks/08-clipping-and-loss-scale.ipynb
    """

    def __init__(self, model, loss_fn, optimizer, accum_steps, clip_norm):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.accum_steps, self.clip_norm = check_count("accum_steps", accum_steps), float(clip_norm)
        self._grads = tf.function(self._clipped_grads)
        self._apply = tf.function(lambda grads: optimizer.apply(grads, model.trainable_variables))

    def _clipped_grads(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True))
        grads = densify(tape.gradient(loss, self.model.trainable_variables))
        return loss, tf.clip_by_global_norm(grads, self.clip_norm)[0]

    def grads(self, x, y):
        """`(mean loss, sum_i w_i clip(g_i))` of the batch `(x, y)`, nothing applied."""
        total, loss = None, 0.0
        for x_i, y_i, w_i in micro_batches(x, y, self.accum_steps):
            part, grads = self._grads(x_i, y_i)
            w_i = float(w_i)  # a Python float keeps the gradients float32 tensors
            total = ([w_i * g for g in grads] if total is None
                     else [a + w_i * g for a, g in zip(total, grads)])
            loss += w_i * float(part)
        return loss, total

    def step(self, x, y):
        """One update from the naively clipped gradient; returns the mean loss."""
        if not self.optimizer.built:  # variables made outside the compiled functions
            self.model(x[:1])
            self.optimizer.build(self.model.trainable_variables)
        loss, total = self.grads(x, y)
        self._apply(total)
        return loss


def held_gradient(optimizer):
    """The largest entry of the gradient an optimizer holds for its next update::

        max_v max |acc_v|   over Keras's `gradient_accumulation_steps` accumulators

    of `optimizer` and any optimizer it wraps (a LossScaleOptimizer's inner one); 0.0 when
    none holds anything, as with no accumulators at all (gradlab's strategies accumulate
    inside one call and hold nothing between calls).
    """
    held = [np.abs(a.numpy()) for opt in _compat.optimizer_chain(optimizer)
            for a in _compat.keras_accumulators(opt)]
    return max((float(h.max()) for h in held if h.size), default=0.0)


def learning_rates(strategy, x, y, updates):
    """The learning rate after each of `updates` steps, and the optimizer's raw counter
    (Keras's `_iterations`: what schedules read)."""
    rates = []
    for _ in range(updates):
        strategy.step(x, y)
        rates.append(float(strategy.optimizer.learning_rate))
    inner = getattr(strategy.optimizer, "inner_optimizer", strategy.optimizer)
    return rates, int(_compat.counters(inner)[-1].numpy())


def moving_statistics(model):
    """`[(moving_mean, moving_variance), ...]` of every BatchNorm layer, as numpy."""
    return [(l.moving_mean.numpy(), l.moving_variance.numpy()) for l in batchnorm_layers(model)]


def train_epochs(strategy, x, y, batch, epochs=1):
    """`epochs` passes over `(x, y)` in order, one `strategy.step` per `batch` examples
    (a short last batch is dropped). Returns `strategy`, trained."""
    for _ in range(epochs):
        for start in range(0, len(x) - batch + 1, batch):
            strategy.step(x[start:start + batch], y[start:start + batch])
    return strategy


def dropout_mlp(rate, seed=0, mask_seed=0, hidden=256):
    """The `mlp` with `Dropout(rate)` after its hidden layer: initial weights from `seed`,
    dropout masks from `mask_seed`, so runs repeat and either can be changed alone."""
    keras.utils.set_random_seed(seed)
    return keras.Sequential([
        keras.Input((28, 28)), keras.layers.Flatten(), keras.layers.Dense(hidden, activation="relu"),
        keras.layers.Dropout(rate, seed=mask_seed), keras.layers.Dense(10)], name="dropout_mlp")


def adam_on_duplicate_rows(lr=0.1):
    """One Adam step on a 4x3 variable whose gradient lists row 0 twice (rows 0, 0, 2 of
    ones), applied as `tf.IndexedSlices` and as the same gradient made dense.

    Keras's Adam scatter-adds each occurrence into its moments, so the second moment of
    row 0 gets `1^2 + 1^2 = 2` instead of `(1 + 1)^2 = 4`, and the step is sqrt(2) too long.

    Returns:
        `(sparse, dense)`: the two variables after the step, as numpy.
    """
    grad = tf.IndexedSlices(tf.ones((3, 3)), tf.constant([0, 0, 2]), tf.constant([4, 3]))
    out = []
    for g in (grad, tf.convert_to_tensor(grad)):
        v = tf.Variable(tf.zeros((4, 3)))
        keras.optimizers.Adam(lr).apply_gradients([(g, v)])
        out.append(v.numpy())
    return tuple(out)


def replica_loss_ratio(loss_fn, y, logits, devices):
    """`loss_fn(y, logits)` computed in each replica of a `MirroredStrategy(devices)`,
    divided by the same loss computed outside any strategy: `1 / num_replicas` for Keras 3's
    mean losses. A step that then also averages the replicas' gradients (a MEAN all-reduce)
    shrinks the update R-fold; `mirrored` switches Keras's division off while it traces."""
    return 1.0 / distribute.replica_loss_factor(distribute.make_distribution(devices), loss_fn, y, logits)


def ema_weights(strategy):
    """The optimizer's moving average of the trainable variables (`use_ema=True`), as numpy."""
    return [v.numpy() for v in _compat.ema_variables(strategy.optimizer)]


def displacement(weights, start):
    """`weights - start`, variable by variable: how far training has moved them."""
    return [np.asarray(w) - np.asarray(s) for w, s in zip(weights, start)]


def expected_ema(trajectory, momentum, moves=1):
    """Keras's EMA moved `moves` times per update, from the weights after each update::

        ema_1 = w_1;   once per update: ema_k = momentum * ema_(k-1) + (1 - momentum) * w_k

    `moves` > 1 is Keras's `gradient_accumulation_steps`: the EMA moves at every apply call, and an update's
    first `moves - 1` calls still see the weights before it, `w_(k-1)`; the last call sees `w_k`.
    """
    if moves < 1:
        raise ValueError(f"expected_ema: moves must be at least 1, got {moves}")
    ema = [np.asarray(w) for w in trajectory[0]]
    for before, weights in zip(trajectory, trajectory[1:]):
        for move in range(moves):
            toward = weights if move == moves - 1 else before
            ema = [momentum * e + (1 - momentum) * np.asarray(w) for e, w in zip(ema, toward)]
    return ema


def float16_backward_zeros(model, loss_fn, x, y, scales=(1.0, 2.0 ** 15, 2.0 ** 20)):
    """What a float16 backward pass does to a gradient at each loss scale λ: `{λ: (underflow, overflow)}`.

    The gradient of `λ * loss_fn(y, model(x))` is taken twice: in `model` (float32), and in a copy of it
    under `mixed_float16` (the same float32 weights, every layer computing in float16, the loss in float32,
    as Keras's `mixed_float16` policy runs it). Over the entries the float32 gradient at λ = 1 holds nonzero::

        underflow = share that come back 0 from the float16 pass   (too small for float16: lost)
        overflow  = share that come back inf or nan                (past 65504 somewhere on the way)

    Unscaling (dividing by λ) changes neither count, so the scaled gradients are counted.

    Args:
        model: a built float32 Keras model; it is copied, not changed.
        loss_fn: a Keras loss, `loss_fn(y, outputs)`.
        x, y: the batch.
        scales: the loss scales λ to try.
    Returns:
        a dict `{λ: (underflow share, overflow share)}`, in the order of `scales`.
    """
    half = keras.models.clone_model(  # each layer rebuilt from its config with the mixed policy
        model, clone_function=lambda layer: layer.__class__.from_config({**layer.get_config(),
                                                                        "dtype": "mixed_float16"}))
    half.set_weights(model.get_weights())

    def flat_gradient(net, scale):
        with tf.GradientTape() as tape:
            loss = scale * loss_fn(y, net(x, training=True))
        grads = densify(tape.gradient(loss, net.trainable_variables))
        return np.concatenate([np.ravel(np.asarray(g, np.float32)) for g in grads])

    nonzero = flat_gradient(model, 1.0) != 0
    shares = {}
    for scale in scales:
        g = flat_gradient(half, float(scale))[nonzero]
        shares[scale] = (float(np.mean(g == 0)), float(np.mean(~np.isfinite(g))))
    return shares


def loss_scale_run(N, updates, growth=2000, per_update=False, top=1.0):
    """A long run of Keras's `LossScaleOptimizer` in which every micro-batch overflows once λ reaches `65504 / top`.

    Each micro-batch's scaled gradient is one entry, `λ * top` rounded to float16 (so `inf` past 65504), handed to
    a real `LossScaleOptimizer(SGD(1.0), dynamic_growth_steps=growth)`, from λ = 2^15:

        per_update=False: Keras's accumulation, `gradient_accumulation_steps=N`: one apply call per micro-batch,
                          so each micro-batch is checked (and skipped, and counted toward `growth`) alone;
        per_update=True:  one apply call per update, on the window's sum (non-finite if any micro-batch is):
                          the check once per update.

    Micro-batch j belongs to batch j // N. An applied update *straddles* when its micro-batches come from more
    than one batch (after a skipped micro-batch, Keras's windows slip by one).

    Returns:
        a dict: `skipped` (micro-batches never applied; N per skipped update when `per_update`), `updates`
        (updates applied), `straddling` (applied updates whose micro-batches span two batches) and `scale`
        (λ at the end).
    """
    calls = updates if per_update else updates * N
    inner = keras.optimizers.SGD(1.0, gradient_accumulation_steps=None if per_update or N == 1 else N)
    lso = keras.optimizers.LossScaleOptimizer(inner, dynamic_growth_steps=growth)
    w = keras.Variable(0.0)  # SGD(1.0) on an unscaled gradient `top`: w moves by -top at each update
    lso.build([w])

    @tf.function  # the whole run compiled: 40,000 apply calls in about a second
    def run():
        scales = tf.TensorArray(tf.float32, size=calls)
        weights = tf.TensorArray(tf.float32, size=calls)
        for t in tf.range(calls):
            g = tf.cast(tf.cast(lso.dynamic_scale * top, tf.float16), tf.float32)  # inf once λ top > 65504
            lso.apply_gradients([(g, w)])
            scales = scales.write(t, tf.identity(lso.dynamic_scale))
            weights = weights.write(t, tf.identity(w))
        return scales.stack(), weights.stack()

    scales, weights = (a.numpy() for a in run())
    skipped = np.diff(np.concatenate([[lso.initial_scale], scales])) < 0  # λ halved: that call was skipped
    moved = np.diff(np.concatenate([[0.0], weights])) != 0  # an update applied at that call
    held, updates_done, straddling = [], 0, 0
    for call in range(calls):
        if skipped[call]:
            continue
        held.append(call if per_update else call // N)  # the batch this micro-batch (or window) comes from
        if moved[call]:
            updates_done, straddling, held = updates_done + 1, straddling + (len(set(held)) > 1), []
    return {"skipped": int(skipped.sum()) * (N if per_update else 1), "updates": updates_done,
            "straddling": straddling, "scale": float(scales[-1])}
