"""Every private Keras/TensorFlow name gradlab relies on, by Keras subsystem, each checked at
first use.

Keras 3 and TensorFlow offer no public switch for what these do. Each function says what it
assumes; the first call runs a small probe of that assumption and raises a RuntimeError that
names the installed versions if it no longer holds, instead of training silently wrong.
Keras internals are imported lazily, here only: importing gradlab does not depend on them.
`PRIVATE_NAMES` lists every private name gradlab uses, each with its probe (each module
lists its own, beside the functions that use them); tests/test_compat.py
checks the list against the source.

Tested with `TESTED` (pyproject.toml says which versions it accepts).
"""
from . import behaviours, data_adapters, distribute, layers, losses, optimizers, trainer, xla
from ._probing import FOUND, TESTED, _in_a_fresh_thread  # noqa: F401
from .behaviours import (  # noqa: F401
    ACTIVITY_MEAN, ACTIVITY_SUM, METRICS_ON_READ, METRICS_ON_WRITE, BEHAVIOURS,
    activity_penalty_is_a_mean, metrics_summed_on_read)
from .trainer import EPOCH_ITEMS  # noqa: F401
from .data_adapters import fit_arrays  # noqa: F401
from .distribute import (  # noqa: F401
    device_sends, mirrored_strategy, own_instance_keys, reducible_by_keras, tf_initialised)
from .layers import keras_mask, sublayers, batchnorm_moments, slice_rows, with_keras_mask  # noqa: F401
from .losses import losses_not_divided_by_replicas  # noqa: F401
from .xla import dynamic_slice, traced_for_xla  # noqa: F401
from .optimizers import (  # noqa: F401
    gradients_already_reduced,
    optimizer_chain,
    counters,
    keras_accumulators,
    ema_variables,
    optimizer_knows)
from .trainer import (  # noqa: F401
    check_fit_hooks,
    first_replica_batch,
    symbolic_build,
    loss_tracker,
    output_loss_trackers,
    output_loss_weight,
    fit_validation,
    default_save_signature)

PRIVATE_NAMES = {**data_adapters.PRIVATE_NAMES, **distribute.PRIVATE_NAMES, **layers.PRIVATE_NAMES,
                 **losses.PRIVATE_NAMES, **optimizers.PRIVATE_NAMES, **trainer.PRIVATE_NAMES,
                 **xla.PRIVATE_NAMES}


def probe_report(only=None):
    """`[(probe, names, error)]`: every probe of `PRIVATE_NAMES` (with the private names it
    checks) and of `BEHAVIOURS` (no name), each run now in a fresh thread; `error` is None
    where it held. Where Keras versions differ, `FOUND[probe]` says which variant it found.
    `only`: a key of `PRIVATE_NAMES`, to run just its probe (a KeyError for any other)."""
    names = {}
    for name, probe in PRIVATE_NAMES.items():
        names.setdefault(probe, []).append(name)
    report = []
    for probe in [*names, *BEHAVIOURS] if only is None else [PRIVATE_NAMES[only]]:
        try:
            _in_a_fresh_thread(probe)
            report.append((probe.__name__, names.get(probe, []), None))
        except RuntimeError as e:
            report.append((probe.__name__, names.get(probe, []), str(e)))
    return report
