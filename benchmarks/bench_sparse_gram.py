"""Exact kernels on sparse rows: the Gram matrix of CSR rows, by width.

    python benchmarks/bench_sparse_gram.py [--fit-rows 7000]

The rows: the Reuters training file (reuters_lasvm.svm.gz in skylite's data folder: 7,770
rows, d = 8,315, about 44 stored values a row), and the same rows with their columns spread
over d = 2^20 (column j -> j * 2654435761 mod 2^20), the width of scikit-learn's
HashingVectorizer.  Printed:

1. `Gaussian(1).gram(X, Y)` for a block of rows, both sparse (skylite's path: no row is
   densified, the work is the stored entries the rows share) against the evaluator's path
   for dense rows Y, which densifies each block of Y rows to d columns (the path sparse Y
   took before, kept here as a reference); the largest difference between the two.
2. `KernelRidge(solver="exact", sigma=1, alpha=1e-4)` on the first --fit-rows rows (+1/-1
   targets of the file), fit and predict seconds, and the accuracy of sign(f) on the next
   770 training rows (no test rows are read).
"""
import argparse
import time

import numpy as np

from skylite import KernelRidge
from skylite.kernels import Gaussian

from _data import HASHED_WIDTH, require, reuters  # noqa: E402


def densified_gram(kernel, X, Y):
    """K(X, Y) through `Kernel.gram`'s path for dense rows Y: each block of Y rows (as many
    as its 32 MB workspace holds at this width) densified to d columns, X's rows kept CSR."""
    rows_y = kernel._block_rows(X.shape[1], X.shape[0], Y.shape[0])[1]
    return np.hstack([kernel.gram(X, Y[b:b + rows_y].toarray())
                      for b in range(0, Y.shape[0], rows_y)])


def seconds(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit-rows", type=int, default=7000)
    args = parser.parse_args()
    require("reuters_lasvm.svm.gz")
    kernel = Gaussian(1.0)
    print("| rows | d | K block | both sparse, s | Y densified, s | ratio | max difference |")
    print("|---|---|---|---|---|---|---|")
    for width, (n_x, n_y) in ((None, (1000, 7770)), (HASHED_WIDTH, (100, 1000))):
        X, _ = reuters(width)
        K_sparse, t_sparse = seconds(lambda: kernel.gram(X[:n_x], X[:n_y]))
        K_dense, t_dense = seconds(lambda: densified_gram(kernel, X[:n_x], X[:n_y]))
        print(f"| Reuters | {X.shape[1]:,} | {n_x} x {n_y} | {t_sparse:.3f} | {t_dense:.2f} | "
              f"{t_dense / t_sparse:.0f}x | {np.abs(K_sparse - K_dense).max():.1e} |", flush=True)
    print()
    print("| rows | d | fitted rows | fit s | predict s (770 rows) | accuracy, next 770 rows |")
    print("|---|---|---|---|---|---|")
    n = args.fit_rows
    for width in (None, HASHED_WIDTH):
        X, y = reuters(width)
        model, t_fit = seconds(lambda: KernelRidge(solver="exact", sigma=1.0,
                                                   alpha=1e-4).fit(X[:n], y[:n]))
        f, t_predict = seconds(lambda: model.predict(X[n:n + 770]))
        accuracy = np.mean(np.sign(f) == y[n:n + 770])
        print(f"| Reuters | {X.shape[1]:,} | {n:,} | {t_fit:.2f} | {t_predict:.3f} | "
              f"{accuracy:.2%} |", flush=True)


if __name__ == "__main__":
    main()
