"""One micro-batch's loss terms, the one builder both faces call: `(S_i, D_i, holds)`.

    y_pred = model(x_i)                      recorded: what the forward pass writes is warned
    L_i    = loss_of(x_i, y_i, y_pred, w_i)  the face's mean loss (Keras's `compute_loss` for
                                             fit; the loss function and penalties for step)
    D_i    = rows, or counted entries        (`normaliser`, by `rule_of(y, y_pred)`)
    S_i    = D_i * L_i
    holds  = contract.split_holds(...)       while `check_now` is set (`contract.checked`)

Lesson: notebooks/10-accumulation-in-fit.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from . import contract, normaliser, state_writes
from .batchnorm import NO_WINDOW


class MicroLoss:
    """`micro(x, y, sample_weight, training) -> ((S, D, holds), y_pred)`, or `((S, D), y_pred)`
    when not training (no check, no warning).

    Args:
        model: the model whose forward pass makes `y_pred`.
        loss: the compiled loss or loss function (the normaliser reads its mask rules).
        loss_of: `loss_of(x, y, y_pred, sample_weight) -> L`, the micro-batch's mean loss.
        check_now: the boolean variable arming the contract's check (`contract.checked`).
        check_loss_of: `(y, y_pred, sample_weight) -> L` for the check's halves (default:
            `loss_of` without x), so that it may leave the face's trackers alone.
        rule_of: `(y, y_pred) -> rule` (`normaliser.RULES`); default Keras's own on the output.
        seen: the set of warnings given already (`state_writes.warn_once`).
        passes: forward passes per update, named in the warnings.
        moments: BatchNorm's window (`batchnorm.WindowMoments`) recording the forward pass.
    """

    def __init__(self, model, loss, loss_of, check_now, check_loss_of=None, rule_of=None,
                 seen=None, passes=1, moments=NO_WINDOW):
        self.model, self.loss, self.loss_of, self.check_now = model, loss, loss_of, check_now
        self.check_loss_of = check_loss_of or (lambda y, p, w: loss_of(None, y, p, w))
        self.rule_of = rule_of or (lambda y, p: normaliser.keras_rule(y, p, loss))
        self.seen = set() if seen is None else seen
        self.passes, self.moments = passes, moments

    def __call__(self, x, y, sample_weight=None, training=True):
        ops = []  # what the traced forward pass does (state_writes)
        with self.moments.recording(), state_writes.recording(ops):
            y_pred = self.model(x, training=training)
        if training and ops:
            state_writes.warn_once(self.seen, self.model, ops, tf.nest.flatten(x)[0].shape[0],
                                   self.passes, y_pred)
        rule = self.rule_of(y, y_pred)
        loss = self.loss_of(x, y, y_pred, sample_weight)
        if training and rule == "entries":
            normaliser.check_masked_penalties(self.model, self.model.losses, x)
        d = normaliser.normaliser(rule, x, y, y_pred, self.loss)
        s = tf.cast(loss, d.dtype) * d
        if not training:
            return (s, d), y_pred
        norm_of = lambda y, p: normaliser.normaliser(rule, p, y, p, self.loss)
        holds = contract.checked(self.check_now, self.check_loss_of, norm_of, y, y_pred, sample_weight)
        return (s, d, holds), y_pred
