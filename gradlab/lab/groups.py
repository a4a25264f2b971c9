"""The lab's results: one Group per configuration over its seeds, and the list of them.

    one curve = mean over seeds of the results of one configuration, with a ± std band
    reference  = {seed: result of its large-batch twin}, from the lab's groups or the cache

Lesson: notebooks/17-the-lab.ipynb
"""
from __future__ import annotations

import numpy as np

from ..studies.runs import run_result
from .curves import reference_difference
from .families import setting_tag
from .settings import large_batch_twin

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


class Group:
    """One configuration over its seeds: one curve and band of the lab.

    Attributes:
        config: the RunConfig of its first seed.
        results: one RunResult per seed, in seed order (a running seed may be partial).
        reference: `{seed: RunResult}` of its large-batch twin, where known.
        visible: drawn or hidden.
        color: its colour on the plot.
        linestyle: its mean loss line's style on the plot, "-" unless set (e.g. "--" for a
            curve that another hides).
        memory: `run_memory.allocator_peak` of its settings; {} while measured, None before.
    """

    def __init__(self, config, color):
        self.config, self.color, self.linestyle = config, color, "-"
        self.results, self.reference, self.visible = [], {}, True
        self.memory = None

    @property
    def label(self):
        """`"fused N=4 b=25 lr=0.5, cosine lr (3 seeds)"`: the legend entry."""
        seeds = len(self.results)
        return (f"{self.short.split(',')[0]} lr={self.config.lr:.3g}" + setting_tag(self.config)
                + (f" ({seeds} seeds)" if seeds > 1 else ""))

    @property
    def short(self):
        """`"fused N=4 b=25, cosine lr"`: the label without lr and seeds."""
        c = self.config
        return f"{c.strategy} N={c.accum_steps} b={c.micro_batch}" + setting_tag(c)

    @property
    def seeds(self):
        return [r.config.seed for r in self.results]

    @property
    def cached(self):
        return all(r.cached for r in self.results)

    @property
    def finished(self):
        return all(len(r.losses) == r.config.updates for r in self.results)

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
        (`curves.reference_difference`)."""
        return reference_difference(self)

    def put(self, result):
        """Add or replace the result of its seed, keeping seed order."""
        self.results = sorted([r for r in self.results if r.config.seed != result.config.seed]
                              + [result], key=lambda r: r.config.seed)

    def __repr__(self):
        return f"<gradlab.lab.Group {self.label}: seeds {self.seeds}>"


class Groups:
    """The configurations the lab has run, in the order first run, each with its colour.

    Args:
        cache: where `link_references` looks for a large-batch twin the lab has not run.
    """

    def __init__(self, cache):
        self.cache = cache
        self.all = []        # one Group per configuration
        self.current = None  # the Group of the latest run

    def for_config(self, config):
        """The Group of `config` (the config of its first seed), made if new, now current."""
        group = next((g for g in self.all if g.config == config), None)
        if group is None:
            used = {g.color for g in self.all}
            group = Group(config, ([c for c in PALETTE if c not in used] or PALETTE)[0])
            self.all.append(group)
        self.current = group
        return group

    def remove(self, group):
        if group in self.all:
            self.all.remove(group)
        if self.current is group:
            self.current = None

    def clear(self):
        self.all, self.current = [], None

    def forget_partial(self):
        """Drop the results of stopped seeds, and groups left with none."""
        for g in list(self.all):
            g.results = [r for r in g.results if len(r.losses) == r.config.updates]
            if not g.results:
                self.remove(g)

    def link_references(self):
        """Each group's large-batch twin, by seed: from the lab's groups, else from the cache."""
        by_config = {r.config: r for g in self.all for r in g.results
                     if len(r.losses) == r.config.updates}
        for g in self.all:
            for r in g.results:
                twin = large_batch_twin(r.config)
                if twin == r.config:
                    continue
                found = by_config.get(twin) or g.reference.get(twin.seed)
                if found is None or found.config != twin:
                    found = run_result.cached_result(self.cache, twin)
                if found is not None:
                    g.reference[twin.seed] = found
