"""MNIST for the lessons: a 5,000-digit subset shipped in the package, the full IDX files, or Keras.

    x = pixels / 255  (float32 in [0, 1], shape (N, 28, 28) or (N, 784)),   y in 0..9 (int32)

`load_mnist()` works offline out of the box: it splits the subset shipped inside the
package (`gradlab/datasets/mnist_5k.npz`, 500 real MNIST digits per class, read with
`importlib.resources`) into 4,000 train / 1,000 test examples, stratified (400 / 100 per
class) and the same for the same seed. `source="idx"` reads the full 60,000 / 10,000 set
from the four standard IDX files in `data_root() / "mnist"`; `source="keras"` asks
`keras.datasets.mnist`, which needs the network once.

The environment variable `GRADLAB_DATA` names a directory read instead of the package's
copy (its `mnist_5k.npz`) and of `data_root()` (its `mnist/`). Results are cached per
arguments and returned read-only: a notebook may call `load_mnist()` in every cell at no
cost; `.copy()` an array before changing it.

Lesson: notebooks/01-why-average.ipynb
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import io
import numbers
import os
import zlib
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ._paths import env_path, user_dir

SOURCES = ("shipped", "idx", "keras")
SHIPPED_FILE = "mnist_5k.npz"
SHIPPED_PACKAGE = "gradlab.datasets"  # a folder, not `data`: gradlab.studies.data is this module
# sha256 of gradlab/datasets/mnist_5k.npz, as printed by `python data/make_mnist_5k.py`.
SHA256 = "63818dc867dd7ee1181196c2588842f34debadc19cc80dc16b1dc1401cbb62c4"
TRAIN_PER_CLASS = 400
TEST_PER_CLASS = 100
NUM_CLASSES = 10
IMAGE_SHAPE = (28, 28)
# The four files of the full set, as LeCun distributes them (each may also end in .gz).
IDX_FILES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}
# IDX magic: two zero bytes, type code 0x08 (unsigned byte), number of dimensions.
_IDX_MAGIC = {"images": 0x00000803, "labels": 0x00000801}
_ENV_VAR = "GRADLAB_DATA"
_REBUILD = ("Reinstall gradlab; in a checkout, restore it with "
            "`git checkout -- gradlab/datasets/mnist_5k.npz` or rebuild it with "
            "`python data/make_mnist_5k.py` (see data/README.md).")


class Mnist(NamedTuple):
    """`(x_train, y_train, x_test, y_test)`: x float32 in [0, 1], y int32 in 0..9."""
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_mnist(source="shipped", data_dir=None, flatten=False, seed=0):
    """MNIST as `Mnist(x_train, y_train, x_test, y_test)`, with `x = pixels / 255`.

    | source    | train  | test   | needs                                          |
    |-----------|--------|--------|------------------------------------------------|
    | "shipped" | 4,000  | 1,000  | `mnist_5k.npz` (in the package, checksummed)   |
    | "idx"     | 60,000 | 10,000 | the four IDX files in `data_root() / "mnist"`  |
    | "keras"   | 60,000 | 10,000 | the network on first use (cached in ~/.keras)  |

    "shipped" draws a stratified split, 400 train / 100 test per class, both shuffled
    (the file itself is sorted by label), with `np.random.default_rng(seed)`: the same
    seed always gives the same split. "idx" and "keras" keep MNIST's official split
    and order.

    Args:
        source: one of "shipped", "idx", "keras".
        data_dir: for "shipped", the directory holding `mnist_5k.npz`; for "idx", the
            directory holding the IDX files. Default: `$GRADLAB_DATA` (its `mnist/`
            for "idx") if set; else the package's copy for "shipped" and
            `data_root() / "mnist"` for "idx". Ignored by "keras".
        flatten: if True, x has shape (N, 784) instead of (N, 28, 28).
        seed: non-negative int choosing the "shipped" split; ignored by the others.
    Returns:
        `Mnist` of read-only arrays: x float32 (N, 28, 28) or (N, 784), y int32 (N,).
    Raises:
        ValueError: unknown source, or a corrupt / malformed file (named).
        TypeError: flatten not a bool, seed not an int, data_dir not a path.
        FileNotFoundError: a missing file, named, with how to get it.
        RuntimeError: "keras" could not download the data.

    Lesson: notebooks/01-why-average.ipynb
    """
    if not isinstance(source, str) or source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(map(repr, SOURCES))}; "
                         f"got {source!r}")
    if not isinstance(flatten, bool):
        raise TypeError(f"flatten must be True or False, got {flatten!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be a non-negative integer, got {seed!r} "
                        f"({type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if data_dir is not None and not isinstance(data_dir, (str, os.PathLike)):
        raise TypeError(f"data_dir must be a path (str or os.PathLike) or None, "
                        f"got {data_dir!r}")

    if data_dir is not None and Path(data_dir).is_file():
        raise ValueError(f"data_dir must be the directory that holds the data files, "
                         f"got the file {str(data_dir)!r}; pass its parent directory")

    if source == "shipped":
        folder = Path(data_dir) if data_dir is not None else env_path(_ENV_VAR)
        if folder is None:
            # as_file: a real path even if the package is imported from a zip.
            with resources.as_file(resources.files(SHIPPED_PACKAGE) / SHIPPED_FILE) as path:
                data = _load_shipped(str(path), _stamp(path), int(seed))
        else:
            path = (folder / SHIPPED_FILE).resolve()
            data = _load_shipped(str(path), _stamp(path), int(seed))
    elif source == "idx":
        folder = Path(data_dir) if data_dir is not None else data_root() / "mnist"
        paths = _idx_paths(folder.resolve())
        data = _load_idx(paths, tuple(_stamp(Path(p)) for p in paths))
    else:
        data = _load_keras()
    if flatten:
        # A reshape of a read-only array is a read-only view: nothing is copied.
        data = data._replace(x_train=data.x_train.reshape(len(data.x_train), -1),
                             x_test=data.x_test.reshape(len(data.x_test), -1))
    return data


def data_root():
    """The directory whose `mnist/` holds the full IDX set.

    `$GRADLAB_DATA` if set and non-empty; else the repository's `data/` when gradlab is
    imported from a checkout (it holds `make_mnist_5k.py`); else the user's data directory,
    `$XDG_DATA_HOME/gradlab` (default `~/.local/share/gradlab`): never site-packages.
    """
    env = env_path(_ENV_VAR)
    if env is not None:
        return env
    checkout = Path(__file__).resolve().parents[2] / "data"
    if (checkout / "make_mnist_5k.py").is_file():
        return checkout
    return user_dir("XDG_DATA_HOME")


def clear_cache():
    """Forget every cached `load_mnist` result (e.g. after replacing the files)."""
    for cached in (_load_shipped, _load_idx, _load_keras):
        cached.cache_clear()


def _stamp(path):
    """(size, mtime) of `path`, part of the cache key so a replaced file is re-read."""
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        if path.name == SHIPPED_FILE:
            raise FileNotFoundError(
                f"MNIST subset not found: {path}. It ships inside the gradlab package "
                f"as gradlab/datasets/{SHIPPED_FILE}. {_REBUILD} Or point {_ENV_VAR} (or "
                "data_dir=) at the directory that holds it.") from None
        raise
    return st.st_size, st.st_mtime_ns


def _readonly(x, y):
    """x as float32 pixels / 255, y as int32; both read-only, since they are cached."""
    x = x.astype(np.float32) / np.float32(255)
    y = y.astype(np.int32)
    x.flags.writeable = False
    y.flags.writeable = False
    return x, y


@functools.lru_cache(maxsize=4)
def _load_shipped(path, stamp, seed):
    raw = Path(path).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        raise ValueError(f"{path} is corrupt or not the shipped MNIST subset: its sha256 is "
                         f"{digest}, expected {SHA256}. {_REBUILD}")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            images, labels = npz["images"], npz["labels"]
    except Exception as e:  # BadZipFile, KeyError, zlib.error, ValueError, ...
        raise ValueError(f"could not read {path} as an npz with 'images' and 'labels' "
                         f"({type(e).__name__}: {e}). {_REBUILD}") from e
    per_class = TRAIN_PER_CLASS + TEST_PER_CLASS
    counts = np.bincount(labels, minlength=NUM_CLASSES)
    if images.shape[1:] != IMAGE_SHAPE or len(images) != len(labels) or \
            counts.tolist() != [per_class] * NUM_CLASSES:
        raise ValueError(f"{path} holds images {images.shape} and label counts "
                         f"{counts.tolist()}; expected (N, 28, 28) and {per_class} per class")

    # Per class: shuffle its 500 indices, the first 400 train and the last 100 test.
    # Then shuffle each split, so that any slice of it mixes the classes.
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in range(NUM_CLASSES):
        idx = rng.permutation(np.flatnonzero(labels == c))
        train.append(idx[:TRAIN_PER_CLASS])
        test.append(idx[TRAIN_PER_CLASS:])
    train = rng.permutation(np.concatenate(train))
    test = rng.permutation(np.concatenate(test))
    return Mnist(*_readonly(images[train], labels[train]),
                 *_readonly(images[test], labels[test]))


def _idx_paths(folder):
    """The four IDX paths in `folder`, plain preferred over .gz; names what is missing."""
    paths, missing = [], []
    for name in IDX_FILES.values():
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.is_file():
                paths.append(str(candidate))
                break
        else:
            missing.append(name)
    if missing:
        raise FileNotFoundError(
            f"MNIST IDX file(s) not found in {folder}: {', '.join(missing)} "
            "(each may also end in .gz). Put the four standard files "
            f"({', '.join(IDX_FILES.values())}) there, or use source='shipped' (the "
            "5,000-digit subset in the package) or source='keras' (downloads once).")
    return tuple(paths)


def _read_idx(path, kind):
    """One IDX file (gzipped if its name ends in .gz) as a uint8 array; kind 'images'/'labels'."""
    try:
        raw = gzip.decompress(Path(path).read_bytes()) if path.endswith(".gz") \
            else Path(path).read_bytes()
    except (OSError, EOFError, zlib.error) as e:  # BadGzipFile is an OSError
        raise ValueError(f"could not read {path}: {type(e).__name__}: {e}") from e
    expected = _IDX_MAGIC[kind]
    magic = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else None
    if magic != expected:
        found = "a file shorter than 4 bytes" if magic is None else f"{magic:#010x}"
        hint = (" It looks gzipped: name it with a .gz ending."
                if raw[:2] == b"\x1f\x8b" else "")
        raise ValueError(f"{path} is not an MNIST {kind} IDX file: magic number "
                         f"{found}, expected {expected:#010x}.{hint}")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path} is truncated: {len(raw)} bytes, shorter than its header")
    dims = tuple(int(d) for d in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    if kind == "images" and dims[1:] != IMAGE_SHAPE:
        raise ValueError(f"{path} holds images of shape {dims[1:]}, expected {IMAGE_SHAPE}")
    size = int(np.prod(dims))
    if len(raw) - header != size:
        raise ValueError(f"{path} has {len(raw) - header} bytes of data after its header, "
                         f"but its dimensions {dims} need {size}: truncated or corrupt")
    return np.frombuffer(raw, np.uint8, offset=header).reshape(dims)


@functools.lru_cache(maxsize=4)
def _load_idx(paths, stamps):
    x_train_path, y_train_path, x_test_path, y_test_path = paths
    arrays = []
    for x_path, y_path in ((x_train_path, y_train_path), (x_test_path, y_test_path)):
        x, y = _read_idx(x_path, "images"), _read_idx(y_path, "labels")
        if len(x) != len(y):
            raise ValueError(f"{x_path} holds {len(x)} images but {y_path} holds "
                             f"{len(y)} labels")
        if len(y) and y.max() >= NUM_CLASSES:
            raise ValueError(f"{y_path} holds label {y.max()}, expected 0..9")
        arrays += _readonly(x, y)
    return Mnist(*arrays)


@functools.lru_cache(maxsize=1)
def _load_keras():
    try:
        import keras  # lazily: importing it starts TensorFlow, slow and not needed above
    except ImportError as e:
        raise RuntimeError(f"source='keras' needs keras (it comes with tensorflow): {e}. "
                           "Use source='shipped' (the default) instead.") from e
    try:
        (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    except Exception as e:  # keras wraps network errors in a plain Exception
        raise RuntimeError(
            "source='keras' could not load MNIST: keras.datasets.mnist.load_data() "
            "downloads mnist.npz (11 MB) on first use and needs the network for that "
            f"({type(e).__name__}: {e}). Offline, use source='shipped' (the default: "
            "5,000 real digits in the package), or source='idx' with the four IDX files "
            f"in {data_root() / 'mnist'}.") from e
    return Mnist(*_readonly(x_train, y_train), *_readonly(x_test, y_test))
