"""The lab: choose N, b, lr, a strategy, seeds and a setting; watch the curves grow; compare.

    lab = Lab()                # from gradlab.lab import Lab; a cell ending with `lab` shows it
    lab.set(accum_steps=2, micro_batch=50)   # move several controls at once
    lab.run()                  # what the Run button does; returns the configuration's Group
    lab.measure()              # what Measure does: the setting as a large batch, gradlab, the other way
    lab.groups                 # one Group per configuration run so far, in order
    lab.picture()              # the lab at a notebook's width, as an image
    lab.snapshot()             # the widget's two plots as they are now, as images

Nothing runs while a control moves: only Run, Measure (or `lab.run()`, `lab.measure()`)
train. A button starts its run in a thread (`runner.Runner`), so the kernel stays free for
Stop, and the plot (`figures.plot_lab`, one PNG replaced in place) is redrawn every few
updates while a run trains. Stop ends a run after its current update; nothing of it is
cached. Every seed is cached on its own, so adding seeds trains only the new ones. The
status line says "from cache" when nothing had to train, and shows errors instead of
raising them.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import base64
import io

from ..core.microbatch import check_count
from ..studies.cache import ResultCache
from . import controls, figures, settings
from .groups import Group
from .runner import ERROR, LIVE_EVERY, OK, Listener, Runner

_COLORS = {OK: "#1a7f37", ERROR: "#cf222e", None: None}
# the controls `Lab.set` moves, by name
SETTABLE = ("strategy", "accum_steps", "micro_batch", "lr", "seeds", "setting", "x_axis")


class Lab:
    """Sliders for N, b, lr and seeds; a strategy and a setting; Run, Stop and Measure.

    Args:
        strategy, accum_steps, micro_batch, lr: the starting values of the controls.
        seeds: how many seeds each Run trains (seed, seed + 1, ...), 1 to `MAX_SEEDS`.
        setting: a key of `settings.SETTINGS`: "exact", or a way accumulation can differ.
        x: the x axis of the curves: "updates", "examples" or "seconds".
        updates, optimizer, model, seed, sampling, eval_every: the rest of each
            `RunConfig` (fixed for this lab). `sampling="paired"` gives every
            configuration with the same effective batch N*b the same examples per update.
        strategies: the dropdown's choices (default `settings.available_strategies()`).
        cache: True (the default cache, `$GRADLAB_CACHE` or .gradlab-cache), False, or a
            `gradlab.studies.cache.ResultCache`; `OSError` naming it if it cannot be written.
        live_every: updates between two snapshots of a running curve.
        redraw_seconds: the least time between two live redraws (a PNG costs a fraction of
            a second to draw; 0 redraws at every snapshot).
        memory: after each configuration's runs, measure the allocator peak of its settings
            in a fresh process (`run_memory`, cached), shown in the summary and the picture.

    Lesson: notebooks/17-the-lab.ipynb
    """

    def __init__(self, strategy="fused", accum_steps=4, micro_batch=25, lr=0.5, seeds=1,
                 setting="exact", x="updates", updates=150, optimizer="sgd", model="mlp",
                 seed=0, sampling="paired", eval_every=25, strategies=None, cache=True,
                 live_every=LIVE_EVERY, redraw_seconds=1.0, memory=True):
        self.fixed = dict(updates=updates, optimizer=optimizer, model=model,
                          sampling=sampling, eval_every=eval_every)
        # Checked now, before any widget or training: a bad argument is an error here.
        live_every, redraw_seconds = check_count("live_every", live_every), float(redraw_seconds)
        strategies = settings.check_start(strategy, accum_steps, micro_batch, lr, seeds, setting,
                                          x, seed, strategies, **self.fixed)
        self.seed = seed
        self.cache = cache if isinstance(cache, ResultCache) else ResultCache(enabled=bool(cache))
        self.cache.check_writable()  # else every run would train, then fail to store its result
        self.controls = c = controls.make_controls(strategies, strategy, accum_steps, micro_batch,
                                                   lr, seeds, setting, x, updates)
        self._screen = _Screen(c, self)
        self.runner = Runner(self.cache, self._screen, live_every=live_every,
                             redraw_seconds=redraw_seconds, memory=bool(memory))
        vars(self).update(vars(c))  # lab.accum_steps, lab.plot, ...: the widgets by name
        for control in (c.accum_steps, c.micro_batch, c.setting):
            control.observe(self._show_batch, "value")
        c.x_axis.observe(lambda _: self._screen.redraw(), "value")
        c.button.on_click(lambda _: self.runner.start(self.run))
        c.measure_button.on_click(lambda _: self.runner.start(self.measure))
        c.stop_button.on_click(lambda _: self.stop())
        self._show_batch()
        self._screen.redraw()
        self.widget = controls.layout(c)

    @property
    def groups(self):
        """One Group per configuration, in the order first run."""
        return self.runner.groups.all

    @property
    def memory(self):
        """Whether each new configuration's allocator peak is measured in a fresh process
        (set it False to skip those processes; measurements already made stay)."""
        return self.runner.memory

    @memory.setter
    def memory(self, on):
        self.runner.memory = bool(on)

    @property
    def current(self):
        """The Group of the latest run (None if it was removed)."""
        return self.runner.groups.current

    def configs(self, strategy=None, setting=None):
        """One `RunConfig` per seed, as the controls describe (ValueError if
        invalid; `settings.configs`)."""
        return settings.configs(strategy or self.strategy.value, self.accum_steps.value,
                                self.micro_batch.value, self.lr.value, self.seeds.value,
                                self.setting.value if setting is None else setting,
                                seed=self.seed, **self.fixed)

    def set(self, **controls):
        """Set several controls at once, in the order given, as a user would move them:
        `lab.set(strategy="large_batch", accum_steps=1, micro_batch=100)`. The controls:
        strategy, accum_steps, micro_batch, lr, seeds, setting, x_axis. Every name and value
        is checked before any control moves: ValueError naming an unknown control, or a
        value its control cannot take (outside a slider's range, not a dropdown's option).
        Returns the lab."""
        for name, value in controls.items():
            if name not in SETTABLE:
                raise ValueError(f"the lab has no control {name!r} (given {value!r}); "
                                 f"its controls: {', '.join(SETTABLE)}")
            widget = getattr(self, name)
            if hasattr(widget, "options"):  # a dropdown or toggle: one of its options' values
                allowed = [o[1] if isinstance(o, tuple) else o for o in widget.options]
                if value not in allowed:
                    raise ValueError(f"control {name!r} cannot be {value!r}; its options: "
                                     + ", ".join(map(repr, allowed)))
            else:  # a slider: a number within its range (a log slider's range is in 10**min to 10**max)
                low, high = ((10.0 ** widget.min, 10.0 ** widget.max) if hasattr(widget, "base")
                             else (widget.min, widget.max))
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                    raise ValueError(f"control {name!r} cannot be {value!r}: a number from {low:g} to {high:g}")
        for name, value in controls.items():
            getattr(self, name).value = value
        return self

    def run(self):
        """Train every seed of the configuration of the controls (cached seeds come from the
        cache) while the plot follows; returns its `Group` (which keeps the seeds it had),
        or None if the configuration is invalid, the run failed, or Stop ended it: the
        status line then says why."""
        try:
            configs = self.configs()
        except (TypeError, ValueError) as e:  # the controls describe an impossible run
            return self.runner.refuse(e)
        return self.runner.run(configs)

    def measure(self):
        """The setting's difference, measured: the same B, seeds and setting as one large
        batch (the reference), gradlab's way (`fused`), and the other way (Keras's own
        accumulation, per-micro-batch BatchNorm statistics, or `accumulate`'s loop clipping
        each micro-batch), at the controls' N, b and lr. Returns the three Groups (None as
        in `run`); the status line gives each one's largest loss difference from the large
        batch."""
        try:
            plan = settings.measure_plan(self.strategy.value, self.setting.value, self.configs)
        except (TypeError, ValueError) as e:
            return self.runner.refuse(e)
        return self.runner.measure(plan)

    def stop(self):
        """End the running run after its current update (what the Stop button does)."""
        self.runner.stop()

    def wait(self, timeout=None):
        """Wait for the run a button started and the memory measurements it started."""
        self.runner.wait(timeout)

    def show(self, groups, visible=True):
        """Show or hide a configuration (a Group, or a list of them): its row's checkbox."""
        for g in [groups] if isinstance(groups, Group) else list(groups):
            g.visible = bool(visible)
        self._refresh()

    def show_only(self, groups, status=None):
        """Show these groups and hide every other (each row's checkbox); `status`, if given,
        replaces the status line: what a stored notebook's widget then says it shows."""
        keep = {id(g) for g in ([groups] if isinstance(groups, Group) else groups)}
        for g in self.groups:
            g.visible = id(g) in keep
        if status is not None:
            self._screen.status(status, None)
        self._refresh()

    def remove(self, group):
        """Take a configuration off the plot and the list (the cache keeps it)."""
        self.runner.groups.remove(group)
        self._refresh()

    def clear(self):
        """Forget every configuration on the plot (the cache keeps them)."""
        self.runner.groups.clear()
        self._refresh()

    def picture(self, path=None, groups=None, labels=None, dashed=None, colors=None, title=None, dotted=None):
        """The lab at a notebook's width (`figures.plot_picture`), as an
        `IPython.display.Image` (and a PNG file at `path`): a notebook that stores it shows
        the lab without running. It waits for the memory measurements under way, so that
        the picture does not depend on how fast they were.

        `groups` (a list of Groups, e.g. what `run` and `measure` returned) draws those,
        whatever is shown on the widget, so the picture does not depend on run order;
        `labels` names each of them (`figures.plot_picture`). With `groups`, `dashed` (an
        index into them) draws that group dashed and last, on top of a curve it would hide,
        `dotted` (another index) draws that group dotted, above every other line
        (`curves.loss_band`) yet in its place, so a reference stays first and stays visible where
        the others coincide with it; and `colors` (one per group) colours
        them; the groups keep their widget styles. `title` names the setting over the panels."""
        from IPython.display import Image
        self.runner.wait(memory_only=True)
        if groups is None and (dashed is not None or dotted is not None or colors is not None):
            raise ValueError("dashed, dotted and colors style given groups: pass groups too")
        if dotted is not None and dotted == dashed:
            raise ValueError("one group cannot be both dashed and dotted")
        shown, current = self._screen.shown() if groups is None else (list(groups), None)
        if colors is not None and len(colors) != len(shown):
            raise ValueError(f"one colour per group: {len(shown)} groups, {len(colors)} colours")
        saved = [(g, g.linestyle, g.color) for g in shown]
        order = list(range(len(shown)))
        try:
            for k, g in enumerate(shown):
                g.linestyle = "--" if k == dashed else ":" if k == dotted else g.linestyle
                g.color = g.color if colors is None else colors[k]
            if dashed is not None:  # drawn last, on top (a dotted one keeps its place: loss_band lifts it)
                order = [k for k in order if k != dashed] + [dashed]
            data = _png(figures.plot_picture([shown[k] for k in order], x=self.x_axis.value, current=current,
                                             labels=None if labels is None else [labels[k] for k in order],
                                             title=title),
                        figures.PICTURE_DPI)
        finally:
            for g, style, color in saved:
                g.linestyle, g.color = style, color
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return Image(data=data, format="png")

    def picture_one_seed(self, groups, labels, upto, span=None, seeds=False, batch_ticks=False,
                         window_examples=None):
        """`figures.plot_one_seed` of `groups` (each group's first seed), as an
        `IPython.display.Image`: the loss against examples seen up to `upto`, and the final
        test accuracy against B (with `seeds=True`, its mean ± std over each group's seeds;
        with `batch_ticks=True`, the B axis ticked at the groups' B; with `window_examples`
        E, each loss curve a centred mean over about E examples instead of 15 updates)."""
        from IPython.display import Image
        return Image(data=_png(figures.plot_one_seed(groups, labels, upto, span=span, seeds=seeds,
                                                     batch_ticks=batch_ticks,
                                                     window_examples=window_examples),
                               figures.PICTURE_DPI), format="png")

    def snapshot(self):
        """The lab's two plots as its widget shows them now, the curves (`plot`) and the
        summary against B (`summary`), as two `IPython.display.Image`s: stored in a notebook,
        they show the lab to a reader who has no kernel and no widgets."""
        from IPython.display import Image
        return [Image(data=bytes(self.plot.value), format="png"),
                Image(data=bytes(self.summary.value), format="png")]

    def _refresh(self):
        self._screen.runs_changed()
        self._screen.redraw()

    def _toggle(self, group, visible):
        group.visible = bool(visible)
        self._screen.redraw()

    def _show_batch(self, _=None):
        self.batch.value = settings.batch_text(self.setting.value, self.accum_steps.value,
                                               self.micro_batch.value)
        line = settings.fixed_text(self.fixed, self.setting.value)
        self.controls.every_run.value = f"<small>{line}</small>"

    def controls_picture(self):
        """The controls as they are now, a still (`figures.plot_controls`), as PNG bytes."""
        return _png(figures.plot_controls(figures.controls_rows(self),
                                          status="a still of the lab's controls: run the notebook to use them"),
                    figures.PICTURE_DPI)

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        # Where widgets do not render (GitHub, a terminal), the PNG, a still of the controls at display
        # time, is what a reader sees (a front end with widgets shows the widget instead); a count of
        # configurations here would be the count at display time, stale once runs finish.
        bundle["image/png"] = base64.b64encode(self.controls_picture()).decode("ascii")
        bundle["text/plain"] = ("gradlab's lab, a widget: run the notebook, or open it in JupyterLab "
                                "or nbviewer, to see its controls and plots")
        return bundle

    def __repr__(self):
        return (f"<gradlab.lab.Lab {self.strategy.value} N={self.accum_steps.value} "
                f"b={self.micro_batch.value} lr={self.lr.value:.3g}: {len(self.groups)} configurations>")


