"""The three classic TF1 graphs that average gradients, built with `tf.compat.v1`.

    towers:        g = (1/k) sum_t g_t                     average_gradients, in the graph
    host average:  g = np.stack([g_1, ..., g_N]).mean(0)   numpy, fed back by placeholders
    accumulation:  acc = 0;  acc += w_i g_i;  apply(acc)   non-trainable variables

Unequal micro-batches (or towers) are weighted by example count, the rule of every
gradlab strategy::

    g = (n_1 g_1 + ... + n_k g_k) / (n_1 + ... + n_k) = sum_i w_i g_i,   w_i = n_i / B

so they still give the gradient of the mean loss over all B examples. With equal sizes the
tower and host graphs are the original recipes unchanged (the original accumulation summed,
`w_i = 1`: see `build_accumulation`).

Each builder makes its own `tf.Graph` and returns its parts by name; run them in
`tf.compat.v1.Session(graph=parts.graph)`. Eager execution stays on for everything else,
never switched off globally: TF1 and TF2 cells share a notebook.

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-variable-accumulation.ipynb
"""
from __future__ import annotations

import dataclasses
import numbers

import numpy as np
import tensorflow as tf

from ..core import towers
from ..core.gradients import densify
from ..core.host_average import host_average
from ..core.microbatch import check_batch, check_count, batch_size, micro_batches
from ..core.optimizers import make_optimizer as make_keras_optimizer, settings

v1 = tf.compat.v1


# -- the model: the same MLP as gradlab.studies.models.make_model("mlp") ---------------------------
def mlp(x, hidden=256, num_classes=10, seed=0):
    """`logits = relu(x W1 + b1) W2 + b2` with variables `dense/{kernel,bias}`, `dense_1/...`.

    Glorot-uniform kernels and zero biases, like Keras `Dense`; call it inside a
    `variable_scope` so that towers share the variables (`get_variable` with reuse).
    """
    x = tf.reshape(x, [-1, int(np.prod(x.shape[1:]))])  # Flatten
    h = tf.nn.relu(_dense(x, hidden, "dense", seed))
    return _dense(h, num_classes, "dense_1", seed + 1)


def _dense(x, units, name, seed):
    with v1.variable_scope(name):
        kernel = v1.get_variable("kernel", [x.shape[-1], units],
                                 initializer=v1.glorot_uniform_initializer(seed=seed))
        bias = v1.get_variable("bias", [units], initializer=v1.zeros_initializer())
        return tf.matmul(x, kernel) + bias


def _mean_loss(model, x, y, scale=None):
    """Forward pass in name scope `model`, mean sparse softmax cross-entropy in `loss`;
    with a `scale`, returns `(loss, scale * loss)`."""
    with tf.name_scope("model"):
        logits = model(x)
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        return loss if scale is None else (loss, loss * scale)


def make_optimizer(optimizer, lr, **optimizer_args):
    """A `tf.compat.v1.train` optimizer: 'sgd', 'momentum', 'adam', or a zero-argument builder.

    Names and defaults come from `gradlab.core.optimizers` (momentum 0.9; Adam's `epsilon` is
    Keras's 1e-7, TF1's own default was 1e-8), so a TF1 graph and `keras_optimizer(...)`
    make the same update.
    """
    if callable(optimizer):
        return optimizer()
    kw = settings(optimizer, **optimizer_args)
    if optimizer == "momentum":
        return v1.train.MomentumOptimizer(lr, **kw)
    if optimizer == "adam":
        return v1.train.AdamOptimizer(lr, **kw)
    return v1.train.GradientDescentOptimizer(lr)


def keras_optimizer(optimizer, lr, **optimizer_args):
    """The Keras optimizer that makes the same update as `make_optimizer(optimizer, lr)`:
    `gradlab.core.optimizers.make_optimizer`.

    Momentum: TF1 keeps `a = m a + g; w -= lr a`, Keras `v = m v - lr g; w += v`
    (`v = -lr a`): the same update while `lr` is constant.
    """
    return make_keras_optimizer(optimizer, lr, **optimizer_args)


