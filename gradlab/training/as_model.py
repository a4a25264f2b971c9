"""The wrapper answers as the model it wraps: its layers, and weight files the model reads.

    acc.layers                 == acc.model.layers          (get_layer, summary's rows too)
    acc.weights, trainable_weights, non_trainable_weights  == acc.model's, each variable once
    acc.save_weights(f)        == acc.model.save_weights(f), with acc's optimizer as the model's
    acc.load_weights(f)        == acc.model.load_weights(f), the same way round

So code written for a Keras model works on the wrapper unchanged: freezing
`for layer in acc.layers[:-1]: layer.trainable = False` then `compile` and `fit` trains
what plain Keras trains, a callback's `self.model.get_layer("d1")` finds the layer, and a
`ModelCheckpoint(save_weights_only=True)` or `BackupAndRestore` file of the wrapper is a file
of the model (and the model's optimizer state, as Keras writes it) and the other way round.

What stays the wrapper's own: Keras's `_layers` (whatever walks it: the variables and
`trainable_variables` the step reads, the `trainable` switch, the compiled trainable state,
`built`) holds one sub-layer, `acc.model`, so each variable is counted once; only the
public `layers` (read by `get_layer`, TensorBoard, `plot_model` and the `.keras` walk) is
the model's. A full save `acc.save("f.keras")` stores the wrapper (its `accum_steps` and
options, then the model), which `keras.saving.load_model` gives back as an
`AccumulatingModel`; `acc.load_weights("f.keras")` reads a wrapper's archive as Keras does
and a plain model's as the model does. A plain model reads a wrapper's archive too, except a
subclassed model's own variables (`add_weight` on the model, filed under `model/`): Keras
raises, naming the model; `acc.save_weights` writes the file for it. Archives of a wrapper
saved before gradlab answered as the model (the model filed under `layers/`) do not load
(Keras raises, naming the layers).

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import contextlib
import json
import zipfile

import keras


class AsModel:
    """Mixin for `AccumulatingModel`: the layer and weight questions, answered by `self.model`."""

    @property
    def layers(self):
        """The wrapped model's layers (`acc.model.layers`), as a Keras model lists them."""
        model = self.__dict__.get("model")  # None while keras.Model.__init__ runs
        return keras.Model.layers.fget(self) if model is None else model.layers

    @layers.setter
    def layers(self, _):
        keras.Model.layers.fset(self, _)  # reserved, as on any Keras model

    def get_layer(self, name=None, index=None):
        """`acc.model.get_layer(name=..., index=...)`."""
        return self.model.get_layer(name=name, index=index)

    def summary(self, *args, **kwargs):
        """`acc.model.summary(...)` (its layers, shapes and connections, its name), counting
        this wrapper's optimizer as a compiled plain model's summary counts its own."""
        with _optimizer_lent(self, compiled=True):
            return self.model.summary(*args, **kwargs)

    def save_weights(self, filepath, overwrite=True, **kwargs):
        """`acc.model.save_weights(...)`, with this wrapper's optimizer in the file as the
        model's: a file the plain model (compiled or not) loads, and the other way round.
        `kwargs`: what this Keras's save_weights takes (`max_shard_size` from 3.10)."""
        with _optimizer_lent(self):
            return self.model.save_weights(filepath, overwrite=overwrite, **kwargs)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        """`acc.model.load_weights(...)` with this wrapper's optimizer, for a file of the model
        or of `save_weights`; a `.keras` archive of a wrapper (`acc.save`) as Keras loads it."""
        if _wrapper_archive(filepath):
            return keras.Model.load_weights(self, filepath, skip_mismatch=skip_mismatch, **kwargs)
        with _optimizer_lent(self):
            return self.model.load_weights(filepath, skip_mismatch=skip_mismatch, **kwargs)


@contextlib.contextmanager
def _optimizer_lent(acc, compiled=False):
    """Inside, `acc.model.optimizer` is `acc.optimizer` (Keras's weight files hold a model's
    layers and its optimizer) and, with `compiled`, `acc.model.compiled` is `acc.compiled`
    (summary counts a compiled model's optimizer); after, the model's own (an uncompiled
    model has no `optimizer`)."""
    model, lent = acc.model, {"optimizer": getattr(acc, "optimizer", None)}
    if compiled:
        lent["compiled"] = acc.compiled
    own = {name: model.__dict__[name] for name in lent if name in model.__dict__}
    for name, value in lent.items():
        setattr(model, name, value)
    try:
        yield
    finally:
        for name in lent:
            if name in own:
                setattr(model, name, own[name])
            else:
                delattr(model, name)


def _wrapper_archive(filepath):
    """Whether `filepath` is a `.keras` archive of an `AccumulatingModel`."""
    if not str(filepath).endswith(".keras") or not zipfile.is_zipfile(filepath):
        return False
    with zipfile.ZipFile(filepath) as archive:
        if "config.json" not in archive.namelist():
            return False
        config = json.loads(archive.read("config.json"))
    return config.get("registered_name") == "gradlab>AccumulatingModel"
