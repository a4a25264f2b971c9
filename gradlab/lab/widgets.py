"""The lab: choose N, b, lr, a strategy, seeds and a setting; watch the curves grow; compare.

    config(seed) = RunConfig(strategy, accum_steps=N, micro_batch=b, lr=lr, seed=seed, **setting)
    result(seed) = cached result of config(seed)  if it was run before,  else  train(config(seed))
    one curve    = mean over seeds of the results of one configuration, with a ± std band

    lab = gl.lab.widgets.Lab()     # a cell ending with `lab` shows it
    lab.run()                  # what the Run button does; returns the configuration's Group
    lab.measure()              # what Measure does: the setting as a large batch, gradlab, naive
    lab.groups                 # one Group per configuration run so far, in order

Nothing runs while a control moves: only Run, Measure (or `lab.run()`, `lab.measure()`)
train. A button starts its run in a thread, so the kernel stays free for Stop, and the plot
(`lab_plots.plot_lab`, one PNG replaced in place) is redrawn every few updates while a run
trains. Stop ends a run after its current update; nothing of it is cached. Every seed is
cached on its own, so adding seeds trains only the new ones. The status line says "from
cache" when nothing had to train, and shows errors instead of raising them.

Lesson: notebooks/05-the-lab.ipynb
"""
from __future__ import annotations

import dataclasses
import io
import threading
import time
import traceback
import warnings

import ipywidgets as w
import numpy as np

from ..studies import experiments

from . import lab_plots, run_memory
from ..studies.cache import ResultCache
from ..core.microbatch import check_count
from ..training.strategies import DEVICE_STRATEGIES, STRATEGIES
from ..core.towers import local_devices

MAX_ACCUM_STEPS = 32
MAX_MICRO_BATCH = 256
MAX_SEEDS = 5
LR_EXPONENTS = (-3, 0.5)  # the lr slider spans 10**-3 .. 10**0.5
PROGRESS_MESSAGES = 100  # at most this many progress-bar updates per run
LIVE_EVERY = 10          # updates between two live snapshots of a running curve
CLIP_NORM = 1.0          # the clipping settings' threshold on the global gradient norm
_OK, _ERROR = "#1a7f37", "#cf222e"

# What a setting adds to every RunConfig: the ways accumulation can differ from a large batch
# ("N // 2" is filled in by `setting_fields`).
SETTINGS = {
    "exact": {},
    "uneven micro-batches": {"short_by": "N // 2"},
    "cosine lr schedule": {"schedule": "cosine"},
    "BatchNorm, statistics per micro-batch": {"batchnorm": "micro"},
    "BatchNorm, statistics per update": {"batchnorm": "window"},
    "clip each micro-batch": {"clip_norm": CLIP_NORM, "clip": "micro"},
    "clip the update once": {"clip_norm": CLIP_NORM, "clip": "update"},
}
# Measure, per family of settings: the settings of the large-batch reference, of gradlab's
# way (`fused`) and of the naive way, and the naive way's strategy.
_MEASURES = {
    "exact": ("exact", "exact", "exact", "keras"),
    "uneven": ("uneven micro-batches",) * 3 + ("keras",),
    "schedule": ("cosine lr schedule",) * 3 + ("keras",),
    "batchnorm": ("BatchNorm, statistics per micro-batch", "BatchNorm, statistics per update",
                  "BatchNorm, statistics per micro-batch", "fused"),
    "clipping": ("clip the update once", "clip the update once", "clip each micro-batch",
                 "accumulate"),
}
_FAMILY = {"exact": "exact", "uneven micro-batches": "uneven", "cosine lr schedule": "schedule",
           "BatchNorm, statistics per micro-batch": "batchnorm",
           "BatchNorm, statistics per update": "batchnorm",
           "clip each micro-batch": "clipping", "clip the update once": "clipping"}


