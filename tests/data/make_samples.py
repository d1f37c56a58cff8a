"""Regenerate the small real data samples the tests use, from the full datasets.

    python tests/data/make_samples.py [FOLDER]

FOLDER holds mnist.npz, reuters_lasvm.svm.gz and reuters_lasvm.t.svm.gz (default:
../shared/data beside the checkout; see tests/data/README.md for their sources).
The .gz files come out byte for byte the same; the .npz holds the same arrays (zip
entries carry the time of writing).
"""
import gzip
import io
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MNIST_ROWS = 3000           # mnist3000 in tests/conftest.py; mnist600 is its first 600
REUTERS_TRAIN_ROWS = 1000
REUTERS_TEST_STRIDE = 3     # the test file lists its 179 positives first: every 3rd line


def mnist_sample(source):
    """The first MNIST_ROWS training images as uint8 (X * 255), checked to be lossless."""
    with np.load(source / "mnist.npz") as z:
        X, y = z["X_train"][:MNIST_ROWS], z["y_train"][:MNIST_ROWS]
    pixels = np.rint(X.astype(np.float64) * 255).astype(np.uint8)
    if not np.array_equal(pixels.astype(np.float32) / np.float32(255), X):
        raise SystemExit("mnist.npz pixels are not k / 255: the uint8 sample would lose them")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, pixels=pixels, labels=y)
    return buffer.getvalue()


def svmlight_lines(path, keep):
    """The lines of a gzip'd svmlight file whose 0-based line number passes keep, verbatim."""
    with gzip.open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    kept = b"".join(line for i, line in enumerate(lines) if keep(i))
    return gzip.compress(kept, compresslevel=9, mtime=0)   # mtime=0: reproducible bytes


def main(source):
    source = Path(source)
    outputs = {
        "mnist_sample.npz": mnist_sample(source),
        "reuters_sample.svm.gz": svmlight_lines(source / "reuters_lasvm.svm.gz",
                                                lambda i: i < REUTERS_TRAIN_ROWS),
        "reuters_sample.t.svm.gz": svmlight_lines(source / "reuters_lasvm.t.svm.gz",
                                                  lambda i: i % REUTERS_TEST_STRIDE == 0),
    }
    for name, data in outputs.items():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data):,} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "data")
