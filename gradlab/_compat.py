"""Every private Keras/TensorFlow name gradlab relies on, in one place, each checked at first use.

Keras 3 and TensorFlow offer no public switch for what these do. Each function says what it
assumes; the first call runs a small probe of that assumption and raises a RuntimeError that
names the installed versions if it no longer holds, instead of training silently wrong.
Keras internals are imported lazily, here only: importing gradlab does not depend on them.

Tested with the ranges in pyproject.toml (Keras 3.10-3.15, TensorFlow 2.16-2.21).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import threading

import keras
import tensorflow as tf

_made = itertools.count(1)


def _broken(what):
    return RuntimeError(f"{what} (keras {keras.__version__}, tensorflow {tf.__version__}); "
                        "gradlab is tested with the versions pyproject.toml names")


def _probed(probe):
    """Run `probe` (raises RuntimeError if an assumption broke) once, before the first use."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not wrapper.checked:
                _in_a_fresh_thread(probe)
                wrapper.checked = True
            return fn(*args, **kwargs)
        wrapper.checked = False
        return wrapper
    return decorate


def _in_a_fresh_thread(probe):
    """Run `probe` eagerly and outside any distribution strategy (graphs and strategy scopes
    are per thread), even when its first use is while a replica step is traced."""
    errors = []

    def run():
        try:
            probe()
        except BaseException as e:  # handed to the caller's thread
            errors.append(e)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


# -- masks ------------------------------------------------------------------------------
def _get_mask(x):
    from keras.src.backend.common.masking import get_keras_mask
    return get_keras_mask(x)


def _probe_mask():
    m = _get_mask(keras.layers.Embedding(3, 2, mask_zero=True)(tf.constant([[1, 0]])))
    if m is None or m.numpy().tolist() != [[True, False]]:
        raise _broken("Embedding(mask_zero=True) no longer leaves a Keras mask on its output")


@_probed(_probe_mask)
def keras_mask(x):
    """The Keras mask a layer left on tensor `x` (`Embedding(mask_zero=True)`, `Masking`), or None."""
    return _get_mask(x)


# -- losses under a distribution strategy ------------------------------------------------
def _probe_loss_division():
    from keras.src.losses import loss as keras_loss
    saved = keras_loss.scale_loss_for_distribution
    keras_loss.scale_loss_for_distribution = lambda value: value * 0.0
    try:
        routed = float(keras.losses.MeanSquaredError()(tf.zeros((2, 1)), tf.ones((2, 1)))) == 0.0
    finally:
        keras_loss.scale_loss_for_distribution = saved
    if not routed:
        raise _broken("Keras loss objects no longer divide by the replicas through "
                      "keras.src.losses.loss.scale_loss_for_distribution")
    from keras.src.trainers import compile_utils
    if getattr(compile_utils, "loss_module", None) is not keras_loss or \
            not callable(getattr(keras_loss, "unscale_loss_for_distribution", None)):
        raise _broken("Keras's per-output loss trackers no longer undo the division through "
                      "keras.src.losses.loss.unscale_loss_for_distribution")


@contextlib.contextmanager
@_probed(_probe_loss_division)
def _no_loss_division():
    from keras.src.losses import loss as keras_loss
    saved = keras_loss.scale_loss_for_distribution, keras_loss.unscale_loss_for_distribution
    keras_loss.scale_loss_for_distribution = keras_loss.unscale_loss_for_distribution = \
        lambda value: value
    try:
        yield
    finally:
        keras_loss.scale_loss_for_distribution, keras_loss.unscale_loss_for_distribution = saved


def losses_not_divided_by_replicas():
    """While active (while a replica step is traced), Keras loss objects return plain means.

    Inside a strategy a Keras 3 loss object divides its mean by `num_replicas_in_sync`, so
    that a SUM all-reduce of equal shards gives the mean (and Keras's per-output loss
    trackers multiply it back: not while this is active either). gradlab sums unnormalised losses
    and normalisers over replicas instead (exact for uneven shards), and a user's loss may
    add terms of its own that Keras does not divide: no factor applied afterwards undoes a
    division of one term only (measured: 8e-3 off after 3 updates). So: no division.
    """
    return _no_loss_division()


