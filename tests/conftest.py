"""Two logical CPU devices for the whole session, made before TensorFlow initialises,
so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine."""
import gradlab

DEVICES = gradlab.tower_devices(2)
