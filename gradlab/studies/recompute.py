"""Activation recomputation (`tf.recompute_grad`) beside accumulation: the two memory levers.

    a block  h = W2 relu(W1 x + c1) + c2        (width -> hidden -> width)
    kept without recomputation, per row: every layer's output (the hidden relu of each block
        and its output), as the backward pass needs them
    kept with `tf.recompute_grad(block)`: each block's input and output only; the backward
        pass runs the block's forward again to rebuild its hidden layer, one block at a time
    accumulation (N micro-batches): everything a row keeps, for b = B / N rows at a time

    recomputation written by hand (`custom_gradient_recompute`, what lesson 12's learner writes):
        the right gradients, but inside `fit`'s graph TensorFlow runs an op as soon as its inputs
        exist; a rebuild that reads only the block's input and weights runs in the forward pass and
        its activations wait for the backward pass: no saving. `wait_for_dy` gives the rebuild an
        input from dy (h + 0 * dy[0, 0]), so it runs when the gradient arrives, as
        `tf.recompute_grad` does.

Both levers leave the update unchanged (recomputation reruns the same ops; accumulation adds
the micro-batches' sums: lesson 10), and both pay in time: recomputation part of a forward
pass again (lesson 12 counts 1.16x the multiply-adds: a block's last product feeds no
gradient, so TensorFlow does not rerun it), accumulation N smaller
matrix products where there was one (the same multiply-adds, more calls).

    peaks(configs)         the allocator's peak of one update, each config in a fresh process

    lesson 12's plumbing, in the notebook's own process:
    block_trainer(wrap, N, scope, loss)   block_mlp's layers, each block wrapped, compiled, traced
    loss_clock(loss)                      the loss, and when each is computed (where a forward pass ends)
    typical_trace(net, x, y, clock)       a typical one of five updates' memory traces, with its loss times
    count_products(fn)                    a graph's matrix products: all, those free of the loss, those needed

    a config: dict B, N, recompute (False, True = "tf.recompute_grad", or a key of `WRAPS`),
        optionally grappler (default True; False turns off Grappler, TensorFlow's graph rewrites,
        such as merging identical ops, in that process) and eager (default False; True compiles
        with run_eagerly=True: each op runs when Python reaches it, no graph)

Lessons: notebooks/12-recomputation.ipynb (notebooks/11-memory-budget.ipynb builds the budget)
"""
from __future__ import annotations

import contextlib
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import tensorflow as tf

from ..core.microbatch import check_count
from . import memory

SHAPE = dict(depth=4, width=128, hidden=1024)  # blocks of 128 -> 1024 -> 128 on 784 inputs
CHILD_TIMEOUT = 300  # seconds: import TensorFlow, build, trace, a few updates


def custom_gradient_recompute(f, wait_for_dy=False):
    """Lesson 12's hand-written recomputation: `f(h)` forward; its gradient from `f` run again
    under a tape in the backward pass. With `wait_for_dy` the rebuild reads dy (h + 0 * dy[0, 0]:
    the same values while dy[0, 0] is finite, NaN if it is inf; a data edge), so a graph cannot run
    it before the gradient arrives."""
    @tf.custom_gradient
    def wrapped(h):
        def backward(dy, variables=None):
            h_ = h + 0.0 * tf.reduce_max(dy[:1, :1]) if wait_for_dy else h
            with tf.GradientTape() as tape:
                tape.watch(h_)
                out = f(h_)
            return tape.gradient(out, [h_, variables], output_gradients=dy)
        return f(h), backward
    return wrapped


WRAPS = {"tf.recompute_grad": tf.recompute_grad,
         "custom_gradient": custom_gradient_recompute,
         "custom_gradient, waits for dy": lambda f: custom_gradient_recompute(f, wait_for_dy=True)}


class RecomputedBlock(keras.layers.Layer):
    """`dense_out(dense_in(x))`, its forward pass run again in the backward pass
    (`tf.recompute_grad`, or another key of `WRAPS`) instead of keeping `dense_in`'s output.
    `wrap` may also be a callable f -> f' (a learner's own rebuild; `lambda f: f` for none):
    `call` is `wrap(block)(x)`."""

    def __init__(self, dense_in, dense_out, wrap="tf.recompute_grad", **kwargs):
        super().__init__(**kwargs)
        if not callable(wrap) and wrap not in WRAPS:
            raise ValueError(f"wrap must be a callable or one of {', '.join(WRAPS)}, got {wrap!r}")
        self.dense_in, self.dense_out, self.wrap = dense_in, dense_out, wrap

    def build(self, input_shape):  # layers already built (another model's) keep their weights
        if not self.dense_in.built:
            self.dense_in.build(input_shape)
        if not self.dense_out.built:
            self.dense_out.build((*input_shape[:-1], self.dense_in.units))

    def _block(self, x):
        return self.dense_out(self.dense_in(x))

    def call(self, x):
        return (self.wrap if callable(self.wrap) else WRAPS[self.wrap])(self._block)(x)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.dense_out.units)


