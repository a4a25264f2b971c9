"""What several test folders share, importable by name because tests/conftest.py's folder is
on sys.path (a second conftest.py, as in tests/lab, would shadow `from conftest import ...`)."""
import gradlab

# Two logical CPU devices, made before TensorFlow initialises (conftest imports this first),
# so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine.
DEVICES = gradlab.tower_devices(2)

import keras  # noqa: E402  (TensorFlow initialises after the devices are made)
import tensorflow as tf  # noqa: E402

# Whether TensorFlow sees a GPU or TPU: where jit_compile="auto" keeps convolutions under XLA.
ACCELERATOR = any(d.device_type != "CPU" for d in tf.config.list_physical_devices())


class ActivationPenalty(keras.layers.Layer):
    """Adds a penalty computed from its inputs (add_loss) and passes the Keras mask on."""

    def __init__(self):
        super().__init__()
        self.supports_masking = True

    def call(self, h):
        self.add_loss(1e-2 * keras.ops.mean(keras.ops.square(h)))
        return h


def activity_refusal(layer_name):
    """What refuses a model whose layer `layer_name` has an activity regulariser beside a
    masked output: the mask rule where Keras averages the penalty over rows (3.14 on); before
    3.14 Keras sums it over the rows, so the loss itself is no mean and is refused as such."""
    from gradlab import _compat
    return (f"'{layer_name}' have an activity_regularizer" if _compat.activity_penalty_is_a_mean()
            else "cannot accumulate this loss exactly")
