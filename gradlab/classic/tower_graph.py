"""Towers: one batch split across devices, their gradients averaged in the graph.

    g = (1/k) sum_t c_t g_t,   c_t = k n_t / B       average_gradients, one apply_gradients

Equal towers have `c_t = 1` exactly, the original recipe (TensorFlow's CIFAR-10 multi-GPU
tutorial, quoted by Dong Hao, 2017); unequal ones (B not divisible by k) are weighted by
example count, so the plain mean over towers is still the gradient of the large batch.

Lesson: notebooks/02-tower-averaging.ipynb
"""
from __future__ import annotations

import dataclasses

import tensorflow as tf

from . import tower_average
from ..core import towers
from ..core.microbatch import batch_size, check_batch, check_count
from .classic_graph import ClassicGraph
from .model import check_model_args, make_optimizer, mean_loss, placeholders

v1 = tf.compat.v1


@dataclasses.dataclass(repr=False)
class TowerGraph(ClassicGraph):
    """The parts of `build_towers`: a `ClassicGraph` with its towers.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    devices: list
    tower_losses: list
    tower_grads: list      # per tower, the (grad, var) pairs of compute_gradients
    averaged: list         # average_gradients(tower_grads): (mean grad, var) pairs

    def run_update(self, sess, x, y, accum_steps=1):
        """One update from the batch `(x, y)`, split across the towers; returns its mean loss.

        The batch must hold at least one example per tower; `accum_steps` must be 1 (towers
        split in space, not in time).
        """
        if accum_steps != 1:
            raise ValueError(f"the tower graph splits a batch across towers only; "
                             f"accum_steps must be 1, got {accum_steps!r}")
        check_batch(batch_size(x, y), len(self.devices))
        loss, _ = sess.run([self.loss, self.train_step], {self.x: x, self.y: y})
        return float(loss)


def build_towers(num_towers=2, devices=None, model="mlp", lr=0.1, optimizer="sgd", seed=0,
                 input_shape=(28, 28), param_device="/device:CPU:0", **optimizer_args):
    """Towers on devices, their gradients averaged in the graph, one shared update::

        x -> split -> tower_t (on devices[t]): loss_t, g_t = compute_gradients(c_t loss_t)
          -> average_gradients([g_1 .. g_k]) -> apply_gradients       c_t = k n_t / B

    Variables live on `param_device` and are shared through `variable_scope` reuse.

    Args:
        num_towers: k, the number of towers.
        devices: k device names (default: the logical GPUs, else CPUs, taken in turn).
        model: 'mlp' or `model(x) -> logits` making its variables with `get_variable`.
        lr, optimizer, **optimizer_args: see `gradlab.classic.model.make_optimizer`.
        seed: seed of the MLP's initializers.
        input_shape: shape of one example.
        param_device: where the variables and the averaging live.
    Returns:
        `TowerGraph` with `.graph .x .y .loss .grads .variables .train_step .init
        .devices .tower_losses .tower_grads .averaged`.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    num_towers = check_count("num_towers", num_towers)
    model, input_shape = check_model_args(model, lr, optimizer, seed, input_shape, optimizer_args)
    devices = _check_devices(devices, num_towers)
    graph = tf.Graph()
    with graph.as_default(), tf.device(param_device):
        x, y = placeholders(input_shape)
        with tf.name_scope("split"):
            batch = tf.shape(x)[0]
            base, extra = batch // num_towers, batch % num_towers
            counts = base + tf.cast(tf.range(num_towers) < extra, tf.int32)  # = split_sizes
            xs, ys = tf.split(x, counts, num=num_towers), tf.split(y, counts, num=num_towers)
            scale = tf.unstack(tf.cast(num_towers * counts, tf.float32) / tf.cast(batch, tf.float32))
        opt = make_optimizer(optimizer, lr, **optimizer_args)
        tower_losses, tower_grads = [], []
        with v1.variable_scope("model", custom_getter=_pinned_to(param_device),
                               auxiliary_name_scope=False) as scope:
            for t, device in enumerate(devices):
                with tf.device(device), tf.name_scope(f"tower_{t}"):
                    loss_t, scaled = mean_loss(model, xs[t], ys[t], scale[t])
                    scope.reuse_variables()  # towers 1..k-1 share tower 0's variables
                    variables = v1.trainable_variables()
                    grads = opt.compute_gradients(scaled, var_list=variables)
                tower_losses.append(loss_t)
                tower_grads.append(grads)
        with tf.name_scope("loss"):  # (c_t / k) loss_t = (n_t / B) loss_t
            loss = tf.add_n([l * s / num_towers for l, s in zip(tower_losses, scale)])
        with tf.name_scope("average"):
            averaged = tower_average.average_gradients(tower_grads)
        with tf.name_scope("apply"):
            train_step = opt.apply_gradients(averaged)
        init = v1.global_variables_initializer()
    return TowerGraph("towers", graph, x, y, loss, [g for g, _ in averaged], variables,
                      train_step, init, opt, devices, tower_losses, tower_grads, averaged)


def _pinned_to(device):
    """A custom getter that creates variables on `device` (the classic `_variable_on_cpu`)."""
    def pinned(getter, *args, **kwargs):
        with tf.device(device):
            return getter(*args, **kwargs)
    return pinned


def _check_devices(devices, num_towers):
    if devices is None:
        found = towers.local_devices()[1]
        return [found[t % len(found)] for t in range(num_towers)]
    devices = towers.check_device_names(devices)
    if len(devices) != num_towers:
        raise ValueError(f"devices must name one device per tower ({num_towers}), got {devices!r}")
    return devices
