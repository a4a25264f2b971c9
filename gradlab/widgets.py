"""The lab: choose N, b, lr and a strategy, press Run, and compare every run so far.

    config = RunConfig(strategy, accum_steps=N, micro_batch=b, lr=lr, ...)
    result = cached result of config  if it was run before,  else  train(config)

    lab = gl.widgets.Lab()     # a cell ending with `lab` shows it
    lab.run()                  # what the Run button does; returns the RunResult (None on error)
    lab.results                # one RunResult per configuration run so far, in order

Nothing runs while a slider moves: only Run (or `lab.run()`) trains. The plot is one PNG
(`plots.plot_lab` of every run so far) replaced in place; the status line says "from
cache" when a configuration was run before, and shows errors instead of raising them.

Lesson: notebooks/05-the-lab.ipynb
"""
from __future__ import annotations

import io
import time
import traceback

import ipywidgets as w

from . import bench, experiments, plots
from .cache import ResultCache
from .strategies import STRATEGIES

MAX_ACCUM_STEPS = 32
MAX_MICRO_BATCH = 256
LR_EXPONENTS = (-3, 0.5)  # the lr slider spans 10**-3 .. 10**0.5
PROGRESS_MESSAGES = 100  # at most this many progress-bar updates per run
_OK, _ERROR = "#1a7f37", "#cf222e"


def available_strategies():
    """The `STRATEGIES` a lab run can use here: `towers` and `mirrored` need two or more devices.

    With one device `towers` would be `large_batch` with extra steps. Call
    `gl.tower_devices(2)` first (before TensorFlow starts) to get it on a CPU.
    """
    many = len(bench.devices()[1]) >= 2
    return tuple(s for s in STRATEGIES if many or s not in bench.DEVICE_STRATEGIES)


