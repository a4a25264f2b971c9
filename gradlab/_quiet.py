"""Import TensorFlow without its start-up noise, so notebook outputs stay clean."""
import os
import sys


def quiet():
    """Import TensorFlow once with its C++ start-up logging silenced.

    `TF_CPP_MIN_LOG_LEVEL=3` hides later C++ logs (such as the CUDA probe on a machine
    without a GPU); users who want them set the variable themselves. Lines written before
    absl initialises its logging ignore that variable, so stderr (file descriptor 2, which
    ipykernel forwards to the notebook) points at /dev/null during the import itself.
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
