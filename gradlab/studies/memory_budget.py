"""What training holds in memory, by the formula: weights, gradients, optimizer slots,
the accumulator, activations, the backward pass's temporaries and the input batch, as functions of B, N, dtype and recomputation.

For P trainable parameters of s bytes each (dtype), an effective batch of B rows in N
micro-batches of at most b = ceil(B / N) rows, a activation bytes and i input bytes per row:

    weights     = P s
    gradients   = P s                      (one micro-batch's)
    optimizer   = k P s                    k = 0 sgd, 1 momentum (or rmsprop, adagrad), 2 adam
    accumulator = P s  if N > 1 else 0     (the running sum of the micro-batches' gradients)
    activations = b a f                    f = 1; with recomputation f = `kept`, the share
                                           of a row's activations kept as layer-boundary
                                           checkpoints (the rest recomputed in the backward pass)
                         + b g             with recomputation: one segment's activations, g bytes per
                                           row, rebuilt and held during the backward pass (Chen et al.
                                           2016's one-segment term; g = 0 leaves it out)
    backward    = b t                      the backward pass's temporaries: while a layer's gradient
                                           is taken, the gradients with respect to its output and its
                                           input live together beside the activations; t bytes per
                                           row for the layer where they are largest
                                           (`backward_bytes_per_row`; t = 0 leaves it out)
    inputs      = B i                      (the effective batch, sliced into micro-batches)
    total       = the sum

Accumulation trades N - 1 extra forward-and-backward passes' worth of launches for
activations that shrink as 1/N, at the price of one more copy of the parameters (the
accumulator); recomputation trades one more forward pass for a factor f. Whatever N and f,
weights, gradients and slots stay: (2 + k) P s, plus P s when N > 1, is the floor.

It is an estimate: every term is counted at its largest, though the gradients appear layer by
layer as the backward pass frees activations, and it leaves out the framework's workspace and
allocator rounding. `tests/studies/test_memory_budget.py` holds it against one measured
allocator peak; lesson 11 against the block MLP's and the conv net's.

Lessons: notebooks/11-memory-budget.ipynb and 12-recomputation.ipynb (the calculator checked against a measured peak),
notebooks/17-the-lab.ipynb (the widget)
"""
from __future__ import annotations

import math
import numbers

import numpy as np

DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
SLOTS = {"sgd": 0, "momentum": 1, "rmsprop": 1, "adagrad": 1, "adam": 2, "adamw": 2}
TERMS = ("weights", "gradients", "optimizer", "accumulator", "activations", "backward", "inputs")


def budget(params, optimizer="adam", B=256, N=1, dtype="float32", activation_bytes_per_row=0,
           input_bytes_per_row=0, recompute=False, kept=0.25, segment_bytes_per_row=0,
           backward_bytes_per_row=0):
    """Bytes of each part of training memory (the module's formula), and their total.

        total = P s (2 + k + [N > 1]) + b (a (kept if recompute else 1) + [recompute] g + t) + B i

    Args:
        params: P, the number of trainable parameters (an int >= 0).
        optimizer: a key of `SLOTS` ("sgd", "momentum", "adam", ...): k slots per parameter.
        B: the effective batch, rows per update.
        N: micro-batches per update (accum_steps); b = ceil(B / N) rows each at most.
        dtype: a key of `DTYPE_BYTES`: s, the bytes of one weight, gradient and slot value.
        activation_bytes_per_row: a, activations one row keeps for the backward pass, in
            bytes at `dtype` (`activation_bytes_per_row(model, dtype=...)` estimates it).
        input_bytes_per_row: i, one row of the input batch, in bytes.
        recompute: keep only checkpoints and recompute the rest (`tf.recompute_grad`).
        kept: f, the share of activations kept with recomputation, in (0, 1].
        segment_bytes_per_row: g, the activations of the largest recomputed segment per row,
            rebuilt in the backward pass and held while its gradient is taken (with recompute).
        backward_bytes_per_row: t, the gradients with respect to one layer's output and input
            per row, where they are largest (`backward_bytes_per_row(model)`), in bytes.
    Returns:
        dict of int bytes: `weights`, `gradients`, `optimizer`, `accumulator`,
        `activations`, `backward`, `inputs` (`TERMS`, in that order) and `total`; and `b`,
        the rows of the largest micro-batch.
    """
    P = _count("params", params, 0)
    B, N = _count("B", B, 1), _count("N", N, 1)
    if optimizer not in SLOTS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {', '.join(SLOTS)}")
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPE_BYTES)}")
    a = _bytes("activation_bytes_per_row", activation_bytes_per_row)
    i = _bytes("input_bytes_per_row", input_bytes_per_row)
    g = _bytes("segment_bytes_per_row", segment_bytes_per_row)
    t = _bytes("backward_bytes_per_row", backward_bytes_per_row)
    if isinstance(kept, bool) or not isinstance(kept, numbers.Real) or not 0 < kept <= 1:
        raise ValueError(f"kept must be a share in (0, 1], got {kept!r}")
    s, b = DTYPE_BYTES[dtype], math.ceil(B / N)
    terms = dict(weights=P * s, gradients=P * s, optimizer=SLOTS[optimizer] * P * s,
                 accumulator=P * s if N > 1 else 0,
                 activations=round(b * a * kept + b * g if recompute else b * a),
                 backward=round(b * t), inputs=B * i)
    return {**terms, "total": sum(terms.values()), "b": b}


