"""Every private Keras/TensorFlow name gradlab relies on, in one place, each checked at first use.

Keras 3 and TensorFlow offer no public switch for what these do. Each function says what it
assumes; the first call runs a small probe of that assumption and raises a RuntimeError that
names the installed versions if it no longer holds, instead of training silently wrong.
Keras internals are imported lazily, here only: importing gradlab does not depend on them.
`PRIVATE_NAMES` lists every private name gradlab uses, each with its probe; tests/test_compat.py
checks the list against the source.

Tested with `TESTED` (pyproject.toml says which versions it accepts).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import threading
import weakref

import keras
import numpy as np
import tensorflow as tf

TESTED = "TensorFlow 2.21 and Keras 3.15"
_made = itertools.count(1)
_passed = set()  # probes that held in this process; a probe shared by several functions runs once


class _Broken(RuntimeError):
    """An assumption about Keras/TensorFlow that no longer holds."""


def _broken(what):
    return _Broken(f"{what} (keras {keras.__version__}, tensorflow {tf.__version__}); "
                   f"gradlab is tested with {TESTED}")


def _probed(probe):
    """Run `probe` (raises RuntimeError if an assumption broke) before the first use of the
    decorated function, once per process however many functions share it."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if probe not in _passed:
                _in_a_fresh_thread(probe)
                _passed.add(probe)
            return fn(*args, **kwargs)
        return wrapper
    return decorate


def _in_a_fresh_thread(probe):
    """Run `probe` eagerly and outside any distribution strategy (graphs and strategy scopes
    are per thread), even when its first use is while a replica step is traced."""
    errors = []

    def run():
        try:
            probe()
        except Exception as e:  # handed to the caller's thread; a name gone is as broken
            errors.append(e if isinstance(e, _Broken) else
                          _broken(f"{probe.__name__} failed: {type(e).__name__}: {e}"))
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


# -- masks ------------------------------------------------------------------------------
def _probe_mask():
    from keras.src.backend.common.masking import get_keras_mask
    m = get_keras_mask(keras.layers.Embedding(3, 2, mask_zero=True)(tf.constant([[1, 0]])))
    if m is None or m.numpy().tolist() != [[True, False]]:
        raise _broken("Embedding(mask_zero=True) no longer leaves a Keras mask on its output "
                      "where keras.src.backend.common.masking.get_keras_mask finds it")


@_probed(_probe_mask)
def keras_mask(x):
    """The Keras mask a layer left on tensor `x` (`Embedding(mask_zero=True)`, `Masking`), or None."""
    from keras.src.backend.common.masking import get_keras_mask
    return get_keras_mask(x)


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
    if compile_utils.loss_module is not keras_loss or \
            not callable(keras_loss.unscale_loss_for_distribution):
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


def _probe_iterations():
    # With gradient_accumulation_steps the public `iterations` counts updates, not applies:
    # `_iterations` is the variable apply() increments.
    opt = keras.optimizers.SGD(0.1, gradient_accumulation_steps=2)
    v = keras.Variable([1.0])
    opt.apply([tf.constant([1.0])], [v])
    counter = getattr(opt, "_iterations", None)
    if not isinstance(counter, keras.Variable) or int(counter.numpy()) != 1:
        raise _broken("Keras optimizers no longer count each apply() in the variable _iterations")


@_probed(_probe_iterations)
def counters(optimizer):
    """The step counters of `optimizer` and the optimizers it wraps (each its own variable)."""
    found = []
    for opt in optimizer_chain(optimizer):
        v = opt._iterations
        if not any(v is f for f in found):
            found.append(v)
    return found


def _probe_accumulators():
    opt = keras.optimizers.SGD(1.0, gradient_accumulation_steps=2)
    v = keras.Variable([0.0])
    opt.apply([tf.constant([3.0])], [v])  # the first of two: accumulated, not applied
    held = [a.numpy().tolist() for a in getattr(opt, "_accumulated_gradients", [])]
    if held != [[3.0]] or v.numpy().tolist() != [0.0]:
        raise _broken("Keras's gradient_accumulation_steps no longer holds the pending "
                      "gradients in the optimizer's _accumulated_gradients")


@_probed(_probe_accumulators)
def keras_accumulators(optimizer):
    """The accumulators of Keras's own `gradient_accumulation_steps` (empty without it, or
    before the optimizer is built: Keras makes them in `build`)."""
    if not optimizer.gradient_accumulation_steps or not optimizer.built:
        return []
    return list(optimizer._accumulated_gradients)


