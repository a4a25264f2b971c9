"""The `step(x, y)` contract every strategy keeps: one exact update, or an error and no change.

    loss = s.step(x, y)      # = the large-batch update of (x, y); returns its mean loss

- Bad input raises ValueError/TypeError before any TensorFlow work.
- The first batch builds the model and finds what the loss divides by (`find_rule`),
  before any update; a loss that cannot be split exactly is refused there.
- An update whose loss or gradient is not finite is skipped and raises FloatingPointError;
  a step that fails leaves weights, optimizer state, counters and BatchNorm statistics as
  they were (a LossScaleOptimizer keeps its own rule: skip and lower the scale).
- Layers whose forward pass depends on the split (Dropout, BatchNormalization) make the
  update close to, not equal to, the large batch: a warning says so at the first step.
- A change of the model's trainable variables between steps is followed (retrace), or
  refused with the layer named when the optimizer was not built for the new ones.
- `jit_compile="auto"` falls back once, with a warning, if XLA cannot compile the model.

Lesson: notebooks/06-pitfalls.ipynb
"""
from __future__ import annotations

import contextlib
import warnings

import keras
import tensorflow as tf

from . import _compat, distribute, engine
from .batchnorm import NO_WINDOW, WindowMoments, check_window
from .gradients import find_rule, loss_terms, normaliser_of, normalize_sample_weight
from .microbatch import batch_size, check_batch, split_sizes


