"""`AccumulatingModel`: gradient accumulation inside `model.fit`, equal to Keras's large batch.

    one fit step, batch of B rows = at most accum_steps micro-batches i:
        S_i = D_i * L_i      L_i: Keras's own loss of micro-batch i (weights, masks, penalties)
        D_i = rows of i (or its unmasked entries, for a masked output)
    w <- optimizer(w, (dS_1 + ... + dS_k) / (D_1 + ... + D_k))             (once per step)

`batch_size` is the effective batch, so epochs, callbacks, schedules, EMA and checkpoints
all count updates. `fit` traces its step with an unknown batch dimension, so a batch of B
rows runs as micro-batches of ceil(B / accum_steps) rows and one shorter last one, with no
padding: only real rows reach the model and its metrics. `class_weight` and
`sample_weight` keep Keras's own normalisation (`sum_over_batch_size`: divided by the
entries, not by the sum of the weights). Under `tf.distribute` each replica sums its shard
and one all-reduce adds the sums and the normalisers, which is exact for uneven shards
(Keras's own mirrored `fit` averages the replicas' means instead).

    acc = gl.AccumulatingModel(model, accum_steps=8)        # shares model's variables
    acc.compile(optimizer="adam", loss=..., metrics=["accuracy"])
    acc.fit(x, y, batch_size=256, epochs=3, validation_data=(xv, yv))

Lesson: notebooks/08-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import warnings

import keras
import tensorflow as tf

from . import _compat, engine
from .batchnorm import NO_WINDOW, WindowMoments, check_mode, check_window
from .gradients import check_clip_norm, check_masked_penalties
from .microbatch import check_count
from .steps import check_jit_compile, xla_by_default

# Reductions for which Keras's loss is (sum of weighted entries) / (number of entries):
# the only ones a split can reproduce by summing S_i and D_i.
MEAN_REDUCTIONS = ("sum_over_batch_size", "mean")


@keras.saving.register_keras_serializable(package="gradlab")
class AccumulatingModel(keras.Model):
    """`model` trained by `fit` in `accum_steps` micro-batches per update, exactly.

        g = (dS_1 + ... + dS_k) / (D_1 + ... + D_k),   S_i = D_i * L_i   (see the module)

    Args:
        model: any built or buildable `keras.Model`; its variables are shared, not copied.
        accum_steps: micro-batches per `fit` step (per replica under tf.distribute).
        clip_norm: clip the global norm of each update once (None: no clipping).
        batchnorm: "micro" (Keras's: moving statistics move per micro-batch) or "window"
            (once per update, from the statistics of the whole batch; one device only).
        jit_compile: True, False or "auto" (XLA unless the model convolves, which XLA's CPU
            backend runs slowly inside a loop, or holds a layer XLA cannot compile such as
            a lookup table, or a tf.distribute strategy is active; a step XLA refuses at the
            first batch falls back to no XLA, with a warning naming the reason).
            `compile(jit_compile=...)` other than "auto" overrides it.
    Raises:
        TypeError/ValueError naming the value, before any TensorFlow work; ValueError if
        `model` overrides `train_step`, `compute_loss` or `compute_metrics` (plain `fit`
        would call them; this one splits Keras's own loss).

    Non-finite updates (loss or gradient) are skipped, weights and optimizer untouched, and
    counted in the logs as `skipped_updates` (per epoch), under tf.distribute too.

    Lesson: notebooks/08-accumulation-in-fit.ipynb
    """

    def __init__(self, model, accum_steps, clip_norm=None, batchnorm="micro", jit_compile="auto",
                 **kwargs):
        if not isinstance(model, keras.Model):
            raise TypeError(f"model must be a keras.Model, got {model!r} ({type(model).__name__})")
        accum_steps = check_count("accum_steps", accum_steps)
        clip_norm = check_clip_norm(clip_norm)
        check_mode(batchnorm)
        check_jit_compile(jit_compile)
        if batchnorm == "window":
            check_window(model)
            if tf.distribute.has_strategy():
                raise ValueError("batchnorm='window' runs on one device only; got it inside "
                                 f"{type(tf.distribute.get_strategy()).__name__}.scope()")
        overridden = [name for name in ("train_step", "compute_loss", "compute_metrics")
                      if getattr(type(model), name) is not getattr(keras.Model, name)]
        if overridden:
            raise ValueError(
                f"model {model.name!r} overrides {', '.join(overridden)}, which "
                "AccumulatingModel's fit would not call (it splits Keras's own loss): plain fit "
                "would train it differently. Move the extra terms into the model (add_loss) or "
                "into the compiled loss")
        kwargs.setdefault("name", f"accumulating_{model.name}")
        super().__init__(**kwargs)
        self.model = model
        # Keras's callbacks (BackupAndRestore) and load_weights ask whether the wrapper is built.
        self.built = model.built
        if getattr(model, "output_names", None):  # Keras names per-output logs by these
            self.output_names = list(model.output_names)
        self.accum_steps = accum_steps
        self.clip_norm = clip_norm
        self.batchnorm = batchnorm
        self.jit_compile_option = jit_compile
        self._window = WindowMoments(model) if batchnorm == "window" else NO_WINDOW
        # A raw tf.Variable: not a Keras metric (it would appear in evaluate()'s results
        # and as val_skipped_updates), not a weight (it is not saved).
        self._skipped = tf.Variable(0.0, trainable=False, name="skipped_updates")
        self._xla_probed = False

    # -- Keras's model API -----------------------------------------------------------------
    def call(self, inputs, training=None):
        return self.model(inputs, training=training)

    def compile(self, optimizer="rmsprop", loss=None, jit_compile="auto", **kwargs):
        """`keras.Model.compile`, refusing losses a split cannot reproduce (ValueError).

        `jit_compile="auto"` takes this model's `jit_compile` option (see the class)."""
        for fn in tf.nest.flatten(loss):
            reduction = getattr(fn, "reduction", "sum_over_batch_size")
            if reduction not in MEAN_REDUCTIONS:
                raise ValueError(
                    f"AccumulatingModel needs a mean loss (reduction 'sum_over_batch_size'), "
                    f"got {type(fn).__name__} with reduction {reduction!r}: a sum or a mean "
                    "over the sum of weights changes with the split")
        if jit_compile == "auto":
            jit_compile = self._resolve_jit()
        super().compile(optimizer=optimizer, loss=loss, jit_compile=jit_compile, **kwargs)

    def compile_from_config(self, config):
        # Keras skips compile() on load for models that override it; ours takes Keras's arguments.
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def get_config(self):
        return {**super().get_config(), "model": keras.saving.serialize_keras_object(self.model),
                "accum_steps": self.accum_steps, "clip_norm": self.clip_norm,
                "batchnorm": self.batchnorm, "jit_compile": self.jit_compile_option}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["model"] = keras.saving.deserialize_keras_object(config["model"])
        return cls(**config)

    def make_train_function(self, force=False):
        """Keras's, wrapped where needed.

        Under tf.distribute, entered with Keras's per-replica loss division and gradient
        all-reduce switched off: here the replicas' sums are all-reduced once (around the
        whole call: Keras runs the replicas' train_step in parallel threads). With
        `jit_compile="auto"` on one device, the first call first lowers the step to XLA
        on zeros shaped like the data; if XLA cannot compile it (an op without an XLA
        kernel), it warns once, naming the reason, and trains without XLA."""
        super().make_train_function(force)
        if getattr(self.train_function, "gradlab", False):
            return self.train_function
        keras_function = self.train_function
        if self._distributed():
            def train_function(iterator):
                with _compat.losses_not_divided_by_replicas(), \
                        _compat.gradients_already_reduced(self.optimizer):
                    return keras_function(iterator)
        elif self.jit_compile and self.jit_compile_option == "auto" and not self._xla_probed:
            def train_function(iterator):
                self._xla_probed = True
                reason = _xla_refusal(self.train_step, iterator, self.accum_steps)
                if reason is None:
                    self.train_function = keras_function
                    return keras_function(iterator)
                warnings.warn(f"AccumulatingModel(jit_compile='auto'): XLA cannot compile this "
                              f"model's step, so it trains without XLA: {reason}", stacklevel=2)
                self.jit_compile = False
                self.make_train_function(force=True)
                return self.train_function(iterator)
        else:
            return self.train_function
        train_function.gradlab = True
        self.train_function = train_function
        return train_function

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Keras builds from the MEAN of the replicas' first batches, which fails when the
        # first batch splits unevenly (63 rows on 2 replicas); one replica's shard suffices.
        # On one device Keras would build an unbuilt model while tracing the step, after
        # train_step has read its (then empty) list of trainable variables: build it first.
        unbuilt = not self.model.built
        if iterator is not None and data_batch is None and (self._distributed() or unbuilt):
            data_batch = _compat.first_replica_batch(self.distribute_strategy, iterator)
            iterator = None
        if unbuilt and not self._distributed() and data_batch is not None:
            _compat.symbolic_build(self, data_batch)
        else:
            super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)
        self.built = self.model.built

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

    # -- one fit step ----------------------------------------------------------------------
    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        # None (no targets: losses from add_loss only; no weights) is no tensor to split.
        parts = {k: v for k, v in (("x", x), ("y", y), ("sample_weight", sample_weight))
                 if v is not None}
        distributed = tf.distribute.has_strategy()
        if distributed and self.batchnorm == "window":  # wrapped outside the strategy's scope
            raise ValueError("batchnorm='window' runs on one device only; got a fit under "
                             f"{type(tf.distribute.get_strategy()).__name__}")
        variables = self.trainable_variables
        rows = tf.shape(tf.nest.flatten(x)[0])[0]

        batch_rows = self._batch_rows(rows, y)
        micro, m = lambda part: self._micro_sums(part, batch_rows), None
        if isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            # S_i = D_i * L_i would carry D_i (up to m rows) into every float16 gradient
            # of the backward pass, on top of the loss scale: overflows, and skipped
            # updates, where Keras's large batch has none. Differentiate (S_i / m) instead
            # and multiply the float32 sums by m: the same sums, in float16's range.
            m = tf.cast(tf.maximum(-(-rows // self.accum_steps), 1), tf.float32)  # rows per micro
            micro = lambda part: tuple(v / m for v in self._micro_sums(part, batch_rows))
        run = lambda: engine.loop_sum(micro, parts, variables, self.accum_steps,
                                      scale_loss=self.optimizer.scale_loss)
        with self._window.recording():
            # A replica's empty shard (a last batch of fewer rows than replicas) runs no
            # micro-batch: BatchNormalization's moments of no rows are NaN, and NaN * 0 in its
            # gradient would skip the whole update.
            sums = _unless_empty(rows, run, variables) if distributed else run()
        if m is not None:
            sums = engine.Sums(sums.loss * m, [None if g is None else g * m for g in sums.grads],
                               sums.norm * m)
        # A LossScaleOptimizer checks finiteness itself (skip and lower the scale).
        guard = not isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer)
        if distributed:  # make_train_function switched Keras's replica handling off
            loss, _ = engine.apply_replicated(self.optimizer, engine.reduce_replicas(sums), variables,
                                              self.clip_norm, guard,
                                              on_skip=lambda: self._skipped.assign_add(1.0))
        else:
            loss, status = engine.apply_once(self.optimizer, sums, variables, self.clip_norm,
                                             guard=guard, after=self._window.update)
            self._skipped.assign_add(tf.cast(status != engine.APPLIED, tf.float32))
        # Keras's own tracker: this batch's mean loss, weighted by its rows (this replica's
        # under tf.distribute, so that the replicas' sum on read is the global batch).
        _compat.loss_tracker(self).update_state(loss, sample_weight=rows)
        logs = self.get_metrics_result()
        if guard:
            logs["skipped_updates"] = tf.identity(self._skipped)
        return _compat.reducible_by_keras(logs, self.distribute_strategy)

    def test_step(self, data):
        x, y, _ = keras.utils.unpack_x_y_sample_weight(data)
        rows = tf.shape(tf.nest.flatten(x)[0])[0]
        share = tf.math.divide_no_nan(tf.cast(rows, tf.float32),
                                      tf.cast(self._batch_rows(rows, y), tf.float32))
        with _compat.output_loss_weight(self, share, y, None):
            logs = super().test_step(data)
        return _compat.reducible_by_keras(logs, self.distribute_strategy)

    def _batch_rows(self, rows, y):
        """The rows of the whole batch: `rows`, or under tf.distribute the replicas' sum of
        theirs, where Keras's per-output loss trackers need it (weighing each replica's mean
        by its share of the batch is what makes their synced result exact)."""
        if not tf.distribute.has_strategy() or not _compat.output_loss_trackers(self, y):
            return rows
        return tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, rows)

    def _micro_sums(self, part, batch_rows):
        """`(S_i, D_i)` of one micro-batch of the batch's `batch_rows` (its metrics are
        updated on the way)."""
        x, y, sw = part["x"], part.get("y"), part.get("sample_weight")
        y_pred = self(x, training=True)
        flat = tf.nest.flatten(y_pred)
        mask = self._entries(y, flat)
        n = tf.cast(tf.shape(flat[0])[0], tf.float32)
        # Keras tracks each output's loss once per batch; a micro-batch's share of the batch
        # as its weight adds up to the same (rows / 0 on an empty replica shard: weight 0).
        share = tf.math.divide_no_nan(n, tf.cast(batch_rows, tf.float32))
        with _compat.output_loss_weight(self, share, y, y_pred):
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw, training=True)
        self.compute_metrics(x, y, y_pred, sample_weight=sw)
        if mask is not None:  # one output: Keras divided by its unmasked entries
            check_masked_penalties(self.model, self.losses, x)
            d = tf.reduce_sum(tf.cast(mask, tf.float32))
        else:  # Keras divided each output by rows x entries per row: rows suffice
            d = n
        return tf.cast(loss, tf.float32) * d, d

    def _entries(self, y, flat):
        """The entries Keras's loss averages the one output `flat[0]` over: its Keras mask,
        and under a loss's `ignore_class` the targets of other classes (Keras's own rule,
        `sparse_categorical_crossentropy`); None for every entry."""
        masks = [_compat.keras_mask(p) for p in flat]
        ignore = [c for c in (getattr(fn, "ignore_class", None) for fn in tf.nest.flatten(self.loss))
                  if c is not None]
        if len(flat) > 1 and (ignore or any(m is not None for m in masks)):
            raise ValueError(
                f"AccumulatingModel: {sum(m is not None for m in masks)} of the model's "
                f"{len(flat)} outputs carry a Keras mask, and {len(ignore)} loss(es) an "
                "ignore_class; the masked output would need its own normaliser besides the "
                "others'. Pass the mask as sample_weight instead, or use one output")
        mask = masks[0]
        if ignore:
            y = tf.nest.flatten(y)[0]
            if y.shape.rank == flat[0].shape.rank and y.shape[-1] == 1:
                y = tf.squeeze(y, -1)
            valid = tf.not_equal(y, tf.cast(ignore[0], y.dtype))
            mask = valid if mask is None else tf.logical_and(tf.cast(mask, tf.bool), valid)
        return mask

    def _resolve_jit(self):
        if self.jit_compile_option != "auto":
            return self.jit_compile_option
        if self._distributed():
            return False
        return xla_by_default(self.model)


def _unless_empty(rows, run, variables):
    """`run()` (Sums) if `rows` > 0, else zero sums with the same gradients None, one tf.cond."""
    connected = []

    def full():
        s = run()
        connected.extend((j, g.dtype) for j, g in enumerate(s.grads) if g is not None)
        return s.loss, s.norm, [s.grads[j] for j, _ in connected]

    def empty():
        return (tf.constant(0.0), tf.constant(0.0),
                [tf.zeros(variables[j].shape, dtype) for j, dtype in connected])

    loss, norm, grads = tf.cond(rows > 0, full, empty)
    out = [None] * len(variables)
    for (j, _), g in zip(connected, grads):
        out[j] = g
    return engine.Sums(loss, out, norm)


def _xla_refusal(step, iterator, rows):
    """None if XLA lowers `step` on zeros shaped like `iterator`'s elements (`rows` rows),
    else XLA's reason (the first line of its error). Nothing runs: the step is traced and
    lowered to HLO only, which is where an op without an XLA kernel is refused."""
    spec = getattr(iterator, "element_spec", None)
    if spec is None:  # not a tf.data iterator: nothing to shape the zeros by
        return None
    zeros = tf.nest.map_structure(
        lambda s: tf.zeros([rows if d is None else d for d in s.shape], s.dtype), spec)
    try:
        # autograph=False: traced as Keras traces the step (do_not_convert); converting it
        # took 2 s of the MLP's first fit
        probe = tf.function(step, jit_compile=True, autograph=False)
        probe.experimental_get_compiler_ir(zeros)(stage="hlo")
    except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError, ValueError) as e:
        message = str(e).strip()
        if "XLA" not in message:  # not XLA's refusal (a bad batch...): fit will say so
            raise
        return message.splitlines()[0][:300]
    return None
