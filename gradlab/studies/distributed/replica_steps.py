"""The Keras plumbing of lesson 15's hand-written `train_step`s under a `tf.distribute` strategy.

    StepBase(inner, accum_steps, loss_fn)   a keras.Model around `inner`: N micro-batches, a loss
                                            function and the logged loss (a Mean metric)
    with_step(step)                         a StepBase class whose train_step is step(model, data)
    UnrolledStep                            lesson 10's step, shortened: sum_i (n_i / n) L_i, one apply
    WhileStep                               the same step in one tf.while_loop, one micro-batch at a time
    weights_path(model, x, y, **fit_args)   the weights before each update of `model.fit`, and after the last
    each_update_miss(model, strategy, path, arrays, batch_size)
                                            lesson 01's miss of each of model's updates, each one run
                                            from path[t]: |w - path[t+1]| / |path[t+1] - path[t]|
    mlp(seed, l2), plain_fit(x, y, ...)     the two lessons' MLP and their reference, Keras's plain fit
    summed_grads(model, x, y)               lesson 10's loop, undivided: a shard's summed loss, rows, gradient
    penalty_grads(model, scale)             model.losses, scaled, and its gradient
    unclipped_step(model, data)             lesson 15's route: divide once by the all-reduced rows B
    TokenStep                               the same route by tokens: divide once by D, all replicas' tokens
    token_misses(strategy, x, y, tokens)    a mean per token under a strategy: mirrored fit against TokenStep

Lesson 15 writes the steps (unclipped_step is its solution); lesson 16 builds its clipped steps on these.

Lesson: notebooks/15-fit-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from ..runs.pitfalls import relative_error
from ..yardstick import spacings


class StepBase(keras.Model):
    """A model `inner`, `accum_steps` micro-batches a step, a loss function and the logged loss."""

    def __init__(self, inner, accum_steps, loss_fn):
        super().__init__()
        self.inner, self.accum_steps, self.loss_fn = inner, accum_steps, loss_fn
        self.loss_tracker = keras.metrics.Mean(name="loss")  # fit's logs read the trackers

    @property
    def metrics(self):  # so fit resets the tracker every epoch
        return [self.loss_tracker]

    def call(self, x, training=False):
        return self.inner(x, training=training)


def with_step(step):
    """A StepBase class whose `train_step(data)` is `step(model, data)`."""
    class Step(StepBase):
        def train_step(self, data):
            return step(self, data)
    return Step


def _rows(i, n, N):
    """Micro-batch i's rows [lo, hi) of n in N, by lesson 01's split: the first n % N get one more."""
    q, r = n // N, n % N
    return i * q + tf.minimum(i, r), (i + 1) * q + tf.minimum(i + 1, r)


def _scaled_grads(model, x, y, i):
    """Micro-batch i's Keras mean loss weighted n_i / n, and its gradients."""
    n = tf.shape(x)[0]
    lo, hi = _rows(i, n, model.accum_steps)
    with tf.GradientTape() as tape:
        share = tf.cast(hi - lo, "float32") / tf.cast(n, "float32")
        scaled = share * model.loss_fn(y[lo:hi], model(x[lo:hi], training=True))
    return scaled, tape.gradient(scaled, model.trainable_variables)


class UnrolledStep(StepBase):
    """Lesson 10's step, shortened: micro-batch i's Keras mean loss L_i weighted n_i / n (the same
    result as summing and dividing once by n), the gradients added, one `apply` a batch."""

    def train_step(self, data):
        x, y = data
        n = tf.shape(x)[0]  # the rows this step sees
        total, batch_loss = [tf.zeros_like(v) for v in self.trainable_variables], 0.0
        for i in range(self.accum_steps):  # a Python loop: unrolled in the traced step
            scaled, grads = _scaled_grads(self, x, y, i)
            total = [t + g for t, g in zip(total, grads)]
            batch_loss += scaled
        self.optimizer.apply(total, self.trainable_variables)  # once per batch
        self.loss_tracker.update_state(batch_loss, sample_weight=n)  # a mean over rows, as Keras logs it
        return {"loss": self.loss_tracker.result()}


class WhileStep(StepBase):
    """Lesson 10's while-loop step, shortened: `UnrolledStep`'s sum in one `tf.while_loop` with
    `parallel_iterations=1`, so the traced step holds one copy of the passes and runs the
    micro-batches one at a time (lesson 11 measures its memory)."""

    def train_step(self, data):
        x, y = data[:2]  # train_on_batch hands (x, y, sample_weight)
        n = tf.shape(x)[0]

        def body(i, total, batch_loss):  # micro-batch i
            scaled, grads = _scaled_grads(self, x, y, i)
            return i + 1, [t + g for t, g in zip(total, grads)], batch_loss + scaled

        start = (tf.constant(0), [tf.zeros_like(v) for v in self.trainable_variables], tf.constant(0.0))
        _, total, batch_loss = tf.while_loop(lambda i, *_: i < self.accum_steps, body, start, parallel_iterations=1)
        self.optimizer.apply(total, self.trainable_variables)  # once per batch
        self.loss_tracker.update_state(batch_loss, sample_weight=n)
        return {"loss": self.loss_tracker.result()}


