"""The one update: split, loss terms and normalisers, sums, placement, guard, one apply.

TensorFlow, Keras and `gradlab._compat` only; `gradlab.core.engine.update` is the function
both faces (`gradlab.training`) call.
"""
