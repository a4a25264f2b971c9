"""Accumulation in variables: gradients added into non-trainable variables, applied once.

    acc = 0;  acc += w_i g_i  (i = 1..N);  apply(acc)       w_i = n_i / B

`w_i = n_i / B` makes `acc` the mean gradient over all B examples, equal micro-batches or
not. The recipe as it circulated (Stack Overflow question 46772685) summed, `w_i = 1`:
N times the mean gradient.

Lesson: notebooks/04-accumulating-in-variables.ipynb
"""
from __future__ import annotations

import dataclasses

import tensorflow as tf

from .weights import micro_batches
from .classic_graph import ClassicGraph
from .model import check_model_args, single_device

v1 = tf.compat.v1


@dataclasses.dataclass(repr=False)
class AccumulationGraph(ClassicGraph):
    """The parts of `build_accumulation`: a `ClassicGraph` with its accumulators.

    Lesson: notebooks/04-accumulating-in-variables.ipynb
    """
    weight: tf.Tensor         # placeholder for w_i = n_i / B
    accumulators: list
    zero_ops: list
    accum_ops: list

    def run_update(self, sess, x, y, accum_steps=1):
        """zero, `accum_steps` weighted accumulations, one apply; returns the mean loss.

        Zeroing first (as the original recipe did) means a failed update leaves nothing behind.
        """
        batches = micro_batches(x, y, accum_steps)
        sess.run(self.zero_ops)
        loss = 0.0
        for x_i, y_i, w_i in batches:
            loss_i, _ = sess.run([self.loss, self.accum_ops],
                                 {self.x: x_i, self.y: y_i, self.weight: w_i})
            loss += w_i * loss_i
        sess.run(self.train_step)
        return float(loss)


def build_accumulation(model="mlp", lr=0.1, optimizer="sgd", seed=0, input_shape=(28, 28),
                       **optimizer_args):
    """Gradients added into non-trainable variables, applied once::

        sess.run(zero_ops)                                  acc = 0
        sess.run(accum_ops, {x: x_i, y: y_i, weight: w_i})  acc += w_i g_i,  i = 1..N
        sess.run(train_step)                                apply(acc)

    Args:
        model, lr, optimizer, seed, input_shape, **optimizer_args: as
            `gradlab.classic.tower_graph.build_towers`.
    Returns:
        `AccumulationGraph` with `.graph .x .y .loss .grads .variables .train_step .init` and
        `.weight` (the w_i placeholder), `.accumulators`, `.zero_ops`, `.accum_ops`.

    Lesson: notebooks/04-accumulating-in-variables.ipynb
    """
    model, input_shape = check_model_args(model, lr, optimizer, seed, input_shape, optimizer_args)
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, opt, variables, grads = single_device(model, input_shape, optimizer, lr,
                                                          optimizer_args)
        with tf.name_scope("placeholders/"):  # the trailing / re-enters the scope of x and y
            weight = v1.placeholder(tf.float32, [], name="weight")
        with tf.name_scope("accumulators"):
            # Zeros from the variable's shape: the original `tf.zeros_like(v.initialized_value())`
            # raises NotImplementedError in TensorFlow 2.21.
            accumulators = [v1.Variable(tf.zeros(v.shape, v.dtype.base_dtype), trainable=False,
                                        name=v.op.name.replace("/", "_")) for v in variables]
        with tf.name_scope("zero"):
            zero_ops = [a.assign(tf.zeros_like(a)) for a in accumulators]
        with tf.name_scope("accum"):
            accum_ops = [a.assign_add(weight * g) for a, g in zip(accumulators, grads)]
        with tf.name_scope("apply"):
            train_step = opt.apply_gradients(list(zip(accumulators, variables)))
        init = v1.global_variables_initializer()
    return AccumulationGraph("accumulation", graph, x, y, loss, grads, variables, train_step,
                             init, opt, weight, accumulators, zero_ops, accum_ops)
