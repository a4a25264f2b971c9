"""Every way of averaging gradients behind one contract: `make_strategy(...).step(x, y)`.

    s = make_strategy(name, model, loss_fn, optimizer, accum_steps=4)
    loss = s.step(x, y)   # exactly one optimizer update from the effective batch (x, y)

Each strategy splits the batch into `accum_steps` micro-batches (`split_sizes`), weights
micro-batch i by `n_i / B`, and applies the summed gradient once, so every one of them
equals `large_batch` up to float rounding. `keras` (Keras 3's own
`gradient_accumulation_steps`) is the reference that does not: it divides by N whatever
the sizes, and advances learning-rate schedules once per micro-batch.

Lesson: notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import contextlib
import math

import keras
import numpy as np
import tensorflow as tf

from . import distribute
from .accumulate import Accumulators, fused_grads
from .batchnorm import BATCHNORM_MODES, NO_WINDOW, WindowMoments, check_window
from .gradients import apply_update, loss_and_grads, densify, normalize_sample_weight
from .host_average import host_average
from .microbatch import check_batch, check_count, batch_size, offsets, split_sizes, take
from .towers import average_gradients, check_device_names, local_devices

# Loss reductions that divide by the number of examples: micro-batch means weighted by n_i / B
# (and sample weights normalised over the update) then add up to the large-batch mean.
_PER_EXAMPLE_MEAN = ("sum_over_batch_size", "mean", "none", None)

STRATEGIES = ("large_batch", "host_average", "accumulate", "fused", "towers", "keras", "mirrored")


class Strategy:
    """The common contract. Subclasses implement `_setup` (which sets the compiled `self._fn`);
    some override `_update(x, y, sizes) -> mean loss`."""

    name = None
    uses_devices = False
    skips_non_finite = True  # `_apply` applies only a finite gradient (see `_apply`)
    supports_sample_weight = False
    batchnorm_modes = ("micro",)  # "window": BatchNorm statistics once per update

    def __init__(self, model, loss_fn, optimizer, accum_steps=1, devices=None,
                 clip_norm=None, jit_compile="auto", batchnorm="micro"):
        self.accum_steps = accum_steps
        self.batchnorm = batchnorm
        self.devices = list(devices) if devices is not None else None
        self.clip_norm = clip_norm
        self.jit_compile = jit_compile
        self.loss_fn = keras.losses.get(loss_fn) if isinstance(loss_fn, str) else loss_fn
        with self._scope():
            self.model = _resolve(model, keras.Model, "model")
            if batchnorm == "window" and self.model.built:
                check_window(self.model)
            self.optimizer = self._make_optimizer(optimizer)
        self._functions = []
        self._ready = False

    # -- the contract ---------------------------------------------------------------
    def step(self, x, y, sample_weight=None):
        """One optimizer update from the effective batch `(x, y)`; returns its mean loss.

        `sample_weight` (per example or per token: counts, masks) makes the update the
        large-batch weighted mean `sum_j w_j l_j / sum_j w_j`, however the batch is split.
        """
        batch = batch_size(x, y)
        sizes = self._check_batch(batch)
        weighted = () if sample_weight is None else (self._check_sample_weight(sample_weight, batch),)
        if not self._ready:
            self._build(x)
        saved = self._snapshot()
        try:
            loss = float(self._update(x, y, sizes, *weighted))
            if self.skips_non_finite and not math.isfinite(loss) and not _scales_loss(self.optimizer):
                raise FloatingPointError(
                    f"the loss of this update is {loss}; its gradient was not finite, so the "
                    "update was skipped and the weights are unchanged. Check the inputs and "
                    "labels (under XLA an out-of-range label gives NaN, not an error) or lower lr")
        except BaseException:
            # TensorFlow runs ops on other variables (the step counter, BatchNorm statistics)
            # even when the gradient failed: put them back, so a failed step leaves no trace.
            for v, value in zip(self._state, saved):
                v.assign(value)
            raise
        return loss

    def trace_count(self):
        """How many times this strategy's compiled functions were traced (1 per shape)."""
        return sum(f.experimental_get_tracing_count() for f in self._functions)

    # -- shared machinery -------------------------------------------------------------
    def _check_batch(self, batch):
        return split_sizes(batch, self.accum_steps)

    def _check_sample_weight(self, sample_weight, batch):
        if not self.supports_sample_weight:
            raise ValueError(f"strategy {self.name!r} does not support sample_weight")
        return normalize_sample_weight(sample_weight, batch)

    def _scope(self):
        return contextlib.nullcontext()

    def _make_optimizer(self, optimizer):
        if isinstance(optimizer, str):
            return keras.optimizers.get(optimizer)
        return _resolve(optimizer, keras.optimizers.Optimizer, "optimizer")

    def _build(self, x):
        with self._scope():
            built = self.model.built
            # One forward pass of one example builds the model and shows if its output is masked.
            pred = self.model(take(x, 0, 1), training=False)
            if self.batchnorm == "window" and not built:
                check_window(self.model)
            self._check_mask(pred)
            self.optimizer.build(self.model.trainable_variables)
            self._moments = self._make_moments()
            self._setup()
            # What a failed step must restore, read in one compiled call per step: state that
            # the forward pass updates (BatchNorm statistics), and the step counter where the
            # update is not inside `_apply`'s finite-gradient tf.cond, which keeps it in step.
            guarded = self.skips_non_finite and not _scales_loss(self.optimizer)
            self._state = list(self.model.non_trainable_variables)
            if not guarded:
                self._state += [o._iterations for o in distribute.optimizer_chain(self.optimizer)]
            read = tf.function(lambda: [tf.identity(v) for v in self._state])
            self._snapshot = read if self._state else list
        self._ready = True

    def _parts(self):
        """Loss calls that one update is split into."""
        return self.accum_steps

    def _check_mask(self, pred):
        # A Keras loss object with a mean reduction divides by the unmasked entries of each
        # call, so a split update would weight every micro-batch by its own count (measured:
        # 2e-4 off in the weights).
        loss_fn = self.loss_fn
        if (self._parts() == 1 or not isinstance(loss_fn, keras.losses.Loss)
                or loss_fn.reduction in ("none", None)):
            return
        if getattr(pred, "_keras_mask", None) is not None:
            raise ValueError(
                f"the model's output carries a Keras mask, and {type(loss_fn).__name__}"
                f"(reduction={loss_fn.reduction!r}) divides by the unmasked entries of each call: "
                f"split into {self._parts()} parts, each would be normalised by its own count, "
                "not the update's. Pass the mask (or token counts) as step(x, y, sample_weight=...), "
                "which gradlab normalises over the whole update, with a loss that ignores Keras "
                "masks (reduction='none', or a per-example function such as "
                "keras.losses.sparse_categorical_crossentropy); or use large_batch or accum_steps=1")

    def _setup(self):
        """Create variables and compiled functions (`self._fn`), once the model is built."""

    def _update(self, x, y, sizes, *sample_weight):
        """One update; the default runs the one compiled function of the whole batch."""
        return self._fn(x, y, *sample_weight)

    def _make_moments(self):
        return WindowMoments(self.model) if self.batchnorm == "window" else NO_WINDOW

    def _jit(self):
        """XLA or not: `jit_compile` as given; "auto" means no (see `Fused._jit`)."""
        return self.jit_compile is True

    def _function(self, fn, jit=False):
        f = tf.function(fn, jit_compile=jit or None)
        self._functions.append(f)
        return f

    def _apply(self, grads):
        """Apply `grads` once, only if every entry is finite (`step` then raises).

        A LossScaleOptimizer checks finiteness itself (skipping the update and lowering its
        scale), so it gets every update.
        """
        def apply():
            apply_update(self.optimizer, grads, self.model.trainable_variables, self.clip_norm)
            self._moments.update()  # batchnorm="window": moving statistics once per update
            return tf.constant(True)

        if _scales_loss(self.optimizer):
            return apply()
        finite = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in densify(grads)
                                if g is not None])
        # Outside tf.distribute Keras's "all-reduce" of the gradients is an identity, built
        # with custom_gradient, which cannot be made inside a tf.cond branch: skip it.
        with distribute.gradients_already_reduced(self.optimizer):
            return tf.cond(finite, apply, lambda: tf.constant(False))

    def __repr__(self):
        return (f"<{type(self).__name__} {self.name!r} accum_steps={self.accum_steps} "
                f"model={self.model.name!r} optimizer={type(self.optimizer).__name__}>")