def activation_bytes_per_row(model, input_shape=None, dtype=None):
    """a = sum over layers of (elements of the layer's output for one row) * dtype bytes.

    Every layer's output is counted as kept for the backward pass (an upper estimate where
    a layer keeps only its input, a lower one where it keeps temporaries too).

    Args:
        model: a Keras model; a functional or Sequential model with an `Input` as is, else
            give `input_shape`.
        input_shape: one row's input shape (no batch axis), for a Sequential model built
            without an `Input`; each layer's `compute_output_shape` carries it through.
        dtype: a key of `DTYPE_BYTES` to count in; None: each output's own dtype.
    Returns:
        bytes per row (an int).
    """
    _check_model(model, dtype)
    return sum(_row_bytes(shape[1:], out_dtype, dtype) for shape, out_dtype in _output_specs(model, input_shape))


def backward_bytes_per_row(model, input_shape=None, dtype=None):
    """t = max over layers of the gradients alive together while a layer's gradient is taken, for
    one row, times dtype bytes (a Sequential chain: each layer's input is the previous one's output):

        t = max_l ([a weight before l] in_l + [a weight at or before l] out_l)

    TensorFlow's tape builds no gradient for the input data, nor for a layer with nothing
    trainable at or before it (math_grad.py skips unneeded inputs), so those are not counted.
    A layer not built yet counts as holding weights.

    Args, Returns: as `activation_bytes_per_row` (bytes per row, an int).
    """
    _check_model(model, dtype)
    if input_shape is not None:
        previous = _row_bytes(input_shape, model.layers[0].compute_dtype, dtype)
    else:
        previous = _row_bytes(model.inputs[0].shape[1:], model.inputs[0].dtype, dtype)
    largest, upstream = 0, False  # upstream: a trainable weight sits before this layer
    for layer, (shape, out_dtype) in zip(model.layers, _output_specs(model, input_shape)):
        out = _row_bytes(shape[1:], out_dtype, dtype)
        weights = bool(layer.trainable_weights) if layer.built else True
        pair = (previous if upstream else 0) + (out if upstream or weights else 0)
        largest, previous, upstream = max(largest, pair), out, upstream or weights
    return largest


def input_bytes_per_row(model, dtype=None):
    """i = sum over the model's inputs of (elements of one row) * dtype bytes (each input's
    own dtype when `dtype` is None)."""
    if not hasattr(model, "inputs") or not model.inputs:
        raise ValueError(f"model {getattr(model, 'name', model)!r} has no Input: give input_bytes_per_row by hand")
    return sum(_row_bytes(t.shape[1:], t.dtype, dtype) for t in model.inputs)


def _check_model(model, dtype):
    if dtype is not None and dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPE_BYTES)}")
    if not hasattr(model, "layers"):
        raise TypeError(f"model must be a Keras model, got {type(model).__name__}")


def _row_bytes(shape, own_dtype, dtype):
    """Bytes of one row of `shape`, in `dtype` (a key of `DTYPE_BYTES`) or else its own dtype."""
    return int(np.prod(shape, dtype=np.int64)) * (DTYPE_BYTES[dtype] if dtype else np.dtype(own_dtype).itemsize)


def _output_specs(model, input_shape):
    if input_shape is not None:
        shape = (None, *tuple(input_shape))
        for layer in model.layers:
            shape = layer.compute_output_shape(shape)
            yield shape, layer.compute_dtype
        return
    for layer in model.layers:
        try:
            outputs = layer.output
        except (AttributeError, ValueError) as e:
            raise ValueError(f"layer {layer.name!r} of {model.name!r} has no output shape yet: "
                             "build the model on an Input, or give input_shape") from e
        for t in (outputs if isinstance(outputs, (list, tuple)) else [outputs]):
            yield t.shape, t.dtype


def _count(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def _bytes(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"{name} must be a number of bytes >= 0, got {value!r}")
    return value