def block_mlp(recompute=False, depth=4, width=128, hidden=1024, seed=0):
    """784 inputs -> Dense(width) -> `depth` blocks (Dense(hidden, relu), Dense(width)) ->
    Dense(10) logits; with `recompute` (True: `tf.recompute_grad`, or a key of `WRAPS`), each
    block is a `RecomputedBlock`. The same seed gives the same weights either way (the layers
    are made in the same order).

    Returns:
        a built keras.Sequential.
    """
    for name, value in (("depth", depth), ("width", width), ("hidden", hidden)):
        check_count(name, value)
    keras.utils.set_random_seed(seed)
    L = keras.layers
    layers = [keras.Input((784,)), L.Dense(width)]
    wrap = "tf.recompute_grad" if recompute is True else recompute
    for _ in range(depth):
        pair = L.Dense(hidden, activation="relu"), L.Dense(width)
        layers += [RecomputedBlock(*pair, wrap=wrap)] if recompute else list(pair)
    return keras.Sequential(layers + [L.Dense(10)], name="block_mlp" + ("_recomputed" if recompute else ""))


def block_trainer(wrap=None, N=1, scope=None, loss=None, x=None, y=None, seed=0):
    """`block_mlp`'s model (seed 0: the same weights whatever the wrap) compiled with SGD(0.01)
    and no XLA, then trained on (x, y) twice, so that its graph is traced.

    Args:
        wrap: None (plain layers), or each block a `RecomputedBlock(wrap)` named block_1 ..
            block_4: `wrap` a key of `WRAPS` or a callable f -> f'.
        N: micro-batches; N > 1 wraps the model in `AccumulatingModel(N)`.
        scope: None, or a `keras.RematScope` mode ("list_of_layers": keras.remat around each
            block's call), active while the layers are made (a layer reads it then).
        loss: the loss to compile with (default sparse cross-entropy from logits).
        x, y: the batch of the two tracing updates (None: no update).
    Returns:
        the compiled model.
    """
    from ..training.fit import AccumulatingModel

    names = [f"block_{k}" for k in range(1, SHAPE["depth"] + 1)]
    within = keras.RematScope(mode=scope, layer_names=names) if scope else contextlib.nullcontext()
    with within:
        net = block_mlp(seed=seed, **SHAPE)
        if wrap is not None:  # the same layers, each block in a RecomputedBlock
            L = net.layers
            net = keras.Sequential([keras.Input((784,)), L[0], *(
                RecomputedBlock(L[j], L[j + 1], wrap=wrap, name=name)
                for j, name in zip(range(1, 2 * SHAPE["depth"], 2), names)), L[-1]])
    net = AccumulatingModel(net, check_count("N", N), jit_compile=False) if N > 1 else net
    net.compile(optimizer=keras.optimizers.SGD(0.01), jit_compile=False,
                loss=loss or keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    for _ in range(2 if x is not None else 0):
        net.train_on_batch(x, y)
    return net


def loss_clock(loss):
    """`loss` as a compiled model's loss that also records when each value is computed
    (`time.perf_counter()`, appended to the returned function's `.ended`): where a forward
    pass ends, to mark on a memory trace. A scalar: it holds no memory to speak of."""
    def clocked(y, logits):
        value = loss(y, logits)
        mark = tf.numpy_function(lambda v: clocked.ended.append(time.perf_counter()) or v, [value], tf.float32)
        with tf.control_dependencies([mark]):
            return tf.identity(value)
    clocked.ended = []
    return clocked


def typical_trace(net, x, y, clock, tries=5):
    """`memory_trace.trace` of one `net.train_on_batch(x, y)`, `tries` times; of the three
    quickest (a stalled call stretches its trace), the one with the middle peak.

    Returns:
        (the Trace, the ms since that call began at which `clock` (a `loss_clock`) computed each loss).
    """
    from .memory_trace import trace

    readings = []
    for _ in range(check_count("tries", tries)):
        seen, began = len(clock.ended), []
        tr = trace(lambda: (began.append(time.perf_counter()), net.train_on_batch(x, y)))
        readings.append((tr, [1000 * (t - began[0]) for t in clock.ended[seen:]]))
    quickest = sorted(readings, key=lambda r: r[0].ms[-1])[:min(3, len(readings))]
    return sorted(quickest, key=lambda r: r[0].peak)[len(quickest) // 2]


def count_products(fn):
    """The matrix products (MatMul ops) of `fn`'s graph (`fn` takes no argument and computes a
    softmax cross-entropy loss and gradients from it).

    Returns:
        (all products, those that need nothing from the loss, so the executor may run them in
        the forward pass, those the graph's outputs need). Data and control edges both count.
    """
    graph = tf.function(fn, autograph=False).get_concrete_function().graph
    ops = graph.get_operations()
    after = {}
    for op in ops:
        for c in op.control_inputs:
            after.setdefault(c, []).append(op)
    todo, seen = [op for op in ops if "SoftmaxCrossEntropy" in op.type], set()
    if not todo:
        raise ValueError("fn's graph computes no softmax cross-entropy: no loss to walk from")
    while todo:  # seen: every op that needs the loss, forward through data and control edges
        op = todo.pop()
        if op not in seen:
            seen.add(op)
            todo += [c for out in op.outputs for c in out.consumers()] + after.get(op, [])
    todo, need = [out.op for out in graph.outputs], set()
    while todo:  # need: every op the outputs need, back through inputs
        op = todo.pop()
        if op not in need:
            need.add(op)
            todo += [inp.op for inp in op.inputs] + list(op.control_inputs)
    products = [op for op in ops if op.type == "MatMul"]
    return len(products), sum(op not in seen for op in products), sum(op in need for op in products)


def _config(config):
    """`config` checked: dict `B`, `N` (B % N == 0), `recompute` (a bool or a key of `WRAPS`),
    optional `grappler` and `eager` (bools, default True and False)."""
    if not isinstance(config, dict) or not {"B", "N", "recompute"} <= set(config) <= {"B", "N", "recompute",
                                                                                        "grappler", "eager"}:
        raise ValueError(f"a config is a dict of B, N and recompute (and optionally grappler, eager), got {config!r}")
    B, N = check_count("B", config["B"]), check_count("N", config["N"])
    if B % N:
        raise ValueError(f"B must divide by N, got B={B!r}, N={N!r}")
    if not isinstance(config["recompute"], bool) and config["recompute"] not in WRAPS:
        raise TypeError(f"recompute must be True, False or one of {', '.join(WRAPS)}, "
                        f"got {config['recompute']!r}")
    if not isinstance(config.get("grappler", True), bool):
        raise TypeError(f"grappler must be True or False, got {config['grappler']!r}")
    if not isinstance(config.get("eager", False), bool):
        raise TypeError(f"eager must be True or False, got {config['eager']!r}")
    checked = dict(B=B, N=N, recompute=config["recompute"], grappler=config.get("grappler", True))
    return dict(checked, eager=True) if config.get("eager") else checked  # the key only where it was asked


def _trainer(config, seed=0):
    """The model of `config` compiled with SGD (no slots, no XLA; eagerly with `eager`), wrapped
    in AccumulatingModel(N) when N > 1, and its batch of B random rows as held tensors."""
    from ..training.fit import AccumulatingModel

    net = block_mlp(config["recompute"], seed=seed, **SHAPE)
    if config["N"] > 1:
        net = AccumulatingModel(net, config["N"], jit_compile=False)
    net.compile(optimizer=keras.optimizers.SGD(0.01), jit_compile=False, run_eagerly=config.get("eager", False),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.random((config["B"], 784), dtype=np.float32))
    y = tf.constant(rng.integers(0, 10, config["B"]))
    return net, x, y


def measure(config, updates=3):
    """In this process: two updates (tracing), then the allocator's peak over `updates` more.

    Returns:
        dict `peak_mib` (all the allocator held at the peak: weights, the batch, gradients,
        activations), `held_mib` (what it held before those updates), `update_mib`
        (peak - held), `params`, `device` and `seconds_per_update` (the mean wall-clock time
        of the measured updates; on a shared CPU it moves between runs).
    """
    config, updates = _config(config), check_count("updates", updates)
    device = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
    if not config["grappler"]:  # before the first trace: every graph of this process runs unrewritten
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    net, x, y = _trainer(config)
    net.train_on_batch(x, y)  # with memory.measure's first, untimed call: two updates traced
    times = []

    def step():
        start = time.perf_counter()
        net.train_on_batch(x, y)
        times.append(time.perf_counter() - start)

    m = memory.measure(step, updates, devices=(device,))
    if m["tf_peak_mb"] is None:
        raise RuntimeError(f"{device}'s allocator keeps no statistics (on a CPU, set "
                           "TF_CPU_ALLOCATOR_USE_BFC=true before TensorFlow starts)")
    return dict(config, peak_mib=m["held_mb"] + m["tf_peak_mb"], held_mib=m["held_mb"],
                update_mib=m["tf_peak_mb"], device=device,
                params=int(sum(np.prod(v.shape) for v in net.trainable_weights)),
                seconds_per_update=float(np.mean(times[1:])))  # memory.measure's first call is unmeasured


def peaks(configs, updates=3, parallel=2):
    """`measure(config)` for each config, each in a fresh process (TensorFlow's BFC allocator,
    nothing of an earlier run held), `parallel` processes at a time (a peak is a process's own,
    so processes side by side do not change it).

    Returns:
        a list of `measure`'s dicts, in the order of `configs` (`{"error": why}` for a failure).
    """
    configs = [_config(c) for c in configs]
    check_count("parallel", parallel)
    run = lambda c: memory.in_fresh_process(["gradlab.studies.recompute", json.dumps(c), str(updates)],
                                           CHILD_TIMEOUT)
    with ThreadPoolExecutor(parallel) as pool:
        return list(pool.map(run, configs))


if __name__ == "__main__":
    from .._quiet import quiet
    quiet()  # the parent reads this process's stdout
    print(json.dumps(measure(json.loads(sys.argv[1]), int(sys.argv[2]))))
