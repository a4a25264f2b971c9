"""`fit` timed: `AccumulatingModel` against Keras's own accumulation and against plain `fit`.

    ratio to keras = t(Keras gradient_accumulation_steps=N, batch b) / t(AccumulatingModel, batch N*b)
    ratio to plain = t(AccumulatingModel, batch N*b) / t(plain fit, batch N*b)
    ratio to loop  = t(AccumulatingModel, batch N*b) / t(hand-written loop, batch N*b)
    overlap gain   = t(AccumulatingModel) / t(AccumulatingModel(overlap=2))   (> 1: it buys time)
    check cost     = t(AccumulatingModel(check="every")) / t(AccumulatingModel)   (the default
                     checks the contract on each fit's first update; "every" on every update)

Plain `fit` runs as Keras compiles it by default (no XLA on a CPU-only machine);
`plain_xla` is the same with `jit_compile=True`, beside it, since AccumulatingModel uses XLA.
`hand_loop` is the floor of any accumulation in N micro-batches: the fewest lines that do it
(`HandLoop`: one `tf.while_loop`, gradients summed, applied once, compiled as
AccumulatingModel is), with none of gradlab's code and none of its guarantees (equal
splits only, no guard, no metrics). `loop_to_plain` is what running b rows at a time costs
on this machine whoever writes the loop; `ratio_to_loop` is what gradlab adds to it.

Every contender does the same work per epoch: the same examples, the same number of updates
(Keras's accumulation takes N fit steps per update, the others one). Plain `fit` at the
large batch is the limit: no accumulation at all. Rounds are interleaved (each round times
one epoch of every contender, in rotated order), so a slow moment of a shared machine hits
all of them; the medians are reported, and each ratio is the median of the rounds' own
ratios (two contenders timed back to back share a slow moment, so a round's ratio is
steadier than a ratio of medians). Python's garbage collector runs before each timed epoch,
not during it (as `timeit` does), so that a collection falls on no contender. Every epoch
is whole updates, so that every contender splits every batch alike. A benchmark, never a
test.

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import time

import keras
import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from .options import shared_options
from ..data import load_mnist
from ...training.fit import AccumulatingModel
from ...core.microbatch import check_count
from ..models import MODELS, make_model

CONTENDERS = ("accumulating", "hand_loop", "keras", "plain", "plain_xla", "overlap2", "check_every")
MAX_EXAMPLES = 4000


def run_bench_fit(accum_steps=10, micro_batch=10, rounds=5, examples=None, model="mlp",
                  steps_per_execution=1, jit_compile="auto", progress=False):
    """Median seconds per epoch of each contender and their ratios.

    Args:
        accum_steps, micro_batch: N and b; the effective batch is N * b.
        rounds: timed epochs per contender (after one untimed epoch that traces/compiles).
        examples: MNIST training examples per epoch, a multiple of N * b (whole updates) and
            at most 4,000 (the shipped set); None: the largest such multiple.
        model: a `models.MODELS` name.
        steps_per_execution: passed to every contender's `compile`.
        jit_compile: `AccumulatingModel`'s option, which `hand_loop` follows (Keras's own
            contenders use Keras's default, which is no XLA on a CPU-only machine).
        progress: a progress bar over the rounds.
    Returns:
        a JSON-ready dict: config, `seconds` (median per epoch), `ms_per_update`,
        `ratio_to_keras` (Keras's time / ours: > 1 is faster), `ratio_to_plain` (ours /
        plain fit: 1 is free accumulation), `ratio_to_loop` (ours / the hand-written loop:
        gradlab's own cost) and `loop_to_plain` (the loop / plain fit: the cost of
        micro-batches of b on this machine), `overlap_gain` (ours / ours with overlap=2:
        what holding two micro-batches buys in time) and `check_cost` (ours checking the
        contract in every update / ours by default), each the median of per-round ratios.
    """
    examples = _check(accum_steps, micro_batch, rounds, examples, model, steps_per_execution,
                      jit_compile)
    data = load_mnist()
    x, y = np.array(data.x_train[:examples]), np.array(data.y_train[:examples])
    big = accum_steps * micro_batch
    fitted = {"accumulating": _contender("accumulating", model, accum_steps, steps_per_execution,
                                         jit_compile)}
    for name in CONTENDERS[1:]:  # hand_loop compiles as AccumulatingModel resolved its option
        fitted[name] = _contender(name, model, accum_steps, steps_per_execution,
                                  fitted["accumulating"].jit_compile)
    batch = {name: micro_batch if name == "keras" else big for name in CONTENDERS}
    times = {name: [] for name in CONTENDERS}
    for r in tqdm(range(rounds + 1), desc="bench --fit rounds", disable=not progress):
        k = r % len(CONTENDERS)
        for name in CONTENDERS[k:] + CONTENDERS[:k]:
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                fitted[name].fit(x, y, batch_size=batch[name], epochs=1, shuffle=False, verbose=0)
                elapsed = time.perf_counter() - start
            finally:
                gc.enable()
            if r:  # round 0 traces and compiles
                times[name].append(elapsed)
    updates = examples // big
    seconds = {name: statistics.median(t) for name, t in times.items()}
    return {
        "config": dict(accum_steps=accum_steps, micro_batch=micro_batch, rounds=rounds,
                       examples=examples, model=model, steps_per_execution=steps_per_execution,
                       jit_compile=jit_compile, updates_per_epoch=updates),
        "seconds": seconds,
        "ms_per_update": {name: 1000 * s / updates for name, s in seconds.items()},
        "ratio_to_keras": _paired(times["keras"], times["accumulating"]),
        "ratio_to_plain": _paired(times["accumulating"], times["plain"]),
        "ratio_to_plain_xla": _paired(times["accumulating"], times["plain_xla"]),
        "ratio_to_loop": _paired(times["accumulating"], times["hand_loop"]),
        "loop_to_plain": _paired(times["hand_loop"], times["plain"]),
        "overlap_gain": _paired(times["accumulating"], times["overlap2"]),
        "check_cost": _paired(times["check_every"], times["accumulating"]),
        "iqr_seconds": {name: _iqr(t) for name, t in times.items()},
    }


def format_bench_fit(result):
    c = result["config"]
    big = c["accum_steps"] * c["micro_batch"]
    lines = [f"fit, one epoch of {c['examples']} examples, {c['model']}: N={c['accum_steps']} "
             f"micro-batches of b={c['micro_batch']} ({c['updates_per_epoch']} updates), "
             f"{c['rounds']} interleaved rounds, steps_per_execution={c['steps_per_execution']}",
             f"{'contender':<44}{'s/epoch':>9}{'ms/update':>11}{'IQR s':>9}"]
    labels = {"accumulating": f"AccumulatingModel (batch {big})",
              "hand_loop": f"hand-written loop, the floor (batch {big})",
              "keras": f"Keras gradient_accumulation_steps (batch {c['micro_batch']})",
              "plain": f"plain fit (batch {big})",
              "plain_xla": f"plain fit + XLA (batch {big})",
              "overlap2": f"AccumulatingModel overlap=2 (batch {big})",
              "check_every": f"AccumulatingModel check='every' (batch {big})"}
    for name in CONTENDERS:
        lines.append(f"{labels[name]:<44}{result['seconds'][name]:>9.3f}"
                     f"{result['ms_per_update'][name]:>11.2f}{result['iqr_seconds'][name]:>9.3f}")
    lines.append(f"AccumulatingModel is {result['ratio_to_keras']:.2f}x faster than Keras's accumulation "
                 f"and takes {result['ratio_to_plain']:.2f}x the time of plain fit "
                 f"({result['ratio_to_plain_xla']:.2f}x plain fit + XLA)")
    lines.append(f"of which micro-batches of {c['micro_batch']} rows cost {result['loop_to_plain']:.2f}x "
                 f"(the hand-written loop against plain fit) and gradlab "
                 f"{result['ratio_to_loop']:.2f}x (AccumulatingModel against the loop)")
    lines.append(f"overlap=2 (two micro-batches' activations held) is {result['overlap_gain']:.2f}x "
                 "as fast as the default")
    lines.append(f"checking the contract in every update (check='every') takes {result['check_cost']:.2f}x "
                 "the default's time (which checks each fit's first update)")
    return "\n".join(lines)


# A hand-written loop, kept deliberately: the benchmark's floor must share no code with the
# engine it is the floor of.
class HandLoop(keras.Model):
    """The floor: `model` trained in `accum_steps` equal micro-batches per step, by hand.

        grads = (dL_1 + ... + dL_N) / N      (L_i: the mean loss of micro-batch i)

    One `tf.while_loop` over the batch reshaped to `[N, B / N, ...]`, the gradients carried
    and applied once: what anyone would write, and nothing more (B must divide by N; no
    finite-update guard, no masks, weights or metrics), so it times accumulation itself.
    """

    def __init__(self, model, accum_steps, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.accum_steps = accum_steps
        self.loss_mean = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_mean]

    def call(self, x, training=None):
        return self.model(x, training=training)

    def train_step(self, data):
        x, y = data
        n = self.accum_steps
        xs = tf.reshape(x, tf.concat([[n, -1], tf.shape(x)[1:]], 0))
        ys = tf.reshape(y, tf.concat([[n, -1], tf.shape(y)[1:]], 0))
        variables = self.trainable_variables

        def body(i, total, grads):
            with tf.GradientTape() as tape:
                loss = self.loss(ys[i], self(xs[i], training=True))
            new = tape.gradient(loss, variables)
            return i + 1, total + loss, [g + tf.convert_to_tensor(d) for g, d in zip(grads, new)]

        _, total, grads = tf.while_loop(lambda i, *_: i < n, body,
                                        (0, 0.0, [tf.zeros_like(v) for v in variables]))
        self.optimizer.apply([g / n for g in grads], variables)
        self.loss_mean.update_state(total / n)
        return {"loss": self.loss_mean.result()}


def _check(accum_steps, micro_batch, rounds, examples, model, steps_per_execution, jit_compile):
    """The examples per epoch, or a ValueError/TypeError naming a bad argument, before any
    TensorFlow work."""
    for name, value in (("accum_steps", accum_steps), ("micro_batch", micro_batch),
                        ("rounds", rounds), ("steps_per_execution", steps_per_execution)):
        check_count(name, value)
    big = accum_steps * micro_batch
    if examples is None:
        examples = MAX_EXAMPLES // big * big
    check_count("examples", examples, minimum=big)
    if examples > MAX_EXAMPLES:
        raise ValueError(f"examples must be at most {MAX_EXAMPLES} (the shipped MNIST), got {examples}")
    if examples % big:
        raise ValueError(f"examples must be whole updates, a multiple of accum_steps * micro_batch "
                         f"= {big}, got {examples} (try {examples // big * big})")
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if not (isinstance(jit_compile, bool) or jit_compile == "auto"):
        raise ValueError(f"jit_compile must be True, False or 'auto', got {jit_compile!r}")
    return examples


def _contender(name, model, accum_steps, steps_per_execution, jit_compile):
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    net = make_model(model, seed=0)
    if name == "keras":
        optimizer = keras.optimizers.SGD(0.1, gradient_accumulation_steps=accum_steps)
    else:
        optimizer = keras.optimizers.SGD(0.1)
    if name in ("accumulating", "overlap2", "check_every"):
        net = AccumulatingModel(net, accum_steps=accum_steps, jit_compile=jit_compile,
                                overlap=2 if name == "overlap2" else 1,
                                check="every" if name == "check_every" else "first")
    elif name == "hand_loop":
        net = HandLoop(net, accum_steps)
    else:  # "auto": Keras's default for Keras's contenders
        jit_compile = True if name == "plain_xla" else "auto"
    net.compile(optimizer=optimizer, loss=loss, steps_per_execution=steps_per_execution,
                jit_compile=jit_compile)
    return net


def _paired(numerators, denominators):
    """The median over rounds of `numerator / denominator`, each pair timed in one round."""
    return statistics.median(a / b for a, b in zip(numerators, denominators))


def _iqr(values):
    q = np.percentile(values, [25, 75])
    return float(q[1] - q[0])


def cli(argv=None):
    """`python -m gradlab bench fit` (or `bench --fit`): the contenders timed; `--json` for one JSON object.

    Lesson: notebooks/10-accumulation-in-fit.ipynb
    """
    parser = argparse.ArgumentParser(prog="python -m gradlab bench fit", parents=[
        shared_options(7, "timed epochs per contender")], description=(
        "fit timed for one epoch: AccumulatingModel (batch N*b) against Keras's "
        "gradient_accumulation_steps (batch b), plain fit (batch N*b) and a hand-written "
        "loop of N micro-batches (the floor), interleaved rounds."))
    parser.add_argument("--examples", type=int, default=None,
                        help="examples per epoch, a multiple of N*b (the most up to 4000)")
    parser.add_argument("--model", choices=MODELS, default="mlp")
    parser.add_argument("--steps-per-execution", type=int, default=1,
                        help="compile(steps_per_execution=...) for every contender (1)")
    parser.add_argument("--jit-compile", choices=("auto", "true", "false"), default="auto",
                        help="AccumulatingModel's jit_compile (auto)")
    args = parser.parse_args(argv)
    jit = {"auto": "auto", "true": True, "false": False}[args.jit_compile]
    options = (args.accum, args.micro_batch, args.rounds, args.examples, args.model,
               args.steps_per_execution, jit)
    try:  # the arguments only: a ValueError from inside TensorFlow is no usage error
        _check(*options)
    except (ValueError, TypeError) as e:
        parser.error(str(e))
    result = run_bench_fit(*options, progress=not args.no_progress)
    print(json.dumps(result, allow_nan=False) if args.json else format_bench_fit(result))
    return 0
