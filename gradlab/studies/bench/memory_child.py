"""One memory measurement of `fit`, in this process: the allocator's peak of an epoch.

    compile_peak = allocator peak over epoch 0 (tracing and the first updates, once per shape)
    peak         = allocator peak over the epochs after it   (reset_memory_stats in between)
    train        = peak - base ("epoch" in the tables), base = what the allocator holds when
                   those epochs start (+ Keras's accumulators, which the base holds: one
                   gradient sum for all)
    ms_update    = median seconds of those epochs / updates per epoch   (ms_epochs: each one)
    step         = the update alone ("update" in the tables): the allocator peak of
                   `train_on_batch` on one batch the process already holds as tensors, above
                   what it held before (+ Keras's accumulators, as in train)
    train - step = what fit holds beside the update: mostly its input pipeline's batches of
                   `batch` rows (the one in training and those prefetched; row indices for
                   AccumulatingModel on arrays, `fit_rows`), within the allocator's noise of
                   a MB or two

Run it in a fresh process with `TF_CPU_ALLOCATOR_USE_BFC=true` set before TensorFlow starts
(`bench_memory` does): TensorFlow's default CPU allocator need not keep statistics (2.21's
does), its BFC allocator does, and a fresh process holds nothing of an earlier run. With a
GPU the GPU's allocator (`GPU:0`) is read instead. The peak counts every byte the allocator holds:
weights, optimizer slots, accumulators, the epoch's input tensors and the activations.
`train` is what gradlab compares: Keras's input pipeline holds a copy of the examples (8 MB
for the conv net's 1,536) already at the start of the measured epochs in some runs and not
in others, which moves `peak` by that much from run to run of the same contender and
leaves `train` within about 1 MB.

Under a memory limit (`spec["limit_mb"]`, `bench_memory.fit_under_limit`) a GPU gets a
logical device of that many MB; on a CPU the parent has set `TF_CPU_BFC_MEM_LIMIT_IN_MB`.
Running out of memory is then a result, not a crash: the child prints
`{"out_of_memory": the error's OOM line}`.

Two models whose activations dominate: `conv` (two Conv2D(64, 3) on 28x28 MNIST, a small
head) and `transformer` (one encoder block on random token sequences).

Lesson: notebooks/11-memory-budget.ipynb
"""
from __future__ import annotations

import json
import statistics
import time

import keras
import numpy as np
import tensorflow as tf

from ..data import load_mnist
from ...training.fit import AccumulatingModel
from ..memory import HighWater

MEMORY_MODELS = ("conv", "transformer")
CONTENDERS = ("plain", "accumulating", "keras", "input")
SEQ, DIM, HEADS, VOCAB = 128, 128, 4, 1000  # the transformer's shape
LR = 0.1