def _probe_ema():
    opt = keras.optimizers.SGD(1.0, use_ema=True)
    v = keras.Variable([1.0, 2.0])
    opt.apply([tf.constant([1.0, 1.0])], [v])  # Keras's first update copies the weights
    averages = getattr(opt, "_model_variables_moving_average", None) or []
    if [a.numpy().tolist() for a in averages] != [[0.0, 1.0]]:
        raise _broken("Keras optimizers with use_ema=True no longer keep the weights' moving "
                      "averages in _model_variables_moving_average")


@_probed(_probe_ema)
def ema_variables(optimizer):
    """The moving averages of the weights an optimizer with `use_ema=True` keeps."""
    return list(optimizer._model_variables_moving_average)


def _probe_variable_index():
    opt = keras.optimizers.SGD(0.1)
    v, other = keras.Variable([1.0]), keras.Variable([1.0])
    opt.build([v])
    if opt._var_key(v) not in opt._trainable_variables_indices or \
            opt._var_key(other) in opt._trainable_variables_indices:
        raise _broken("Keras optimizers no longer index the variables they were built with "
                      "in _trainable_variables_indices by _var_key")


@_probed(_probe_variable_index)
def optimizer_knows(optimizer, variable):
    """Whether `optimizer` was built with `variable` (Keras refuses to apply to others)."""
    return optimizer._var_key(variable) in optimizer._trainable_variables_indices


# -- distribution ------------------------------------------------------------------------
def _probe_collective_keys():
    cls = tf.distribute.MirroredStrategy
    base = getattr(cls, "_collective_key_base", None)
    if not isinstance(base, int):
        raise _broken("MirroredStrategy has no integer _collective_key_base")
    cls._collective_key_base = base + 7
    try:
        made = cls(["/cpu:0"])
    finally:
        cls._collective_key_base = base
    if getattr(made.extended, "_collective_key_base", None) != base + 7:
        raise _broken("MirroredStrategy no longer numbers its collectives from the class's "
                      "_collective_key_base when it is made")


@_probed(_probe_collective_keys)
def mirrored_strategy(devices=None):
    """`tf.distribute.MirroredStrategy(devices)` with collective keys of its own.

    Every MirroredStrategy numbers its collectives from the same keys, and the runtime
    remembers a key's shape for the whole process: a second strategy whose all-reduce has
    another shape fails with "Shape mismatch in the collective instance 100" and aborts all
    collectives until a restart. A fresh key range per strategy (as TensorFlow's own tests
    do) lets a notebook make many.
    """
    cls = tf.distribute.MirroredStrategy
    saved = cls._collective_key_base
    cls._collective_key_base = saved + 100_000 * next(_made)
    try:
        return cls(devices)
    finally:
        cls._collective_key_base = saved


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
            # fit and evaluate hand over Keras's epoch iterator: (step, step, batches) triples
            if iterator is not None:
                for _, _, batches in iterator:
                    calls.append(("build", len(tf.nest.flatten(next(batches)))))
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
    if calls != [("build", 2), ("logs", ["loss"])] * 2 or "hooked" not in fitted or \
            "hooked" not in evaluated:
        raise _broken("Keras's fit and evaluate no longer call _maybe_symbolic_build(iterator=) "
                      "with their epoch iterator and report _get_metrics_result_or_logs(logs) "
                      f"as the epoch's logs (recorded: {calls})")


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
    for _, _, it in epoch_iterator:
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


def _probe_multi_worker_mode():
    # The strategy's own override: one single-worker MultiWorkerMirroredStrategy would start
    # collectives in this process to show it.
    source = inspect.getsource(inspect.getmodule(tf.distribute.MultiWorkerMirroredStrategy))
    if "def _in_multi_worker_mode(self)" not in source or \
            tf.distribute.get_strategy().extended._in_multi_worker_mode() is not False:
        raise _broken("tf.distribute strategies no longer say whether they span workers "
                      "through extended._in_multi_worker_mode()")


