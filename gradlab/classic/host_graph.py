"""Host averaging: gradients fetched to numpy, averaged there, fed back to `apply_gradients`.

    g = (g_1 + ... + g_N) / N                        equal micro-batches
    g = sum_i (n_i / B) g_i                          unequal ones, weighted by example count

both as a running sum (`host_average`). The original (Grzegorz Chlebus, 2018) took
`np.stack([g_1, ..., g_N]).mean(0)` and fed the numpy mean through placeholders every N steps.

Lesson: notebooks/03-host-averaging.ipynb
"""
from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

from ..core.host_average import host_average
from .weights import micro_batches
from .classic_graph import ClassicGraph
from .model import check_model_args, single_device

v1 = tf.compat.v1


@dataclasses.dataclass(repr=False)
class HostAverageGraph(ClassicGraph):
    """The parts of `build_host_average`: a `ClassicGraph` fed its averaged gradients.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    grad_placeholders: list   # one per variable, fed the numpy mean

    def run_update(self, sess, x, y, accum_steps=1):
        """One update from `(x, y)` in `accum_steps` micro-batches averaged in numpy; the mean loss.

        The fetched gradients are averaged by `host_average`, a running sum divided once (not the
        classic `np.stack(grads).mean(axis=0)`): equal micro-batches with equal weights, unequal
        ones weighted by example count (`host_average(..., counts)`).
        """
        batches = micro_batches(x, y, accum_steps)
        sizes = [len(y_i) for _, y_i, _ in batches]
        losses, grads_list = [], []
        for x_i, y_i, _ in batches:
            loss, grads = sess.run([self.loss, self.grads], {self.x: x_i, self.y: y_i})
            losses.append(loss)
            grads_list.append(grads)
        mean = host_average(grads_list, counts=None if len(set(sizes)) == 1 else sizes)
        sess.run(self.train_step, dict(zip(self.grad_placeholders, mean)))
        return float(np.dot(losses, [w_i for _, _, w_i in batches]))


def build_host_average(model="mlp", lr=0.1, optimizer="sgd", seed=0, input_shape=(28, 28),
                       **optimizer_args):
    """Gradients fetched to numpy, averaged on the host, fed back to `apply_gradients`::

        g_i = sess.run(grads, micro-batch i)        for i = 1..N
        sess.run(train_step, {grad_placeholders: host_average([g_1 .. g_N], counts)})

    Args:
        model, lr, optimizer, seed, input_shape, **optimizer_args: as
            `gradlab.classic.tower_graph.build_towers`.
    Returns:
        `HostAverageGraph` with `.graph .x .y .loss .grads .variables .train_step .init` and
        `.grad_placeholders`, one per variable, which `train_step` applies.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    model, input_shape = check_model_args(model, lr, optimizer, seed, input_shape, optimizer_args)
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, opt, variables, grads = single_device(model, input_shape, optimizer, lr,
                                                          optimizer_args)
        with tf.name_scope("averaged"):
            feeds = [v1.placeholder(g.dtype, g.shape, name=v.op.name.replace("/", "_"))
                     for g, v in zip(grads, variables)]
        with tf.name_scope("apply"):
            train_step = opt.apply_gradients(list(zip(feeds, variables)))
        init = v1.global_variables_initializer()
    return HostAverageGraph("host_average", graph, x, y, loss, grads, variables, train_step,
                            init, opt, feeds)