class LargeBatch(Strategy):
    """The baseline: one gradient of the mean loss over the whole batch, one update."""

    name = "large_batch"
    supports_sample_weight = True
    batchnorm_modes = BATCHNORM_MODES

    def _check_batch(self, batch):
        return [batch]

    def _parts(self):
        return 1

    def _make_moments(self):
        return NO_WINDOW  # one micro-batch is the window: Keras's own update is the right one

    def _setup(self):
        def update(x, y, sample_weight=None):
            loss, grads = loss_and_grads(self.model, self.loss_fn, x, y, sample_weight=sample_weight,
                                         scale_loss=self.optimizer.scale_loss)
            self._apply(grads)
            return loss
        self._fn = self._function(update, self._jit())


class HostAverage(Strategy):
    """One compiled call per micro-batch; its gradients fetched and averaged in numpy."""

    name = "host_average"
    supports_sample_weight = True

    def _setup(self):
        def grads_of(x, y, sample_weight=None):
            loss, grads = loss_and_grads(self.model, self.loss_fn, x, y, sample_weight=sample_weight,
                                         scale_loss=self.optimizer.scale_loss)
            return loss, densify(grads)
        self._grads = self._function(grads_of)
        self._apply_fn = self._function(self._apply)

    def _update(self, x, y, sizes, *sample_weight):
        losses, grads_list = [], []
        for o, n in zip(offsets(sizes), sizes):
            loss, grads = self._grads(take(x, o, n), take(y, o, n), *[u[o:o + n] for u in sample_weight])
            losses.append(float(loss))
            grads_list.append([None if g is None else g.numpy() for g in grads])
        mean = host_average(grads_list, counts=sizes)
        self._apply_fn([None if g is None else tf.constant(g) for g in mean])
        return np.dot(losses, sizes) / sum(sizes)