@_probed(_probe_multi_worker_mode)
def reducible_by_keras(logs, strategy):
    """Under MultiWorkerMirroredStrategy, Keras's fit reduces the logs of a step with
    `strategy.reduce("MEAN", value, axis=0)`, which fails on scalars, and every metric
    result is one (keras 3.15, `reduce_per_replica`): give them a leading axis of 1."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and \
            strategy.extended._in_multi_worker_mode():
        return {k: tf.reshape(v, [1]) for k, v in logs.items()}
    return logs


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


def _probe_context_handle():
    # Must not start the runtime itself: tower_devices asks before making logical devices.
    from tensorflow.python.eager import context
    ctx = context.context()
    if "_context_handle" not in vars(ctx) or (ctx._context_handle is not None) != ctx._initialized:
        raise _broken("TensorFlow's eager context no longer holds the runtime's handle in "
                      "_context_handle (None until it starts)")


@_probed(_probe_context_handle)
def tf_initialised():
    """Whether TensorFlow's runtime has started (logical devices can no longer be made)."""
    from tensorflow.python.eager import context
    return context.context()._context_handle is not None


# -- layers ------------------------------------------------------------------------------
def _probe_flatten_layers():
    inner = keras.Sequential([keras.layers.Dense(1, name="leaf")], name="inner")
    outer = keras.Sequential([keras.Input((2,)), inner], name="outer")
    found = [l.name for l in outer._flatten_layers(include_self=False, recursive=True)
             if not isinstance(l, keras.layers.InputLayer)]
    if sorted(found) != ["inner", "leaf"]:
        raise _broken(f"Keras's _flatten_layers(include_self=False, recursive=True) no longer "
                      f"lists the nested layers of a model (got {found})")


@_probed(_probe_flatten_layers)
def sublayers(model):
    """Every layer inside `model`, nested models included (not `model` itself)."""
    return list(model._flatten_layers(include_self=False, recursive=True))


def _probe_moments():
    moments = getattr(keras.layers.BatchNormalization, "_moments", None)
    if not callable(moments) or list(inspect.signature(moments).parameters) != ["self", "inputs", "mask"]:
        raise _broken("BatchNormalization no longer computes its batch statistics in "
                      "_moments(inputs, mask)")
    layer = keras.layers.BatchNormalization()
    seen = []
    object.__setattr__(layer, "_moments", lambda inputs, mask: seen.append(1) or (
        tf.zeros(inputs.shape[-1:]), tf.ones(inputs.shape[-1:])))
    layer(tf.ones((2, 3)), training=True)
    if seen != [1]:
        raise _broken("BatchNormalization(training=True) no longer calls its _moments")


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


# -- fit's arrays --------------------------------------------------------------------------
def _probe_arrays():
    from keras.src.trainers.data_adapters import array_data_adapter, array_slicing, data_adapter_utils
    x, y = np.arange(8.0).reshape(4, 2), np.array([0, 1, 1, 0])
    (xt, yt, _), (xv, yv, _) = array_slicing.train_validation_split((x, y, None), 0.25)
    sliced = array_slicing.convert_to_sliceable((xt, yt), target_backend="tensorflow")
    weights = data_adapter_utils.class_weight_to_sample_weights(yt, {1: 2.0})
    if not (array_data_adapter.can_convert_arrays((x, y, None))
            and not array_data_adapter.can_convert_arrays((tf.data.Dataset.range(2), None, None))
            and xv.tolist() == [[6.0, 7.0]] and yv.tolist() == [0]
            and all(isinstance(t, np.ndarray) for t in sliced)
            and sliced[0].dtype == keras.backend.floatx() and sliced[1].dtype == np.int64
            and weights.tolist() == [1.0, 2.0, 2.0]):
        raise _broken("Keras's array pipeline (keras.src.trainers.data_adapters: "
                      "can_convert_arrays, train_validation_split, convert_to_sliceable, "
                      "class_weight_to_sample_weights) no longer prepares arrays as it did")


@_probed(_probe_arrays)
def fit_arrays(x, y, sample_weight, class_weight, validation_split, validation_data):
    """`((x, y, sample_weight), validation_data)` as Keras's `fit` trains on them: the last
    `validation_split` of the rows held out (unless `validation_data`), `class_weight` made
    into sample weights, floats cast to floatx, each a numpy array or a dense tf.Tensor;
    None when Keras would not treat the inputs as arrays (a dataset, a generator) or holds
    one as a sparse or ragged tensor."""
    from keras.src.trainers.data_adapters import array_data_adapter, array_slicing, data_adapter_utils
    if not array_data_adapter.can_convert_arrays((x, y, sample_weight)):
        return None
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = array_slicing.train_validation_split(
            (x, y, sample_weight), validation_split=validation_split)
    if class_weight is not None:
        sample_weight = data_adapter_utils.class_weight_to_sample_weights(y, class_weight)
    arrays = array_slicing.convert_to_sliceable((x, y, sample_weight), target_backend="tensorflow")
    if not all(t is None or isinstance(t, (np.ndarray, tf.Tensor)) for t in tf.nest.flatten(arrays)):
        return None
    return keras.tree.lists_to_tuples(arrays), validation_data


