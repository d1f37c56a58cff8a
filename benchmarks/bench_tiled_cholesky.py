"""The tiled Cholesky factorization and triangular inverse (skylite/prox/_tiled_cholesky.pyx)
against LAPACK's potrf and trtri on one thread, as skylite ran them before.

    python benchmarks/bench_tiled_cholesky.py [--sizes 2048 4096 8192] [--repeat 3]
                                              [--dtypes float64 float32] [--busy]

A is a random symmetric positive definite s x s matrix (M M^T / s + 0.1 I), L its factor.
Printed per size and precision: the median seconds of --repeat runs of potrf (one thread),
the tiled factorization on 1 and 2 threads, trtri (one thread) and the tiled inverse on 1
and 2 threads, and the largest difference between the tiled and LAPACK results relative to
their largest entry.  With --busy every run has a competing process (`python -c "while True:
pass"`, started and stopped by this script) on the machine: two threads must not be slower
than one.  The tiled results are the same bits on 1 and 2 threads (checked, printed).
"""
import argparse
import time

import numpy as np
from scipy.linalg.lapack import get_lapack_funcs
from threadpoolctl import threadpool_limits

from skylite.prox._tiled_cholesky import inverse_transpose, tiled_cholesky

from _busy import competing_process


def median_seconds(function, repeat, prepare=lambda: ()):
    """The median seconds of `repeat` calls function(*prepare()) (prepare not timed), and
    the last result."""
    times = []
    for _ in range(repeat):
        arguments = prepare()
        start = time.perf_counter()
        result = function(*arguments)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096, 8192])
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", action="store_true")
    args = parser.parse_args()
    with competing_process(args.busy):
        run(args)


def run(args):
    rng = np.random.default_rng(0)
    print(f"median seconds of {args.repeat} runs"
          + (", beside a competing busy process" if args.busy else ", quiet machine"))
    print("| s | precision | potrf 1 thread | tiled 1 | tiled 2 | trtri 1 thread | tiled "
          "inverse 1 | tiled inverse 2 | difference | same bits 1/2 |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for s in args.sizes:
        M = rng.standard_normal((s, s + 10))
        A64 = M @ M.T / s + 0.1 * np.eye(s)
        del M
        for name in args.dtypes:
            A = np.asfortranarray(A64.astype(name))
            potrf, trtri = get_lapack_funcs(("potrf", "trtri"), (A,))
            with threadpool_limits(1):
                t_potrf, (L_ref, _) = median_seconds(
                    lambda B: potrf(B, lower=1, clean=1, overwrite_a=1), args.repeat,
                    lambda: (A.copy(order="F"),))
                t_trtri, (inverse_ref, _) = median_seconds(
                    lambda: trtri(L_ref, lower=1), args.repeat)
            tiled, inverses, seconds = {}, {}, {}
            for threads in (1, 2):
                seconds[threads], factor = median_seconds(
                    lambda B: tiled_cholesky(B, threads), args.repeat,
                    lambda: (A.copy(order="F"),))
                tiled[threads] = np.tril(factor)
                seconds[f"inverse {threads}"], inverses[threads] = median_seconds(
                    lambda: inverse_transpose(tiled[1], threads), args.repeat)
            same = (np.array_equal(tiled[1], tiled[2])
                    and np.array_equal(inverses[1], inverses[2]))
            difference = max(np.abs(tiled[1] - L_ref).max() / np.abs(L_ref).max(),
                             np.abs(inverses[1].T - inverse_ref).max()
                             / np.abs(inverse_ref).max())
            print(f"| {s} | {name} | {t_potrf:.3f} | {seconds[1]:.3f} | {seconds[2]:.3f} | "
                  f"{t_trtri:.3f} | {seconds['inverse 1']:.3f} | {seconds['inverse 2']:.3f} | "
                  f"{difference:.1e} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