class Accumulate(Strategy):
    """One compiled call per micro-batch adding `w_i * grads_i` into tf.Variables."""

    name = "accumulate"
    supports_sample_weight = True
    batchnorm_modes = BATCHNORM_MODES

    def _setup(self):
        self.accumulators = Accumulators(self.model.trainable_variables)

        def accumulate(x, y, w, sample_weight=None):
            with self._moments.recording():
                loss, grads = loss_and_grads(self.model, self.loss_fn, x, y, w, sample_weight=sample_weight,
                                             scale_loss=self.optimizer.scale_loss)
            self.accumulators.accumulate(grads)
            return loss

        def apply_and_reset():
            self._apply(self.accumulators.values())
            self.accumulators.reset()

        self._accum = self._function(accumulate)
        self._apply_fn = self._function(apply_and_reset)

    def _update(self, x, y, sizes, *sample_weight):
        total, loss = sum(sizes), 0.0
        try:
            for o, n in zip(offsets(sizes), sizes):
                w = n / total
                # A tensor sum, read once by `step`: no wait for each micro-batch's result.
                loss += w * self._accum(take(x, o, n), take(y, o, n), tf.constant(w, tf.float32),
                                        *[u[o:o + n] for u in sample_weight])
        except BaseException:
            self.accumulators.reset()  # a failed step leaves nothing behind
            self._moments.reset()
            raise
        self._apply_fn()
        return loss