# -- optimizers --------------------------------------------------------------------------
def _probe_all_reduce():
    opt = keras.optimizers.SGD(0.1)
    v = keras.Variable([1.0])
    calls = []
    opt._all_reduce_sum_gradients = lambda pairs: calls.append(1) or list(pairs)
    try:
        opt.apply([tf.constant([1.0])], [v])
    finally:
        del opt._all_reduce_sum_gradients
    if calls != [1]:
        raise _broken("Keras optimizers no longer all-reduce gradients through "
                      "_all_reduce_sum_gradients")


@contextlib.contextmanager
@_probed(_probe_all_reduce)
def _passthrough(chain):
    # Nested or repeated entries (Keras traces replicas in threads) each put back what they found.
    saved = [opt.__dict__.get("_all_reduce_sum_gradients") for opt in chain]
    for opt in chain:
        opt._all_reduce_sum_gradients = list
    try:
        yield
    finally:
        for opt, before in zip(chain, saved):
            if before is None:
                opt.__dict__.pop("_all_reduce_sum_gradients", None)
            else:
                opt._all_reduce_sum_gradients = before


def gradients_already_reduced(optimizer):
    """While active, `apply_gradients` does not all-reduce the gradients again.

    Keras 3's TensorFlow optimizer SUM-all-reduces what it gets in a replica context. gradlab's
    gradients are summed already (one all-reduce with the loss and normaliser): a second one
    would multiply the update by the replicas (measured: 2.0 on two). Outside tf.distribute it
    is an identity built with custom_gradient, which cannot be made inside a tf.cond branch.
    Keras 2 had `experimental_aggregate_gradients=False`; Keras 3 has no switch.
    """
    return _passthrough(optimizer_chain(optimizer))


def optimizer_chain(optimizer):
    """The optimizer and any it wraps (a LossScaleOptimizer's inner_optimizer)."""
    chain = [optimizer]
    while getattr(chain[-1], "inner_optimizer", None) is not None:
        chain.append(chain[-1].inner_optimizer)
    return chain


def counters(optimizer):
    """The step counters of `optimizer` and the optimizers it wraps (each its own variable)."""
    found = []
    for opt in optimizer_chain(optimizer):
        v = opt._iterations
        if not any(v is f for f in found):
            found.append(v)
    return found


def keras_accumulators(optimizer):
    """The accumulators of Keras's own `gradient_accumulation_steps` (empty without it)."""
    return list(getattr(optimizer, "_accumulated_gradients", None) or [])


def ema_variables(optimizer):
    """The moving averages of the weights an optimizer with `use_ema=True` keeps."""
    return list(optimizer._model_variables_moving_average)


def optimizer_knows(optimizer, variable):
    """Whether `optimizer` was built with `variable` (Keras refuses to apply to others)."""
    return optimizer._var_key(variable) in optimizer._trainable_variables_indices


# -- distribution ------------------------------------------------------------------------
def mirrored_strategy(devices=None):
    """`tf.distribute.MirroredStrategy(devices)` with collective keys of its own.

    Every MirroredStrategy numbers its collectives from the same keys, and the runtime
    remembers a key's shape for the whole process: a second strategy whose all-reduce has
    another shape fails with "Shape mismatch in the collective instance 100" and aborts all
    collectives until a restart. A fresh key range per strategy (as TensorFlow's own tests
    do) lets a notebook make many.
    """
    cls = tf.distribute.MirroredStrategy
    saved = getattr(cls, "_collective_key_base", None)
    if not isinstance(saved, int):
        raise _broken("MirroredStrategy has no integer _collective_key_base")
    cls._collective_key_base = saved + 100_000 * next(_made)
    try:
        return cls(devices)
    finally:
        cls._collective_key_base = saved


