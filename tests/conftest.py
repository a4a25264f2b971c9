"""Two logical CPU devices for the whole session, made before TensorFlow initialises,
so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine."""
import gradlab

DEVICES = gradlab.tower_devices(2)

# JupyterLab in a real browser is slow and needs Chromium: `make test-browser` runs it.
collect_ignore = ["browser"]
