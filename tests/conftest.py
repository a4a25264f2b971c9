"""Two logical CPU devices for the whole session, made before TensorFlow initialises,
so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine."""
import gradlab

DEVICES = gradlab.tower_devices(2)

import keras  # noqa: E402  (TensorFlow initialises after the devices are made)

# JupyterLab in a real browser is slow and needs Chromium: `make test-browser` runs it.
collect_ignore = ["browser"]


class ActivationPenalty(keras.layers.Layer):
    """Adds a penalty computed from its inputs (add_loss) and passes the Keras mask on."""

    def __init__(self):
        super().__init__()
        self.supports_masking = True

    def call(self, h):
        self.add_loss(1e-2 * keras.ops.mean(keras.ops.square(h)))
        return h