class Step:
    """One strategy: `summer` (where the sum lives, an `engine` class) x `place` ("one",
    "towers" or "replicas": where the batch runs), with the guarantees above. Made by
    `make_strategy`, which checks every argument first."""

    def __init__(self, name, summer, place, model, loss_fn, optimizer, accum_steps, devices=None,
                 clip_norm=None, jit_compile="auto", batchnorm="micro", distribution=None):
        self.name, self.place, self._summer_cls = name, place, summer
        self.accum_steps, self.devices = accum_steps, devices
        self.clip_norm, self.jit_compile, self.batchnorm = clip_norm, jit_compile, batchnorm
        self.distribution = distribution
        if place == "replicas" and distribution is None:
            self.distribution = distribute.make_distribution(devices)
        self.loss_fn = keras.losses.get(loss_fn) if isinstance(loss_fn, str) else loss_fn
        with self._scope():
            self.model = _resolve(model, keras.Model, "model")
            if batchnorm == "window" and self.model.built:
                check_window(self.model)
            optimizer = (keras.optimizers.get(optimizer) if isinstance(optimizer, str)
                         else _resolve(optimizer, keras.optimizers.Optimizer, "optimizer"))
            make = getattr(summer, "make_optimizer", None)
            self.optimizer = make(optimizer, accum_steps, clip_norm) if make else optimizer
        self.guard = getattr(summer, "guards", True) and not _scales_loss(self.optimizer)
        self.scale_loss = self.optimizer.scale_loss
        self._functions, self._summer, self._xla_failed = [], None, False

    # -- the contract -----------------------------------------------------------------
    def step(self, x, y, sample_weight=None):
        """One optimizer update from the effective batch `(x, y)`; returns its mean loss.

        `sample_weight` (per example or per token: counts, masks) makes the update the
        large-batch weighted mean `sum_j w_j l_j / sum_j w_j`, however the batch is split.
        """
        batch = batch_size(x, y)
        sizes = self.sizes(batch)
        parts = (x, y) if sample_weight is None else (x, y, normalize_sample_weight(sample_weight, batch))
        if self._summer is None:
            self._build(x, y)
        else:
            self._follow_trainable()
        saved = self._snapshot()
        try:
            loss, status = self._summer(parts, sizes)
            loss, status = float(loss), int(status)
        except BaseException as e:
            self._restore(saved)
            if self._fall_back_from_xla(e):
                return self.step(x, y, sample_weight)
            raise
        if status != engine.APPLIED:
            self._restore(saved)
            what = ("the loss" if status == engine.LOSS_NOT_FINITE else
                    f"the loss is finite ({loss:.6g}) but the gradient")
            raise FloatingPointError(
                f"{what} of this update is not finite, so the update was skipped: weights, "
                "optimizer state and BatchNorm statistics are unchanged. Check the inputs and "
                "labels (under XLA an out-of-range label gives NaN, not an error), the loss "
                "(e.g. sqrt or log at 0) or lower lr")
        return loss

    def sizes(self, batch):
        """Micro-batch sizes of one update (`towers`, `mirrored`: examples per device)."""
        if self.place == "towers":
            return check_batch(batch, len(self.devices))
        if self.place == "replicas":
            return check_batch(batch, self.distribution.num_replicas_in_sync)
        return split_sizes(batch, self.accum_steps)

    def trace_count(self):
        """How many times this strategy's compiled functions were traced (1 per shape)."""
        return sum(f.experimental_get_tracing_count() for f in self._functions)

    def all_reduces_per_update(self):
        """All-reduce ops each replica runs per update (`mirrored`), counted in its graph."""
        if self.place != "replicas":
            raise ValueError(f"strategy {self.name!r} runs no all-reduce; only mirrored does")
        if self._summer is None:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        return self._summer.all_reduce_count()

    # -- what the engine calls back ---------------------------------------------------
    def micro(self, part):
        """`(S, D)` of one micro-batch `part = (x, y[, sample_weight])`, in units of the first
        update's normaliser: S_i itself grows with the micro-batch, and its float16 gradient
        (times a LossScaleOptimizer's scale) would overflow where the large batch's does not.
        The unit cancels in G / D."""
        with self.moments.recording():
            s, d = loss_terms(self.model, self.loss_fn, part[0], part[1], self.rule, *part[2:])
        return s / self._unit, d / self._unit

    def function(self, fn, jit=False):
        # autograph=False, as Keras's fit: the engine's loops are tf.while_loops already, and
        # converting its Python and the user's loss took 1.5 s of the MLP's first fused step
        f = tf.function(fn, jit_compile=jit or None, autograph=False)
        self._functions.append(f)
        return f

    def jit(self):
        """XLA or not. "auto": for `fused` when the model has no convolutions (XLA fuses the
        loop's many small ops: MLP, N=10, b=10: 3.55 -> 2.54 ms per update; but its CPU
        backend runs a convolution's gradient in a loop without its fast kernels: 24 ms ->
        930 ms) nor a layer Keras marks as not compilable (lookup tables), and never after XLA
        failed to compile this model."""
        if self.jit_compile == "auto":
            return self.name == "fused" and not self._xla_failed and xla_by_default(self.model)
        return self.jit_compile

    # -- building and guarding ----------------------------------------------------------
    def _build(self, x, y):
        with self._scope():
            built = self.model.built
            # One forward pass of a few examples builds the model; the probe of what the
            # loss divides by runs now, before any update.
            self.rule = find_rule(self.model, self.loss_fn, x, y)
            self._unit = normaliser_of(self.model, x, self.rule)
            if self.batchnorm == "window" and not built:
                check_window(self.model)
            self._make_summer()
        self._warn_if_split_changes_the_forward_pass()

    def _warn_if_split_changes_the_forward_pass(self):
        places = {"towers": len(self.devices or ()),
                  "replicas": getattr(self.distribution, "num_replicas_in_sync", 1)}
        message = split_warning(self.model, self.accum_steps * places.get(self.place, 1))
        if message:
            warnings.warn(message, UserWarning, stacklevel=4)

    def _make_summer(self):
        self.variables = list(self.model.trainable_variables)
        if not self.optimizer.built:
            self.optimizer.build(self.variables)
        inner = _compat.optimizer_chain(self.optimizer)[-1]
        unknown = [v for v in self.variables if not _compat.optimizer_knows(inner, v)]
        if unknown:
            raise ValueError(
                f"layer(s) {_owners(self.model, unknown)} became trainable after the optimizer was "
                "built for the earlier trainable variables, and a Keras optimizer cannot take "
                "new ones: make a new strategy with a fresh optimizer (as Keras asks you to "
                "recompile after unfreezing)")
        window = self.batchnorm == "window" and self.name != "large_batch"
        self.moments = WindowMoments(self.model) if window else NO_WINDOW
        # What a failed step must restore: state the forward pass moves (BatchNorm statistics,
        # seeds), and the counters where the finite-gradient tf.cond does not guard them.
        self._state = [v for v in self.model.non_trainable_variables if not v.trainable]
        if not self.guard:
            self._state += _compat.counters(self.optimizer)
        self._read = tf.function(lambda: [tf.identity(v) for v in self._state])
        self._summer = self._summer_cls(self)

    def _follow_trainable(self):
        now = self.model.trainable_variables
        if len(now) != len(self.variables) or any(a is not b for a, b in zip(now, self.variables)):
            with self._scope():
                self._make_summer()  # retrace: new variable lists, new accumulators

    def _snapshot(self):
        return self._read() if self._state else []

    def _restore(self, saved):
        # TensorFlow runs ops on other variables (BatchNorm statistics, counters) even when
        # the gradient failed: put them back, so a failed step leaves no trace.
        for v, value in zip(self._state, saved):
            v.assign(value)
        self.moments.reset()

    def _fall_back_from_xla(self, error):
        if self.jit_compile != "auto" or not self.jit() or not _xla_cannot_compile(error):
            return False
        self._xla_failed = True
        reason = str(error).strip().splitlines()[0][:300]
        warnings.warn(f"jit_compile='auto': XLA cannot compile this model's step ({reason}); "
                      f"strategy {self.name!r} runs without XLA from now on", RuntimeWarning, stacklevel=3)
        with self._scope():
            self._make_summer()
        return True

    def _scope(self):
        return self.distribution.scope() if self.distribution is not None else contextlib.nullcontext()

    def __repr__(self):
        return (f"<Step {self.name!r} accum_steps={self.accum_steps} "
                f"model={self.model.name!r} optimizer={type(self.optimizer).__name__}>")


