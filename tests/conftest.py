"""Two logical CPU devices for the whole session (tests/common.py), made before TensorFlow
initialises, so `towers` and `mirrored` run real multi-device graphs on a CPU-only machine."""
import common  # noqa: F401  (first, before anything initialises TensorFlow)

# JupyterLab in a real browser is slow and needs Chromium: `make test-browser` runs it.
collect_ignore = ["browser"]