# -- the parts of a graph, by name ----------------------------------------------------------
@dataclasses.dataclass(repr=False)
class ClassicGraph:
    """A classic graph and its ops and tensors by name (see the builders)."""
    kind: str
    graph: tf.Graph
    x: tf.Tensor
    y: tf.Tensor
    loss: tf.Tensor
    grads: list
    variables: list
    train_step: tf.Operation
    init: tf.Operation
    optimizer: v1.train.Optimizer

    def session(self):
        """A new `tf.compat.v1.Session` on this graph with the variables initialised.

        Inside `with parts.session() as sess:` this graph is the default and eager execution
        is off: run Keras / TF2 code outside the block.
        """
        sess = v1.Session(graph=self.graph)
        sess.run(self.init)
        return sess

    def run_update(self, sess, x, y, accum_steps=1):
        """One optimizer update from the effective batch `(x, y)`; returns its mean loss."""
        raise NotImplementedError

    def __repr__(self):
        names = ", ".join(v.op.name for v in self.variables)
        return (f"<{type(self).__name__} {self.kind!r}: {len(self.graph.get_operations())} ops, "
                f"variables [{names}], optimizer {type(self.optimizer).__name__}>")


@dataclasses.dataclass(repr=False)
class TowerGraph(ClassicGraph):
    devices: list
    tower_losses: list
    tower_grads: list      # per tower, the (grad, var) pairs of compute_gradients
    averaged: list         # average_gradients(tower_grads): (mean grad, var) pairs

    def run_update(self, sess, x, y, accum_steps=1):
        if accum_steps != 1:
            raise ValueError(f"the tower graph splits a batch across towers only; "
                             f"accum_steps must be 1, got {accum_steps!r}")
        return tower_update(sess, self, x, y)


@dataclasses.dataclass(repr=False)
class HostAverageGraph(ClassicGraph):
    grad_placeholders: list   # one per variable, fed the numpy mean

    def run_update(self, sess, x, y, accum_steps=1):
        return host_average_update(sess, self, x, y, accum_steps)


@dataclasses.dataclass(repr=False)
class AccumulationGraph(ClassicGraph):
    weight: tf.Tensor         # placeholder for w_i = n_i / B
    accumulators: list
    zero_ops: list
    accum_ops: list

    def run_update(self, sess, x, y, accum_steps=1):
        return accumulation_update(sess, self, x, y, accum_steps)


# -- 1. towers ------------------------------------------------------------------------------
def build_towers(num_towers=2, devices=None, model="mlp", lr=0.1, optimizer="sgd", seed=0,
                 input_shape=(28, 28), param_device="/device:CPU:0", **optimizer_args):
    """Towers on devices, their gradients averaged in the graph, one shared update::

        x -> split -> tower_t (on devices[t]): loss_t, g_t = compute_gradients(c_t loss_t)
          -> average_gradients([g_1 .. g_k]) -> apply_gradients       c_t = k n_t / B

    Variables live on `param_device` and are shared through `variable_scope` reuse. Equal
    towers have `c_t = 1` exactly, the original recipe; unequal ones (B not divisible by k)
    are weighted by example count, so the plain mean over towers is still the large batch.

    Args:
        num_towers: k, the number of towers.
        devices: k device names (default: the logical GPUs, else CPUs, taken in turn).
        model: 'mlp' or `model(x) -> logits` making its variables with `get_variable`.
        lr, optimizer, **optimizer_args: see `make_optimizer`.
        seed: seed of the MLP's initializers.
        input_shape: shape of one example.
        param_device: where the variables and the averaging live.
    Returns:
        `TowerGraph` with `.graph .x .y .loss .grads .variables .train_step .init
        .devices .tower_losses .tower_grads .averaged`.

    Lesson: notebooks/02-tower-averaging.ipynb
    """
    num_towers = check_count("num_towers", num_towers)
    model, input_shape = _check_common(model, lr, optimizer, seed, input_shape, optimizer_args)
    devices = _check_devices(devices, num_towers)
    graph = tf.Graph()
    with graph.as_default(), tf.device(param_device):
        x, y = _placeholders(input_shape)
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
                    loss_t, scaled = _mean_loss(model, xs[t], ys[t], scale[t])
                    scope.reuse_variables()  # towers 1..k-1 share tower 0's variables
                    variables = v1.trainable_variables()
                    grads = opt.compute_gradients(scaled, var_list=variables)
                tower_losses.append(loss_t)
                tower_grads.append(grads)
        with tf.name_scope("loss"):  # (c_t / k) loss_t = (n_t / B) loss_t
            loss = tf.add_n([l * s / num_towers for l, s in zip(tower_losses, scale)])
        with tf.name_scope("average"):
            averaged = towers.average_gradients(tower_grads)
        with tf.name_scope("apply"):
            train_step = opt.apply_gradients(averaged)
        init = v1.global_variables_initializer()
    return TowerGraph("towers", graph, x, y, loss, [g for g, _ in averaged], variables,
                      train_step, init, opt, devices, tower_losses, tower_grads, averaged)


