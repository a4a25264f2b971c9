"""Chlebus's (2018) accuracy table reproduced in kind: his convnet, Adam and metric, our digits.

    every row: 1,000 Adam updates of 100 examples = N micro-batches of 100/N, N = 1, 5, 10, 20
    update: g = (1/N) sum_i g_i  (g_i: mean gradient of micro-batch i; equal sizes)
    a run's reported accuracy: the best test accuracy among evaluations every 100
    micro-batches plus the last one (N=1: best of 11, N=20: best of 201)

The reference (Grzegorz Chlebus, "Gradient averaging with TensorFlow", blog post, 2018,
code `conv_net.py` / `main.py`) trained a LeNet-5-like convnet with dropout on full MNIST
and printed `np.mean` and `np.std` (ddof=0) of 10 such best accuracies. This module is
gradlab's own code for the same experiment on the shipped subset (`load_mnist()`: 4,000
train / 1,000 test), recording each run's final accuracy and curve beside the best.
Run r of every row starts from the same weights and sees the same 100 examples per
update; only the split into micro-batches and the dropout masks differ between rows.

    python -m gradlab reproduce --runs 10 --updates 1000 [--json] [--out FILE]

Lesson: notebooks/21-reproducing-the-table.ipynb
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from ..arguments import parse_counts
from ...core.microbatch import check_count
from ..cache import ResultCache, jsonable
from ..data import load_mnist

EFFECTIVE_BATCH = 100  # examples per update, every row
EVAL_EVERY = 100  # micro-batches between evaluations, as in the reference's main.py
LR = 1e-3
ACCUM = (1, 5, 10, 20)
# The published rows, in percent: "mean accuracy (10 runs): 95 +/- 0.172" etc. (Chlebus 2018).
SEED_TABLE = {1: (95.0, 0.172), 5: (94.9, 0.325), 10: (95.1, 0.36), 20: (95.2, 0.303)}
SETUP = ("LeNet-5-like convnet with dropout (ReLU on the 10 outputs, as in conv_net.py), "
         "Adam 1e-3, effective batch 100, best test accuracy of evaluations every 100 "
         "micro-batches plus the last, on gradlab's shipped MNIST subset (4,000 train / 1,000 test)")


def _accum(value):
    n = check_count("accum_steps", value)
    if EFFECTIVE_BATCH % n:
        raise ValueError(f"accum_steps must divide the effective batch {EFFECTIVE_BATCH} "
                         f"(1, 2, 4, 5, 10, 20, 25, 50, 100), got {n}")
    return n


def checkpoints(accum_steps, updates=1000):
    """The update counts at which a run is evaluated: every 100 micro-batches, then the last.

    N=1, 1,000 updates: 100, 200, ..., 1000 and 1000 again (11 entries, as the reference's
    log); N=20: 5, 10, ..., 1000 and 1000 (201 entries).

    Args:
        accum_steps: N, a divisor of 100.
        updates: optimizer updates of the run.
    Returns:
        A list of update counts, one per logged evaluation (the last may repeat).

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    n, updates = _accum(accum_steps), check_count("updates", updates)
    step = EVAL_EVERY // n
    return list(range(step, updates + 1, step)) + [updates]


def eval_updates(every, updates=1000):
    """Updates every, 2 every, ... up to `updates`, and `updates` itself if not among them.

    Args:
        every: updates between tests, a positive int.
        updates: optimizer updates of the run.
    Returns:
        A list of update counts, increasing, ending at `updates` (logged once).

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    every, updates = check_count("eval_every", every), check_count("updates", updates)
    at = list(range(every, updates + 1, every))
    return at if at and at[-1] == updates else at + [updates]


def build_model(seed=0, relu_logits=True):
    """The reference's convnet: dropout 0.2; conv 6x5x5, pool, dropout 0.5; conv 16x5x5,
    pool, dropout 0.5; dense 120, dropout 0.5; dense 84, dropout 0.5; dense 10.

    Every conv and dense layer has a ReLU, the last one too: `conv_net.py` builds all five
    with the same helper (`relu_logits=False` gives plain logits). Glorot-uniform kernels,
    zero biases; initial weights and dropout masks follow `seed`.

    Args:
        seed: non-negative int.
        relu_logits: keep the reference's ReLU on the 10 outputs.
    Returns:
        A `keras.Sequential` taking (batch, 28, 28) and returning (batch, 10).

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    seed = check_count("seed", seed, minimum=0)
    import keras
    from keras import layers

    s = iter(range(seed * 100, seed * 100 + 100))
    init = lambda: keras.initializers.GlorotUniform(seed=next(s))  # noqa: E731
    conv = lambda f: layers.Conv2D(f, 5, activation="relu", kernel_initializer=init())  # noqa: E731
    dense = lambda u, act="relu": layers.Dense(u, activation=act, kernel_initializer=init())  # noqa: E731
    drop = lambda rate: layers.Dropout(rate, seed=next(s))  # noqa: E731
    return keras.Sequential([
        keras.Input((28, 28)), layers.Reshape((28, 28, 1)), drop(0.2),
        conv(6), layers.MaxPooling2D(2), drop(0.5),
        conv(16), layers.MaxPooling2D(2), drop(0.5), layers.Flatten(),
        dense(120), drop(0.5), dense(84), drop(0.5),
        dense(10, "relu" if relu_logits else None)], name="chlebus_convnet")


