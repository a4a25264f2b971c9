"""`AccumulatingModel.fit` on K worker processes, against Keras's plain `fit` in one process.

    every worker:  with MultiWorkerMirroredStrategy().scope():  acc = AccumulatingModel(model, N)
                   acc.fit(x, y, batch_size=B, shuffle=False)   # each worker takes its shard
    reference:     model.fit(x, y, batch_size=B, shuffle=False)  # plain Keras, one process

The same data, the same initial weights (`make_model(seed)`), the same optimizer: the weights
after the epoch agree to float rounding, and so does the running `loss` Keras logs after
each batch. `multiworker.py` starts the processes (`--fit`); this module holds what each of
them trains.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import numpy as np


def fit_data(updates, batch):
    """The first `updates * batch` shipped MNIST training examples, as writable arrays."""
    from ..data import load_mnist
    data = load_mnist()
    n = updates * batch
    return np.array(data.x_train[:n]), np.array(data.y_train[:n])


def reference(model, optimizer, lr, seed, updates, batch):
    """Plain Keras `fit` in this process: `(weights, running loss after each batch)`."""
    from ..models import make_model
    from ...classic.optimizers import make_optimizer
    net = make_model(model, seed=seed)
    net.compile(optimizer=make_optimizer(optimizer, lr), loss=_loss())
    losses = _Losses()
    net.fit(*fit_data(updates, batch), batch_size=batch, epochs=1, shuffle=False, verbose=0,
            callbacks=[losses])
    return [np.asarray(w) for w in net.trainable_variables], np.array(losses.values)


def worker(distribution, model, optimizer, lr, seed, accum_steps, updates, batch, fail=False):
    """`AccumulatingModel.fit` under `distribution` (this worker's side of the cluster);
    `fail`: raise after the first update (to test that the parent reports it).

    Returns:
        dict: `weights` (trainable, in order), `losses` (running loss after each batch),
        `examples` (this worker's rows of the first global batch) and `all_reduces` (per
        replica per update, counted in the traced step).
    """
    import tensorflow as tf

    from ...training.fit import AccumulatingModel
    from .fit_collectives import all_reduces_per_update
    from ..models import make_model
    from ...classic.optimizers import make_optimizer
    x, y = fit_data(updates, batch)
    with distribution.scope():
        acc = AccumulatingModel(make_model(model, seed=seed), accum_steps=accum_steps)
        acc.compile(optimizer=make_optimizer(optimizer, lr), loss=_loss())
    losses = _Losses(fail)
    acc.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0, callbacks=[losses])

    # This worker's shard of the first global batch, as tf.distribute splits one.
    first = distribution.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, y)).batch(batch))
    shard = next(iter(first))[0]
    examples = sum(int(t.shape[0]) for t in distribution.experimental_local_results(shard))

    # The step as fit traces it (never run here): its all-reduce ops, per local replica.
    all_reduces = all_reduces_per_update(acc, distribution, x, y)
    return {"weights": [v.numpy() for v in acc.trainable_variables], "losses": np.array(losses.values),
            "examples": examples, "all_reduces": all_reduces}


def _loss():
    import keras
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _Losses(fail=False):
    import keras

    class Losses(keras.callbacks.Callback):
        """The running mean `loss` Keras logs after each batch."""

        def __init__(self):
            super().__init__()
            self.values = []

        def on_train_batch_end(self, batch, logs=None):
            self.values.append(float(logs["loss"]))
            if fail:
                raise RuntimeError("failing on purpose after update 1 (--fail)")
    return Losses()