def tower_update(sess, parts, x, y):
    """One update of a tower graph from the batch `(x, y)`; returns its mean loss."""
    check_batch(batch_size(x, y), len(parts.devices))
    loss, _ = sess.run([parts.loss, parts.train_step], {parts.x: x, parts.y: y})
    return float(loss)


# -- 2. host averaging ----------------------------------------------------------------------
def build_host_average(model="mlp", lr=0.1, optimizer="sgd", seed=0, input_shape=(28, 28),
                       **optimizer_args):
    """Gradients fetched to numpy, averaged on the host, fed back to `apply_gradients`::

        g_i = sess.run(grads, micro-batch i)        for i = 1..N
        sess.run(train_step, {grad_placeholders: host_average([g_1 .. g_N], counts)})

    Args and Returns: as `build_towers`, without towers; the parts add `.grad_placeholders`,
    one per variable, which `train_step` applies.

    Lesson: notebooks/03-host-averaging.ipynb
    """
    model, input_shape = _check_common(model, lr, optimizer, seed, input_shape, optimizer_args)
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, opt, variables, grads = _single(model, input_shape, optimizer, lr, optimizer_args)
        with tf.name_scope("averaged"):
            feeds = [v1.placeholder(g.dtype, g.shape, name=v.op.name.replace("/", "_"))
                     for g, v in zip(grads, variables)]
        with tf.name_scope("apply"):
            train_step = opt.apply_gradients(list(zip(feeds, variables)))
        init = v1.global_variables_initializer()
    return HostAverageGraph("host_average", graph, x, y, loss, grads, variables, train_step,
                            init, opt, feeds)


def host_average_update(sess, parts, x, y, accum_steps):
    """One update from `(x, y)` in `accum_steps` micro-batches averaged in numpy; the mean loss.

    Equal micro-batches take the classic `np.stack(grads).mean(axis=0)`; unequal ones are
    weighted by example count (`host_average(..., counts)`).
    """
    batches = micro_batches(x, y, accum_steps)
    sizes = [len(y_i) for _, y_i, _ in batches]
    losses, grads_list = [], []
    for x_i, y_i, _ in batches:
        loss, grads = sess.run([parts.loss, parts.grads], {parts.x: x_i, parts.y: y_i})
        losses.append(loss)
        grads_list.append(grads)
    mean = host_average(grads_list, counts=None if len(set(sizes)) == 1 else sizes)
    sess.run(parts.train_step, dict(zip(parts.grad_placeholders, mean)))
    return float(np.dot(losses, [w_i for _, _, w_i in batches]))


# -- 3. accumulation in variables -----------------------------------------------------------
def build_accumulation(model="mlp", lr=0.1, optimizer="sgd", seed=0, input_shape=(28, 28),
                       **optimizer_args):
    """Gradients added into non-trainable variables, applied once::

        sess.run(zero_ops)                                  acc = 0
        sess.run(accum_ops, {x: x_i, y: y_i, weight: w_i})  acc += w_i g_i,  i = 1..N
        sess.run(train_step)                                apply(acc)

    `w_i = n_i / B` makes `acc` the mean gradient over all B examples, equal or not
    (the original recipe summed, `w_i = 1`, which is N times the mean gradient).

    Args and Returns: as `build_towers`, without towers; the parts add `.weight` (the w_i
    placeholder), `.accumulators`, `.zero_ops`, `.accum_ops`.

    Lesson: notebooks/04-variable-accumulation.ipynb
    """
    model, input_shape = _check_common(model, lr, optimizer, seed, input_shape, optimizer_args)
    graph = tf.Graph()
    with graph.as_default():
        x, y, loss, opt, variables, grads = _single(model, input_shape, optimizer, lr, optimizer_args)
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


