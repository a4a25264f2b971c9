"""`AccumulatingModel`: gradient accumulation inside `model.fit`, equal to Keras's large batch.

    one fit step, batch of B rows = the micro-batches of split_sizes(B, accum_steps):
        S_i = D_i * L_i      L_i: Keras's own loss of micro-batch i (weights, masks, penalties)
        D_i = rows of i (or its counted entries: a masked output, a loss's ignore_class)
    w <- optimizer(w, (dS_1 + ... + dS_k) / (D_1 + ... + D_k))             (once per step)

The update is `engine.update`, the one `step(x, y)` makes; this class adds Keras's glue
(metrics, logs, callbacks, saving). The contract is checked inside the update, on the
micro-batches' own predictions (`contract`): the data is read as Keras reads it, once, and
the model runs only the update's forward passes. A loss that is not a mean over rows or
entries is refused before the update applies. `batch_size` is the
effective batch, so epochs, callbacks, schedules, EMA and checkpoints all count updates.
`fit` retraces its step with an unknown batch dimension once batches differ in size (a short
last batch); the split is then made at run time, with no padding: only real rows reach the model and its metrics. `class_weight` and
`sample_weight` keep Keras's own normalisation (`sum_over_batch_size`: divided by the
entries, not by the sum of the weights). Under `tf.distribute` each replica sums its shard
and one all-reduce adds the sums and the normalisers, which is exact for uneven shards
(Keras's own mirrored `fit` averages the replicas' means instead).

Memory: the update holds one micro-batch's activations and one gradient sum (`overlap=2`:
two micro-batches'), and, given arrays, one micro-batch's rows: Keras's pipeline hands it
batches of B row indices and each micro-batch gathers its rows (`fit_rows`). Validation and
`evaluate` run the same micro-batches, forward only. A dataset or generator of B-row batches
is held as it holds them (`python -m gradlab bench --fit --memory`, columns epoch and update).

This class is Keras's glue and owns the state; its helpers take that state as arguments:
`prologue` (the first-batch checks `step` runs too), `check_state` (when the contract is
checked), `fit_step` (one step), `fit_function` (Keras's functions wrapped: verdict, XLA
fallback, tf.distribute), `fit_rows` (arrays by row index), `custom_metrics`, `labels`,
`as_model` (layers and weight files answered by the model).

    acc = gl.AccumulatingModel(model, accum_steps=8)        # shares model's variables
    acc.compile(optimizer="adam", loss=..., metrics=["accuracy"])
    acc.fit(x, y, batch_size=256, epochs=3, validation_data=(xv, yv))

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import keras
import tensorflow as tf

from .. import _compat
from ..core import normaliser
from ..core.batchnorm import NO_WINDOW, WindowMoments, check_window
from ..core.microbatch import check_dense
from . import as_model, custom_metrics, fit_function, fit_rows, fit_step, labels, prologue
from .check_state import CheckState
from .options import Options


@keras.saving.register_keras_serializable(package="gradlab")
class AccumulatingModel(as_model.AsModel, keras.Model):
    """`model` trained by `fit` in `accum_steps` micro-batches per update, exactly.

        g = (dS_1 + ... + dS_k) / (D_1 + ... + D_k),   S_i = D_i * L_i   (see the module)

    Args:
        model: any built or buildable `keras.Model`; its variables are shared, not copied.
        accum_steps: micro-batches per `fit` step (per replica under tf.distribute).
        clip_norm: clip the global norm of each update once (None: no clipping).
        batchnorm: "micro" (Keras's: moving statistics move per micro-batch) or "window"
            (once per update, from the statistics of the whole batch; one device only).
        jit_compile: True, False or "auto" (XLA unless the model convolves with no GPU, which
            XLA's CPU backend runs slowly inside a loop, draws random numbers, or holds a layer
            XLA cannot compile such as a lookup table, or a tf.distribute strategy is active; a step XLA refuses at the
            first batch falls back to no XLA, with a warning naming the reason).
            `compile(jit_compile=...)` other than "auto" overrides it.
        overlap: micro-batches whose activations may be alive at once (1 holds one; 2 holds
            two and may be faster on several cores; `accumulate.loop_sum`).
        check: when the contract is checked inside the update (`contract.split_holds`, two
            more evaluations of the loss alone per micro-batch): "first", the first update
            after each `compile` and at each `fit`; "every", every update (and a read of one
            flag per step). Never with one forward pass per update (nothing is split).
    Raises:
        TypeError/ValueError naming the value, before any TensorFlow work; ValueError if
        `model` overrides `train_step`, `test_step`, `compute_loss` or `compute_metrics`
        (plain `fit` would call them; this one splits Keras's own loss). A model's own
        `predict_step` is called by `predict`.

    It answers as `model` does (`as_model`): `layers`, `get_layer`, `summary` and the weights
    are `model`'s (freeze through `acc.layers`, then `compile`), and `save_weights` /
    `load_weights` files are `model`'s, with this wrapper's optimizer state.

    Non-finite updates (loss or gradient) are skipped, weights and optimizer untouched, and
    counted in the logs as `skipped_updates` (per epoch), under tf.distribute too.

    Lesson: notebooks/10-accumulation-in-fit.ipynb
    """

    def __init__(self, model, accum_steps, clip_norm=None, batchnorm="micro", jit_compile="auto",
                 overlap=1, check="first", **kwargs):
        if not isinstance(model, keras.Model):
            raise TypeError(f"model must be a keras.Model, got {model!r} ({type(model).__name__})")
        options = Options.checked(accum_steps, clip_norm, batchnorm, jit_compile, overlap, check)
        _check_model(model, batchnorm)
        kwargs.setdefault("name", f"accumulating_{model.name}")
        super().__init__(**kwargs)
        self.model = model
        # Keras's callbacks (BackupAndRestore) and load_weights ask whether the wrapper is built.
        self.built = model.built
        if getattr(model, "output_names", None):  # Keras names per-output logs by these
            self.output_names = list(model.output_names)
        self.options = options  # the attributes below are its fields, under Keras's names
        self.accum_steps, self.clip_norm, self.batchnorm = options.accum_steps, options.clip_norm, options.batchnorm
        self.jit_compile_option, self.overlap, self.check = options.jit_compile, options.overlap, options.check
        # The state the helpers take as arguments (none of them reads this object's own):
        # when the update checks the contract and whether one was refused (raw variables,
        # not weights; its verdict is read by fit_function after each call)
        self._contract = CheckState(options.check)
        self._prologue_done = False  # prologue.check ran since compile
        self._window = WindowMoments(model) if batchnorm == "window" else NO_WINDOW
        # A raw tf.Variable: not a Keras metric (it would appear in evaluate()'s results
        # and as val_skipped_updates), not a weight (it is not saved).
        self._skipped = tf.Variable(0.0, trainable=False, name="skipped_updates")
        self._xla_probe = fit_function.XlaProbe()
        self._feeds = fit_rows.Feeds()  # what a fit or evaluate of arrays reads by row index

    # -- Keras's model API -----------------------------------------------------------------
    def call(self, inputs, training=None):
        return self.model(inputs, training=training)

    def compile(self, optimizer="rmsprop", loss=None, jit_compile="auto", **kwargs):
        """`keras.Model.compile`, refusing losses a split cannot reproduce (ValueError).

        `jit_compile="auto"` takes this model's `jit_compile` option (see the class)."""
        normaliser.check_reduction(loss)
        if jit_compile == "auto":
            jit_compile = self._resolve_jit()
        with _compat.metrics_summed_on_read(self.distribute_strategy):
            super().compile(optimizer=optimizer, loss=loss, jit_compile=jit_compile, **kwargs)
        self._prologue_done = False
        # a function, not a list: Keras would track a list of metrics set on the model
        own = custom_metrics.own_metrics(kwargs.get("metrics"), kwargs.get("weighted_metrics"))
        self._check_metrics = (lambda y: custom_metrics.warn_if_not_additive(self, own, y)) if own else None

    def fit(self, x=None, y=None, *args, **kwargs):
        """`keras.Model.fit`, its data read as Keras reads it; arrays reach the update by row
        index, a micro-batch's rows at a time (`fit_rows`). The first update checks the
        contract (`check`); the checks that need no data run first (`prologue`)."""
        arguments = fit_rows.arguments_of(keras.Model.fit, self, (x, y, *args), kwargs)
        check_dense(arguments["x"], arguments["y"], arguments["validation_data"])
        labels.check_sparse_labels(self, arguments["y"], arguments["validation_data"])
        if getattr(self, "_check_metrics", None) is not None:  # once per compile
            check, self._check_metrics = self._check_metrics, None
            check(arguments["y"])
        with _compat.metrics_summed_on_read(self.distribute_strategy):
            self._before_updates(arguments["x"], again=True)
            with fit_rows.feeding(self, self._feeds, arguments) as arguments:
                return super().fit(**arguments)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        """`keras.Model.evaluate` in micro-batches; arrays by row index (`fit_rows`)."""
        if _compat.fit_validation(kwargs):  # fit's validation: fit feeds it
            return super().evaluate(x, y, *args, **kwargs)
        arguments = fit_rows.arguments_of(keras.Model.evaluate, self, (x, y, *args), kwargs)
        check_dense(arguments["x"], arguments["y"])
        extra = arguments.pop("kwargs")
        with _compat.metrics_summed_on_read(self.distribute_strategy), \
                fit_rows.evaluating(self, self._feeds, arguments) as arguments:
            return super().evaluate(**arguments, **extra)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, *args, **kwargs):
        check_dense(x, y)
        labels.check_sparse_labels(self, y)
        with _compat.metrics_summed_on_read(self.distribute_strategy):
            self._before_updates(x, again=False)
            fit_rows.use(self, self._feeds, "train", None)
            return super().train_on_batch(x, y, sample_weight, class_weight, *args, **kwargs)

    def test_on_batch(self, *args, **kwargs):
        fit_rows.use(self, self._feeds, "test", None)
        with _compat.metrics_summed_on_read(self.distribute_strategy):
            return super().test_on_batch(*args, **kwargs)

    def predict_step(self, data):
        # The model's own predict_step, if it has one (it may return decisions, not logits).
        if type(self.model).predict_step is not keras.Model.predict_step:
            return self.model.predict_step(data)
        return super().predict_step(data)

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None, **kwargs):
        """The model's own `export`: the artifact serves `model`, as this wrapper's `call` does."""
        return self.model.export(filepath, format=format, verbose=verbose,
                                 input_signature=input_signature, **kwargs)

    @property
    def _default_save_signature(self):
        # tf.saved_model.save(acc, path): the model's own serving_default
        return _compat.default_save_signature(self.model)

    def compile_from_config(self, config):
        # Keras skips compile() on load for models that override it; ours takes Keras's arguments.
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def get_config(self):
        return {**super().get_config(), "model": keras.saving.serialize_keras_object(self.model),
                "accum_steps": self.accum_steps, "clip_norm": self.clip_norm,
                "batchnorm": self.batchnorm, "jit_compile": self.jit_compile_option,
                "overlap": self.overlap, "check": self.check}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["model"] = keras.saving.deserialize_keras_object(config["model"])
        return cls(**config)

    def make_train_function(self, force=False):
        """Keras's, wrapped where the engine needs it (`fit_function.wrap`)."""
        _compat.own_instance_keys(self.distribute_strategy)  # before anything is traced under it
        super().make_train_function(force)
        if not getattr(self.train_function, "gradlab", False):
            self.train_function = fit_function.wrap(self, self.train_function, self._contract,
                                                    self._distributed(), self._xla_probe)
        return self.train_function

    def make_test_function(self, force=False):
        """Keras's, wrapped under tf.distribute (`fit_function.wrap_test`)."""
        _compat.own_instance_keys(self.distribute_strategy)
        super().make_test_function(force)
        if not getattr(self.test_function, "gradlab", False):
            self.test_function = fit_function.wrap_test(self.test_function, self._distributed())
        return self.test_function

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Keras builds from the MEAN of the replicas' first batches, which fails when the
        # first batch splits unevenly (63 rows on 2 replicas); one replica's shard suffices.
        # On one device Keras would build an unbuilt model while tracing the step, after
        # train_step has read its (then empty) list of trainable variables: build it first.
        unbuilt = not self.model.built
        rows = fit_rows.feeding_now(self._feeds, "train") or fit_rows.feeding_now(self._feeds, "test")
        if rows is not None and data_batch is None:  # the iterator holds row indices
            data_batch, iterator = fit_rows.first_rows(rows), None
        if iterator is not None and data_batch is None and (self._distributed() or unbuilt):
            data_batch = _compat.first_replica_batch(self.distribute_strategy, iterator)
            iterator = None
        if unbuilt and not self._distributed() and data_batch is not None:
            _compat.symbolic_build(self, data_batch)
        else:
            super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)
        self.built = self.model.built

    def forward_passes(self):
        """Forward passes per update: micro-batches times replicas."""
        return self.accum_steps * self.distribute_strategy.num_replicas_in_sync

    def _distributed(self):
        # distribute_strategy: the scope the model was made in, else the current one
        return (tf.distribute.has_strategy()
                or self.distribute_strategy is not tf.distribute.get_strategy())

    def _get_metrics_result_or_logs(self, logs):
        # Keras reports its metrics' synced results only when a step's logs hold exactly its
        # metrics; with skipped_updates besides, it would keep the last step's logs, which
        # under tf.distribute average the replicas' local results (inexact on uneven shards).
        skipped = "skipped_updates" in logs
        logs = super()._get_metrics_result_or_logs(
            {k: v for k, v in logs.items() if k != "skipped_updates"})
        return {**logs, "skipped_updates": float(self._skipped.numpy())} if skipped else logs

    def reset_metrics(self):
        super().reset_metrics()
        self._skipped.assign(0.0)

    # -- one fit step (fit_step) -------------------------------------------------------------
    def train_step(self, data):
        return fit_step.train_step(self, data, self._contract, self._window, self._skipped,
                                   fit_rows.feeding_now(self._feeds, "train"))

    def test_step(self, data):
        return fit_step.test_step(self, data, self._contract, self._window,
                                  fit_rows.feeding_now(self._feeds, "test"))

    def _before_updates(self, x, again):
        """Once per compile, the prologue both faces run (`prologue.check`: nothing reads the
        data or runs the model); then the contract's check armed for this call's first update
        if `again` (each fit), else only if no update was checked since compile
        (train_on_batch), or every update (`check="every"`)."""
        if not self.compiled:
            return
        if not self._prologue_done:
            _compat.check_fit_hooks()  # Keras still calls the private methods the wrapper overrides
            prologue.check(self.model, self.optimizer, self.forward_passes(), prologue.input_spec(x),
                           self.distribute_strategy.scope(), window=self.batchnorm == "window")
            self.built = self.model.built
            self._prologue_done = True
            self._contract.forget()
        self._contract.arm(self.forward_passes(), again)

    def _resolve_jit(self):
        # the one decision (Options.xla): "auto" gains only on one device
        return self.options.xla(self.model, auto=not self._distributed())


def _check_model(model, batchnorm):
    """ValueError if `model` cannot be trained exactly by the wrapper's fit."""
    if batchnorm == "window":
        check_window(model)
        if tf.distribute.has_strategy():
            raise ValueError("batchnorm='window' runs on one device only; got it inside "
                             f"{type(tf.distribute.get_strategy()).__name__}.scope()")
    overridden = [name for name in ("train_step", "test_step", "compute_loss", "compute_metrics")
                  if getattr(type(model), name) is not getattr(keras.Model, name)]
    if overridden:
        raise ValueError(
            f"model {model.name!r} overrides {', '.join(overridden)}, which "
            "AccumulatingModel's fit and evaluate would not call (they split Keras's own "
            "loss and metrics): plain fit would train or report it differently. Move the "
            "extra terms into the model (add_loss) or into the compiled loss and metrics")
