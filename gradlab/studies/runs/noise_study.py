"""The noise study: how the noise of one update falls with the effective batch N*b.

    E|g - G|^2 = tr(S) / (N*b)        cos(g, G) ~ 1 / sqrt(1 + B_simple / (N*b))

At one fixed point (after a warm-up run), `noise_study` draws accumulated gradients for
each N, at a fixed micro-batch and at a fixed effective batch, and compares them with the
exact per-example statistics (`gradlab.studies.runs.noise`); cached like runs.

    python -m gradlab noise --json

Lesson: notebooks/21-reproducing-the-table.ipynb (the 1/b law itself: notebooks/18-batch-size-and-noise.ipynb)
"""
from __future__ import annotations

import argparse
import dataclasses
import math

import keras
import numpy as np
from tqdm.auto import tqdm

from . import noise
from ..cache import ResultCache, jsonable, to_json
from ..data import load_mnist
from ..arguments import parse_counts, positive
from .experiments import add_run_arguments, run_many
from .run_config import REFERENCE_BATCH, TRAIN_SIZE, RunConfig
from .run_loop import train
from ...core.microbatch import check_count
from ..models import accuracy, make_model
from .table import check_divisible, text_table


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
        check_divisible(self.effective_batch, accum)
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
        out += ["", title, *text_table(cols, lines)]
    names = {"grad_variance": "gradient variance", "loss_variance": "batch-loss variance",
             "train_loss_noise_var": f"training-loss noise (lr={config.loss_lr:g})"}
    out += ["", "log-log slope against N*b, fixed micro-batch (theory -1): "
            + ", ".join(f"{names[k]} {v:+.2f}" for k, v in report["slopes"].items()),
            "Variances are over draws at the fixed point; training-loss noise is the variance "
            "of the per-update loss around its moving average."]
    return "\n".join(out)


# -- command line ----------------------------------------------------------------------------

def cli(argv=None):
    """`python -m gradlab noise`: gradient variance, cosine and B_simple against N and N*b."""
    d = NoiseConfig()
    parser = argparse.ArgumentParser(prog="python -m gradlab noise", description=(
        "At one fixed point, the variance of the accumulated gradient against N and N*b "
        "(theory: tr(S)/(N*b)), its cosine to the full-data gradient, the gradient noise "
        "scale B_simple, and the training-loss noise of short runs."))
    parser.add_argument("--accum", type=parse_counts, default=list(d.accum), help="N values (1,2,5,10,20)")
    parser.add_argument("--micro-batch", type=positive(int), default=d.micro_batch,
                        help=f"b of the fixed micro-batch series ({d.micro_batch})")
    parser.add_argument("--effective-batch", type=positive(int), default=d.effective_batch,
                        help=f"B of the fixed effective batch series ({d.effective_batch})")
    parser.add_argument("--draws", type=positive(int), default=d.draws, help=f"({d.draws})")
    parser.add_argument("--warmup", type=int, default=d.warmup,
                        help=f"updates before measuring ({d.warmup})")
    parser.add_argument("--loss-updates", type=int, default=d.loss_updates,
                        help=f"updates of each loss-noise run, 0 for none ({d.loss_updates})")
    parser.add_argument("--loss-lr", type=positive(float), default=d.loss_lr,
                        help=f"learning rate of the loss-noise runs ({d.loss_lr})")
    parser.add_argument("--examples", type=positive(int), default=d.examples,
                        help=f"training images forming the population ({d.examples})")
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = NoiseConfig(tuple(args.accum), args.micro_batch, args.effective_batch,
                             args.draws, args.warmup, args.loss_updates, args.loss_lr,
                             args.examples, args.optimizer, args.lr, args.model, args.seed)
    except (TypeError, ValueError) as e:
        parser.error(str(e))
    report = noise_study(config, cache=not args.no_cache, progress=not args.no_progress)
    print(to_json(report) if args.json else format_noise(report, config))
    return 0