class Fused(Strategy):
    """All micro-batches of one update in one compiled `tf.while_loop`, then one apply.

    `jit_compile="auto"` (the default) compiles with XLA unless the model has convolution
    layers: XLA fuses the loop's many small ops (MLP, N=10, b=10: 3.55 -> 2.54 ms per update;
    embedding: 4.05 -> 1.47 ms), but its CPU backend runs a convolution's gradient inside a
    loop without its fast kernels (conv, N=10, b=10: 24 ms -> 930 ms). `True`/`False` force
    it either way; `python -m gradlab bench` measures both (`fused+xla`).
    """

    name = "fused"
    supports_sample_weight = True
    batchnorm_modes = BATCHNORM_MODES

    def _setup(self):
        def update(x, y, sample_weight=None):
            with self._moments.recording():
                loss, grads = fused_grads(self.model, self.loss_fn, x, y,
                                          split_sizes(batch_size(x, y), self.accum_steps),
                                          sample_weight, self.optimizer.scale_loss)
            self._apply(grads)
            return loss
        self._fn = self._function(update, self._jit())

    def _jit(self):
        if self.jit_compile == "auto":
            return not _has_convolutions(self.model)
        return self.jit_compile


def _has_convolutions(layer):
    """Whether `layer` or any layer inside it is a convolution (Conv1D/2D/3D, transposed,
    depthwise, separable), found by class name so that subclasses count too."""
    names = {c.__name__ for c in type(layer).__mro__}
    if any(n.startswith(("Conv", "DepthwiseConv", "SeparableConv")) for n in names):
        return True
    return any(_has_convolutions(sub) for sub in getattr(layer, "layers", None) or [])


class Towers(Strategy):
    """The batch split across `devices`; each tower accumulates its share in `accum_steps`
    micro-batches, then `average_gradients` weighted by tower size, and one apply."""

    name = "towers"
    uses_devices = True
    supports_sample_weight = True

    def _check_batch(self, batch):
        return check_batch(batch, len(self.devices))

    def _parts(self):
        return len(self.devices) * self.accum_steps

    def _setup(self):
        variables = self.model.trainable_variables

        def update(x, y, sample_weight=None):
            batch = batch_size(x, y)
            counts = split_sizes(batch, len(self.devices))
            tower_grads, losses = [], []
            for device, o, n in zip(self.devices, offsets(counts), counts):
                sw = None if sample_weight is None else sample_weight[o:o + n]
                with tf.device(device), tf.name_scope(f"tower_{device.split(':')[-1]}"):
                    loss, grads = fused_grads(self.model, self.loss_fn, take(x, o, n), take(y, o, n),
                                              split_sizes(n, self.accum_steps), sw,
                                              self.optimizer.scale_loss)
                tower_grads.append(list(zip(grads, variables)))
                losses.append(loss * (n / batch))
            averaged = average_gradients(tower_grads, counts=counts)
            self._apply([g for g, _ in averaged])
            return tf.add_n(losses)
        self._fn = self._function(update, self._jit())


class KerasAccumulation(Strategy):
    """Keras 3's own `gradient_accumulation_steps`, one compiled call per micro-batch.

    A reference, not exact in general: Keras divides the accumulated sum by N (so unequal
    micro-batches are mis-weighted) and counts every micro-batch as an optimizer iteration.
    """

    name = "keras"
    skips_non_finite = False  # the reference: Keras applies whatever it accumulated
    supports_sample_weight = True

    def _make_optimizer(self, optimizer):
        optimizer = super()._make_optimizer(optimizer)
        if self.accum_steps == 1:
            return optimizer
        # Keras accumulates, and clips the accumulated mean (global_clipnorm), in the optimizer
        # that applies; a LossScaleOptimizer wraps it and checks every micro-batch.
        extra = dict(gradient_accumulation_steps=self.accum_steps)
        if self.clip_norm is not None:
            extra["global_clipnorm"] = self.clip_norm
        if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
            inner = optimizer.inner_optimizer
            inner = type(inner).from_config(dict(inner.get_config(), **extra))
            return type(optimizer)(inner, initial_scale=optimizer.initial_scale,
                                   dynamic_growth_steps=optimizer.dynamic_growth_steps)
        return type(optimizer).from_config(dict(optimizer.get_config(), **extra))

    def _apply(self, grads):
        # Under accumulation Keras clips (global_clipnorm above); clipping here would clip
        # each micro-batch, which is not clipping the update.
        clip_norm = self.clip_norm if self.accum_steps == 1 else None
        apply_update(self.optimizer, grads, self.model.trainable_variables, clip_norm)

    def _setup(self):
        def micro_step(x, y, sample_weight=None):
            loss, grads = loss_and_grads(self.model, self.loss_fn, x, y, sample_weight=sample_weight,
                                         scale_loss=self.optimizer.scale_loss)
            self._apply(grads)
            return loss
        self._fn = self._function(micro_step)

    def _update(self, x, y, sizes, *sample_weight):
        opt = getattr(self.optimizer, "inner_optimizer", self.optimizer)
        losses = []
        try:
            for o, n in zip(offsets(sizes), sizes):
                losses.append(float(self._fn(take(x, o, n), take(y, o, n), *[u[o:o + n] for u in sample_weight])))
        except BaseException:
            # Undo the half-finished window: Keras would apply it on a later micro-batch.
            # (`step` puts the micro-batch counter, `_iterations`, back.)
            for acc in getattr(opt, "_accumulated_gradients", None) or []:
                acc.assign(tf.zeros_like(acc))
            raise
        return np.dot(losses, sizes) / sum(sizes)


