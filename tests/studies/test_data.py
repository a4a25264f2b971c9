"""gradlab.studies.data: the shipped subset, its checksum, IDX files and bad input; all offline."""
import gzip
import hashlib
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from gradlab.studies import data
from gradlab.studies.data import Mnist, load_mnist

SHIPPED = Path(__file__).resolve().parents[2] / "gradlab" / "datasets" / "mnist_5k.npz"


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    """Each test starts from an empty cache and the repo's data dir."""
    monkeypatch.delenv("GRADLAB_DATA", raising=False)
    data.clear_cache()
    yield
    data.clear_cache()


def _rows(x):
    """Each image as bytes, to compare splits as sets (the 5,000 images are distinct)."""
    return {img.tobytes() for img in np.asarray(x)}


# --- the shipped subset ---------------------------------------------------------------

def test_shipped_file_matches_checksum_and_size():
    assert hashlib.sha256(SHIPPED.read_bytes()).hexdigest() == data.SHA256
    assert SHIPPED.stat().st_size < 1_000_000


def test_shipped_shapes_dtypes_range_and_classes():
    m = load_mnist()
    assert isinstance(m, Mnist)
    assert m.x_train.shape == (4000, 28, 28) and m.x_test.shape == (1000, 28, 28)
    assert m.y_train.shape == (4000,) and m.y_test.shape == (1000,)
    assert m.x_train.dtype == np.float32 and m.y_train.dtype == np.int32
    assert m.x_train.min() == 0.0 and m.x_train.max() == 1.0
    # Pixels are k/255: scaling back gives integers.
    np.testing.assert_allclose(m.x_test * 255, np.round(m.x_test * 255), atol=1e-4)
    assert np.bincount(m.y_train).tolist() == [400] * 10
    assert np.bincount(m.y_test).tolist() == [100] * 10
    # MNIST's mean pixel is about 0.13; a mislabelled column or transposed file is not.
    assert 0.12 < m.x_train.mean() < 0.14
    # Shuffled: the file is sorted by label, the split must not be.
    assert np.any(np.diff(m.y_train) < 0) and np.any(np.diff(m.y_test) < 0)


def test_shipped_split_is_disjoint_and_covers_all_5000():
    m = load_mnist()
    train, test = _rows(m.x_train), _rows(m.x_test)
    assert len(train) == 4000 and len(test) == 1000
    assert not train & test
    with np.load(SHIPPED) as npz:
        assert train | test == _rows(npz["images"].astype(np.float32) / np.float32(255))


def test_shipped_split_is_deterministic_per_seed():
    a = load_mnist(seed=3)
    data.clear_cache()  # the same split from a fresh Generator, not from the cache
    b = load_mnist(seed=3)
    assert a is not b
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    c = load_mnist(seed=4)
    assert _rows(c.x_test) != _rows(a.x_test)
    assert np.bincount(c.y_test).tolist() == [100] * 10