class _Screen(Listener):
    """What the runner tells the lab, shown on its widgets `c`."""

    def __init__(self, c, lab):
        self.c, self.lab = c, lab

    def busy(self, running):
        if running:
            self.c.log.outputs = ()
        self.c.button.disabled = self.c.measure_button.disabled = running
        self.c.stop_button.disabled = not running

    def status(self, text, kind):
        self.c.status.value = text
        self.c.status.style.text_color = _COLORS[kind]

    def progress(self, value, total, style):
        if total is not None:
            self.c.progress.max = total
        if value is not None:
            self.c.progress.value = value
        if style is not None:
            self.c.progress.bar_style = style

    def note(self, text):
        self.c.log.append_stdout(text + "\n")

    def failure(self, text):
        self.c.log.append_stderr(text)

    def shown(self):
        """The visible groups, and the index among them of the current one (drawn bold)."""
        shown = [g for g in self.lab.groups if g.visible]
        return shown, next((i for i, g in enumerate(shown) if g is self.lab.current), None)

    def redraw(self, summary=True):
        shown, current = self.shown()
        self.c.plot.value = _png(figures.plot_lab(shown, x=self.c.x_axis.value, current=current))
        if summary:
            self.c.summary.value = _png(figures.plot_lab_batches(shown))

    def runs_changed(self):
        self.c.runs.children = [controls.run_row(g, self.lab._toggle, self.lab.remove)
                                for g in self.lab.groups]


def _png(fig, dpi=72):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