class Mirrored(Strategy):
    """`tf.distribute.MirroredStrategy` over `devices`: each replica accumulates its share
    locally, and gradients are all-reduced once per update (see `gradlab.distribute`).

    `distribution=` (keyword, not through `make_strategy`) runs the same code on another
    strategy, e.g. `distribute.make_multi_worker()` on every worker of a cluster.
    """

    name = "mirrored"
    # Keras's update under a strategy calls merge_call, which cannot sit inside tf.cond.
    skips_non_finite = False
    uses_devices = True

    def __init__(self, model, loss_fn, optimizer, accum_steps=1, devices=None,
                 distribution=None, **options):
        self.distribution = distribution or distribute.make_distribution(devices)
        super().__init__(model, loss_fn, optimizer, accum_steps, devices, **options)

    def all_reduces_per_update(self):
        """All-reduce ops each replica runs per update, counted in its traced graph: 1
        (0 with a single replica, which has nothing to reduce)."""
        if not self._ready:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        return self._fn.all_reduce_count()

    def _scope(self):
        return self.distribution.scope()

    def _check_batch(self, batch):
        return check_batch(batch, self.distribution.num_replicas_in_sync)

    def _parts(self):
        return self.distribution.num_replicas_in_sync * self.accum_steps

    def _setup(self):
        self._fn = distribute.make_update(self)


_CLASSES = {c.name: c for c in (LargeBatch, HostAverage, Accumulate, Fused, Towers,
                                KerasAccumulation, Mirrored)}
assert tuple(_CLASSES) == STRATEGIES