def check_jit_compile(jit_compile):
    """`jit_compile` if it is True, False or "auto", else ValueError naming it."""
    if not (isinstance(jit_compile, bool) or jit_compile == "auto"):
        raise ValueError(f"jit_compile must be True, False or 'auto', got {jit_compile!r}")
    return jit_compile


def split_warning(model, parts):
    """Why an update of `parts` micro-batches differs from the large batch, or None: its
    Dropout and trainable BatchNormalization layers run once per micro-batch."""
    layers = [layer for layer in _compat.sublayers(model) if layer.trainable and (
        isinstance(layer, keras.layers.BatchNormalization) or "Dropout" in type(layer).__name__)]
    if parts < 2 or not layers:
        return None
    return (f"{', '.join(repr(l.name) for l in layers)}: each of the {parts} micro-batches runs "
            "its own forward pass (Dropout draws its own masks, BatchNormalization normalises "
            "with its own statistics), so this update is close to the large batch's, not equal "
            "(lesson 6, notebooks/06-pitfalls.ipynb, measures by how much)")


def _xla_cannot_compile(error):
    return isinstance(error, tf.errors.OpError) and any(
        s in str(error) for s in ("XLA", "unsupported operations", "must be a compile-time constant"))


def xla_by_default(model):
    """`jit_compile="auto"`: XLA unless a layer of `model` convolves (slow under XLA's CPU
    backend inside a loop) or says `supports_jit=False` (lookup tables). Convolutions are
    found by class name, so that subclasses count too."""
    layers = [model] + _compat.sublayers(model)
    convolves = lambda layer: any(c.__name__.startswith(("Conv", "DepthwiseConv", "SeparableConv"))
                                  for c in type(layer).__mro__)
    return all(getattr(l, "supports_jit", True) and not convolves(l) for l in layers)


def _owners(model, variables):
    names = [layer.name for layer in _compat.sublayers(model)
             if any(w is v for w in layer.trainable_weights for v in variables)
             and not getattr(layer, "layers", None)]
    return ", ".join(repr(n) for n in names) or ", ".join(v.path for v in variables)


def _scales_loss(optimizer):
    return isinstance(optimizer, keras.optimizers.LossScaleOptimizer)


def _resolve(obj, cls, what):
    """`obj` itself if it is a `cls`, else the result of calling it (a builder)."""
    if isinstance(obj, cls):
        return obj
    built = obj()
    if isinstance(built, cls):
        return built
    raise TypeError(f"the {what} builder must return a {cls.__name__}, got {built!r}")
