"""Data files shipped inside the package, read with `importlib.resources` (see gradlab.studies.data).

`mnist_5k.npz` is MNIST (CC BY-SA 3.0, not gradlab's Apache-2.0): its provenance, licence
and rebuild script are in the repository's data/README.md and LICENSE-MNIST.
"""