def weights_path(model, x, y, **fit_args):
    """`model.fit(x, y, epochs=1, shuffle=False, verbose=0, **fit_args)` (model compiled), and the
    weights before each update and after the last: one list of `get_weights()` longer than the updates."""
    path = [model.get_weights()]
    track = keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: path.append(model.get_weights()))
    model.fit(x, y, epochs=1, shuffle=False, verbose=0, callbacks=[track], **fit_args)
    return path


def each_update_miss(model, strategy, path, arrays, batch_size=60):
    """Lesson 01's miss of each update of `model.train_step` under `strategy`, each one run from
    the reference's weights before it (`path[t]`, from `weights_path`) on batch t of `arrays`
    (a tuple, as `fit` gets it): |w - path[t + 1]| / |path[t + 1] - path[t]|, one a batch."""
    step = tf.function(lambda batch: strategy.run(model.train_step, args=(batch,)))
    batches, misses = tf.data.Dataset.from_tensor_slices(arrays).batch(batch_size), []
    for t, batch in enumerate(strategy.experimental_distribute_dataset(batches)):
        model.set_weights(path[t])
        step(batch)
        before, after = path[t], path[t + 1]  # the miss is the update's relative error against the reference's
        misses.append(relative_error([w - b for w, b in zip(model.get_weights(), before)],
                                     [a - b for a, b in zip(after, before)]))
    return misses


def mlp(seed=0, l2=0.0, inputs=784):
    """Lessons 15 and 16's network, the same initial weights for a seed: `inputs` -> Dense(32, relu)
    -> Dense(10) logits, with an L2 penalty `l2` on both kernels when l2 > 0.

    Args:
        seed: keras.utils.set_random_seed's seed, set first.
        l2: the L2 factor of keras.regularizers.L2 on the kernels; 0: none.
        inputs: the features a row holds (784 for a flattened MNIST digit).
    Returns:
        a built keras.Sequential.

    Lesson: notebooks/15-fit-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
    """
    keras.utils.set_random_seed(seed)
    reg = keras.regularizers.L2(l2) if l2 else None
    return keras.Sequential([keras.Input((inputs,)),
                             keras.layers.Dense(32, activation="relu", kernel_regularizer=reg),
                             keras.layers.Dense(10, kernel_regularizer=reg)])


def mean_loss():
    """The lessons' loss object: sparse categorical cross-entropy from logits, a mean over rows."""
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def plain_fit(x, y, clip=None, l2=0.0, batch_size=60, loss=None, **fit_args):
    """The lessons' reference: `mlp(l2=l2)` trained by Keras's plain `fit` on one device, one epoch
    over (x, y) in order, SGD(0.1) with `global_clipnorm=clip`.

    Args:
        x, y: the rows, in the order fit takes them.
        clip: SGD's global_clipnorm; None: no clip.
        l2: the network's L2 penalty (see `mlp`).
        batch_size: rows an update.
        loss: the compiled loss; None: `mean_loss()`.
        **fit_args: more for `fit` (sample_weight=...).
    Returns:
        the trained model; its `history` holds the epoch's logged loss.

    Lesson: notebooks/15-fit-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
    """
    model = mlp(l2=l2, inputs=int(np.shape(x)[1]))
    model.compile(optimizer=keras.optimizers.SGD(0.1, global_clipnorm=clip), loss=loss or mean_loss(),
                  jit_compile=False)
    model.fit(x, y, batch_size=batch_size, epochs=1, shuffle=False, verbose=0, **fit_args)
    return model


def summed_grads(model, x, y, per_row=None):
    """Lesson 10's micro-batch loop with the loss undivided: over `model.accum_steps` micro-batches
    of the shard (x, y) (the first n % N get one row more), the summed per-row loss S, the rows n
    and the gradient of S. Nothing is divided and nothing is communicated.

    Args:
        model: a StepBase (it has `accum_steps`); called with training=True.
        x, y: this replica's shard (0 rows allowed).
        per_row: a loss giving one value a row; None: sparse cross-entropy from logits, reduction "none".
    Returns:
        (S, n as float32, [dS/dv for v in model.trainable_variables]).

    Lesson: notebooks/15-fit-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
    """
    per_row = per_row or keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    n = tf.shape(x)[0]
    total, S = [tf.zeros_like(v) for v in model.trainable_variables], 0.0
    for i in range(model.accum_steps):
        lo, hi = _rows(i, n, model.accum_steps)  # lesson 01's split: the first n % N get one more row
        with tf.GradientTape() as tape:  # S_i: the micro-batch's summed loss
            S_i = tf.reduce_sum(per_row(y[lo:hi], model(x[lo:hi], training=True)))
        total, S = [t + g for t, g in zip(total, tape.gradient(S_i, model.trainable_variables))], S + S_i
    return S, tf.cast(n, "float32"), total