def test_flatten_cache_and_read_only():
    m = load_mnist()
    assert load_mnist() is m
    f = load_mnist(flatten=True)
    assert f.x_train.shape == (4000, 784) and f.x_test.shape == (1000, 784)
    np.testing.assert_array_equal(f.x_train, m.x_train.reshape(4000, 784))
    with pytest.raises(ValueError, match="read-only"):
        m.x_train[0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        f.y_train[0] = 1


def test_corrupt_copy_fails_checksum(tmp_path, monkeypatch):
    raw = bytearray(SHIPPED.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "mnist_5k.npz").write_bytes(bytes(raw))
    monkeypatch.setenv("GRADLAB_DATA", str(tmp_path))
    with pytest.raises(ValueError, match="sha256") as err:
        load_mnist()
    assert str(tmp_path) in str(err.value) and "make_mnist_5k.py" in str(err.value)


def test_intact_copy_via_data_dir_loads(tmp_path):
    shutil.copy(SHIPPED, tmp_path / "mnist_5k.npz")
    np.testing.assert_array_equal(load_mnist(data_dir=tmp_path).y_test, load_mnist().y_test)


def test_unreadable_file_with_matching_checksum_is_a_value_error(tmp_path, monkeypatch):
    junk = b"not a zip file"
    (tmp_path / "mnist_5k.npz").write_bytes(junk)
    monkeypatch.setattr(data, "SHA256", hashlib.sha256(junk).hexdigest())
    with pytest.raises(ValueError, match="could not read"):
        load_mnist(data_dir=tmp_path)


def test_the_subset_is_package_data_read_through_importlib_resources(monkeypatch):
    opened = []
    real_files = data.resources.files
    monkeypatch.setattr(data.resources, "files",
                        lambda package: opened.append(package) or real_files(package))
    assert load_mnist().x_train.shape == (4000, 28, 28)
    assert opened == ["gradlab.datasets"]
    assert (real_files("gradlab.datasets") / "mnist_5k.npz").read_bytes() == SHIPPED.read_bytes()


def test_data_root_is_the_env_the_checkout_or_the_users_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADLAB_DATA", str(tmp_path))
    assert data.data_root() == tmp_path
    monkeypatch.delenv("GRADLAB_DATA")
    assert data.data_root() == Path(__file__).resolve().parents[2] / "data"
    # Installed (no data/make_mnist_5k.py beside the package): never site-packages.
    monkeypatch.setattr(data, "__file__", str(tmp_path / "site-packages" / "gradlab" / "data.py"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data.data_root() == tmp_path / "xdg" / "gradlab"


def test_missing_file_names_path_and_remedy(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADLAB_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError) as err:
        load_mnist()
    message = str(err.value)
    assert str(tmp_path / "mnist_5k.npz") in message
    assert "git checkout" in message and "GRADLAB_DATA" in message


# --- IDX files ------------------------------------------------------------------------

def _idx(array, magic):
    """IDX bytes: magic, big-endian uint32 dimensions, then uint8 data."""
    array = np.asarray(array, np.uint8)
    dims = np.array(array.shape, ">u4").tobytes()
    return magic.to_bytes(4, "big") + dims + array.tobytes()


def _write_idx_set(folder, n_train=6, n_test=4, gz=False):
    rng = np.random.default_rng(0)
    arrays = {
        "x_train": rng.integers(0, 256, (n_train, 28, 28)),
        "y_train": np.arange(n_train) % 10,
        "x_test": rng.integers(0, 256, (n_test, 28, 28)),
        "y_test": (np.arange(n_test) + 3) % 10,
    }
    for key, name in data.IDX_FILES.items():
        raw = _idx(arrays[key], 0x803 if key.startswith("x") else 0x801)
        if gz:
            (folder / f"{name}.gz").write_bytes(gzip.compress(raw))
        else:
            (folder / name).write_bytes(raw)
    return arrays


@pytest.mark.parametrize("gz", [False, True])
def test_idx_files_read_correctly(tmp_path, gz):
    arrays = _write_idx_set(tmp_path, gz=gz)
    m = load_mnist("idx", data_dir=tmp_path)
    for key in data.IDX_FILES:
        got = getattr(m, key)
        if key.startswith("x"):
            assert got.dtype == np.float32
            np.testing.assert_allclose(got * 255, arrays[key], atol=1e-4)
        else:
            assert got.dtype == np.int32
            np.testing.assert_array_equal(got, arrays[key])
    assert load_mnist("idx", data_dir=tmp_path, flatten=True).x_test.shape == (4, 784)


def test_idx_default_dir_is_data_mnist_under_gradlab_data(tmp_path, monkeypatch):
    (tmp_path / "mnist").mkdir()
    arrays = _write_idx_set(tmp_path / "mnist", gz=True)
    monkeypatch.setenv("GRADLAB_DATA", str(tmp_path))
    np.testing.assert_array_equal(load_mnist("idx").y_train, arrays["y_train"])


def test_idx_bad_magic_names_file(tmp_path):
    _write_idx_set(tmp_path)
    labels = tmp_path / "t10k-labels-idx1-ubyte"
    labels.write_bytes(_idx(np.zeros(4), 0x803))  # an images magic on a labels file
    with pytest.raises(ValueError, match="magic number 0x00000803") as err:
        load_mnist("idx", data_dir=tmp_path)
    assert str(labels) in str(err.value)


def test_idx_truncated_and_mismatched_counts(tmp_path):
    _write_idx_set(tmp_path)
    images = tmp_path / "train-images-idx3-ubyte"
    images.write_bytes(images.read_bytes()[:-10])
    with pytest.raises(ValueError, match="truncated"):
        load_mnist("idx", data_dir=tmp_path)
    images.write_bytes(_idx(np.zeros((5, 28, 28)), 0x803))  # 5 images, 6 labels
    with pytest.raises(ValueError, match="5 images but .* 6 labels"):
        load_mnist("idx", data_dir=tmp_path)


def test_idx_missing_files_named(tmp_path):
    _write_idx_set(tmp_path)
    (tmp_path / "t10k-images-idx3-ubyte").unlink()
    with pytest.raises(FileNotFoundError) as err:
        load_mnist("idx", data_dir=tmp_path)
    assert f"not found in {tmp_path}: t10k-images-idx3-ubyte (" in str(err.value)


# --- keras, with a stand-in module so the test stays offline --------------------------

def _fake_keras(monkeypatch, load_data):
    fake = types.ModuleType("keras")
    fake.datasets = types.SimpleNamespace(mnist=types.SimpleNamespace(load_data=load_data))
    monkeypatch.setitem(sys.modules, "keras", fake)


def test_keras_download_failure_is_a_clear_runtime_error(monkeypatch):
    def offline():
        raise Exception("URL fetch failure: no network")
    _fake_keras(monkeypatch, offline)
    with pytest.raises(RuntimeError, match="network") as err:
        load_mnist("keras")
    assert "shipped" in str(err.value)


def test_keras_arrays_are_scaled_and_typed(monkeypatch):
    x = np.full((2, 28, 28), 255, np.uint8)
    _fake_keras(monkeypatch, lambda: ((x, np.array([1, 2], np.uint8)),
                                      (x[:1], np.array([7], np.uint8))))
    m = load_mnist("keras", flatten=True)
    assert m.x_train.shape == (2, 784) and m.x_train.dtype == np.float32
    assert m.x_train.max() == 1.0 and m.y_test.tolist() == [7] and m.y_test.dtype == np.int32


# --- bad arguments --------------------------------------------------------------------

def test_bad_source_lists_valid_values():
    with pytest.raises(ValueError, match="'shipped', 'idx', 'keras'.*'mnist'"):
        load_mnist("mnist")


@pytest.mark.parametrize("kwargs, error", [
    ({"flatten": 1}, TypeError),
    ({"seed": 1.5}, TypeError),
    ({"seed": True}, TypeError),
    ({"seed": -1}, ValueError),
    ({"data_dir": 3}, TypeError),
])
def test_bad_arguments_name_the_value(kwargs, error):
    with pytest.raises(error, match=repr(next(iter(kwargs.values()))).replace(".", r"\.")):
        load_mnist(**kwargs)


def test_data_dir_given_the_file_itself():
    with pytest.raises(ValueError, match="directory .* got the file"):
        load_mnist(data_dir=SHIPPED)