def first_replica_batch(strategy, epoch_iterator):
    """The first replica's part of the first batch. Keras's `_maybe_symbolic_build` builds a
    model from the MEAN of the replicas' first parts, which fails when the first batch splits
    unevenly (63 rows on 2 replicas); one replica's part is enough to build from."""
    for _, _, it in epoch_iterator:
        batch = next(it)
        return tf.nest.map_structure(
            lambda v: strategy.experimental_local_results(v)[0]
            if isinstance(v, tf.distribute.DistributedValues) else v, batch)


def _probe_symbolic_build():
    if not callable(getattr(keras.Model, "_symbolic_build", None)):
        raise _broken("Keras models no longer build their state from a batch in _symbolic_build")


@_probed(_probe_symbolic_build)
def symbolic_build(model, data_batch):
    """Build `model`'s layers, compiled metrics and optimizer from `data_batch`, symbolically
    (Keras does this itself only under a tf.distribute strategy; on one device it builds
    while tracing the step, after the step has read the trainable variables)."""
    model._symbolic_build(data_batch=data_batch)


def reducible_by_keras(logs, strategy):
    """Under MultiWorkerMirroredStrategy, Keras's fit reduces the logs of a step with
    `strategy.reduce("MEAN", value, axis=0)`, which fails on scalars, and every metric
    result is one (keras 3.15, `reduce_per_replica`): give them a leading axis of 1."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and \
            strategy.extended._in_multi_worker_mode():
        return {k: tf.reshape(v, [1]) for k, v in logs.items()}
    return logs


def loss_tracker(model):
    """The `Mean` metric Keras's own `train_step` reports the loss through."""
    return model._loss_tracker


def _probe_output_losses():
    inputs = keras.Input((1,))
    model = keras.Model(inputs, [keras.layers.Dense(1, name="a")(inputs), keras.layers.Dense(1, name="b")(inputs)])
    model.compile(loss=["mse", "mse"])
    model.compute_loss(x=tf.zeros((2, 1)), y=[tf.ones((2, 1))] * 2, y_pred=[tf.zeros((2, 1))] * 2)
    trackers = [m for m in model._compile_loss.metrics if m is not None]
    if len(trackers) != 2 or [float(m.count) for m in trackers] != [2.0, 2.0]:
        raise _broken("Keras no longer tracks each output's loss in its compile loss's metrics, "
                      "weighted by the batch's size")


def output_loss_trackers(model, y=None, y_pred=None):
    """Keras's per-output loss trackers of `model` (none for one output), built from `y`
    and `y_pred` if Keras has not yet and both are given."""
    compile_loss = getattr(model, "_compile_loss", None)
    if compile_loss is None:
        return []
    if not compile_loss.built and y_pred is not None:
        compile_loss.build(y, y_pred)
    return [m for m in (compile_loss.metrics if compile_loss.built else []) if m is not None]


@contextlib.contextmanager
@_probed(_probe_output_losses)
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


def tf_initialised():
    """Whether TensorFlow's runtime has started (logical devices can no longer be made)."""
    from tensorflow.python.eager import context
    return context.context()._context_handle is not None


# -- layers ------------------------------------------------------------------------------
def sublayers(model):
    """Every layer inside `model`, nested models included (not `model` itself)."""
    return list(model._flatten_layers(include_self=False, recursive=True))


def _probe_moments():
    if not callable(getattr(keras.layers.BatchNormalization, "_moments", None)):
        raise _broken("BatchNormalization no longer computes its batch statistics in _moments")


@contextlib.contextmanager
@_probed(_probe_moments)
def batchnorm_moments(layer, record):
    """While active, `layer` (a BatchNormalization) computes its batch moments through
    `record(inputs, mask, moments)`, where `moments` is Keras's own computation."""
    moments = type(layer)._moments.__get__(layer)
    object.__setattr__(layer, "_moments", lambda inputs, mask: record(inputs, mask, moments))
    try:
        yield
    finally:
        del layer.__dict__["_moments"]
