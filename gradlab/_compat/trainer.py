"""The trainer: the hooks of fit and evaluate AccumulatingModel overrides, the symbolic build,
loss trackers, fit's validation call.

Each function's probe sits above it and runs at its first use (`_probing._probed`).
"""
from __future__ import annotations

import contextlib
import inspect

import keras
import tensorflow as tf

from ._probing import _broken, _probed


def _probe_fit_hooks():
    expected = {"_maybe_symbolic_build": ["self", "iterator", "data_batch"],
                "_get_metrics_result_or_logs": ["self", "logs"]}
    for name, parameters in expected.items():
        method = getattr(keras.Model, name, None)
        if method is None or list(inspect.signature(method).parameters) != parameters:
            raise _broken(f"keras.Model no longer defines {name}({', '.join(parameters[1:])}), "
                          "which AccumulatingModel overrides")
    calls = []

    class Recording(keras.Model):
        def _maybe_symbolic_build(self, iterator=None, data_batch=None):
            # fit and evaluate hand over Keras's epoch iterator: tuples ending in the batches
            if iterator is not None:
                for item in iterator:
                    calls.append(("build", len(item), len(tf.nest.flatten(next(item[-1])))))
                    break
            return super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

        def _get_metrics_result_or_logs(self, logs):
            calls.append(("logs", sorted(logs)))
            return {**super()._get_metrics_result_or_logs(logs), "hooked": 1.0}

    inputs = keras.Input((1,))
    model = Recording(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    x = tf.zeros((4, 1))
    fitted = model.fit(x, x, batch_size=2, verbose=0).history
    evaluated = model.evaluate(x, x, batch_size=2, verbose=0, return_dict=True)
    shape = calls[0][1] if calls and calls[0][0] == "build" else None
    if calls != [("build", shape, 2), ("logs", ["loss"])] * 2 or shape not in EPOCH_ITEMS or \
            "hooked" not in fitted or "hooked" not in evaluated:
        raise _broken("Keras's fit and evaluate no longer call _maybe_symbolic_build(iterator=) "
                      "with their epoch iterator and report _get_metrics_result_or_logs(logs) "
                      f"as the epoch's logs (recorded: {calls})")
    return f"the epoch iterator yields {EPOCH_ITEMS[shape]}"


# Keras's epoch iterator yields tuples ending in the batches' iterator; what comes before changed.
EPOCH_ITEMS = {2: "(step, batches) pairs (Keras 3.8-3.10)",
               3: "(first step, last step, batches) triples (Keras 3.11-3.15)"}


@_probed(_probe_fit_hooks)
def check_fit_hooks():
    """Raise RuntimeError (naming the versions) unless Keras's `fit` and `evaluate` still call
    `keras.Model._maybe_symbolic_build(iterator=, data_batch=)` with their epoch iterator and
    report what `_get_metrics_result_or_logs(logs)` returns: `AccumulatingModel` overrides both.
    Checked once per process, by a tiny eager fit."""


@_probed(_probe_fit_hooks)
def first_replica_batch(strategy, epoch_iterator):
    """The first replica's part of the first batch. Keras's `_maybe_symbolic_build` builds a
    model from the MEAN of the replicas' first parts, which fails when the first batch splits
    unevenly (63 rows on 2 replicas); one replica's part is enough to build from."""
    for *_, it in epoch_iterator:  # EPOCH_ITEMS: the batches come last in every version
        batch = next(it)
        return tf.nest.map_structure(
            lambda v: strategy.experimental_local_results(v)[0]
            if isinstance(v, tf.distribute.DistributedValues) else v, batch)


def _probe_symbolic_build():
    model = keras.Sequential([keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model._symbolic_build(data_batch=(tf.zeros((2, 3)), tf.zeros((2, 1)), None))
    if not (model.built and model.optimizer.built):
        raise _broken("Keras models no longer build their layers and optimizer from a batch "
                      "in _symbolic_build(data_batch=)")


@_probed(_probe_symbolic_build)
def symbolic_build(model, data_batch):
    """Build `model`'s layers, compiled metrics and optimizer from `data_batch`, symbolically
    (Keras does this itself only under a tf.distribute strategy; on one device it builds
    while tracing the step, after the step has read the trainable variables)."""
    model._symbolic_build(data_batch=data_batch)


def _probe_loss_tracker():
    inputs = keras.Input((1,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    loss = model.train_on_batch(tf.ones((2, 1)), tf.ones((2, 1)))
    tracker = getattr(model, "_loss_tracker", None)
    if not isinstance(tracker, keras.metrics.Mean) or tracker not in model.metrics or \
            float(tracker.result()) != float(loss):
        raise _broken("Keras's train_step no longer reports the loss through the Mean "
                      "metric _loss_tracker")


@_probed(_probe_loss_tracker)
def loss_tracker(model):
    """The `Mean` metric Keras's own `train_step` reports the loss through."""
    return model._loss_tracker


def _probe_output_losses():
    inputs = keras.Input((1,))
    model = keras.Model(inputs, [keras.layers.Dense(1, name="a")(inputs), keras.layers.Dense(1, name="b")(inputs)])
    if model._compile_loss is not None:
        raise _broken("an uncompiled Keras model's _compile_loss is no longer None")
    model.compile(loss=["mse", "mse"])
    model.compute_loss(x=tf.zeros((2, 1)), y=[tf.ones((2, 1))] * 2, y_pred=[tf.zeros((2, 1))] * 2)
    trackers = [m for m in model._compile_loss.metrics if m is not None]
    if len(trackers) != 2 or [float(m.count) for m in trackers] != [2.0, 2.0]:
        raise _broken("Keras no longer tracks each output's loss in its compile loss's metrics, "
                      "weighted by the batch's size")


@_probed(_probe_output_losses)
def output_loss_trackers(model, y=None, y_pred=None):
    """Keras's per-output loss trackers of `model` (none for one output or before compile),
    built from `y` and `y_pred` if Keras has not yet and both are given."""
    compile_loss = model._compile_loss
    if compile_loss is None:
        return []
    if not compile_loss.built and y_pred is not None:
        compile_loss.build(y, y_pred)
    return [m for m in (compile_loss.metrics if compile_loss.built else []) if m is not None]


@contextlib.contextmanager
def output_loss_weight(model, weight, y, y_pred):
    """While active, Keras's per-output loss trackers (the `<output>_loss` logs of a model
    with several outputs) weigh each update by the tensor `weight` instead of the batch's
    static size (None, so 1 per update, where `fit` traces with an unknown batch). `y` and
    `y_pred` build the trackers if Keras has not yet (on one device it builds them at the
    first loss it computes)."""
    trackers = output_loss_trackers(model, y, y_pred)
    for m in trackers:
        update = type(m).update_state.__get__(m)
        object.__setattr__(m, "update_state",
                           lambda values, sample_weight=None, update=update: update(values, sample_weight=weight))
    try:
        yield
    finally:
        for m in trackers:
            m.__dict__.pop("update_state", None)


def _probe_cached_eval():
    seen = []

    class Recording(keras.Model):
        def evaluate(self, *args, **kwargs):
            seen.append(kwargs.get("_use_cached_eval_dataset"))
            return super().evaluate(*args, **kwargs)

    inputs = keras.Input((1,))
    model = Recording(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    x = tf.zeros((4, 1))
    model.fit(x, x, batch_size=2, validation_data=(x, x), verbose=0)
    if seen != [True]:
        raise _broken("keras.Model.fit no longer validates through "
                      "evaluate(..., _use_cached_eval_dataset=True)")


@_probed(_probe_cached_eval)
def fit_validation(kwargs):
    """Whether `evaluate` was called by Keras's own `fit` for its validation data: Keras passes
    the private keyword `_use_cached_eval_dataset=True` and feeds that data itself."""
    return bool(kwargs.get("_use_cached_eval_dataset"))


def _probe_save_signature():
    signature = getattr(keras.Model, "_default_save_signature", None)
    if not isinstance(signature, property):
        raise _broken("keras.Model no longer has the _default_save_signature property that "
                      "tf.saved_model.save reads its serving_default from")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    if not hasattr(model._default_save_signature, "get_concrete_function"):
        raise _broken("keras.Model._default_save_signature is no longer a tf.function")


@_probed(_probe_save_signature)
def default_save_signature(model):
    """`model`'s serving_default for tf.saved_model.save (a tf.function of its inputs)."""
    return model._default_save_signature


PRIVATE_NAMES = {
    "_maybe_symbolic_build": _probe_fit_hooks,
    "_get_metrics_result_or_logs": _probe_fit_hooks,
    "_symbolic_build": _probe_symbolic_build,
    "_loss_tracker": _probe_loss_tracker,
    "_compile_loss": _probe_output_losses,
    "_use_cached_eval_dataset": _probe_cached_eval,
    "_default_save_signature": _probe_save_signature,
}