def available_strategies():
    """The `STRATEGIES` a lab run can use here: `towers` and `mirrored` need two or more devices.

    With one device `towers` would be `large_batch` with extra steps. Call
    `gl.tower_devices(2)` first (before TensorFlow starts) to get it on a CPU.
    """
    many = len(local_devices()[1]) >= 2
    return tuple(s for s in STRATEGIES if many or s not in DEVICE_STRATEGIES)


def setting_fields(setting, accum_steps):
    """The RunConfig fields of `setting` (a key of `SETTINGS`) at N = `accum_steps`.

    "uneven micro-batches" takes N // 2 examples off each update, so N // 2 of its N
    micro-batches hold b - 1 examples (`microbatch.split_sizes`): Keras's own accumulation
    still divides by N.
    """
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {', '.join(map(repr, SETTINGS))}; got {setting!r}")
    fields = dict(SETTINGS[setting])
    if "short_by" in fields:
        fields["short_by"] = accum_steps // 2
        if accum_steps < 2:
            raise ValueError(f"uneven micro-batches need N >= 2 (N // 2 examples fewer per "
                             f"update), got N = {accum_steps}")
    return fields


def large_batch_twin(config):
    """The `RunConfig` of one large batch that the configuration must equal if it is exact:
    the same effective batch, seed and setting, `large_batch` with N = 1 (its BatchNorm sees
    all B examples, and it clips its one gradient)."""
    extra = {}
    if config.batchnorm is not None:
        extra["batchnorm"] = "micro"  # one micro-batch: per micro-batch is per update
    if config.clip_norm is not None:
        extra["clip"] = "update"
    return dataclasses.replace(config, strategy="large_batch", accum_steps=1,
                               micro_batch=config.effective_batch, short_by=0, **extra)


