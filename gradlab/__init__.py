"""gradlab: averaging gradients in TensorFlow, proved equal to one large batch.

    import gradlab as gl
    s = gl.make_strategy("fused", model, loss_fn, optimizer, accum_steps=4)
    loss = s.step(x, y)   # one optimizer update, equal to one large batch of x

Lesson: notebooks/01-why-average.ipynb
"""
from ._quiet import quiet as _quiet_import

_quiet_import()  # before any submodule imports TensorFlow

__version__ = "0.1.0"

from .core.microbatch import split_sizes, micro_batches  # noqa: E402
from .core.towers import average_gradients, tower_devices  # noqa: E402
from .training.strategies import STRATEGIES, make_strategy  # noqa: E402
from .core import gradients  # noqa: E402,F401
from .training.strategy import Step, Strategy  # noqa: E402,F401
from .training.fit import AccumulatingModel  # noqa: E402