# A hand-written loop, kept deliberately: the plain code lesson 21 shows (the reference's own
# mean of N micro-batch means, in his convnet with dropout), not gradlab's engine.
def accumulated_gradient(model, xs, ys, training=True):
    """The mean over N equal micro-batches of each one's mean-loss gradient, and the loss.

    Each micro-batch runs its own forward pass, so with `training=True` dropout draws new
    masks for each: only with `training=False` is this exactly the large batch's gradient.

    Args:
        model: a Keras model returning logits.
        xs: (N, b, 28, 28) images; ys: (N, b) int labels.
        training: dropout on (True) or off.
    Returns:
        `(mean loss, [gradient per trainable variable])`, tensors.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    import tensorflow as tf

    variables = model.trainable_variables
    n = tf.shape(xs)[0]

    def body(i, loss, acc):
        with tf.GradientTape() as tape:
            logits = model(xs[i], training=training)
            loss_i = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(ys[i], logits))
        grads = tape.gradient(loss_i, variables)
        return i + 1, loss + loss_i, [a + g for a, g in zip(acc, grads)]

    start = (tf.constant(0), tf.constant(0.0), [tf.zeros_like(v) for v in variables])
    _, loss, acc = tf.while_loop(lambda i, *_: i < n, body, start)
    scale = 1.0 / tf.cast(n, tf.float32)
    return loss * scale, [a * scale for a in acc]


def make_update(model, optimizer, training=True):
    """A compiled `update(xs, ys)`: one optimizer step with `accumulated_gradient`'s mean.

    Args:
        model, optimizer: a Keras model returning logits and a Keras optimizer.
        training: dropout on (True) or off.
    Returns:
        A `tf.function` taking (N, b, 28, 28) images and (N, b) labels, returning the loss.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    import tensorflow as tf

    optimizer.build(model.trainable_variables)

    @tf.function(reduce_retracing=True)
    def update(xs, ys):
        loss, grads = accumulated_gradient(model, xs, ys, training)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return update


