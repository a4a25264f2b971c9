"""A strategy and its contract: one exact update per `step(x, y)`, or an error and no change.

    loss = s.step(x, y)      # = the large-batch update of (x, y); returns its mean loss

- Bad input raises ValueError/TypeError before any TensorFlow work.
- The first batch runs the prologue `fit` runs too (`prologue.check`: builds the model,
  training-only layers included, traced, nothing run; refuses what no split reproduces).
  The first update of each trace checks the contract inside itself, on its micro-batches'
  own predictions (`contract.split_holds`, armed by `check_state`; `check="every"`: every
  update): a loss that cannot be split exactly (a sum, a fixed normaliser, rows coupled)
  is refused before it applies, in the words `fit` uses.
- An update whose loss or gradient is not finite is skipped and raises FloatingPointError;
  a step that fails leaves weights, optimizer state, counters and BatchNorm statistics as
  they were (a LossScaleOptimizer keeps its own rule: skip and lower the scale).
- Layers whose forward pass depends on the split (Dropout, BatchNormalization, a reduction
  over the rows) make the update close to, not equal to, the large batch, and state the
  forward pass writes moves once per micro-batch: warnings say so at the first step, found
  in the traced graph (`state_writes`).
- A change of the model's trainable variables between steps is followed (retrace), or
  refused with the layer named when the optimizer was not built for the new ones.
- `jit_compile` follows `xla`'s one policy, decided when the update is first traced.

Lessons: notebooks/07-pitfalls-what-to-count.ipynb (what each micro-batch counts),
notebooks/21-reproducing-the-table.ipynb (dropout), notebooks/17-the-lab.ipynb (BatchNorm),
notebooks/08-clipping-and-loss-scale.ipynb (a non-finite update skipped whole)
"""
from __future__ import annotations

import contextlib

import keras
import tensorflow as tf

from .. import _compat
from ..core import contract, distribute, engine, normaliser
from ..core.micro_loss import MicroLoss
from ..core.batchnorm import NO_WINDOW, WindowMoments, check_window
from ..core.loss_terms import normalize_sample_weight, reduced_loss
from ..core.microbatch import batch_size, check_batch, check_dense
from . import prologue, trainables
from .check_state import CheckState
from .rollback import Rollback
from ..core.homes import KerasOptimizer, Loop
from ..core.places import One, Replicas, Towers
from .options import guarded
from .updates import StepUpdate


