"""The lab's runner: trains configurations and records them, one job at a time, without widgets.

    result(seed) = cached result of config(seed)  if it was run before,  else  train(config(seed))

A job (a Run or a Measure) holds a lock, so a second one is refused while it runs; `start`
runs it in a thread so the kernel stays free for `stop`, which ends it after its current
update (nothing of a stopped seed is cached). Whoever shows the lab hears of everything
through a `Listener`; the runner itself keeps only `message`, the latest status.

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import threading
import time
import traceback
import warnings

import numpy as np

from ..studies.runs import experiments, run_loop, run_result
from . import run_memory
from .groups import Groups

PROGRESS_MESSAGES = 100  # at most this many progress updates per run
LIVE_EVERY = 10          # updates between two live snapshots of a running curve
OK, ERROR = "ok", "error"


class Listener:
    """What a Runner tells whoever shows it; each method here does nothing."""

    def busy(self, running): """A job began (True) or ended (False)."""
    def status(self, text, kind): """The status line; kind is OK, ERROR or None."""
    def progress(self, value, total, style): """The progress bar (None: unchanged)."""
    def note(self, text): """A line under the plot (a warning of a run)."""
    def failure(self, text): """The traceback of a failed job."""
    def redraw(self, summary=True): """The groups changed: draw them (`summary`: finished runs too)."""
    def runs_changed(self): """A group was added or removed."""


class _Progress:
    """The `bar` that `experiments.run` updates once per update, sent on at most
    PROGRESS_MESSAGES times (each is a message to the browser)."""

    def __init__(self, listener, total):
        self.listener, self.total, self.count = listener, total, 0
        self.every = max(1, total // PROGRESS_MESSAGES)
        listener.progress(0, total, "info")

    def update(self, n=1):
        self.count += n
        if self.count % self.every == 0 or self.count >= self.total:
            self.listener.progress(min(self.count, self.total), None, None)


class Runner:
    """Runs lists of configs (one per seed) into the lab's `Groups`.

    Args:
        cache: a `ResultCache`.
        listener: a `Listener` (default: one that shows nothing).
        live_every: updates between two snapshots of a running curve.
        redraw_seconds: the least time between two live redraws.
        memory: after each configuration's runs, measure the allocator peak of its settings
            in a fresh process (`run_memory`, cached), in a thread of its own.

    Lesson: notebooks/17-the-lab.ipynb
    """

    def __init__(self, cache, listener=None, live_every=LIVE_EVERY, redraw_seconds=1.0,
                 memory=True):
        self.cache, self.listener = cache, listener or Listener()
        self.groups = Groups(cache)
        self.live_every, self.redraw_seconds, self.memory = live_every, redraw_seconds, memory
        self.message = (None, None)  # the latest (status text, kind)
        self._stop, self._busy = threading.Event(), threading.Lock()
        self._thread, self._memory_threads = None, []
        self._drawn = 0.0  # perf_counter of the last live redraw

    def say(self, text, kind):
        self.message = (text, kind)
        self.listener.status(text, kind)

    def refuse(self, error):
        """An impossible configuration: said on the status line; returns None."""
        self.say(f"Error: {error}", ERROR)
        self.listener.progress(None, None, "danger")

    def start(self, job):
        """Run `job` in a thread (what a button does), unless one is running."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=job, name="gradlab-lab-run", daemon=True)
        self._thread.start()

    def stop(self):
        """End the running run after its current update."""
        self._stop.set()

    def wait(self, timeout=None, memory_only=False):
        """Wait for the job `start` started (unless `memory_only`) and for the memory
        measurements."""
        if self._thread is not None and not memory_only:
            self._thread.join(timeout)
        for thread in list(self._memory_threads):
            thread.join(timeout)

    def run(self, configs):
        """Train (or take from the cache) every seed of one configuration; its Group, or None."""
        return self._job(lambda: self._run_group(configs, redraw=False))

    def measure(self, plan):
        """Run Measure's three lists of configs (`settings.measure_plan`) and say how far
        gradlab's and the naive way are from the large batch; the three Groups, or None."""
        def job():
            # Each group but the last is drawn when done; `_job` draws the last with the rest.
            groups = [self._run_group(configs, redraw=i + 1 < len(plan)) for i, configs in enumerate(plan)]
            self.say(_measured(groups), OK)
            return groups
        return self._job(job)

    def _job(self, job):
        if not self._busy.acquire(blocking=False):
            self.say("Busy: a run is in progress (Stop ends it).", ERROR)
            return None
        self._stop.clear()
        self.listener.busy(True)
        # Warnings of a run (a strategy saying BatchNorm makes it inexact) become notes: from
        # the run's thread they would land in whichever cell ran last.
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                return job()
        except run_loop.Stopped as e:
            self.say(f"Stopped after {e.updates} of {e.config.updates} updates "
                     f"(seed {e.config.seed}): nothing of it was cached.", ERROR)
            self.listener.progress(None, None, "warning")
            return None
        except Exception as e:  # shown, never swallowed: status line and traceback
            self.refuse(f"{type(e).__name__}: {e}")
            self.listener.failure(traceback.format_exc())
            return None
        finally:
            for note in dict.fromkeys(str(m.message) for m in caught):
                self.listener.note(f"Note: {note}")
            self.groups.forget_partial()
            self.groups.link_references()
            self.listener.runs_changed()
            self.listener.redraw()
            self.listener.busy(False)
            self._busy.release()

    def _run_group(self, configs, redraw=True):
        """Train (or take from the cache) the seeds of one configuration into its Group;
        `redraw`: draw the lab when they are done (False where the job draws next anyway: a
        full redraw of many configurations costs as much as a short run)."""
        known = len(self.groups.all)
        group = self.groups.for_config(configs[0])
        if len(self.groups.all) > known:
            self.listener.runs_changed()
        what = (f"{group.label.split(' (')[0]}, seeds {configs[0].seed}"
                + (f"-{configs[-1].seed}" if len(configs) > 1 else ""))
        start = time.perf_counter()
        found = [run_result.cached_result(self.cache, c) for c in configs]
        todo = [c for c, r in zip(configs, found) if r is None]
        for r in found:  # seeds run before stay: more seeds only ever add to the band
            if r is not None:
                group.put(r)
        total = max(1, sum(c.updates for c in todo))
        bar = _Progress(self.listener, total)
        for c in todo:
            self.say(f"Running {what}: seed {c.seed}, {c.updates} updates…", None)
            self._drawn = 0.0
            group.put(experiments.run(c, self.cache, bar=bar, every=self.live_every,
                                      stop=self._stop,
                                      callback=lambda partial: self._live(group, partial)))
        self.listener.progress(total, total, "success")
        self.groups.link_references()
        if redraw:
            self.listener.redraw()
        self.say(_done(what, group, todo, time.perf_counter() - start), OK)
        self._measure_memory(group)
        return group

    def _live(self, group, partial):
        """A snapshot of the running seed: on its curve, redrawn at most every
        `redraw_seconds` (the summary shows finished runs only)."""
        group.put(partial)
        if time.perf_counter() - self._drawn >= self.redraw_seconds:
            self.listener.redraw(summary=False)
            self._drawn = time.perf_counter()

    def _measure_memory(self, group):
        """The allocator peak of the group's settings in a fresh process (`run_memory`,
        cached with the runs), in a thread: the lab is free while it runs."""
        if not self.memory or group.memory is not None:
            return
        group.memory = {}  # measuring

        def job():
            group.memory = run_memory.allocator_peak(group.config, self.cache)
            if "error" in group.memory:
                self.listener.note(f"Note: the allocator peak of {group.short} was not "
                                   f"measured ({group.memory['error']})")
            self.listener.redraw()
        thread = threading.Thread(target=job, name="gradlab-lab-memory", daemon=True)
        self._memory_threads.append(thread)
        thread.start()


def _measured(groups):
    """The status line after Measure: how far each way is from the large batch."""
    parts = []
    for g in groups[1:]:
        _, worst, acc = g.difference()
        parts.append(f"{g.label.split(' (')[0]}: max |Δloss| {worst:.2g}, "
                     f"accuracy {100 * acc:+.1f} pts")
    return (f"Measured against one large batch of {groups[0].config.effective_batch}: "
            + "; ".join(parts) + ".")


def _done(what, group, todo, seconds):
    """The status line after a configuration's seeds: trained or from the cache, and how
    they ended (mean ± std over seeds)."""
    def spread(values, fmt):
        return f"{np.mean(values):{fmt}}" + (f" ± {np.std(values, ddof=1):{fmt}}"
                                             if len(values) > 1 else "")
    summary = (f"final loss {spread([r.losses[-1] for r in group.results], '.3f')}, test accuracy "
               f"{spread([100 * r.accuracy for r in group.results], '.1f')}%"
               f" ({1000 * group.seconds_per_update:.1f} ms/update when trained)")
    if not todo:
        return f"From cache: {what}: {summary}. Shown in {seconds:.2f} s."
    return f"Done: {what}: {len(todo)} run(s) trained in {seconds:.1f} s: {summary}."
