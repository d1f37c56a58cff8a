"""Regenerate the small real data samples, from the full datasets: the ones the tests use
(here) and the MNIST sample that ships inside skylite (skylite/datasets/mnist_sample.npz).

    python tests/data/make_samples.py [FOLDER]

FOLDER holds reuters_lasvm.svm.gz and reuters_lasvm.t.svm.gz, and mnist.npz (read, or
fetched there, by skylite.datasets.load_mnist). Default: skylite's data folder
($SKYLITE_DATA, else ~/skylite_data); see tests/data/README.md for the sources.
The .gz files come out byte for byte the same; the .npz files hold the same arrays (zip
entries carry the time of writing).
"""
import gzip
import io
import sys
from pathlib import Path

import numpy as np

from skylite.datasets import get_data_home, load_mnist

HERE = Path(__file__).resolve().parent
PACKAGE_SAMPLE = HERE.parents[1] / "skylite" / "datasets" / "mnist_sample.npz"
MNIST_ROWS = 3000           # mnist3000 in tests/conftest.py; mnist600 is its first 600
PACKAGE_TRAIN_ROWS, PACKAGE_TEST_ROWS = 1500, 500   # load_mnist_sample: the first of each
REUTERS_TRAIN_ROWS = 1000
REUTERS_TEST_STRIDE = 3     # the test file lists its 179 positives first: every 3rd line


def as_uint8(X):
    """Pixels k / 255 as the uint8 k, checked to be lossless."""
    pixels = np.rint(X.astype(np.float64) * 255).astype(np.uint8)
    if not np.array_equal(pixels.astype(np.float32) / np.float32(255), X):
        raise SystemExit("mnist.npz pixels are not k / 255: the uint8 sample would lose them")
    return pixels


def npz_bytes(**arrays):
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def mnist_sample(mnist):
    """The first MNIST_ROWS training images as uint8 (X * 255) and their labels."""
    X, y = mnist[0][:MNIST_ROWS], mnist[1][:MNIST_ROWS]
    return npz_bytes(pixels=as_uint8(X), labels=y)


def package_sample(mnist):
    """The first training and test images as uint8, labels uint8: load_mnist_sample's file."""
    X, y, X_test, y_test = mnist
    return npz_bytes(X_train=as_uint8(X[:PACKAGE_TRAIN_ROWS]),
                     y_train=y[:PACKAGE_TRAIN_ROWS].astype(np.uint8),
                     X_test=as_uint8(X_test[:PACKAGE_TEST_ROWS]),
                     y_test=y_test[:PACKAGE_TEST_ROWS].astype(np.uint8))


def svmlight_lines(path, keep):
    """The lines of a gzip'd svmlight file whose 0-based line number passes keep, verbatim."""
    with gzip.open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    kept = b"".join(line for i, line in enumerate(lines) if keep(i))
    return gzip.compress(kept, compresslevel=9, mtime=0)   # mtime=0: reproducible bytes


def main(source):
    source = Path(source)
    mnist = load_mnist(data_home=source)
    outputs = {
        PACKAGE_SAMPLE: package_sample(mnist),
        "mnist_sample.npz": mnist_sample(mnist),
        "reuters_sample.svm.gz": svmlight_lines(source / "reuters_lasvm.svm.gz",
                                                lambda i: i < REUTERS_TRAIN_ROWS),
        "reuters_sample.t.svm.gz": svmlight_lines(source / "reuters_lasvm.t.svm.gz",
                                                  lambda i: i % REUTERS_TEST_STRIDE == 0),
    }
    for name, data in outputs.items():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data):,} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else get_data_home())