class Strategy:
    """One strategy: `recipe.home` (where the sum lives, a `homes` class) x `recipe.place`
    (where the batch runs, a `places` class), with the guarantees above. Made by
    `make_strategy`, which checks every argument first."""

    def __init__(self, name, recipe, model, loss_fn, optimizer, options, devices=None, distribution=None):
        self.name, self.recipe, self.options, self.devices = name, recipe, options, devices
        self.place = Towers(devices) if recipe.place is Towers else recipe.place()
        self._replicas = isinstance(self.place, Replicas)
        self.accum_steps, self.overlap, self.check = options.accum_steps, options.overlap, options.check
        self.clip_norm, self.jit_compile, self.batchnorm = options.clip_norm, options.jit_compile, options.batchnorm
        self._contract = CheckState(options.check)  # when the update checks the contract
        self.distribution = distribution
        if self._replicas and distribution is None:
            self.distribution = distribute.make_distribution(devices)
        if self.distribution is not None:
            _compat.own_instance_keys(self.distribution)
        self.loss_fn = keras.losses.get(loss_fn) if isinstance(loss_fn, str) else loss_fn
        # "mean_with_sample_weight": the weights are normalised once per update (step), and
        # each micro-batch then takes Keras's default mean of the normalised weighted losses.
        self._over_weights = getattr(self.loss_fn, "reduction", None) == "mean_with_sample_weight"
        if self._over_weights:
            self.loss_fn = type(self.loss_fn).from_config(
                {**self.loss_fn.get_config(), "reduction": "sum_over_batch_size"})
        with self._scope():
            self.model = _resolve(model, keras.Model, "model")
            if self.batchnorm == "window" and self.model.built:
                check_window(self.model)
            optimizer = (keras.optimizers.get(optimizer) if isinstance(optimizer, str)
                         else _resolve(optimizer, keras.optimizers.Optimizer, "optimizer"))
            if self._replicas:
                optimizer = _in_scope(optimizer)
            if recipe.home is KerasOptimizer:
                optimizer = KerasOptimizer.make_optimizer(optimizer, self.accum_steps, self.clip_norm)
            self.optimizer = optimizer
        self.guard = guarded(self.optimizer, recipe.home)
        self._update, self._functions, self._xla = None, [], None
        self.rule = None  # what the loss divides by ("examples" or "entries"), once traced

    # -- the contract -----------------------------------------------------------------
    def step(self, x, y, sample_weight=None):
        """One optimizer update from the effective batch `(x, y)`; returns its mean loss.

        `sample_weight` (per example or per token: counts, masks) weighs the losses as
        Keras's `train_on_batch` does, however the batch is split: the loss's reduction
        decides, `sum_j w_j l_j / B` for Keras's default `"sum_over_batch_size"` (and for a
        function returning one loss per example), `sum_j w_j l_j / sum_j w_j` for
        `"mean_with_sample_weight"` (normalised once over the whole update, where Keras's own
        accumulation divides each micro-batch by its own weights).
        """
        check_dense(x, y)
        batch = batch_size(x, y)
        if type(self.place) is not One:
            check_batch(batch, len(self.devices) if isinstance(self.place, Towers)
                        else self.distribution.num_replicas_in_sync)
        parts = (x, y) if sample_weight is None else (x, y, normalize_sample_weight(sample_weight, batch, self._over_weights))
        if self._update is None:
            self._build(parts)
        else:
            self._follow_trainable()
        saved = self._rollback.save()
        try:
            loss, status = self._update(parts)
            loss, status = float(loss), int(status)
        except BaseException:
            self._rollback.restore(saved)
            raise
        if status == engine.CONTRACT_BROKEN:
            self._rollback.restore(saved)
            raise ValueError(contract.REFUSAL)
        self._contract.after()
        if status != engine.APPLIED:
            self._rollback.restore(saved)
            what = ("the loss" if status == engine.LOSS_NOT_FINITE else
                    f"the loss is finite ({loss:.6g}) but the gradient")
            raise FloatingPointError(
                f"{what} of this update is not finite, so the update was skipped: weights, "
                "optimizer state and BatchNorm statistics are unchanged. Check the inputs and "
                "labels (under XLA an out-of-range label gives NaN, not an error), the loss "
                "(e.g. sqrt or log at 0) or lower lr")
        return loss

    def trace_count(self):
        """How many times this strategy's compiled functions were traced (1 per shape)."""
        return sum(f.experimental_get_tracing_count() for f in self._functions)

    def all_reduces_per_update(self):
        """All-reduce ops each replica runs per update (`mirrored`), counted in its graph."""
        if not self._replicas:
            raise ValueError(f"strategy {self.name!r} runs no all-reduce; only mirrored does")
        if self._update is None:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        return self._update.all_reduce_count()

    def jit(self):
        """Whether the update runs under XLA (`Options.xla`: `jit_compile` for an update
        compiled whole on one device or towers; "auto" only for `fused`), unless XLA refused
        to lower it (then never again)."""
        if self._xla is not None:
            return self._xla
        return self.options.xla(self.model, allowed=self.recipe.home is Loop and not self._replicas,
                                auto=self.recipe.xla_auto)

    # -- building and guarding ----------------------------------------------------------
    def _build(self, parts):
        """The first batch: the one prologue (`prologue.check`), then the update, traced."""
        with self._scope():
            prologue.check(self.model, self.optimizer, self._forward_passes(), parts[0],
                           window=self.batchnorm == "window")
            self._make_update()
            self._decide_xla(parts)

    def _forward_passes(self):
        """Forward passes per update: micro-batches on every tower or replica."""
        if isinstance(self.place, Towers):
            return self.accum_steps * len(self.devices)
        if self._replicas:
            return self.accum_steps * self.distribution.num_replicas_in_sync
        return self.accum_steps

    def _micro(self, part):
        """`(S_i, D_i, holds)` of one micro-batch (`micro_loss.MicroLoss`)."""
        terms, _ = self._micro_loss(part[0], part[1], (part[2:] or [None])[0])
        return terms

    def _rule_of(self, y, pred):
        """What the loss divides by: a Keras loss, or a function returning its mean (one that
        may wrap a Keras loss), divides as Keras does; per-example values are averaged over
        every entry by reduced_loss (it sees no mask): by the rows. Traced only."""
        per_example = (not isinstance(self.loss_fn, keras.losses.Loss)
                       and tf.convert_to_tensor(self.loss_fn(y, pred)).shape.rank != 0)
        rule = self.rule = "examples" if per_example else normaliser.keras_rule(y, pred, self.loss_fn)
        if self._over_weights and rule == "entries":
            raise ValueError(
                "reduction 'mean_with_sample_weight' on an output averaged over its unmasked "
                "entries (a Keras mask, an ignore_class): step normalises the weights over the "
                "rows, not the entries. Use reduction 'sum_over_batch_size' and fold the mask "
                "into sample_weight")
        return rule

    def _make_update(self):
        self.variables = list(self.model.trainable_variables)
        if not self.optimizer.built:
            self.optimizer.build(self.variables)
        window = self.batchnorm == "window" and self.name != "large_batch"
        self.moments = WindowMoments(self.model) if window else NO_WINDOW
        self._micro_loss = MicroLoss(
            self.model, self.loss_fn,
            lambda x, y, p, w: reduced_loss(self.loss_fn, y, p, w, self.model.losses),
            self._contract.now, rule_of=self._rule_of, seen=self._contract.warned,
            passes=self._forward_passes(), moments=self.moments)
        self._rollback = Rollback(self.model, self.optimizer, self.guard, self.moments)
        task = engine.Task(self._micro, self.variables, self.optimizer, self.accum_steps,
                           self.clip_norm, self.guard, self.moments.update)
        self._update = StepUpdate(task, self._home(), self.place, self.distribution, self.jit())
        self._functions += self._update.functions
        self._contract.arm(self._forward_passes())  # a new trace: check its first update

    def _home(self):
        """A new home for the sum (one per trace: eager homes are bound to their task)."""
        if self.recipe.home is Loop:
            return Loop(self.overlap)
        if self.recipe.home is KerasOptimizer:
            return KerasOptimizer(self.model, self.loss_fn)
        return self.recipe.home()

    def _decide_xla(self, parts):
        """Lower the update to XLA once, on the first batch, if it is to run under XLA; if XLA
        refuses (an op without an XLA kernel), warn and run without from now on."""
        self._xla = self.jit()
        if not (self._xla and self.jit_compile == "auto"):
            return
        args = tf.nest.map_structure(tf.convert_to_tensor, parts)
        if prologue.xla_refused(self._update.fn, args, f"strategy {self.name!r}"):
            self._xla = False
            self._make_update()

    def _follow_trainable(self):
        now = self.model.trainable_variables
        if len(now) != len(self.variables) or any(a is not b for a, b in zip(now, self.variables)):
            with self._scope():
                trainables.check_known(self.optimizer, self.model, now)
                self._make_update()  # retrace: new variable lists, new accumulators

    def _scope(self):
        return self.distribution.scope() if self.distribution is not None else contextlib.nullcontext()

    def __repr__(self):
        return (f"<Strategy {self.name!r} accum_steps={self.accum_steps} "
                f"model={self.model.name!r} optimizer={type(self.optimizer).__name__}>")




def _in_scope(optimizer):
    """An unbuilt optimizer made outside the strategy's scope, made again inside it from its
    config (its slots must be mirrored); a built one cannot be, so it is refused."""
    if optimizer.built:
        raise TypeError("mirrored needs an optimizer that is not built yet (or a builder such as "
                        f"lambda: keras.optimizers.Adam()), got a built {type(optimizer).__name__}")
    return type(optimizer).from_config(optimizer.get_config())


def _resolve(obj, cls, what):
    """`obj` itself if it is a `cls`, else the result of calling it (a builder)."""
    if isinstance(obj, cls):
        return obj
    built = obj()
    if isinstance(built, cls):
        return built
    raise TypeError(f"the {what} builder must return a {cls.__name__}, got {built!r}")
