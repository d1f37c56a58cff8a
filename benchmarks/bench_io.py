"""svmlight reading speed: skylite.io.load_svmlight vs scikit-learn's load_svmlight_file.

    python benchmarks/bench_io.py [--repeats 3] [--rows 20000] [--tmp /tmp]

Files: the Reuters train file reuters_lasvm.svm.gz from skylite's data folder ($SKYLITE_DATA;
skipped when it is not there) (gzip, and a decompressed copy in a temporary
directory) and a synthetic MNIST-like file (rows x 784, ~19% nonzero, values k/255) written with
skylite.io.dump_svmlight, plain and gzip.  Prints a markdown table: reader, file, rows, the
minimum wall time over `repeats` runs (the machine is shared, so the minimum is the honest
figure), and MB/s of *decompressed text* (so gzip rows include decompression).  The last rows
read the plain synthetic file in 4 byte ranges one after the other (the work each MPI rank
would do, summed), to show that splitting costs nothing.
"""
import argparse
import gzip
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from skylite.io import (assemble, dump_svmlight, load_svmlight, read_svmlight_part,
                        svmlight_byte_ranges)

from _data import DATA  # noqa: E402


def best_time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def text_size(path):
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            f.seek(0)
            with gzip.GzipFile(fileobj=f) as g:
                return sum(len(c) for c in iter(lambda: g.read(1 << 20), b""))
    return Path(path).stat().st_size


def synthetic(path, n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, 784, density=0.19, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 256, k) / 255.0)
    y = rng.integers(0, 10, n_rows).astype(np.float64)
    dump_svmlight(X, y, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--tmp", default=None, help="where to write the temporary files")
    args = ap.parse_args(argv)
    from sklearn.datasets import load_svmlight_file

    with tempfile.TemporaryDirectory(prefix="bench_io-", dir=args.tmp) as d:
        d = Path(d)
        files = []
        reuters = DATA / "reuters_lasvm.svm.gz"
        if reuters.exists():
            plain = d / "reuters_lasvm.svm"
            with gzip.open(reuters, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
            files += [("reuters train (gz)", reuters, 8315), ("reuters train", plain, 8315)]
        else:
            print(f"({reuters} not found: Reuters rows skipped)")
        synth = d / "mnist_like.svm"
        synthetic(synth, args.rows)
        synth_gz = d / "mnist_like.svm.gz"
        with open(synth, "rb") as src, gzip.open(synth_gz, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        files += [(f"synthetic {args.rows}x784", synth, 784),
                  (f"synthetic {args.rows}x784 (gz)", synth_gz, 784)]

        print("| reader | file | rows | seconds | MB/s |")
        print("|---|---|---:|---:|---:|")
        for label, path, d_feat in files:
            mb = text_size(path) / 1e6
            t_sk, (Xs, ys) = best_time(lambda: load_svmlight_file(str(path), n_features=d_feat),
                                       args.repeats)
            t_us, (X, y) = best_time(lambda: load_svmlight(path, n_features=d_feat),
                                     args.repeats)
            assert (X != Xs).nnz == 0 and np.array_equal(y, ys), "readers disagree"
            for name, t in (("scikit-learn load_svmlight_file", t_sk),
                            ("skylite.io.load_svmlight", t_us)):
                print(f"| {name} | {label} | {X.shape[0]} | {t:.3f} | {mb / t:.0f} |")

        ranges = svmlight_byte_ranges(synth, 4)

        def by_ranges():
            parts = [read_svmlight_part(synth, r) for r in ranges]
            return [assemble(p, n_features=784, zero_based=False) for p in parts]

        t, out = best_time(by_ranges, args.repeats)
        mb = synth.stat().st_size / 1e6
        rows = sum(X.shape[0] for X, _ in out)
        print(f"| skylite.io, 4 byte ranges in turn | synthetic {args.rows}x784 | {rows} "
              f"| {t:.3f} | {mb / t:.0f} |")


if __name__ == "__main__":
    main()
