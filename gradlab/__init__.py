"""gradlab: averaging gradients in TensorFlow, proved equal to one large batch.

    import gradlab as gl
    s = gl.make_strategy("fused", model, loss_fn, optimizer, accum_steps=4)
    loss = s.step(x, y)   # one optimizer update, equal to one large batch of x

`import gradlab` changes nothing global: TensorFlow is imported when a name below is first
used, with its logging as the user set it. The lessons (`gradlab.lessons`) and the command
line (`python -m gradlab`) quiet TensorFlow's start-up logs themselves (`gradlab._quiet`).

Lesson: notebooks/01-why-average.ipynb
"""
import importlib

__version__ = "0.1.0"

# The public names and their homes, imported on first use (PEP 562).
_PUBLIC = {
    "split_sizes": "gradlab.core.microbatch",
    "micro_batches": "gradlab.classic.weights",
    "average_gradients": "gradlab.classic.tower_average",
    "tower_devices": "gradlab.core.towers",
    "STRATEGIES": "gradlab.training.strategies",
    "make_strategy": "gradlab.training.strategies",
    "Strategy": "gradlab.training.strategy",
    "AccumulatingModel": "gradlab.training.fit",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'gradlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_PUBLIC})


# keras.models.load_model finds AccumulatingModel only once its class is registered, which
# needs Keras: where Keras is imported already (a user about to load a model), register it now.
if "keras" in __import__("sys").modules:
    __getattr__("AccumulatingModel")