def penalty_grads(model, scale):
    """`scale(sum(model.losses))` (a weight penalty) and its gradient over the trainable variables.

    Args:
        model: a Keras model; its `losses` may be empty (a zero penalty).
        scale: a function of the summed penalty: tf.nn.scale_regularization_loss (over R, for an
            `apply` that adds the replicas' copies) or tf.identity.
    Returns:
        (the scaled penalty, its gradients: None for a variable it does not use).

    Lesson: notebooks/15-fit-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
    """
    with tf.GradientTape() as tape:
        penalty = scale(sum(model.losses, tf.zeros([])))
    return penalty, tape.gradient(penalty, model.trainable_variables)


def unclipped_step(model, data):
    """Lesson 15's public route, a train_step for `with_step`: the shard's summed gradient over B,
    the rows of all replicas (all-reduce 1), plus the penalty over R; `apply` adds the replicas'
    parts (all-reduce 2). The large batch's update for any split, an empty shard included.

    Returns:
        fit's logs, {"rows": B}.

    Lesson: notebooks/15-fit-across-replicas.ipynb (its solution), notebooks/16-clipping-across-replicas.ipynb
    """
    _, n, total = summed_grads(model, *data)
    B = tf.distribute.get_replica_context().all_reduce("sum", n)
    _, p_grads = penalty_grads(model, tf.nn.scale_regularization_loss)
    grads = [g / B if p is None else g / B + p for g, p in zip(total, p_grads)]
    model.optimizer.apply(grads, model.trainable_variables)
    return {"rows": B}


class TokenStep(StepBase):
    """The unclipped route by tokens: fit's sample_weight w holds each row's tokens; the step divides
    the shard's token-weighted loss sum by D, the tokens of all replicas (all-reduced), so the
    update is the mean per token over the whole batch. One micro-batch a shard."""

    def train_step(self, data):
        x, y, w = data  # fit passes sample_weight as the third element
        D = tf.distribute.get_replica_context().all_reduce("sum", tf.reduce_sum(w))
        with tf.GradientTape() as tape:
            S = tf.reduce_sum(w * self.loss_fn(y, self(x, training=True)))
        self.optimizer.apply([g / D for g in tape.gradient(S, self.trainable_variables)], self.trainable_variables)
        return {"tokens": D}


def token_misses(strategy, x, y, tokens, batch_size=60):
    """A mean per token (tokens passed as fit's sample_weight) under `strategy`: Keras's plain fit
    divides each replica's loss by its own shard's tokens; TokenStep divides by all replicas'.

    Args:
        strategy: a tf.distribute strategy (lesson 15: two replicas).
        x, y, tokens: the rows, labels and each row's tokens; one epoch in batches of batch_size.
    Returns:
        a dict: "uneven batches" (batches whose shards hold different tokens, on 2 replicas with
        even row splits), "mirrored fit" (lesson 01's miss of each update, each run from one
        device's weights before it), "token step" (TokenStep's weights against one device's, in float32
        spacings: the course's yardstick, rounding within 10),
        "one device" (one device's weights after the epoch: what a step of your own should reach).

    Lesson: notebooks/15-fit-across-replicas.ipynb
    """
    per_token = keras.losses.SparseCategoricalCrossentropy(True, reduction="mean_with_sample_weight")
    net = lambda: mlp(inputs=int(np.shape(x)[1]))  # noqa: E731  the same initial weights each time
    path = weights_path(_compiled(net(), per_token), x, y, sample_weight=tokens, batch_size=batch_size)
    with strategy.scope():
        plain = _compiled(net(), per_token)
        mine = _compiled(TokenStep(net(), 1, keras.losses.SparseCategoricalCrossentropy(True, reduction="none")))
        for model in (plain, mine):  # mirrored fit, then the token step: one epoch each
            model.fit(x, y, sample_weight=tokens, batch_size=batch_size, shuffle=False, verbose=0)
    halves = np.asarray(tokens).reshape(-1, 2, batch_size // 2).sum(axis=2) if len(x) % batch_size == 0 else None
    return {"uneven batches": None if halves is None else int((halves[:, 0] != halves[:, 1]).sum()),
            "mirrored fit": each_update_miss(plain, strategy, path, (x, y, tokens), batch_size),
            "token step": spacings(mine.inner.get_weights(), path[-1]), "one device": path[-1]}


def _compiled(model, loss=None):
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss, jit_compile=False)
    return model