class Group:
    """One configuration over its seeds: one curve and band of the lab.

    Attributes:
        config: the RunConfig of its first seed.
        results: one RunResult per seed, in seed order (a running seed may be partial).
        reference: `{seed: RunResult}` of its large-batch twin, where known.
        visible: drawn or hidden.
        color: its colour on the plot.
    """

    def __init__(self, config, color):
        self.config, self.color = config, color
        self.results, self.reference, self.visible = [], {}, True
        self.memory = None  # `run_memory.allocator_peak` of its settings: {} while measured

    @property
    def label(self):
        """`"fused N=4 b=25 lr=0.5, cosine lr (3 seeds)"`: the legend entry."""
        c = self.config
        seeds = len(self.results)
        return (f"{c.strategy} N={c.accum_steps} b={c.micro_batch} lr={c.lr:.3g}"
                + lab_plots.setting_tag(c) + (f" ({seeds} seeds)" if seeds > 1 else ""))

    @property
    def short(self):
        """`"fused N=4 b=25, cosine lr"`: the label without lr and seeds."""
        c = self.config
        return f"{c.strategy} N={c.accum_steps} b={c.micro_batch}" + lab_plots.setting_tag(c)

    @property
    def seeds(self):
        return [r.config.seed for r in self.results]

    @property
    def cached(self):
        return all(r.cached for r in self.results)

    @property
    def losses(self):
        """The loss of each update, mean over seeds."""
        return np.mean([r.losses for r in self.results], axis=0)

    @property
    def accuracy(self):
        """Final test accuracy, mean over seeds."""
        return float(np.mean([r.accuracy for r in self.results]))

    @property
    def seconds_per_update(self):
        return float(np.mean([r.seconds_per_update for r in self.results]))

    @property
    def peak_mb(self):
        """The allocator peak of a fresh process for these settings, None until measured."""
        return (self.memory or {}).get("peak_mb")

    def difference(self):
        """`(Δ per update, max Δ, Δ accuracy)` against the large-batch twin, or None
        (`lab_plots.reference_difference`)."""
        return lab_plots.reference_difference(self)

    def _put(self, result):
        """Add or replace the result of its seed, keeping seed order."""
        self.results = sorted([r for r in self.results if r.config.seed != result.config.seed]
                              + [result], key=lambda r: r.config.seed)

    def __repr__(self):
        return f"<gradlab.lab.widgets.Group {self.label}: seeds {self.seeds}>"


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
    """Sliders for N, b, lr and seeds; a strategy and a setting; Run, Stop and Measure.

    Args:
        strategy, accum_steps, micro_batch, lr: the starting values of the controls.
        seeds: how many seeds each Run trains (seed, seed + 1, ...), 1 to `MAX_SEEDS`.
        setting: a key of `SETTINGS`: "exact", or a way accumulation can differ.
        x: the x axis of the curves, one of `lab_plots.X_AXES`.
        updates, optimizer, model, seed, sampling, eval_every: the rest of each
            `experiments.RunConfig` (fixed for this lab). `sampling="paired"` gives every
            configuration with the same effective batch N*b the same examples per update.
        strategies: the dropdown's choices (default `available_strategies()`).
        cache: True (the default cache, `$GRADLAB_CACHE` or .gradlab-cache), False, or a
            `gradlab.studies.cache.ResultCache`.
        live_every: updates between two snapshots of a running curve.
        redraw_seconds: the least time between two live redraws (a PNG costs a fraction of
            a second to draw; 0 redraws at every snapshot).
        memory: after each configuration's runs, measure the allocator peak of its settings
            in a fresh process (`run_memory`, cached), shown in the summary's time panel.

    Lesson: notebooks/05-the-lab.ipynb
    """

    def __init__(self, strategy="fused", accum_steps=4, micro_batch=25, lr=0.5, seeds=1,
                 setting="exact", x="updates", updates=150, optimizer="sgd", model="mlp",
                 seed=0, sampling="paired", eval_every=25, strategies=None, cache=True,
                 live_every=LIVE_EVERY, redraw_seconds=1.0, memory=True):
        self.fixed = dict(updates=updates, optimizer=optimizer, model=model,
                          sampling=sampling, eval_every=eval_every)
        # Checked now, before any widget exists: a bad argument is a TypeError/ValueError here.
        experiments.RunConfig(strategy=strategy, accum_steps=accum_steps, micro_batch=micro_batch,
                              lr=lr, seed=seed, **setting_fields(setting, accum_steps), **self.fixed)
        strategies = tuple(available_strategies() if strategies is None else strategies)
        if strategy not in strategies:
            raise ValueError(f"strategy {strategy!r} is not among the choices {strategies}")
        if accum_steps > MAX_ACCUM_STEPS or micro_batch > MAX_MICRO_BATCH:
            raise ValueError(f"the sliders reach accum_steps={MAX_ACCUM_STEPS} and "
                             f"micro_batch={MAX_MICRO_BATCH}; got {accum_steps} and {micro_batch}")
        low, high = (10.0 ** e for e in LR_EXPONENTS)
        if not low <= lr <= high:  # the slider would silently clamp it
            raise ValueError(f"the lr slider spans {low:g} to {high:.3g}; got lr={lr!r}")
        check_count("seeds", seeds)
        if seeds > MAX_SEEDS:
            raise ValueError(f"the seeds slider reaches {MAX_SEEDS}; got seeds={seeds}")
        if x not in lab_plots.X_AXES:
            raise ValueError(f"x must be one of {', '.join(lab_plots.X_AXES)}; got {x!r}")
        self.seed = seed
        self.live_every = check_count("live_every", live_every)
        self.redraw_seconds = float(redraw_seconds)
        self.cache = cache if isinstance(cache, ResultCache) else ResultCache(enabled=bool(cache))
        self.groups = []     # one Group per configuration, in the order first run
        self.current = None  # the Group of the latest run
        self._stop = threading.Event()
        self._thread = None
        self.memory = bool(memory)
        self._memory_threads = []
        self._busy = threading.Lock()
        self._drawn = 0.0    # perf_counter of the last live redraw

        wide = {"description_width": "9em"}
        long = w.Layout(width="400px")
        self.strategy = w.Dropdown(options=strategies, value=strategy, description="strategy",
                                   style=wide)
        self.accum_steps = w.IntSlider(value=accum_steps, min=1, max=MAX_ACCUM_STEPS,
                                       description="N (accum_steps)", continuous_update=False,
                                       style=wide, layout=long)
        self.micro_batch = w.IntSlider(value=micro_batch, min=1, max=MAX_MICRO_BATCH,
                                       description="b (micro_batch)", continuous_update=False,
                                       style=wide, layout=long)
        self.lr = w.FloatLogSlider(value=lr, base=10, min=LR_EXPONENTS[0], max=LR_EXPONENTS[1],
                                   step=0.05, description="lr", readout_format=".3g",
                                   continuous_update=False, style=wide, layout=long)
        self.seeds = w.IntSlider(value=seeds, min=1, max=MAX_SEEDS, description="seeds",
                                 continuous_update=False, style=wide, layout=long)
        self.setting = w.Dropdown(options=list(SETTINGS), value=setting, description="setting",
                                  style=wide, layout=w.Layout(width="400px"))
        self.x_axis = w.ToggleButtons(options=[("updates", "updates"), ("examples", "examples"),
                                               ("seconds", "seconds")], value=x,
                                      tooltips=["updates", "examples seen: updates × B",
                                                "seconds: updates × measured seconds per update"],
                                      description="x axis", style={"description_width": "4em",
                                                                   "button_width": "9em"})
        self.batch = w.Label()
        self.button = w.Button(description="Run", button_style="primary", icon="play",
                               tooltip="train this configuration for every seed (or take it from the cache)")
        self.stop_button = w.Button(description="Stop", button_style="warning", icon="stop",
                                    disabled=True, tooltip="end the run after its current update; nothing is cached")
        self.measure_button = w.Button(description="Measure", icon="balance-scale",
                                       tooltip="run this setting as one large batch, gradlab's "
                                               "way and the naive way, and show the differences")
        self.progress = w.IntProgress(value=0, min=0, max=updates, description="progress",
                                      style=wide)
        self.status = w.Label("Ready: set N, b and lr, then press Run.")
        self.plot = w.Image(format="png", layout=w.Layout(width="100%", max_width="1200px"))
        self.summary = w.Image(format="png", layout=w.Layout(width="100%", max_width="1200px"))
        self.runs = w.VBox()   # one row per configuration: shown or hidden, and remove
        self.log = w.Output()  # the traceback of a failed run
        for widget, name in ((self.accum_steps, "accum-steps"), (self.micro_batch, "micro-batch"),
                             (self.lr, "lr"), (self.seeds, "seeds"), (self.strategy, "strategy"),
                             (self.setting, "setting"), (self.x_axis, "x-axis"),
                             (self.button, "run"), (self.stop_button, "stop"),
                             (self.measure_button, "measure"), (self.progress, "progress"),
                             (self.status, "status"), (self.plot, "plot"),
                             (self.summary, "summary"), (self.runs, "runs"),
                             (self.batch, "effective-batch")):
            widget.add_class(f"gradlab-{name}")

        for control in (self.accum_steps, self.micro_batch, self.setting):
            control.observe(self._show_batch, "value")
        self.x_axis.observe(lambda _: self._draw(), "value")
        self.button.on_click(lambda _: self._start(self.run))
        self.measure_button.on_click(lambda _: self._start(self.measure))
        self.stop_button.on_click(lambda _: self.stop())
        self._show_batch()
        self._draw()
        fixed = ", ".join(f"{k}={v}" for k, v in self.fixed.items())
        self.widget = w.VBox([
            w.HBox([w.VBox([self.strategy, self.accum_steps, self.micro_batch, self.lr]),
                    w.VBox([self.setting, self.seeds, self.batch,
                            w.HBox([self.button, self.stop_button, self.measure_button])])]),
            w.HTML(f"<small>every run: {fixed}; clipping at global norm {CLIP_NORM:g}</small>"),
            self.progress, self.status, self.x_axis, self.plot, self.summary,
            w.HTML("<b>Runs</b> <small>(untick to hide, ✕ to remove; the cache keeps them)</small>"),
            self.runs, self.log])
        self.widget.add_class("gradlab-lab")

    # -- what the controls say ---------------------------------------------------------------
    def configs(self, strategy=None, setting=None):
        """One `experiments.RunConfig` per seed, as the controls describe (ValueError if invalid).

        lr is rounded to the 3 digits its slider shows: what you read is what runs, and a
        slider position always maps to the same cache entry.
        """
        n = self.accum_steps.value
        fields = setting_fields(self.setting.value if setting is None else setting, n)
        return [experiments.RunConfig(strategy=strategy or self.strategy.value, accum_steps=n,
                                      micro_batch=self.micro_batch.value,
                                      lr=float(f"{self.lr.value:.3g}"), seed=self.seed + s,
                                      **fields, **self.fixed)
                for s in range(self.seeds.value)]

    def _show_batch(self, _=None):
        n, b = self.accum_steps.value, self.micro_batch.value
        short = n // 2 if self.setting.value == "uneven micro-batches" else 0
        self.batch.value = (f"effective batch B = N·b = {n}·{b} = {n * b}" if not short else
                            f"effective batch B = N·b - N//2 = {n}·{b} - {short} = {n * b - short}")

    # -- Run, Measure, Stop --------------------------------------------------------------------
    def run(self):
        """Train every seed of the configuration of the controls (cached seeds come from the
        cache) while the plot follows; returns its `Group` (which keeps the seeds it had),
        or None if the configuration is invalid, the run failed, or Stop ended it: the
        status line then says why."""
        try:
            configs = self.configs()
        except (TypeError, ValueError) as e:  # the controls describe an impossible run
            return self._invalid(e)
        return self._job(lambda: self._run_group(configs))

    def measure(self):
        """The setting's difference, measured: the same B, seeds and setting as one large
        batch (the reference), gradlab's way (`fused`), and the naive way (Keras's own
        accumulation, per-micro-batch BatchNorm statistics, or `accumulate`'s loop clipping
        each micro-batch), at the controls' N, b and lr. Returns the three Groups (None as
        in `run`); the status line gives each one's largest loss difference from the large
        batch."""
        family = _FAMILY[self.setting.value]
        reference, right, wrong, naive = _MEASURES[family]
        try:
            plan = [[large_batch_twin(c) for c in self.configs("fused", reference)],
                    self.configs("fused" if family != "exact" else self.strategy.value, right),
                    self.configs(naive, wrong)]
        except (TypeError, ValueError) as e:
            return self._invalid(e)

        def job():
            groups = [self._run_group(configs) for configs in plan]
            parts = []
            for g in groups[1:]:
                _, worst, acc = g.difference()
                parts.append(f"{g.label.split(' (')[0]}: max |Δloss| {worst:.2g}, "
                             f"accuracy {100 * acc:+.1f} pts")
            self._say(f"Measured against one large batch of {groups[0].config.effective_batch}: "
                      + "; ".join(parts) + ".", _OK)
            return groups
        return self._job(job)

    def stop(self):
        """End the running run after its current update (what the Stop button does)."""
        self._stop.set()

    def wait(self, timeout=None):
        """Wait for the run a button started and for the memory measurements it started (for
        code that presses buttons)."""
        if self._thread is not None:
            self._thread.join(timeout)
        for thread in list(self._memory_threads):
            thread.join(timeout)

    def _start(self, job):
        """A button's job, in a thread: the kernel stays free to receive Stop."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=job, name="gradlab-lab-run", daemon=True)
        self._thread.start()

    def _job(self, job):
        if not self._busy.acquire(blocking=False):
            self._say("Busy: a run is in progress (Stop ends it).", _ERROR)
            return None
        self.log.outputs = ()
        self._stop.clear()
        self.button.disabled = self.measure_button.disabled = True
        self.stop_button.disabled = False
        # Warnings of a run (a strategy saying BatchNorm makes it inexact) go under the plot
        # as notes: from the run's thread they would land in whichever cell ran last.
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                return job()
        except experiments.Stopped as e:
            self._say(f"Stopped after {e.updates} of {e.config.updates} updates "
                      f"(seed {e.config.seed}): nothing of it was cached.", _ERROR)
            self.progress.bar_style = "warning"
            return None
        except Exception as e:  # shown, never swallowed: status line and traceback below it
            return self._failed(e)
        finally:
            for note in dict.fromkeys(str(m.message) for m in caught):
                self.log.append_stdout(f"Note: {note}\n")
            self._forget_partial()
            self._link_references()
            self._show_runs()
            self._draw()
            self.button.disabled = self.measure_button.disabled = False
            self.stop_button.disabled = True
            self._busy.release()

    def _invalid(self, e):
        self._say(f"Error: {e}", _ERROR)
        self.progress.bar_style = "danger"
        return None

    def _failed(self, e):
        self._say(f"Error: {type(e).__name__}: {e}", _ERROR)
        self.progress.bar_style = "danger"
        self.log.append_stderr(traceback.format_exc())
        return None

    def _run_group(self, configs):
        group = self._group_for(configs[0])
        self.current = group
        what = (f"{group.label.split(' (')[0]}, seeds {configs[0].seed}"
                + (f"-{configs[-1].seed}" if len(configs) > 1 else ""))
        start = time.perf_counter()
        found = [experiments.cached_result(self.cache, c) for c in configs]
        todo = [c for c, r in zip(configs, found) if r is None]
        for r in found:  # seeds run before stay: more seeds only ever add to the band
            if r is not None:
                group._put(r)
        bar = _Progress(self.progress, max(1, sum(c.updates for c in todo)))
        for c in todo:
            self._say(f"Running {what}: seed {c.seed}, {c.updates} updates…", None)
            self._drawn = 0.0
            group._put(experiments.run(c, self.cache, bar=bar, every=self.live_every, stop=self._stop,
                                       callback=lambda partial: self._live(group, partial)))
        self.progress.max = self.progress.value = max(1, sum(c.updates for c in todo))
        self.progress.bar_style = "success"
        self._link_references()
        self._draw()
        seconds = time.perf_counter() - start
        losses = [r.losses[-1] for r in group.results]
        accs = [100 * r.accuracy for r in group.results]
        spread = (lambda v, f: f"{np.mean(v):{f}}" + (f" ± {np.std(v, ddof=1):{f}}" if len(v) > 1 else ""))
        summary = (f"final loss {spread(losses, '.3f')}, test accuracy {spread(accs, '.1f')}%"
                   f" ({1000 * group.seconds_per_update:.1f} ms/update when trained)")
        if not todo:
            self._say(f"From cache: {what}: {summary}. Shown in {seconds:.2f} s.", _OK)
        else:
            self._say(f"Done: {what}: {len(todo)} run(s) trained in {seconds:.1f} s: {summary}.", _OK)
        self._measure_memory(group)
        return group

    def _measure_memory(self, group):
        """The allocator peak of the group's settings in a fresh process (`run_memory`, cached
        with the runs), in a thread of its own: the lab is free while it runs, and the
        summary is redrawn when it arrives."""
        if not self.memory or group.memory is not None:
            return
        group.memory = {}  # measuring

        def job():
            group.memory = run_memory.allocator_peak(group.config, self.cache)
            if "error" in group.memory:
                self.log.append_stdout(f"Note: the allocator peak of {group.short} was not "
                                       f"measured ({group.memory['error']})\n")
            self._draw()
        thread = threading.Thread(target=job, name="gradlab-lab-memory", daemon=True)
        self._memory_threads.append(thread)
        thread.start()

    def _group_for(self, config):
        for g in self.groups:
            if g.config == config:
                return g
        used = {g.color for g in self.groups}
        palette = [c for c in _PALETTE if c not in used] or _PALETTE
        group = Group(config, palette[0])
        self.groups.append(group)
        self._show_runs()
        return group

    def _live(self, group, partial):
        """A snapshot of the running seed: put it on its curve and redraw, at most every
        `redraw_seconds`."""
        group._put(partial)
        now = time.perf_counter()
        if now - self._drawn >= self.redraw_seconds:
            self._draw(summary=False)  # the summary shows finished runs only
            self._drawn = time.perf_counter()

    def _forget_partial(self):
        for g in list(self.groups):
            g.results = [r for r in g.results if len(r.losses) == r.config.updates]
            if not g.results:
                self.groups.remove(g)
                if self.current is g:
                    self.current = None

    def _link_references(self):
        """Each group's large-batch twin, by seed: from the lab's groups, else from the cache."""
        by_config = {r.config: r for g in self.groups for r in g.results
                     if len(r.losses) == r.config.updates}
        for g in self.groups:
            for r in g.results:
                twin = large_batch_twin(r.config)
                if twin == r.config:
                    continue
                found = by_config.get(twin) or g.reference.get(twin.seed)
                if found is None or found.config != twin:
                    found = experiments.cached_result(self.cache, twin)
                if found is not None:
                    g.reference[twin.seed] = found

    def _say(self, text, color):
        self.status.value = text
        self.status.style.text_color = color

    # -- what the lab shows -----------------------------------------------------------------
    def _draw(self, summary=True):
        shown = [g for g in self.groups if g.visible]
        current = next((i for i, g in enumerate(shown) if g is self.current), None)
        self.plot.value = _png(lab_plots.plot_lab(shown, x=self.x_axis.value, current=current))
        if summary:
            self.summary.value = _png(lab_plots.plot_lab_batches(shown))

    def _show_runs(self):
        rows = []
        for g in self.groups:
            box = w.Checkbox(value=g.visible, description=g.label, indent=False,
                             layout=w.Layout(width="auto"))
            box.observe(lambda change, g=g: self._toggle(g, change["new"]), "value")
            remove = w.Button(icon="times", tooltip="remove from the plot (the cache keeps it)",
                              layout=w.Layout(width="2.5em"))
            remove.on_click(lambda _, g=g: self.remove(g))
            swatch = w.HTML(f'<span style="color:{_hex(g.color)};font-size:1.3em">■</span>')
            row = w.HBox([swatch, box, remove])
            row.add_class("gradlab-run-row")
            rows.append(row)
        self.runs.children = rows

    def show(self, groups, visible=True):
        """Show or hide a configuration (a Group, or a list of them) on the plot: its row's
        checkbox."""
        for g in [groups] if isinstance(groups, Group) else list(groups):
            g.visible = bool(visible)
        self._show_runs()
        self._draw()

    def _toggle(self, group, visible):
        group.visible = bool(visible)
        self._draw()

    def remove(self, group):
        """Take a configuration off the plot and the list (the cache keeps it)."""
        if group in self.groups:
            self.groups.remove(group)
            if self.current is group:
                self.current = None
            self._show_runs()
            self._draw()

    def clear(self):
        """Forget every configuration on the plot (the cache keeps them)."""
        self.groups, self.current = [], None
        self._show_runs()
        self._draw()

    def picture(self, path=None):
        """The lab's two plots as they are now, one above the other, as an
        `IPython.display.Image` (and a PNG file at `path`): a notebook that stores it shows
        the lab without running."""
        from IPython.display import Image
        import matplotlib.image
        top, bottom = (matplotlib.image.imread(io.BytesIO(bytes(i.value)), format="png")
                       for i in (self.plot, self.summary))
        buf = io.BytesIO()
        matplotlib.image.imsave(buf, np.concatenate([top, bottom]), format="png")
        if path is not None:
            with open(path, "wb") as f:
                f.write(buf.getvalue())
        return Image(data=buf.getvalue(), format="png")

    # -- display -----------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)  # not the repr of every child widget
        return bundle

    def __repr__(self):
        return (f"<gradlab.lab.widgets.Lab {self.strategy.value} N={self.accum_steps.value} "
                f"b={self.micro_batch.value} lr={self.lr.value:.3g}: {len(self.groups)} configurations>")


_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf"]


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    return buf.getvalue()


def _hex(color):
    return color if isinstance(color, str) else "#%02x%02x%02x" % tuple(int(255 * c) for c in color[:3])