def run(accum_steps, seed=0, updates=1000, training=True, eval_every=None):
    """One run of the reference's protocol: Adam 1e-3, `updates` updates of 100 examples.

    Examples are drawn in a fresh random order every epoch (order, weights and dropout
    follow `seed`), each update split into N micro-batches of 100 / N.

    Args:
        accum_steps: N, a divisor of 100.
        seed: non-negative int.
        updates: optimizer updates.
        training: dropout on (True, the reference) or off in every update; tests always off.
        eval_every: None: test at `checkpoints(N, updates)` (the reference's schedule);
            an int k: at `eval_updates(k, updates)` (k, 2k, ... and the last), the same for
            every N, so runs of different N are tested after the same updates.
    Returns:
        dict: `best` (max over the checkpoints, the reference's number), `final`,
        `curve` (test accuracy at each of those updates), `silent` (the digit classes the
        last test never predicts), `seconds`.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    n, seed, updates = _accum(accum_steps), check_count("seed", seed, 0), check_count("updates", updates)
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"training must be True (dropout on) or False, got {training!r}")
    import keras
    import tensorflow as tf

    data = load_mnist()
    size, b = len(data.x_train), EFFECTIVE_BATCH // n
    rng = np.random.default_rng(seed)
    at = checkpoints(n, updates) if eval_every is None else eval_updates(eval_every, updates)  # tested after these
    epochs = -(-updates * EFFECTIVE_BATCH // size)
    order = np.concatenate([rng.permutation(size) for _ in range(epochs)])
    model = build_model(seed)
    update = make_update(model, keras.optimizers.Adam(LR), training=bool(training))
    predict = tf.function(lambda x: tf.argmax(model(x, training=False), axis=1, output_type=tf.int32))
    x_test = tf.constant(data.x_test)
    accuracy, tested = {}, set(at)
    start = time.perf_counter()
    for t in range(1, updates + 1):
        idx = order[(t - 1) * EFFECTIVE_BATCH:t * EFFECTIVE_BATCH]
        update(data.x_train[idx].reshape(n, b, 28, 28), data.y_train[idx].reshape(n, b))
        if t in tested:
            predicted = predict(x_test).numpy()
            accuracy[t] = float(np.mean(predicted == data.y_test))
    curve = [accuracy[t] for t in at]
    # The ReLU on the outputs can pin a class's logit at 0 for every digit: that class is
    # then never predicted, a ceiling on accuracy that more updates may never lift.
    silent = sorted(set(range(10)) - set(predicted.tolist()))
    return {"best": max(curve), "final": curve[-1], "curve": curve, "silent": silent,
            "seconds": time.perf_counter() - start}


def grid(accum=ACCUM, runs=10, updates=1000, cache=True, progress=True):
    """`run(N, seed, updates)` for every N in `accum` and seeds 0..runs-1, cached per run.

    Args:
        accum: divisors of 100, one row each.
        runs: seeds per row.
        updates: optimizer updates per run.
        cache: read and write finished runs in gradlab's result cache.
        progress: a tqdm bar over the runs (tqdm is optional).
    Returns:
        A JSON-able record: `setup`, `updates`, `runs`, `seed_table`, and `rows`, one per N:
        its runs, and the mean and population std (ddof=0) of best and final accuracy.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    if isinstance(accum, (str, bytes)) or not hasattr(accum, "__iter__"):
        raise TypeError(f"accum must be a sequence of divisors of 100, got {accum!r}")
    accum = [_accum(n) for n in accum]
    if not accum:
        raise ValueError("accum must hold at least one N, got an empty sequence")
    runs, updates = check_count("runs", runs), check_count("updates", updates)
    store = ResultCache(enabled=bool(cache))
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(accum) * runs, desc="reproduce", unit="run")
        except ImportError:
            pass
    rows = []
    for n in accum:
        results = []
        for seed in range(runs):
            config = {"study": "reproduction", "accum_steps": n, "seed": seed, "updates": updates}
            result = store.get(config)
            if result is None:
                result = jsonable(run(n, seed, updates))
                store.put(config, result)
            results.append(result)
            if bar is not None:
                bar.update(1)
        best, final = (np.array([r[k] for r in results]) for k in ("best", "final"))
        rows.append({"accum_steps": n, "micro_batch": EFFECTIVE_BATCH // n,
                     "evaluations": len(checkpoints(n, updates)),
                     "best_mean": best.mean(), "best_std": best.std(),
                     "final_mean": final.mean(), "final_std": final.std(), "runs": results})
    if bar is not None:
        bar.close()
    return jsonable({"setup": SETUP, "updates": updates, "runs": runs,
                     "seed_table": SEED_TABLE, "rows": rows})


def format_table(record):
    """The record's table as text, in percent, with the published row beside (a different setup).

    Args:
        record: what `grid` returns (or its JSON, loaded).
    Returns:
        str: one line per N: best of checkpoints and final accuracy, mean ± population std.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    lines = [f"{record['setup']}; {record['updates']:,} updates, {record['runs']} run(s) per row, "
             "mean ± population std", "",
             f"{'N':>3} {'micro':>5} {'evals':>5} {'best of checkpoints %':>22} {'final %':>14}"
             f" {'Chlebus 2018 % (full MNIST)':>28}"]
    for r in record["rows"]:
        seed = record["seed_table"].get(str(r["accum_steps"]))
        ref = f"{seed[0]:.1f} ± {seed[1]:.2f}" if seed else "-"
        lines.append(f"{r['accum_steps']:>3} {r['micro_batch']:>5} {r['evaluations']:>5} "
                     f"{100 * r['best_mean']:>14.2f} ± {100 * r['best_std']:.2f} "
                     f"{100 * r['final_mean']:>7.2f} ± {100 * r['final_std']:.2f} {ref:>28}")
    return "\n".join(lines)


def cli(argv=None):
    """`python -m gradlab reproduce`: the reference's table in kind, text or `--json`.

    Args:
        argv: the arguments after `reproduce` (default `sys.argv[1:]`).
    Returns:
        0; bad values exit through argparse (status 2), naming them, before any training.

    Lesson: notebooks/21-reproducing-the-table.ipynb
    """
    parser = argparse.ArgumentParser(prog="python -m gradlab reproduce", description=(
        "Chlebus (2018) in kind: his convnet, Adam 1e-3 and best-of-checkpoints metric "
        "on the shipped MNIST subset, for each N at an effective batch of 100."))
    parser.add_argument("--runs", type=int, default=10, help="seeds per N (10)")
    parser.add_argument("--updates", type=int, default=1000, help="optimizer updates (1000)")
    parser.add_argument("--accum", type=parse_counts, default=list(ACCUM), help="N values (1,5,10,20)")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON record here")
    parser.add_argument("--no-cache", action="store_true", help="recompute every run")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        [_accum(n) for n in args.accum], check_count("runs", args.runs), check_count("updates", args.updates)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    record = grid(args.accum, args.runs, args.updates, cache=not args.no_cache,
                  progress=not args.no_progress)
    text = json.dumps(record, allow_nan=False)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text if args.json else format_table(record))
    return 0
