"""When a face checks the contract inside its update, and what the check found: one object both faces own.

    arm(passes, again)  now <- True          if passes > 1 and (again or policy "every" or
                                             no update checked since forget())
    after()             checked <- True;     now <- False if policy "first"   (an armed update held)
    take_refused()      refused, then refused <- False                      (fit's verdict)

`now` is the variable the compiled update reads (`contract.checked`: an update that is not
checked pays the read of one variable); `checking` is its Python mirror, so that a face reads
no variable after an update that was not checked. `step` arms at each new trace of its
update; `fit` at each call (`train_on_batch`: only until an update was checked since
`compile`). `warned` holds the warnings given already (`state_writes.warn_once`), so that
each is given once per face, not once per trace.

Lesson: notebooks/07-pitfalls-what-to-count.ipynb
"""
from __future__ import annotations

import tensorflow as tf

from ..core import contract


class CheckState(tf.Module):
    """The contract's check of one face (`Strategy` or `AccumulatingModel`).

    Args:
        policy: "first" or "every" (`contract.CHECKS`, checked by `Options`).

    A `tf.Module`, so that a Keras model owning it tracks its variables as it tracked them
    as its own attributes (raw variables: not weights, not in Keras's weight files).
    """

    def __init__(self, policy):
        super().__init__(name="contract_check")
        self.policy = contract.check_option(policy)
        # whether this update checks the contract: a raw variable the compiled update reads
        self.now = tf.Variable(False, trainable=False, name="check_contract")
        # whether an update was refused (fit reads it after Keras's train function returns)
        self.refused = tf.Variable(False, trainable=False, name="contract_refused")
        self.checking = False  # the Python mirror of `now`
        self.checked = False  # an armed update held since `forget()`
        self.warned = set()

    def arm(self, passes, again=True):
        """Arm the check for the next update if it splits (`passes` > 1) and `again`, or the
        policy is "every", or no update was checked since `forget()`."""
        if passes > 1 and (again or self.policy == "every" or not self.checked):
            self.now.assign(True)
            self.refused.assign(False)
            self.checking = True

    def after(self):
        """An armed update held: it was checked; disarm under the policy "first"."""
        if not self.checking:
            return
        self.checked = True
        if self.policy == "first":
            self.now.assign(False)
            self.checking = False

    def take_refused(self):
        """Whether an armed update was refused since it was armed (reset once read)."""
        if not self.checking or not bool(self.refused.numpy()):
            return False
        self.refused.assign(False)
        return True

    def forget(self):
        """A new compile: no update has been checked yet (`arm(..., again=False)` arms)."""
        self.checked = False
