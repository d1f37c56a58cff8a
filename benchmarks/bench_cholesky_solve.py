"""The RKHS norm's prox solve, (L L^T)^-1 V with a Cholesky factor L (s x s) and m columns:
skylite's blocked solve (skylite/prox/_cholesky_solve.pyx) against LAPACK's potrs, both on
one thread, as the prox runs them.

    python benchmarks/bench_cholesky_solve.py [--sizes 1024 2048 4096] [--m 10] [--repeat 20]

L is the factor of a random positive definite matrix; V is random.  Printed per size and
precision: the median milliseconds per solve over --repeat solves of each, their ratio, and
the largest difference between the two results relative to the largest entry.  The solves
alternate, so that both meet the same cache state (L of 4096 x 4096 in float32 is 64 MB, more
than the caches).
"""
import argparse
import time

import numpy as np
from scipy.linalg.lapack import get_lapack_funcs
from threadpoolctl import threadpool_limits

from skylite.prox._cholesky_solve import cholesky_solve


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"m = {args.m} columns, median of {args.repeat} solves, one thread")
    print("| s | precision | potrs (ms) | blocked (ms) | blocked / potrs | difference |")
    print("|---:|---|---:|---:|---:|---:|")
    for s in args.sizes:
        M = rng.standard_normal((s, s))
        A64 = M @ M.T / s + np.eye(s)
        for dtype in (np.float32, np.float64):
            A = A64.astype(dtype)
            potrf, potrs = get_lapack_funcs(("potrf", "potrs"), (A,))
            V = rng.standard_normal((s, args.m)).astype(dtype)
            with threadpool_limits(1):
                L, info = potrf(np.array(A, order="F"), lower=1, clean=0)
                times = {"potrs": [], "blocked": []}
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    reference, info = potrs(L, V, lower=1)
                    times["potrs"].append(time.perf_counter() - start)
                    start = time.perf_counter()
                    X = cholesky_solve(L, V)
                    times["blocked"].append(time.perf_counter() - start)
            theirs, ours = (1e3 * np.median(times[k]) for k in ("potrs", "blocked"))
            difference = np.abs(X - reference).max() / np.abs(reference).max()
            print(f"| {s} | {np.dtype(dtype).name} | {theirs:.2f} | {ours:.2f} | "
                  f"{ours / theirs:.2f} | {difference:.1e} |", flush=True)


if __name__ == "__main__":
    main()