class _Progress:
    """The `bar` that `experiments.run` updates once per update, shown as an IntProgress."""

    def __init__(self, widget, total):
        self.widget, self.count = widget, 0
        self.every = max(1, total // PROGRESS_MESSAGES)  # each value is a message to the browser
        widget.max, widget.value, widget.bar_style = total, 0, "info"

    def update(self, n=1):
        self.count += n
        if self.count % self.every == 0 or self.count >= self.widget.max:
            self.widget.value = min(self.count, self.widget.max)


class Lab:
    """Sliders for accumulation count, micro-batch and learning rate; a strategy; Run.

    Args:
        strategy, accum_steps, micro_batch, lr: the starting values of the controls.
        updates, optimizer, model, seed, sampling, eval_every: the rest of each
            `experiments.RunConfig` (fixed for this lab). `sampling="paired"` gives every
            configuration with the same effective batch N*b the same examples per update.
        strategies: the dropdown's choices (default `available_strategies()`).
        cache: True (the default cache, `$GRADLAB_CACHE` or .gradlab-cache), False, or a
            `gradlab.cache.ResultCache`.

    Lesson: notebooks/05-the-lab.ipynb
    """

    def __init__(self, strategy="fused", accum_steps=4, micro_batch=25, lr=0.5, updates=150,
                 optimizer="sgd", model="mlp", seed=0, sampling="paired", eval_every=50,
                 strategies=None, cache=True):
        self.fixed = dict(updates=updates, optimizer=optimizer, model=model, seed=seed,
                          sampling=sampling, eval_every=eval_every)
        # Checked now, before any widget exists: a bad argument is a TypeError/ValueError here.
        experiments.RunConfig(strategy=strategy, accum_steps=accum_steps,
                              micro_batch=micro_batch, lr=lr, **self.fixed)
        strategies = tuple(available_strategies() if strategies is None else strategies)
        if strategy not in strategies:
            raise ValueError(f"strategy {strategy!r} is not among the choices {strategies}")
        if accum_steps > MAX_ACCUM_STEPS or micro_batch > MAX_MICRO_BATCH:
            raise ValueError(f"the sliders reach accum_steps={MAX_ACCUM_STEPS} and "
                             f"micro_batch={MAX_MICRO_BATCH}; got {accum_steps} and {micro_batch}")
        low, high = (10.0 ** e for e in LR_EXPONENTS)
        if not low <= lr <= high:  # the slider would silently clamp it
            raise ValueError(f"the lr slider spans {low:g} to {high:.3g}; got lr={lr!r}")
        self.cache = cache if isinstance(cache, ResultCache) else ResultCache(enabled=bool(cache))
        self.results = []    # one RunResult per configuration, in the order first run
        self.last = None     # the RunResult of the latest successful run

        wide = {"description_width": "9em"}
        long = w.Layout(width="420px")
        self.strategy = w.Dropdown(options=strategies, value=strategy, description="strategy",
                                   style=wide)
        self.accum_steps = w.IntSlider(value=accum_steps, min=1, max=MAX_ACCUM_STEPS,
                                       description="N (accum_steps)", continuous_update=False,
                                       style=wide, layout=long)
        self.micro_batch = w.IntSlider(value=micro_batch, min=1, max=MAX_MICRO_BATCH,
                                       description="b (micro_batch)", continuous_update=False,
                                       style=wide, layout=long)
        self.lr = w.FloatLogSlider(value=lr, base=10, min=LR_EXPONENTS[0], max=LR_EXPONENTS[1],
                                   step=0.05,
                                   description="lr", readout_format=".3g",
                                   continuous_update=False, style=wide, layout=long)
        self.batch = w.Label()
        self.button = w.Button(description="Run", button_style="primary", icon="play",
                               tooltip="train this configuration (or take it from the cache)")
        self.progress = w.IntProgress(value=0, min=0, max=updates, description="progress",
                                      style=wide)
        self.status = w.Label("Ready: set N, b and lr, then press Run.")
        self.plot = w.Image(format="png", layout=w.Layout(width="100%", max_width="1100px"))
        self.log = w.Output()  # anything a run prints, and the traceback of a failed run
        for widget, name in ((self.accum_steps, "accum-steps"), (self.micro_batch, "micro-batch"),
                             (self.lr, "lr"), (self.strategy, "strategy"), (self.button, "run"),
                             (self.progress, "progress"), (self.status, "status"),
                             (self.plot, "plot"), (self.batch, "effective-batch")):
            widget.add_class(f"gradlab-{name}")

        self.accum_steps.observe(self._show_batch, "value")
        self.micro_batch.observe(self._show_batch, "value")
        self.button.on_click(lambda _: self.run())
        self._show_batch()
        self._draw()
        fixed = ", ".join(f"{k}={v}" for k, v in self.fixed.items())
        self.widget = w.VBox([
            w.HBox([w.VBox([self.strategy, self.accum_steps, self.micro_batch]),
                    w.VBox([self.lr, self.batch, w.HBox([self.button])])]),
            w.HTML(f"<small>every run: {fixed}</small>"),
            self.progress, self.status, self.plot, self.log])
        self.widget.add_class("gradlab-lab")

    # -- what the controls say ---------------------------------------------------------------
    def config(self):
        """The `experiments.RunConfig` the controls describe (ValueError if it is invalid).

        lr is rounded to the 3 digits its slider shows: what you read is what runs, and a
        slider position always maps to the same cache entry.
        """
        return experiments.RunConfig(strategy=self.strategy.value,
                                     accum_steps=self.accum_steps.value,
                                     micro_batch=self.micro_batch.value,
                                     lr=float(f"{self.lr.value:.3g}"), **self.fixed)

    def _show_batch(self, _=None):
        n, b = self.accum_steps.value, self.micro_batch.value
        self.batch.value = f"effective batch B = N·b = {n}·{b} = {n * b}"

    # -- Run -------------------------------------------------------------------------------
    def run(self):
        """Train the configuration of the controls, or take it from the cache; redraw.

        Returns the `RunResult` (`.cached` is True if it came from the cache), or None if the
        configuration is invalid or the run failed: the status line then says why.
        """
        self.log.outputs = ()  # widget state only: prints nothing to a notebook's stdout
        try:
            config = self.config()
        except (TypeError, ValueError) as e:  # the controls describe an impossible run
            self._say(f"Error: {e}", _ERROR)
            self.progress.bar_style = "danger"
            return None
        self.button.disabled = True
        try:
            with self.log:
                return self._run(config)
        except Exception as e:  # shown, never swallowed: status line and traceback below it
            self._say(f"Error: {type(e).__name__}: {e}", _ERROR)
            self.progress.bar_style = "danger"
            self.log.append_stderr(traceback.format_exc())
            return None
        finally:
            self.button.disabled = False

    def _run(self, config):
        what = (f"{config.strategy} N={config.accum_steps} b={config.micro_batch} "
                f"(B={config.effective_batch}) lr={config.lr:g}")
        start = time.perf_counter()
        result = experiments.cached_result(self.cache, config)
        if result is None:
            self._say(f"Running {what}: {config.updates} updates…", None)
            result = experiments.run(config, self.cache, bar=_Progress(self.progress, config.updates))
        self.progress.max = config.updates
        self.progress.value = config.updates
        self.progress.bar_style = "success"
        self._keep(result)
        self.last = result
        self._draw()
        seconds = time.perf_counter() - start
        summary = (f"final loss {result.losses[-1]:.3f}, test accuracy {100 * result.accuracy:.1f}%"
                   f" ({1000 * result.seconds_per_update:.1f} ms/update when trained)")
        if result.cached:
            self._say(f"From cache: {what}: {summary}. Shown in {seconds:.2f} s.", _OK)
        else:
            self._say(f"Done: {what}: {config.updates} updates in {seconds:.1f} s: {summary}.", _OK)
        return result

    def _keep(self, result):
        """Replace the run of the same config, or append: one curve per configuration."""
        for i, old in enumerate(self.results):
            if old.config == result.config:
                self.results[i] = result
                return
        self.results.append(result)

    def _say(self, text, color):
        self.status.value = text
        self.status.style.text_color = color

    def _draw(self):
        current = next((i for i, r in enumerate(self.results) if r is self.last), None)
        fig = plots.plot_lab(self.results, current=current)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
        self.plot.value = buf.getvalue()

    def clear(self):
        """Forget the runs on the plot (the cache keeps them)."""
        self.results, self.last = [], None
        self._draw()

    # -- display -----------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)  # not the repr of every child widget
        return bundle

    def __repr__(self):
        return (f"<gradlab.widgets.Lab {self.strategy.value} N={self.accum_steps.value} "
                f"b={self.micro_batch.value} lr={self.lr.value:.3g}: {len(self.results)} runs>")

