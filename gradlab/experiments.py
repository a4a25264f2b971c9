"""Experiments: does accumulating gradients change what a model learns? Runs, tables, noise.

    one update = accum_steps micro-batches of micro_batch examples, applied once
    effective batch B = accum_steps * micro_batch;  same B, same updates => same learning

The reference experiment trained an MNIST classifier with one update per 100 samples,
1,000 updates, and reported mean test accuracy over 10 runs (`REFERENCE`): flat in N.
`table(...)` reproduces it on the shipped subset; `noise_study(...)` measures how the
noise of one update falls with N*b. Every run is cached on disk (`gradlab.cache`).

    python -m gradlab table --runs 10 --updates 1000      # or: make table
    python -m gradlab noise --json

Lesson: notebooks/03-host-averaging.ipynb
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import numbers
import time
import warnings

import keras
import numpy as np
from tqdm.auto import tqdm

from . import noise
from .cache import ResultCache, jsonable
from .data import NUM_CLASSES, TRAIN_PER_CLASS, load_mnist
from .microbatch import check_count, parse_counts
from .models import MODELS, make_model
from .stats import anova, mean_std, pooled_t, pooled_var, welch_t
from .strategies import STRATEGIES, make_strategy

# accum_steps -> (micro_batch, iterations, mean accuracy, std) over 10 runs, as published.
REFERENCE = {1: (100, 1_000, 0.950, 0.0017), 5: (20, 5_000, 0.949, 0.0033),
             10: (10, 10_000, 0.951, 0.0036), 20: (5, 20_000, 0.952, 0.0030)}
REFERENCE_BATCH = 100
SAMPLINGS = ("paired", "independent")
OPTIMIZERS = ("sgd", "momentum", "adam")
TRAIN_SIZE = TRAIN_PER_CLASS * NUM_CLASSES  # the shipped subset: 4,000 training images


# -- one run ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run: `updates` updates of B = accum_steps * micro_batch
    examples each, applied by `make_strategy(strategy, ...)`. Equal configs give equal
    results and share a cache entry; bad fields raise ValueError/TypeError naming them.

    Plain SGD at lr=0.5 reaches the reference's ~95% on the 4,000-image subset in 1,000
    updates of 100 examples (measured: 0.1 gives 93%, 0.2 gives 94%).

    sampling: `paired` draws the example order from `seed` alone (epochs of permutations,
    update t takes examples [t*B, (t+1)*B) of it), so for any N the effective batch of
    update t is the same examples and the initial weights are the same: accumulation then
    equals the large batch up to float rounding. `independent` draws the order and the
    initial weights afresh for each (seed, accum_steps, micro_batch), as the reference did.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    strategy: str = "fused"
    accum_steps: int = 1
    micro_batch: int = 100
    updates: int = 1000
    optimizer: str = "sgd"
    lr: float = 0.5
    model: str = "mlp"
    seed: int = 0
    sampling: str = "independent"
    eval_every: int = 100

    def __post_init__(self):
        for name, options in (("strategy", STRATEGIES), ("optimizer", OPTIMIZERS),
                              ("model", MODELS), ("sampling", SAMPLINGS)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in options:
                raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
        for name in ("accum_steps", "micro_batch", "updates", "eval_every"):
            object.__setattr__(self, name, check_count(name, getattr(self, name)))
        object.__setattr__(self, "seed", check_count("seed", self.seed, minimum=0))
        lr = self.lr
        if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
            raise TypeError(f"lr must be a positive number, got {lr!r} ({type(lr).__name__})")
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"lr must be a positive finite number, got {lr!r}")
        object.__setattr__(self, "lr", float(lr))  # so lr=1 and lr=1.0 share a cache key
        if self.effective_batch > TRAIN_SIZE:
            raise ValueError(f"the effective batch accum_steps*micro_batch = {self.accum_steps}"
                             f"*{self.micro_batch} = {self.effective_batch} exceeds the "
                             f"{TRAIN_SIZE:,} training images")

    @property
    def effective_batch(self):
        return self.accum_steps * self.micro_batch

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class RunResult:
    """What one run recorded. `losses[t]` is the mean training loss of update t's effective
    batch (before the update); `eval_accuracy[k]` the test accuracy after `eval_updates[k]`
    updates; `accuracy` the final one; `loss_noise` is `noise.loss_noise(losses)` as a dict."""
    config: RunConfig
    losses: np.ndarray
    eval_updates: np.ndarray
    eval_accuracy: np.ndarray
    accuracy: float
    seconds_per_update: float  # steady state: the first (tracing) update excluded
    seconds: float             # the whole run: data, model, tracing, evaluation
    loss_noise: dict
    cached: bool = False

    def to_dict(self):
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
             if f.name not in ("config", "cached")}
        return jsonable(d)

    @classmethod
    def from_dict(cls, config, d, cached=False):
        arrays = {k: np.asarray(d[k], dtype=np.float64) for k in ("losses", "eval_accuracy")}
        return cls(config, arrays["losses"], np.asarray(d["eval_updates"], dtype=np.int64),
                   arrays["eval_accuracy"], float(d["accuracy"]), float(d["seconds_per_update"]),
                   float(d["seconds"]), _nan_for_null(d["loss_noise"]), cached)


def _nan_for_null(loss_noise):
    """The cache stores a NaN loss noise (a run too short to measure it) as null."""
    return {k: math.nan if v is None else v for k, v in loss_noise.items()}


def sample_order(config, n=TRAIN_SIZE):
    """Example indices of every update: an int array (updates, effective_batch).

    Epochs of permutations of range(n) from `np.random.default_rng`, cut into batches of B.
    """
    rng = np.random.default_rng(_stream_seed(config))
    B, total = config.effective_batch, config.updates * config.effective_batch
    stream = np.concatenate([rng.permutation(n) for _ in range(-(-total // n))])
    return stream[:total].reshape(config.updates, B)


def _stream_seed(config):
    if config.sampling == "paired":
        return config.seed
    return [config.seed, config.accum_steps, config.micro_batch]


def _model_seed(config):
    if config.sampling == "paired":
        return config.seed
    return int(np.random.SeedSequence(_stream_seed(config)).generate_state(1)[0] % 2**31)


def make_optimizer(name, lr):
    """`sgd` (plain), `momentum` (SGD, momentum 0.9) or `adam`, at learning rate `lr`."""
    if name == "sgd":
        return keras.optimizers.SGD(lr)
    if name == "momentum":
        return keras.optimizers.SGD(lr, momentum=0.9)
    if name == "adam":
        return keras.optimizers.Adam(lr)
    raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {name!r}")


def accuracy(model, x, y):
    """Fraction of `x` whose largest logit is the label `y`."""
    logits = np.asarray(model(x, training=False))
    return float(np.mean(np.argmax(logits, axis=1) == y))


def train(config, bar=None):
    """Run `config` from scratch (no cache): returns `(RunResult, trained model)`."""
    start = time.perf_counter()
    data = load_mnist()
    # Builders, not objects: `mirrored` must create the variables inside its own scope.
    strategy = make_strategy(config.strategy, lambda: make_model(config.model, _model_seed(config)),
                             keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                             lambda: make_optimizer(config.optimizer, config.lr),
                             accum_steps=config.accum_steps)
    model = strategy.model
    order = sample_order(config, len(data.x_train))
    losses = np.empty(config.updates)
    evals, accs, step_seconds = [0], [accuracy(model, data.x_test, data.y_test)], []
    for t, idx in enumerate(order):
        tick = time.perf_counter()
        losses[t] = strategy.step(data.x_train[idx], data.y_train[idx])
        step_seconds.append(time.perf_counter() - tick)
        if (t + 1) % config.eval_every == 0 or t + 1 == config.updates:
            evals.append(t + 1)
            accs.append(accuracy(model, data.x_test, data.y_test))
        if bar is not None:
            bar.update(1)
    steady = step_seconds[1:] or step_seconds
    result = RunResult(config, losses, np.asarray(evals), np.asarray(accs), accs[-1],
                       float(np.mean(steady)), time.perf_counter() - start,
                       noise.loss_noise(losses)._asdict())
    return result, model


def run(config, cache=True, progress=True, bar=None):
    """The result of `config`: from the cache if it is there, else trained and stored.

    `bar` (anything with `update(n)`, such as the lab's progress widget) replaces the tqdm bar.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    return run_many([config], cache, progress, bar)[0]


def run_many(configs, cache=True, progress=True, bar=None):
    """Results of `configs`, in order; the uncached ones run under one progress bar.

    Args:
        configs: `RunConfig`s.
        cache: True (the default cache), False (neither read nor write), or a `ResultCache`.
        progress: show a tqdm bar (it appears only for work that takes over a second).
        bar: optional progress object with `update(n)`, used instead of tqdm.
    """
    configs = list(configs)
    for c in configs:
        if not isinstance(c, RunConfig):
            raise TypeError(f"configs must be RunConfig objects, got {c!r}")
    store = cache if isinstance(cache, ResultCache) else ResultCache(enabled=bool(cache))
    results = [cached_result(store, c) for c in configs]
    todo = [i for i, r in enumerate(results) if r is None]
    with tqdm(total=sum(configs[i].updates for i in todo), unit="update", delay=1.0,
              disable=bar is not None or not progress or not todo, dynamic_ncols=True) as tq:
        for i in todo:
            c = configs[i]
            tq.set_description(f"N={c.accum_steps} b={c.micro_batch} seed={c.seed}")
            results[i], _ = train(c, bar or tq)
            store.put(_key(c), results[i].to_dict())
    return results


def _key(config):
    return {"kind": "run", **config.to_dict()}


def cached_result(store, config):
    """The `RunResult` of `config` in the `ResultCache` `store`, or None (a malformed entry is
    reported and treated as missing, so it is recomputed)."""
    entry = store.get(_key(config))
    if entry is None:
        return None
    try:
        return RunResult.from_dict(config, entry, cached=True)
    except (KeyError, TypeError, ValueError) as e:
        warnings.warn(f"discarding malformed cached result for {config} ({type(e).__name__}: "
                      f"{e}); it will be recomputed", RuntimeWarning, stacklevel=3)
        return None


# -- the table -----------------------------------------------------------------------------

def table(accum=(1, 5, 10, 20), effective_batch=REFERENCE_BATCH, micro_batch=None, runs=10,
          cache=True, progress=True, **common):
    """Accuracy for each accumulation count N, `runs` seeds each: the reference table.

    Fixed effective batch (the default): micro_batch = effective_batch / N, so every row
    sees the same number of examples per update. Fixed micro-batch (`micro_batch=b`, the
    memory-bound case): the effective batch N*b grows with N and its noise falls.

    Args:
        accum: accumulation counts, one row each.
        effective_batch: B, divisible by every N (ignored when micro_batch is given).
        micro_batch: b, to compare at a fixed micro-batch instead.
        runs: seeds 0..runs-1 (offset by `seed` in common) per row.
        cache, progress: as in `run_many`.
        **common: other `RunConfig` fields (updates, lr, optimizer, sampling, model, ...).
    Returns:
        `(rows, results)`: one dict per row (the `--json` fields, accuracies as fractions,
        plus `accuracies`, `p_value` of `pooled_t` and `welch_p` of `welch_t` against
        the first row, `loss_noise_var`, and the run settings), and `{N: [RunResult per run]}`.
        `print(format_table(rows))` shows them.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    return compare(table_configs(accum, effective_batch, micro_batch, runs, **common),
                   cache, progress)


def compare(configs, cache=True, progress=True):
    """`(rows, results)` of `table` for `[[RunConfig per run] per row]` (`table_configs`)."""
    runs = len(configs[0])
    flat = run_many([c for row in configs for c in row], cache, progress)
    results = {row[0].accum_steps: flat[i * runs:(i + 1) * runs] for i, row in enumerate(configs)}
    rows = [_row(rs) for rs in results.values()]
    accs = [row["accuracies"] for row in rows]
    for row, pooled in zip(rows, pooled_t(accs)):
        row["p_value"] = None if pooled is None else pooled[2]
        row["welch_p"] = (welch_t(row["accuracies"], accs[0])[2]
                          if runs > 1 and row is not rows[0] else None)
    return rows, results


def table_configs(accum, effective_batch=REFERENCE_BATCH, micro_batch=None, runs=10, **common):
    """`[[RunConfig per run] per N]`; checks every argument before any TensorFlow work."""
    accum = [check_count("accum_steps", n) for n in accum]
    if not accum:
        raise ValueError("accum must list at least one accumulation count, got []")
    if len(set(accum)) != len(accum):  # rows are keyed by N: a repeat would vanish
        raise ValueError(f"accum must list each accumulation count once, got {accum}")
    runs = check_count("runs", runs)
    seed = common.pop("seed", 0)
    if micro_batch is None:
        effective_batch = check_count("effective_batch", effective_batch)
        _check_divisible(effective_batch, accum)
        micro = {n: effective_batch // n for n in accum}
    else:
        micro = {n: check_count("micro_batch", micro_batch) for n in accum}
    return [[RunConfig(accum_steps=n, micro_batch=micro[n], seed=seed + r, **common)
             for r in range(runs)] for n in accum]


def _check_divisible(effective_batch, accum):
    bad = [n for n in accum if effective_batch % n]
    if bad:
        raise ValueError(f"effective batch {effective_batch} is not divisible by "
                         f"accumulation count(s) {bad}")


def _row(results):
    c = results[0].config
    accs = [r.accuracy for r in results]
    mean, std = mean_std(accs)
    return {"accum_steps": c.accum_steps, "micro_batch": c.micro_batch, "updates": c.updates,
            "runs": len(results), "accuracy_mean": mean, "accuracy_std": std,
            "seconds_per_run": float(np.mean([r.seconds for r in results])),
            "effective_batch": c.effective_batch, "iterations": c.updates * c.accum_steps,
            "seconds_per_update": float(np.mean([r.seconds_per_update for r in results])),
            "loss_noise_var": _nanmean([r.loss_noise["var"] for r in results]),
            "accuracies": accs, **{k: getattr(c, k) for k in _SETTINGS}}


_SETTINGS = ("strategy", "model", "optimizer", "lr", "sampling")


def _nanmean(values):
    """Mean of the values that are not NaN; NaN (without numpy's warning) if all are."""
    values = np.asarray(values, dtype=np.float64)
    measured = values[~np.isnan(values)]
    return float(measured.mean()) if measured.size else math.nan


def format_table(rows):
    """The rows of `table` as aligned text, the reference beside them where it applies.

    At a fixed effective batch every row is, if N changes nothing, the same experiment:
    "p vs first" is `pooled_t` and the verdict a one-way `anova`. At a fixed micro-batch the
    rows are different experiments with different spreads: "p vs first" is `welch_t`.
    """
    fixed_b = len({r["effective_batch"] for r in rows}) == 1
    s, first = rows[0], rows[0]["accum_steps"]
    head = (f"gradlab on the shipped MNIST subset ({TRAIN_SIZE:,} train / 1,000 test): "
            f"{s['model']}, {s['optimizer']} lr={s['lr']:g}, {s['strategy']} strategy, "
            f"{s['sampling']} sampling, {s['updates']:,} updates, {s['runs']} run(s) per row, "
            + (f"fixed effective batch {s['effective_batch']}" if fixed_b
               else f"fixed micro-batch {s['micro_batch']}"))
    p_key = "p_value" if fixed_b else "welch_p"
    cols = ["accum", "micro", "eff.", "iterations", "accuracy %", "p vs first",
            "loss noise", "s/run", "reference %"]
    lines = []
    for r in rows:
        ref = REFERENCE.get(r["accum_steps"])
        matches = fixed_b and r["effective_batch"] == REFERENCE_BATCH and r["updates"] == 1000
        lines.append([str(r["accum_steps"]), str(r["micro_batch"]), str(r["effective_batch"]),
                      f"{r['iterations']:,}",
                      f"{100 * r['accuracy_mean']:.2f} ± {100 * r['accuracy_std']:.2f}",
                      "-" if r.get(p_key) is None else f"{r[p_key]:.3f}",
                      f"{math.sqrt(r['loss_noise_var']):.3f}" if r["loss_noise_var"] >= 0 else "-",
                      f"{r['seconds_per_run']:.1f}",
                      f"{100 * ref[2]:.1f} ± {100 * ref[3]:.2f}" if ref and matches else "-"])
    out = [head, "", *_text_table(cols, lines, rule=True), ""]
    test = anova([r["accuracies"] for r in rows]) if fixed_b else None
    if test is not None:
        spread = math.sqrt(pooled_var([r["accuracies"] for r in rows])[0])
        largest = max(abs(r["accuracy_mean"] - s["accuracy_mean"]) for r in rows)
        out += [f"largest |difference| from N={first}: {100 * largest:.2f} points; run-to-run "
                f"std (pooled over rows): {100 * spread:.2f} points",
                f"one-way ANOVA over the rows: F = {test[0]:.2f}, p = {test[3]:.3f}: "
                + ("the rows differ beyond run-to-run noise (p < 0.05)" if test[3] < 0.05
                   else "no difference beyond run-to-run noise"),
                f"p vs first: Student's t against N={first}, variance pooled over all rows"]
    elif not fixed_b and any(r.get("welch_p") is not None for r in rows):
        differ = [r["accum_steps"] for r in rows[1:] if r["welch_p"] < 0.05]
        out += [f"p vs first: Welch's t-test against N={first} (each row its own spread); "
                + (f"N={differ} differ at p < 0.05" if differ else "none differs at p < 0.05")]
    out.append("loss noise: std of the per-update training loss around its moving average")
    return "\n".join(out)


def _text_table(cols, lines, rule=False):
    """`cols` and the rows of cells `lines`, right-aligned: one string per line."""
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(cols)]
    rows = [cols, ["-" * w for w in widths]] if rule else [cols]
    return ["  ".join(s.rjust(w) for s, w in zip(cells, widths)) for cells in rows + lines]


# -- gradient noise at one point ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class NoiseConfig:
    """A noise study: train `warmup` updates (batch 100, `optimizer` at `lr`), then measure
    at that fixed point, with `draws` effective batches per configuration.

    `accum` x `micro_batch` is the fixed micro-batch series, `accum` x `effective_batch / N`
    the fixed effective batch series. The training-loss noise of each configuration comes
    from a `loss_updates`-update run (independent sampling, cached) at `loss_lr`: small, so
    that every run follows about the same path and only the batch noise differs. (At
    lr=0.5, b=10, the larger batches also train further in the same updates, their
    per-example losses shrink, and the noise falls faster than 1/(N*b): measured slope -2.3.)
    """
    accum: tuple = (1, 2, 5, 10, 20)
    micro_batch: int = 10
    effective_batch: int = 100
    draws: int = 200
    warmup: int = 200
    loss_updates: int = 400
    loss_lr: float = 0.02
    examples: int = TRAIN_SIZE
    optimizer: str = "sgd"
    lr: float = 0.5
    model: str = "mlp"
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.accum, (str, bytes)) or not hasattr(self.accum, "__iter__"):
            raise TypeError(f"accum must be a sequence of accumulation counts, got {self.accum!r}")
        accum = tuple(check_count("accum_steps", n) for n in self.accum)
        if len(set(accum)) < 2:
            raise ValueError(f"accum needs at least 2 different counts to fit a slope, "
                             f"got {self.accum!r}")
        object.__setattr__(self, "accum", accum)
        for name in ("micro_batch", "effective_batch", "draws", "examples"):
            object.__setattr__(self, name, check_count(name, getattr(self, name)))
        for name in ("warmup", "loss_updates"):
            object.__setattr__(self, name, check_count(name, getattr(self, name), minimum=0))
        _check_divisible(self.effective_batch, accum)
        if self.examples > TRAIN_SIZE:
            raise ValueError(f"examples must be at most {TRAIN_SIZE:,}, got {self.examples}")
        # RunConfig checks optimizer, the two lrs, model, seed and batch sizes.
        object.__setattr__(self, "lr", self._run(max(accum), self.micro_batch, 1).lr)
        object.__setattr__(self, "loss_lr", self._run(1, self.effective_batch, 1, self.loss_lr).lr)

    def _run(self, accum_steps, micro_batch, updates, lr=None):
        return RunConfig(accum_steps=accum_steps, micro_batch=micro_batch, updates=updates,
                         optimizer=self.optimizer, lr=self.lr if lr is None else lr,
                         model=self.model, seed=self.seed, eval_every=max(updates, 1),
                         sampling="paired" if lr is None else "independent")


