"""Random Fourier features of wide sparse rows: parameters for the columns in use.

    python benchmarks/bench_wide_rff.py [--threads 2]

A random projection map multiplies each row by a d x s_j matrix W_j per block.  For sparse
rows skylite draws only the rows of W_j of the columns the rows use
(skylite.sketch._base.operator_for_rows; the same features bit for bit).  The rows: the
Reuters training file (7,770 rows, d = 8,315, about 44 stored values a row; 3,299 test
rows) at its own width and spread over d = 2^20 (benchmarks/_data.reuters), the width of
scikit-learn's HashingVectorizer.  Everything is fixed before the runs:

1. `GaussianRFF(n_features=2048, n_blocks=4, sigma=1)` on the first 1,000 training rows in
   float32: block 0 through the map's operator on all d columns (the path every sparse
   row took before) and through the operator restricted to the columns in use, seconds,
   parameter values of the block, and whether the two blocks are bitwise equal.
2. `KernelSVC(method="rff", n_features=2048, random_state=0)`, its defaults otherwise (sigma
   "scale", C = 1), fitted on the 7,770 training rows at each width: fit seconds, the memory
   its plan counted (`memory_estimate_`, caches included), the random frequencies the
   sweep holds (one block's matrix per thread, float64, as the plan counts them) for all d
   columns and for the columns in use, `predict` of one row, and the accuracy on the test
   rows (read once per fit, after it).  Then `KernelSVC()` with every default (Nystroem
   features with k-means landmarks, whose pool of rows stays sparse) at d = 8,315 alone:
   its dense landmarks take s x d values.
"""
import argparse
import time

import numpy as np

from skylite import KernelSVC
from skylite._machine import format_bytes
from skylite.sketch import GaussianRFF
from skylite.sketch._base import operator_for_rows

from _data import HASHED_WIDTH, require, reuters  # noqa: E402


def seconds(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def block_zero(op, X, threads):
    out = np.empty((X.shape[0], int(op.block_offsets[1])), dtype=X.dtype)
    op.fill(X, out, np.array([0], dtype=np.intp), threads)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    require("reuters_lasvm.svm.gz", "reuters_lasvm.t.svm.gz")
    print("| d | columns in use | block 0 of 1,000 rows: all d columns, s | columns in use, s "
          "| parameters: all d | in use | bitwise equal |")
    print("|---|---|---|---|---|---|---|")
    for width in (None, HASHED_WIDTH):
        X = reuters(width)[0][:1000].astype(np.float32)
        fmap = GaussianRFF(n_features=2048, n_blocks=4, sigma=1.0).fit(X)
        X = fmap._check_input(X)
        op, X_used = operator_for_rows(fmap.transform_op_, X)
        full, t_full = seconds(lambda: block_zero(fmap.transform_op_, X, args.threads))
        used, t_used = seconds(lambda: block_zero(op, X_used, args.threads))
        print(f"| {X.shape[1]:,} | {X_used.shape[1]:,} | {t_full:.3f} | {t_used:.4f} | "
              f"{format_bytes(4 * fmap.transform_op_.n_params(0))} | "
              f"{format_bytes(4 * op.n_params(0))} | {np.array_equal(full, used)} |",
              flush=True)
        del full, used
    print()
    print("| model | d | fit, s | memory counted | frequencies: all d | columns in use | "
          "predict 1 row, s | test accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    contenders = [('KernelSVC(method="rff", n_features=2048)', width,
                   dict(method="rff", n_features=2048)) for width in (None, HASHED_WIDTH)]
    contenders.append(("KernelSVC()", None, {}))
    for name, width, params in contenders:
        X, y = reuters(width)
        model, t_fit = seconds(lambda: KernelSVC(n_threads=args.threads, random_state=0,
                                                 **params).fit(X, y))
        _, t_one = seconds(lambda: model.predict(X[:1]))
        held = ["-", "-"]
        if params:
            full = model.feature_map_.transform_op_
            used = operator_for_rows(full, model.feature_map_._check_input(X))[0]
            held = [format_bytes(8 * args.threads * max(op.n_params(j)
                                                        for j in range(op.n_blocks)))
                    for op in (full, used)]
        X_test, y_test = reuters(width, "reuters_lasvm.t.svm.gz")
        print(f"| `{name}` | {X.shape[1]:,} | {t_fit:.2f} | "
              f"{format_bytes(model.memory_estimate_)} | {held[0]} | {held[1]} | "
              f"{t_one:.4f} | {model.score(X_test, y_test):.2%} |", flush=True)


if __name__ == "__main__":
    main()
