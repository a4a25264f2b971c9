"""A built classic graph: its ops and tensors by name, its session, its weights in and out.

    parts = build_...(...)              a tf.Graph of its own, parts by name
    sess  = parts.session()             tf.compat.v1.Session, variables initialised
    loss  = parts.run_update(sess, x, y, accum_steps)    one optimizer update

Every builder (`tower_graph`, `host_graph`, `accumulation_graph`) returns a subclass that
says how its update runs. Eager execution stays on for everything else, never switched off
globally: TF1 and TF2 cells share a notebook.

Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
notebooks/04-accumulating-in-variables.ipynb
"""
from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1


@dataclasses.dataclass(repr=False)
class ClassicGraph:
    """A classic graph and its ops and tensors by name (see the builders); `run_update` is
    the one way to run an update, each subclass says how.

    Lessons: notebooks/02-tower-averaging.ipynb, notebooks/03-host-averaging.ipynb,
    notebooks/04-accumulating-in-variables.ipynb
    """
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

    def get_weights(self, sess):
        """The trainable variables' values, as numpy arrays in creation order."""
        return sess.run(self.variables)

    def set_weights(self, sess, arrays):
        """Assign `arrays` to the trainable variables (creation order, shapes checked first)."""
        arrays = [np.asarray(a) for a in arrays]
        shapes = [tuple(v.shape) for v in self.variables]
        if [a.shape for a in arrays] != shapes:
            raise ValueError(f"set_weights needs arrays of shapes {shapes}, "
                             f"got {[a.shape for a in arrays]}")
        # Feeding a variable's initial value re-runs its initializer with that value: no assign
        # ops are added to the graph, so drawing it shows only the averaging.
        with self.graph.as_default():  # initial_value is a graph-only property
            feeds = [v.initial_value for v in self.variables]
        for v, feed, a in zip(self.variables, feeds, arrays):
            sess.run(v.initializer, {feed: a})

    def copy_from_keras(self, sess, keras_model):
        """Copy a Keras model's trainable weights (Dense kernel, bias, ...) into the graph.

        Call it outside `with sess:` (or `with graph.as_default():`): that block makes the TF1
        graph the default, where eager Keras variables cannot be read.
        """
        if not tf.executing_eagerly():
            raise RuntimeError("copy_from_keras reads the Keras weights eagerly, but a TF1 graph is "
                               "the default here (inside `with sess:`?); call it outside that block, "
                               "or pass weights read earlier (model.get_weights()) to set_weights")
        self.set_weights(sess, [w.numpy() for w in keras_model.trainable_weights])

    def __repr__(self):
        names = ", ".join(v.op.name for v in self.variables)
        return (f"<{type(self).__name__} {self.kind!r}: {len(self.graph.get_operations())} ops, "
                f"variables [{names}], optimizer {type(self.optimizer).__name__}>")