def noise_study(config=NoiseConfig(), cache=True, progress=True):
    """Measure gradient and loss noise against N and N*b at one point; a JSON-able dict.

    At the point: `grad_sq_norm` |G|^2, `trace_cov` tr(S), `noise_scale` B_simple (exact,
    from per-example gradients), `loss_var` the variance of the per-example loss, and
    `two_batch` (McCandlish's estimates from the smallest and largest fixed-micro-batch
    draws). `fixed_micro_batch` and `fixed_effective_batch` hold one dict per N:
    `grad_variance` E|g - G|^2 beside `predicted_variance` tr(S)/(N*b), `cosine` beside
    `predicted_cosine` 1/sqrt(1 + B_simple/(N*b)), `loss_variance` of the batch loss beside
    `predicted_loss_variance` loss_var/(N*b), and `train_loss_noise_var` (`noise.loss_noise`
    of a training run). `slopes`: log-log against N*b of the fixed micro-batch series
    (theory -1). Cached like runs.
    """
    store = cache if isinstance(cache, ResultCache) else ResultCache(enabled=bool(cache))
    key = {"kind": "noise", **jsonable(dataclasses.asdict(config))}
    hit = store.get(key)
    if hit is not None:
        return hit
    c = config
    data = load_mnist()
    x, y = data.x_train[:c.examples], data.y_train[:c.examples]
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    series = {"fixed_micro_batch": [(n, c.micro_batch) for n in c.accum],
              "fixed_effective_batch": [(n, c.effective_batch // n) for n in c.accum]}
    pairs = sorted({p for s in series.values() for p in s})
    with tqdm(total=c.warmup + len(pairs) * c.draws, unit="step", delay=1.0,
              disable=not progress, dynamic_ncols=True) as bar:
        bar.set_description("warm-up")
        if c.warmup:
            point, model = train(c._run(1, REFERENCE_BATCH, c.warmup), bar)
        else:
            point, model = None, make_model(c.model, c.seed)
            model(x[:1])  # built outside the compiled functions below
        stats = noise.gradient_stats(model, loss_fn, x, y)
        per_example = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
        loss_var = float(np.var(np.asarray(per_example(y, model(x, training=False)), np.float64)))
        draws = {}
        for i, (n, b) in enumerate(pairs):
            bar.set_description(f"draws N={n} b={b}")
            draws[n, b] = noise.sample_gradients(model, loss_fn, x, y, n, b, c.draws, stats.grad,
                                                 seed=c.seed + i)
            bar.update(c.draws)
    train_noise = {}
    if c.loss_updates:
        done = run_many([c._run(n, b, c.loss_updates, c.loss_lr) for n, b in pairs], store, progress)
        train_noise = {p: r.loss_noise["var"] for p, r in zip(pairs, done)}
    out = {"config": dataclasses.asdict(c),
           "point": {"warmup_updates": c.warmup, "examples": c.examples,
                     "test_accuracy": accuracy(model, data.x_test, data.y_test),
                     "train_loss": None if point is None else float(np.mean(point.losses[-10:]))},
           "grad_sq_norm": stats.grad_sq_norm, "trace_cov": stats.trace_cov,
           "noise_scale": stats.noise_scale, "loss_var": loss_var}
    small = min(series["fixed_micro_batch"], key=lambda p: p[0] * p[1])
    big = max(series["fixed_micro_batch"], key=lambda p: p[0] * p[1])
    gs, tr, bs = noise.two_batch_noise_scale(draws[small]["sq_norm"], draws[big]["sq_norm"],
                                             small[0] * small[1], big[0] * big[1])
    out["two_batch"] = {"b_small": small[0] * small[1], "b_big": big[0] * big[1],
                        "grad_sq_norm": gs, "trace_cov": tr, "noise_scale": bs}
    for name, s in series.items():
        out[name] = [_noise_row(n, b, draws[n, b], stats, loss_var, train_noise.get((n, b)))
                     for n, b in s]
    fm = out["fixed_micro_batch"]
    Bs = [r["effective_batch"] for r in fm]
    out["slopes"] = {k: noise.loglog_slope(Bs, [r[k] for r in fm])[0]
                     for k in ("grad_variance", "loss_variance", "train_loss_noise_var")
                     if all(r[k] is not None and r[k] > 0 for r in fm)}
    out = jsonable(out)
    store.put(key, out)
    return out


def _noise_row(n, b, d, stats, loss_var, train_noise):
    B = n * b
    sem = lambda v: float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else None  # noqa: E731
    return {"accum_steps": n, "micro_batch": b, "effective_batch": B,
            "grad_variance": float(d["sq_dev"].mean()), "grad_variance_sem": sem(d["sq_dev"]),
            "predicted_variance": stats.trace_cov / B,
            "cosine": float(d["cosine"].mean()),
            "predicted_cosine": 1.0 / math.sqrt(1.0 + stats.noise_scale / B),
            "loss_variance": float(d["loss"].var()), "predicted_loss_variance": loss_var / B,
            "train_loss_noise_var": train_noise}


def format_noise(report, config):
    """The noise study as text: the point, B_simple both ways, the two series, the slopes."""
    p = report["point"]
    tb = report["two_batch"]
    out = [f"Gradient noise at one point: {config.model} after {p['warmup_updates']} updates "
           f"({config.optimizer} lr={config.lr:g}, batch {REFERENCE_BATCH}), test accuracy "
           f"{100 * p['test_accuracy']:.1f}%, population {p['examples']:,} training images",
           f"  |G|^2 = {report['grad_sq_norm']:.4g}   tr(S) = {report['trace_cov']:.4g}   "
           f"B_simple = tr(S)/|G|^2 = {report['noise_scale']:.1f}  (per-example gradients)",
           f"  two-batch estimate (B = {tb['b_small']} and {tb['b_big']}): |G|^2 = "
           f"{tb['grad_sq_norm']:.4g}, tr(S) = {tb['trace_cov']:.4g}, "
           f"B_simple = {tb['noise_scale']:.1f}"]
    cols = ["N", "b", "N*b", "E|g-G|^2", "tr(S)/(N*b)", "cos(g,G)", "predicted",
            "Var(loss)", "Var(l)/(N*b)", "train-loss noise"]
    for name, title in (("fixed_micro_batch", f"fixed micro-batch b = {config.micro_batch}"),
                        ("fixed_effective_batch", f"fixed effective batch {config.effective_batch}")):
        lines = [[str(r["accum_steps"]), str(r["micro_batch"]), str(r["effective_batch"]),
                  f"{r['grad_variance']:.4g}", f"{r['predicted_variance']:.4g}",
                  f"{r['cosine']:.3f}", f"{r['predicted_cosine']:.3f}",
                  f"{r['loss_variance']:.3g}", f"{r['predicted_loss_variance']:.3g}",
                  "-" if r["train_loss_noise_var"] is None else f"{r['train_loss_noise_var']:.3g}"]
                 for r in report[name]]
        out += ["", title, *_text_table(cols, lines)]
    names = {"grad_variance": "gradient variance", "loss_variance": "batch-loss variance",
             "train_loss_noise_var": f"training-loss noise (lr={config.loss_lr:g})"}
    out += ["", "log-log slope against N*b, fixed micro-batch (theory -1): "
            + ", ".join(f"{names[k]} {v:+.2f}" for k, v in report["slopes"].items()),
            "Variances are over draws at the fixed point; training-loss noise is the variance "
            "of the per-update loss around its moving average."]
    return "\n".join(out)


# -- command line -------------------------------------------------------------------------------

def _json(obj):
    """Strict JSON (NaN and infinity become null): what `json.loads` elsewhere accepts."""
    return json.dumps(jsonable(obj), allow_nan=False)


def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return parse


def _common_args(parser):
    parser.add_argument("--lr", type=_positive(float), default=0.5, help="learning rate (0.5)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd", help="(sgd: plain)")
    parser.add_argument("--model", choices=MODELS, default="mlp")
    parser.add_argument("--seed", type=int, default=0, help="first seed (0)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write .gradlab-cache")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def table_cli(argv=None):
    """`python -m gradlab table`: the accumulation table, text or `--json`."""
    parser = argparse.ArgumentParser(prog="python -m gradlab table", description=(
        "Test accuracy against the accumulation count N at a fixed effective batch "
        "(the published table), or at a fixed micro-batch with --micro-batch."))
    parser.add_argument("--runs", type=_positive(int), default=10, help="seeds per row (10)")
    parser.add_argument("--updates", type=_positive(int), default=1000, help="optimizer updates (1000)")
    parser.add_argument("--accum", type=parse_counts, default=[1, 5, 10, 20], help="N values (1,5,10,20)")
    batch = parser.add_mutually_exclusive_group()
    batch.add_argument("--effective-batch", type=_positive(int), default=None,
                       help=f"examples per update ({REFERENCE_BATCH})")
    batch.add_argument("--micro-batch", type=_positive(int), default=None,
                       help="compare at this fixed micro-batch instead")
    parser.add_argument("--sampling", choices=SAMPLINGS, default="independent")
    parser.add_argument("--strategy", choices=STRATEGIES, default="fused")
    parser.add_argument("--eval-every", type=_positive(int), default=100)
    _common_args(parser)
    args = parser.parse_args(argv)
    settings = {k: getattr(args, k) for k in _SETTINGS}
    try:
        configs = table_configs(args.accum, args.effective_batch or REFERENCE_BATCH,
                                args.micro_batch, args.runs,
                                seed=args.seed, updates=args.updates,
                                eval_every=args.eval_every, **settings)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    rows, _ = compare(configs, cache=not args.no_cache, progress=not args.no_progress)
    if args.json:
        test = anova([r["accuracies"] for r in rows])
        print(_json({"rows": rows, "anova": None if test is None else
                     dict(zip(("F", "dof_between", "dof_within", "p_value"), test))}))
    else:
        print(format_table(rows))
    return 0


def noise_cli(argv=None):
    """`python -m gradlab noise`: gradient variance, cosine and B_simple against N and N*b."""
    d = NoiseConfig()
    parser = argparse.ArgumentParser(prog="python -m gradlab noise", description=(
        "At one fixed point, the variance of the accumulated gradient against N and N*b "
        "(theory: tr(S)/(N*b)), its cosine to the full-data gradient, the gradient noise "
        "scale B_simple, and the training-loss noise of short runs."))
    parser.add_argument("--accum", type=parse_counts, default=list(d.accum), help="N values (1,2,5,10,20)")
    parser.add_argument("--micro-batch", type=_positive(int), default=d.micro_batch,
                        help=f"b of the fixed micro-batch series ({d.micro_batch})")
    parser.add_argument("--effective-batch", type=_positive(int), default=d.effective_batch,
                        help=f"B of the fixed effective batch series ({d.effective_batch})")
    parser.add_argument("--draws", type=_positive(int), default=d.draws, help=f"({d.draws})")
    parser.add_argument("--warmup", type=int, default=d.warmup,
                        help=f"updates before measuring ({d.warmup})")
    parser.add_argument("--loss-updates", type=int, default=d.loss_updates,
                        help=f"updates of each loss-noise run, 0 for none ({d.loss_updates})")
    parser.add_argument("--loss-lr", type=_positive(float), default=d.loss_lr,
                        help=f"learning rate of the loss-noise runs ({d.loss_lr})")
    parser.add_argument("--examples", type=_positive(int), default=d.examples,
                        help=f"training images forming the population ({d.examples})")
    _common_args(parser)
    args = parser.parse_args(argv)
    try:
        config = NoiseConfig(tuple(args.accum), args.micro_batch, args.effective_batch,
                             args.draws, args.warmup, args.loss_updates, args.loss_lr,
                             args.examples, args.optimizer, args.lr, args.model, args.seed)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    report = noise_study(config, cache=not args.no_cache, progress=not args.no_progress)
    print(_json(report) if args.json else format_noise(report, config))
    return 0