def accumulation_update(sess, parts, x, y, accum_steps):
    """zero, `accum_steps` weighted accumulations, one apply; returns the mean loss.

    Zeroing first (as the original recipe did) means a failed update leaves nothing behind.
    """
    batches = micro_batches(x, y, accum_steps)
    sess.run(parts.zero_ops)
    loss = 0.0
    for x_i, y_i, w_i in batches:
        loss_i, _ = sess.run([parts.loss, parts.accum_ops],
                             {parts.x: x_i, parts.y: y_i, parts.weight: w_i})
        loss += w_i * loss_i
    sess.run(parts.train_step)
    return float(loss)


# -- weights in and out ---------------------------------------------------------------------
def get_weights(sess, parts):
    """The trainable variables' values, as numpy arrays in creation order."""
    return sess.run(parts.variables)


def set_weights(sess, parts, arrays):
    """Assign `arrays` to the trainable variables (creation order, shapes checked first)."""
    arrays = [np.asarray(a) for a in arrays]
    shapes = [tuple(v.shape) for v in parts.variables]
    if [a.shape for a in arrays] != shapes:
        raise ValueError(f"set_weights needs arrays of shapes {shapes}, "
                         f"got {[a.shape for a in arrays]}")
    # Feeding a variable's initial value re-runs its initializer with that value: no assign
    # ops are added to the graph, so drawing it shows only the averaging.
    with parts.graph.as_default():  # initial_value is a graph-only property
        feeds = [v.initial_value for v in parts.variables]
    for v, feed, a in zip(parts.variables, feeds, arrays):
        sess.run(v.initializer, {feed: a})


def copy_from_keras(sess, parts, keras_model):
    """Copy a Keras model's trainable weights (Dense kernel, bias, ...) into the graph.

    Call it outside `with sess:` (or `with graph.as_default():`): that block makes the TF1
    graph the default, where eager Keras variables cannot be read.
    """
    if not tf.executing_eagerly():
        raise RuntimeError("copy_from_keras reads the Keras weights eagerly, but a TF1 graph is the "
                           "default here (inside `with sess:`?); call it outside that block, or "
                           "pass weights read earlier (model.get_weights()) to set_weights")
    set_weights(sess, parts, [w.numpy() for w in keras_model.trainable_weights])


# -- helpers --------------------------------------------------------------------------------
def _placeholders(input_shape):
    with tf.name_scope("placeholders"):
        return (v1.placeholder(tf.float32, (None, *input_shape), name="x"),
                v1.placeholder(tf.int32, (None,), name="y"))


def _single(model, input_shape, optimizer, lr, optimizer_args):
    """Placeholders, loss, optimizer, variables and dense gradients of a one-device graph."""
    x, y = _placeholders(input_shape)
    opt = make_optimizer(optimizer, lr, **optimizer_args)
    with v1.variable_scope("model", auxiliary_name_scope=False):
        loss = _mean_loss(model, x, y)
    variables = v1.trainable_variables()
    pairs = [(g, v) for g, v in opt.compute_gradients(loss, var_list=variables) if g is not None]
    return x, y, loss, opt, [v for _, v in pairs], densify([g for g, _ in pairs])


def _pinned_to(device):
    """A custom getter that creates variables on `device` (the classic `_variable_on_cpu`)."""
    def pinned(getter, *args, **kwargs):
        with tf.device(device):
            return getter(*args, **kwargs)
    return pinned


def _check_common(model, lr, optimizer, seed, input_shape, optimizer_args):
    if model == "mlp":
        model_fn = None
    elif callable(model):
        model_fn = model
    else:
        raise ValueError(f"model must be 'mlp' or a callable model(x) -> logits, got {model!r}")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not lr > 0:
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    if callable(optimizer):
        settings("sgd", **optimizer_args)  # the argument names only
    else:
        settings(optimizer, **optimizer_args)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    if isinstance(input_shape, numbers.Integral):
        input_shape = (input_shape,)
    input_shape = tuple(input_shape)
    if not input_shape or not all(isinstance(d, numbers.Integral) and d > 0 for d in input_shape):
        raise ValueError(f"input_shape must be a tuple of positive integers, got {input_shape!r}")
    if model_fn is None:
        model_fn = lambda x: mlp(x, seed=int(seed))  # noqa: E731
    return model_fn, input_shape


def _check_devices(devices, num_towers):
    if devices is None:
        found = towers.local_devices()[1]
        return [found[t % len(found)] for t in range(num_towers)]
    devices = towers.check_device_names(devices)
    if len(devices) != num_towers:
        raise ValueError(f"devices must name one device per tower ({num_towers}), got {devices!r}")
    return devices
