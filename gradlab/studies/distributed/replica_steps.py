"""The Keras plumbing of lesson 15's hand-written `train_step`s under a `tf.distribute` strategy.

    StepBase(inner, accum_steps, loss_fn)   a keras.Model around `inner`: N micro-batches, a loss
                                            function and the logged loss (a Mean metric)
    with_step(step)                         a StepBase class whose train_step is step(model, data)
    UnrolledStep                            lesson 10's step, shortened: sum_i (n_i / n) L_i, one apply
    weights_path(model, x, y, **fit_args)   the weights before each update of `model.fit`, and after the last
    each_update_miss(model, strategy, path, arrays, batch_size)
                                            lesson 01's miss of each of model's updates, each one run
                                            from path[t]: |w - path[t+1]| / |path[t+1] - path[t]|

Nothing here is what lesson 15 teaches: its lessons are the steps written on top of these.

Lesson: notebooks/15-fit-across-replicas.ipynb, notebooks/16-clipping-across-replicas.ipynb
"""
from __future__ import annotations

import keras
import tensorflow as tf

from ..runs.pitfalls import relative_error


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


class UnrolledStep(StepBase):
    """Lesson 10's step, shortened: micro-batch i's Keras mean loss L_i weighted n_i / n (the same
    result as summing and dividing once by n), the gradients added, one `apply` a batch."""

    def train_step(self, data):
        x, y = data
        n, N = tf.shape(x)[0], self.accum_steps  # the rows this step sees, the micro-batches
        q, r = n // N, n % N  # lesson 01's split: the first r micro-batches get q + 1 rows
        total, batch_loss = [tf.zeros_like(v) for v in self.trainable_variables], 0.0
        for i in range(N):  # a Python loop: unrolled in the traced step
            lo, hi = i * q + tf.minimum(i, r), (i + 1) * q + tf.minimum(i + 1, r)
            with tf.GradientTape() as tape:
                share = tf.cast(hi - lo, "float32") / tf.cast(n, "float32")
                scaled = share * self.loss_fn(y[lo:hi], self(x[lo:hi], training=True))
            total = [t + g for t, g in zip(total, tape.gradient(scaled, self.trainable_variables))]
            batch_loss += scaled
        self.optimizer.apply(total, self.trainable_variables)  # once per batch
        self.loss_tracker.update_state(batch_loss, sample_weight=n)  # a mean over rows, as Keras logs it
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