def memory_model(name, seed=0):
    """`conv` or `transformer`: a fresh model of logits over 10 classes, seeded."""
    keras.utils.set_random_seed(seed)
    L = keras.layers
    if name == "conv":
        return keras.Sequential([keras.Input((28, 28)), L.Reshape((28, 28, 1)),
                                 L.Conv2D(64, 3, activation="relu"), L.Conv2D(64, 3, activation="relu"),
                                 L.GlobalAveragePooling2D(), L.Dense(10)], name="conv")
    tokens = keras.Input((SEQ,), dtype="int32")
    h = L.Embedding(VOCAB, DIM)(tokens)
    h = L.LayerNormalization()(h + L.MultiHeadAttention(HEADS, DIM // HEADS)(h, h))
    h = L.LayerNormalization()(h + L.Dense(DIM)(L.Dense(4 * DIM, activation="relu")(h)))
    return keras.Model(tokens, L.Dense(10)(L.GlobalAveragePooling1D()(h)), name="transformer")


def input_model(name, seed=0):
    """A linear model on `name`'s inputs, with next to no activations: what its `fit` holds is
    what `fit`'s input takes (the "input" contender, a control)."""
    keras.utils.set_random_seed(seed)
    L = keras.layers
    if name == "conv":
        return keras.Sequential([keras.Input((28, 28)), L.Flatten(), L.Dense(10)], name="conv_input")
    return keras.Sequential([keras.Input((SEQ,), dtype="int32"), L.Embedding(VOCAB, 1), L.Flatten(),
                             L.Dense(10)], name="transformer_input")


def memory_data(name, examples, seed=0):
    """`(x, y)` numpy arrays of `examples` rows: MNIST (tiled past its 4,000 images) for
    `conv`, uniformly random tokens and labels for `transformer`."""
    if name == "conv":
        d = load_mnist(seed=seed)
        idx = np.arange(examples) % len(d.x_train)
        return np.array(d.x_train[idx]), np.array(d.y_train[idx])
    rng = np.random.default_rng(seed)
    return (rng.integers(0, VOCAB, (examples, SEQ), dtype=np.int32),
            rng.integers(0, 10, examples, dtype=np.int32))


def measure_fit(spec):
    """Train `spec` for `1 + epochs` epochs of `updates` updates and measure the epochs after
    the first.

    Args:
        spec: dict `model` (MEMORY_MODELS), `contender` ("plain": `fit` at batch `batch`;
            "accumulating": `AccumulatingModel(accum_steps)` at batch `batch`, no XLA, as
            Keras's own fit on a CPU; "keras": `SGD(gradient_accumulation_steps=accum_steps)`
            at batch `batch`; "input": plain `fit` of `input_model` at batch `batch`, what
            fit's input alone takes), `batch`, `accum_steps`, `overlap`, `examples` per epoch,
            `updates` (effective batches per epoch: time is per effective batch, also for
            plain fit at a micro-batch), `epochs`, `seed`; optional `limit_mb` (a GPU's
            memory, as a logical device; a CPU's is set by the parent's environment);
            optional `weights`: True returns the trained weights too.
    Returns:
        dict `peak_mb`, `base_mb` (held when the measured epochs start), `train_mb` (the
        peak above the base), `step_mb` (the update alone), `batch_input_mb` (one batch's
        x and y), `compile_peak_mb`,
        `compile_rss_mb` (resident memory the first epoch added: tracing), `ms_update`,
        `weights_mb`, `trainable_mb`, `optimizer_mb` (its variables, Keras's accumulators
        included), `data_mb`, `device`, `losses` (each epoch's mean loss) and `finite`
        (every trained weight finite); with `spec["weights"]`, `weights`: each trainable
        weight as fit left it (nested lists, before the update-alone measurement trains on).
    """
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        if spec.get("limit_mb"):  # untested here (no GPU): a logical GPU of limit_mb MB
            tf.config.set_logical_device_configuration(
                gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=spec["limit_mb"])])
        else:
            tf.config.experimental.set_memory_growth(gpu, True)  # or TensorFlow takes it all at once
    device = "GPU:0" if gpus else "CPU:0"
    n, batch, contender = spec["accum_steps"], spec["batch"], spec["contender"]
    x, y = memory_data(spec["model"], spec["examples"], spec["seed"])
    net = (input_model if contender == "input" else memory_model)(spec["model"], spec["seed"])
    optimizer = keras.optimizers.SGD(LR, gradient_accumulation_steps=n if contender == "keras" else None)
    if contender == "accumulating":
        net = AccumulatingModel(net, n, jit_compile=False, overlap=spec["overlap"])
    net.compile(optimizer=optimizer, jit_compile=False,
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    clock = _EpochClock(device)
    tf.config.experimental.reset_memory_stats(device)
    history = net.fit(x, y, batch_size=batch, epochs=1 + spec["epochs"], shuffle=False,
                      verbose=0, callbacks=[clock])
    peak = tf.config.experimental.get_memory_info(device)["peak"]
    losses = [float(v) for v in history.history["loss"]]
    trained = [w.numpy().tolist() for w in net.trainable_weights] if spec.get("weights") else None
    calls = n if contender == "keras" else 2  # Keras's accumulation applies every n-th call
    step = _step_peak(net, x[:batch], y[:batch], device, calls)
    mb = lambda variables: sum(np.prod(v.shape) * np.dtype(v.dtype).itemsize for v in variables) / 2**20
    # Keras's accumulation keeps its gradient sum in optimizer variables, made before the
    # measured epochs (in the base); AccumulatingModel's is a loop tensor (in the peak).
    # Counted alike: one gradient sum in every accumulating contender's train_mb.
    trainable = mb(net.trainable_weights)
    held = trainable if contender == "keras" else 0.0
    train = (peak - clock.base) / 2**20 + held
    return dict(peak_mb=peak / 2**20, base_mb=clock.base / 2**20, train_mb=train,
                step_mb=step / 2**20 + held, batch_input_mb=(x[:batch].nbytes + y[:batch].nbytes) / 2**20,
                compile_peak_mb=clock.compile_peak / 2**20, compile_rss_mb=clock.compile_rss,
                ms_update=1000 * statistics.median(clock.seconds) / spec["updates"],
                ms_epochs=[1000 * t / spec["updates"] for t in clock.seconds],
                weights_mb=mb(net.weights), trainable_mb=trainable,
                optimizer_mb=mb(optimizer.variables), data_mb=(x.nbytes + y.nbytes) / 2**20,
                device=device, losses=losses,
                finite=all(bool(np.isfinite(w.numpy()).all()) for w in net.weights),
                **({} if trained is None else {"weights": trained}))


def _step_peak(net, x, y, device, calls):
    """Bytes the allocator's peak rises over `calls` calls of `net.train_on_batch(x, y)`,
    with x and y already held as tensors: the update without an input pipeline."""
    x, y = (tf.convert_to_tensor(a) + 0 for a in (x, y))  # + 0: a copy the allocator holds
    for _ in range(2):
        net.train_on_batch(x, y)  # the first call traces for these shapes
    tf.config.experimental.reset_memory_stats(device)
    base = tf.config.experimental.get_memory_info(device)["current"]
    for _ in range(calls):
        net.train_on_batch(x, y)
    return tf.config.experimental.get_memory_info(device)["peak"] - base


class _EpochClock(keras.callbacks.Callback):
    """Epoch 0 compiles: its allocator peak and resident growth are kept apart, then the
    allocator's statistics are reset; every later epoch is timed."""

    def __init__(self, device):
        super().__init__()
        self.device, self.seconds, self.high = device, [], HighWater()

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        if epoch == 0:
            self.compile_peak = tf.config.experimental.get_memory_info(self.device)["peak"]
            self.compile_rss = self.high.mb()
            tf.config.experimental.reset_memory_stats(self.device)
            self.base = tf.config.experimental.get_memory_info(self.device)["current"]
        else:
            self.seconds.append(time.perf_counter() - self.start)


def main(spec_json):
    """The child's side of `bench_memory`: one JSON line on stdout, `measure_fit`'s or
    `{"out_of_memory": line}` where the allocator refused a tensor."""
    try:
        result = measure_fit(json.loads(spec_json))
    except tf.errors.ResourceExhaustedError as e:
        result = {"out_of_memory": oom_line(e.message)}
    print(json.dumps(result))


def oom_line(message):
    """The line of a ResourceExhaustedError's message that names the refused tensor (its
    first line is only "Graph execution error:"); else the first non-empty line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("OOM")), lines[0] if lines else "")
