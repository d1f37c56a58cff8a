"""Write n deformed MNIST training rows (skylite.datasets.deformed_digits) to a file.

    python benchmarks/deformed_mnist.py N OUT [--seed 0] [--format npy|hdf5|svm] [--jobs 2]

The base images are the 60,000 MNIST training digits of skylite.datasets.load_mnist; the test
digits are never used (evaluate on the real 10k test rows).  Row k is a pure function of
(seed, k), so the file is the same for any --jobs or --chunk.  Formats:

    npy   OUT.X.npy (float32, n x 784, memory-mappable) and OUT.y.npy (int64)
    hdf5  OUT (datasets X: float32 n x 784, y: int64 n), needs h5py
    svm   OUT in LIBSVM text format (1-based indices, zeros omitted)

Beside the data, OUT.json records how it was made ({"seed", "n", "format"}), so a benchmark
can say which stream its rows came from.

A progress line on stderr shows rows written, rows per second and the time left.
"""
import argparse
import json
import sys
import time
from multiprocessing import Pool

import numpy as np

from skylite.datasets import load_mnist
from skylite.datasets.deformed_digits import deformed_digits
from skylite.io import dump_svmlight

_BASE = {}


def _init_worker():
    _BASE["X"], _BASE["y"] = load_mnist()[:2]


def _rows(task):
    seed, start, stop = task
    X, y = deformed_digits(_BASE["X"], _BASE["y"], seed, start, stop)
    return start, X, y


class Progress:
    """`rows done / total, rows/s, time left` on one stderr line."""

    def __init__(self, total):
        self.total, self.done, self.start = total, 0, time.perf_counter()

    def add(self, rows):
        self.done += rows
        elapsed = time.perf_counter() - self.start
        rate = self.done / max(elapsed, 1e-9)
        left = (self.total - self.done) / max(rate, 1e-9)
        sys.stderr.write(f"\r{self.done:,}/{self.total:,} rows  {rate:,.0f} rows/s  "
                         f"{left:5.0f} s left ")
        if self.done == self.total:
            sys.stderr.write(f"\ndone in {elapsed:.1f} s\n")
        sys.stderr.flush()


class NpyWriter:
    def __init__(self, out, n):
        self.X = np.lib.format.open_memmap(f"{out}.X.npy", mode="w+", dtype=np.float32,
                                           shape=(n, 784))
        self.y = np.lib.format.open_memmap(f"{out}.y.npy", mode="w+", dtype=np.int64,
                                           shape=(n,))

    def write(self, start, X, y):
        self.X[start:start + len(X)] = X
        self.y[start:start + len(y)] = y

    def close(self):
        self.X.flush()
        self.y.flush()


class Hdf5Writer:
    def __init__(self, out, n):
        try:
            import h5py
        except ImportError:
            sys.exit("--format hdf5 needs h5py: pip install h5py (or skylite[hdf5])")
        self.file = h5py.File(out, "w")
        self.X = self.file.create_dataset("X", (n, 784), dtype="float32",
                                          chunks=(min(n, 1024), 784))
        self.y = self.file.create_dataset("y", (n,), dtype="int64")

    def write(self, start, X, y):
        self.X[start:start + len(X)] = X
        self.y[start:start + len(y)] = y

    def close(self):
        self.file.close()


class SvmWriter:
    def __init__(self, out, n):
        self.file = open(out, "wb")

    def write(self, start, X, y):
        dump_svmlight(X, y, self.file)      # rows arrive in order (imap)

    def close(self):
        self.file.close()


WRITERS = {"npy": NpyWriter, "hdf5": Hdf5Writer, "svm": SvmWriter}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, help="number of rows")
    parser.add_argument("out", help="output path (npy: prefix of OUT.X.npy / OUT.y.npy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=list(WRITERS), default="npy")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--chunk", type=int, default=5000, help="rows per task")
    args = parser.parse_args()
    if args.n < 1 or args.chunk < 1 or args.jobs < 1:
        sys.exit("n, --chunk and --jobs must be >= 1")
    writer = WRITERS[args.format](args.out, args.n)
    progress = Progress(args.n)
    tasks = [(args.seed, a, min(args.n, a + args.chunk)) for a in range(0, args.n, args.chunk)]
    with Pool(args.jobs, initializer=_init_worker) as pool:
        for start, X, y in pool.imap(_rows, tasks):
            writer.write(start, X, y)
            progress.add(len(X))
    writer.close()
    with open(f"{args.out}.json", "w") as f:
        json.dump({"seed": args.seed, "n": args.n, "format": args.format}, f)


if __name__ == "__main__":
    main()
