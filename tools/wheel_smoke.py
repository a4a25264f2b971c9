"""Run inside a fresh environment holding only the gradlab wheel and its core dependencies.

    AccumulatingModel.fit, accum_steps=4, batch 16  ==  Keras's plain fit, batch 16
    (weights within 1e-5 after 8 updates; the same optimizer iterations)

Also checks that the [lab] packages are absent (so the fit really ran on core dependencies)
and that the MNIST subset loads from the installed package. Prints one line per check.
Called by tools/test_wheel.py; not part of the package.
"""
import importlib.util
import sys

import keras
import numpy as np

import gradlab as gl
from gradlab.studies.data import load_mnist

LAB_ONLY = ("matplotlib", "tqdm", "ipywidgets", "jupyterlab", "voila")


def tiny_model(seed):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(3)])


def main():
    present = [name for name in LAB_ONLY if importlib.util.find_spec(name) is not None]
    if present:
        sys.exit(f"the core environment holds [lab] packages: {present}")
    print("core only: none of", ", ".join(LAB_ONLY), "is installed")

    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 6)).astype("float32")
    y = rng.integers(0, 3, size=128)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    plain = tiny_model(1)
    plain.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss=loss)
    accumulating = gl.AccumulatingModel(tiny_model(1), accum_steps=4)
    accumulating.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss=loss)
    start = [w.copy() for w in plain.get_weights()]
    assert all(np.array_equal(a, b) for a, b in zip(start, accumulating.get_weights()))
    for model in (plain, accumulating):
        model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)

    updates = (int(plain.optimizer.iterations), int(accumulating.optimizer.iterations))
    moved = max(float(np.abs(a - s).max()) for a, s in zip(plain.get_weights(), start))
    diff = max(float(np.abs(a - b).max())
               for a, b in zip(plain.get_weights(), accumulating.get_weights()))
    print(f"fit: {updates[1]} updates of 4 micro-batches; weights moved {moved:.3g}, "
          f"max |AccumulatingModel - Keras plain fit| = {diff:.2e}")
    if updates != (8, 8) or diff > 1e-5 or moved < 1e-3:
        sys.exit(f"fit differs from Keras's plain fit: iterations {updates}, max diff {diff:.3g}, "
                 f"moved {moved:.3g}")

    m = load_mnist()
    print(f"data: load_mnist() from the installed package: train {m.x_train.shape}, "
          f"test {m.x_test.shape}")
    print(f"gradlab {gl.__version__} from {gl.__file__}")


if __name__ == "__main__":
    main()