def make_strategy(name, model, loss_fn, optimizer, accum_steps=1, devices=None, **options):
    """Build the strategy `name` (one of `STRATEGIES`) around a Keras 3 model and optimizer.

    Args:
        name: one of `STRATEGIES`.
        model: a `keras.Model`, or a zero-argument callable that builds one (a distribution
            strategy must create its variables inside its own scope).
        loss_fn: `loss_fn(y, pred)` returning a mean or per-example losses, e.g.
            `keras.losses.SparseCategoricalCrossentropy()`, or a Keras loss name. A Keras loss
            object must average over examples (reduction 'sum_over_batch_size', 'mean' or
            'none'); on a masked output it is exact only unsplit (pass the mask as
            `sample_weight` instead).
        optimizer: a Keras optimizer, a zero-argument callable that builds one, or a name.
        accum_steps: micro-batches per update.
        devices: device names for `towers` and `mirrored` (default: `tower_devices` of all
            available GPUs, else every logical CPU).
        **options: `clip_norm` (clip the global norm of each update, once),
            `jit_compile` (True, False or "auto": XLA for `large_batch`, `fused` and `towers`;
            "auto", the default, turns it on for `fused` when the model has no convolutions)
            and `batchnorm`:
            `'micro'` (default, Keras's behaviour: BatchNorm moving statistics move once per
            micro-batch) or `'window'` (once per update, from the mean and variance of all
            its examples; `large_batch`, `accumulate`, `fused`).
    Returns:
        a `Strategy`; `step(x, y)` makes one update and returns its mean loss as a float.

    All arguments are checked before any TensorFlow work.
    """
    if name not in _CLASSES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    accum_steps = check_count("accum_steps", accum_steps)
    if not callable(loss_fn) and not isinstance(loss_fn, str):
        raise TypeError(f"loss_fn must be callable as loss_fn(y, pred), got {loss_fn!r}")
    reduction = getattr(loss_fn, "reduction", None)
    if isinstance(loss_fn, keras.losses.Loss) and reduction not in _PER_EXAMPLE_MEAN:
        raise ValueError(
            f"loss_fn has reduction={reduction!r}, which does not divide by the number of "
            "examples, so splitting the batch would change the update. Every strategy needs a "
            "per-example mean ('sum_over_batch_size', 'mean' or 'none'), so that all of them are "
            "interchangeable")
    _check_buildable(model, keras.Model, "model")
    if not isinstance(optimizer, str):
        _check_buildable(optimizer, keras.optimizers.Optimizer, "optimizer")
    unknown = set(options) - {"clip_norm", "jit_compile", "batchnorm"}
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; valid: clip_norm, jit_compile, batchnorm")
    clip_norm = options.get("clip_norm")
    if clip_norm is not None and (isinstance(clip_norm, bool) or not isinstance(clip_norm, (int, float))
                                  or not clip_norm > 0):
        raise ValueError(f"clip_norm must be a positive number or None, got {clip_norm!r}")
    jit_compile = options.get("jit_compile", "auto")
    if not (isinstance(jit_compile, bool) or jit_compile == "auto"):
        raise ValueError(f"jit_compile must be True, False or 'auto', got {jit_compile!r}")
    cls = _CLASSES[name]
    if cls is Mirrored and isinstance(model, keras.Model):
        raise TypeError(
            f"mirrored needs a model builder (a zero-argument callable such as "
            f"lambda: make_model()), got the built model {model.name!r}: MirroredStrategy must "
            "create the variables inside its own scope, to mirror them on every device")
    _check_batchnorm(options.get("batchnorm", "micro"), cls)
    if cls.uses_devices:
        devices = _check_devices(devices)
    return cls(model, loss_fn, optimizer, accum_steps, devices, **options)


def _check_batchnorm(batchnorm, cls):
    if not isinstance(batchnorm, str) or batchnorm not in BATCHNORM_MODES:
        raise ValueError(f"batchnorm must be one of {', '.join(map(repr, BATCHNORM_MODES))}, "
                         f"got {batchnorm!r}")
    if batchnorm not in cls.batchnorm_modes:
        supported = [c.name for c in _CLASSES.values() if batchnorm in c.batchnorm_modes]
        raise ValueError(
            f"batchnorm={batchnorm!r} is not supported by strategy {cls.name!r} (supported by "
            f"{', '.join(supported)}): it updates BatchNorm statistics once per micro-batch. Use "
            "batchnorm='micro', or GroupNormalization/LayerNormalization (no batch statistics)")


def _scales_loss(optimizer):
    return isinstance(optimizer, keras.optimizers.LossScaleOptimizer)


def _check_devices(devices):
    if devices is None:
        return local_devices()[1]
    devices = check_device_names(devices)
    if not devices:
        raise ValueError(f"devices must name at least one device, got {devices!r}")
    return devices


def _resolve(obj, cls, what):
    """`obj` itself if it is a `cls`, else the result of calling it (a builder)."""
    if isinstance(obj, cls):
        return obj
    _check_buildable(obj, cls, what)
    built = obj()
    if isinstance(built, cls):
        return built
    raise TypeError(f"the {what} builder must return a {cls.__name__}, got {built!r}")


def _check_buildable(obj, cls, what):
    if not isinstance(obj, cls) and (not callable(obj) or isinstance(obj, keras.layers.Layer)):
        raise TypeError(f"{what} must be a {cls.__name__} or a zero-argument callable that "
                        f"builds one, got {obj!r}")
