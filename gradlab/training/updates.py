"""One strategy's update for `step(x, y)`: `engine.update` with its home and place, compiled.

    home.in_graph (Loop):  fn = tf.function(lambda parts: engine.update(task, parts, home, place))
                           under `places.Replicas`: run by the distribution on its shards
    otherwise:             engine.update(task, parts, home, ONE) eagerly; the home compiles
                           one call per micro-batch and one apply

Lesson: notebooks/05-fused-accumulation.ipynb
"""
from __future__ import annotations

from .. import _compat
from ..core import distribute, engine
from ..core.homes import compiled
from ..core.places import Replicas


class StepUpdate:
    """`update(parts) -> (loss, status)` of one strategy; `functions` lists its compiled calls,
    `fn` (Loop only) the one that runs a whole update (what XLA lowers)."""

    def __init__(self, task, home, place, distribution=None, jit=False):
        self.task, self.home, self.place, self.distribution = task, home, place, distribution
        self.fn, self._last = None, None
        if not home.in_graph:
            self.functions = list(home.bind(task).functions)
            return
        if isinstance(place, Replicas):
            def run(parts):
                with _compat.losses_not_divided_by_replicas():
                    return distribution.run(lambda p: engine.update(task, p, home, place), args=(parts,))
            self.fn = compiled(run)
        else:
            self.fn = compiled(lambda parts: engine.update(task, parts, home, place), jit)
        self.functions = [self.fn]

    def __call__(self, parts):
        if self.fn is None:
            return engine.update(self.task, parts, self.home, self.place)
        if not isinstance(self.place, Replicas):
            return self.fn(parts)
        self._last = distribute.shard(self.distribution, parts)
        return tuple(self.distribution.experimental_local_results(v)[0] for v in self.fn(self._last))

    def all_reduce_count(self):
        """All-reduce ops each replica runs per update, counted in the traced graph."""
        if self._last is None:
            raise RuntimeError("nothing is traced yet: make one step(x, y) first")
        graph = self.fn.get_concrete_function(self._last).graph
        return distribute.count_all_reduces(graph) / len(self.distribution.extended.worker_devices)
