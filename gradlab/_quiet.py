"""TensorFlow without its start-up noise, for the lessons and the command line that ask for it.

`import gradlab` does not call this: it leaves `TF_CPP_MIN_LOG_LEVEL` and TensorFlow's logger
as the user set them. `gradlab.lessons` calls it on import, `python -m gradlab` before its
command runs.
"""
import os
import sys


def quiet():
    """Import TensorFlow once with its C++ start-up logging silenced; its Python logger at ERROR.

    `TF_CPP_MIN_LOG_LEVEL=3` (unless already set) hides later C++ logs (such as the CUDA probe
    on a machine without a GPU). Lines written before absl initialises its logging ignore
    that variable, so stderr (file descriptor 2, which ipykernel forwards to the notebook)
    points at /dev/null during the import itself. Both are changes to this process: a lesson
    and a command want them, a library import does not.
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "tensorflow" in sys.modules:
        import tensorflow
    else:
        tensorflow = _import_silently()
    # tf.function warns when many *different* functions trace, which every new strategy
    # does by design; retracing of one strategy is measured by its trace_count()
    # (`make_strategy(...).trace_count()`, which `python -m gradlab bench` reports).
    tensorflow.get_logger().setLevel("ERROR")


def _import_silently():
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            import tensorflow  # noqa: F401
            import keras  # noqa: F401
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return tensorflow
