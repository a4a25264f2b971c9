"""One XLA policy for `step` and `fit`: decided once, when the update is first traced.

    jit_compile = True | False | "auto"
    "auto" -> XLA if the strategy's loop gains from it and the model holds no layer XLA
              cannot compile (nor, without a GPU, a convolution); then the traced update is lowered to XLA
              (nothing runs) and, if XLA refuses it, the face warns once and runs without.

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

import warnings

import tensorflow as tf

from .. import _compat


def check_jit_compile(jit_compile):
    """`jit_compile` if it is True, False or "auto", else ValueError naming it."""
    if not (isinstance(jit_compile, bool) or jit_compile == "auto"):
        raise ValueError(f"jit_compile must be True, False or 'auto', got {jit_compile!r}")
    return jit_compile


def xla_by_default(model, accelerator=None):
    """`jit_compile="auto"`: XLA unless a layer of `model` says `supports_jit=False` (lookup
    tables), draws random numbers (a seed generator: Dropout, noise, augmentation) or, with no
    accelerator, convolves. XLA fuses a loop's many small ops (MLP, N=10, b=10: 3.55 -> 2.54 ms
    per update) but its CPU backend runs a convolution's gradient in a loop without its fast
    kernels (24 ms -> 930 ms); a GPU's XLA calls cuDNN, so there convolutions stay in. Its
    random numbers from the same seed are not the ones Keras's own fit draws without XLA (a
    random layer at accum_steps=1: 5.9e-3 apart). Convolutions are found by class name, so that
    subclasses count too.

    Args:
        model: the Keras model the update trains.
        accelerator: whether the update runs on a GPU or TPU; None: whether TensorFlow sees a
            device other than a CPU (Keras's own "auto" asks the same).
    Returns:
        True where "auto" turns XLA on.
    """
    if accelerator is None:
        accelerator = any(d.device_type != "CPU" for d in tf.config.list_physical_devices())
    layers = [model] + _compat.sublayers(model)
    convolves = lambda layer: any(c.__name__.startswith(("Conv", "DepthwiseConv", "SeparableConv"))
                                  for c in type(layer).__mro__)
    random = any("seed_generator" in v.path for v in model.non_trainable_variables)
    return not random and all(getattr(l, "supports_jit", True) and (accelerator or not convolves(l))
                              for l in layers)


def refusal(function, *args):
    """None if XLA lowers `function` (a `tf.function(jit_compile=True)`) on `args`, else XLA's
    reason (the first line of its error). Nothing runs: it is traced (the trace is kept for
    its first call) and lowered to HLO only, which is where an op without an XLA kernel is
    refused."""
    try:
        function.experimental_get_compiler_ir(*args)(stage="hlo")
    except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError, ValueError) as e:
        message = str(e).strip()
        if "XLA" not in message and "compile-time constant" not in message:
            raise  # not XLA's refusal (a bad batch...): the update will say so
        return message.splitlines()[0][:300]
    return None


def warn_refused(reason, who, stacklevel=4):
    """The one warning both faces give when XLA refused their update (`refusal`);
    `stacklevel` as `warnings.warn`'s, counted from here."""
    warnings.warn(f"jit_compile='auto': XLA cannot compile this model's update ({reason}); "
                  f"{who} runs without XLA from now on", RuntimeWarning, stacklevel=stacklevel)