# Every private Keras/TensorFlow name gradlab uses (attributes, overridden methods, members
# of keras.src / tensorflow.python modules), with the probe that checks it.
PRIVATE_NAMES = {
    "keras.src.backend.common.masking.get_keras_mask": _probe_mask,
    "keras.src.losses.loss": _probe_loss_division,
    "keras.src.losses.loss.scale_loss_for_distribution": _probe_loss_division,
    "keras.src.losses.loss.unscale_loss_for_distribution": _probe_loss_division,
    "keras.src.trainers.compile_utils.loss_module": _probe_loss_division,
    "_all_reduce_sum_gradients": _probe_all_reduce,
    "_iterations": _probe_iterations,
    "_accumulated_gradients": _probe_accumulators,
    "_model_variables_moving_average": _probe_ema,
    "_var_key": _probe_variable_index,
    "_trainable_variables_indices": _probe_variable_index,
    "_collective_key_base": _probe_collective_keys,
    "_maybe_symbolic_build": _probe_fit_hooks,
    "_get_metrics_result_or_logs": _probe_fit_hooks,
    "_symbolic_build": _probe_symbolic_build,
    "_in_multi_worker_mode": _probe_multi_worker_mode,
    "_loss_tracker": _probe_loss_tracker,
    "_compile_loss": _probe_output_losses,
    "tensorflow.python.eager.context.context": _probe_context_handle,
    "_context_handle": _probe_context_handle,
    "_initialized": _probe_context_handle,
    "_flatten_layers": _probe_flatten_layers,
    "_moments": _probe_moments,
    "keras.src.trainers.data_adapters.array_data_adapter.can_convert_arrays": _probe_arrays,
    "keras.src.trainers.data_adapters.array_slicing.train_validation_split": _probe_arrays,
    "keras.src.trainers.data_adapters.array_slicing.convert_to_sliceable": _probe_arrays,
    "keras.src.trainers.data_adapters.data_adapter_utils.class_weight_to_sample_weights": _probe_arrays,
}


# -- issue 31 (fitinputs): a user's MirroredStrategy, made any number of times ----------------
# Every tf.distribute.MirroredStrategy made without gradlab numbers its collectives from the
# same group and instance keys, and the runtime remembers each key's shape for the whole
# process: gradlab's all-reduces under a second such strategy met the first one's shapes
# ("Shape mismatch in the collective instance 106"). Moving a strategy's instance keys to a
# range of its own, before gradlab traces anything under it, makes them independent.
_own_keys = weakref.WeakSet()


def _probe_instance_keys():
    made = tf.distribute.MirroredStrategy(["/cpu:0"])
    keys = getattr(made.extended, "_collective_keys", None)
    table = getattr(keys, "_instance_key_table", None)
    if not isinstance(table, dict) or not table or not all(
            isinstance(group, dict) and all(isinstance(v, int) for v in group.values())
            for group in table.values()):
        raise _broken("MirroredStrategy's extended._collective_keys no longer holds an "
                      "_instance_key_table of {group: {device: next instance key}}")
    for group_key, group in table.items():
        for device in group:
            group[device] = 12345
            if keys.get_instance_key(group_key, device) != 12345:
                raise _broken("CollectiveKeys.get_instance_key no longer reads _instance_key_table")


@_probed(_probe_instance_keys)
def own_instance_keys(strategy):
    """Give `strategy` (a one-machine `tf.distribute.MirroredStrategy`) collective instance keys
    no other strategy of this process uses, once per strategy; other strategies (several
    workers must agree on their keys) are left as they are."""
    if type(strategy) is not tf.distribute.MirroredStrategy or strategy in _own_keys:
        return
    _own_keys.add(strategy)
    for group in strategy.extended._collective_keys._instance_key_table.values():
        # the devices of a group advance together; a fresh range 100,000 keys wide
        fresh = max(group.values(), default=0) + 100_000 * next(_made)
        for device in group:
            group[device] = fresh


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


PRIVATE_NAMES.update({
    "_default_save_signature": _probe_save_signature,
    "_collective_keys": _probe_instance_keys,
    "_instance_key_table": _probe_instance_keys,
})
