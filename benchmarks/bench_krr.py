"""Kernel ridge solvers (skylite.krr): PCG iterations against n, beside plain CG and exact.

    python benchmarks/bench_krr.py [--mnist-rows 5000 10000 20000] [--features 2048]

The Gaussian kernel (sigma fixed a priori per set), one-vs-rest +/-1 targets, the same
alpha on every set and n (--alpha, default 1e-4; lam = n alpha grows with n as in the ERM
scaling), tol = 1e-6 on the relative residual of (K + lam I) A = Y.  Printed per dataset and n: PCG iterations with a random-feature
preconditioner of s features (`pcg_dual_coef`), plain CG iterations (capped at --cg-max), the
seconds of each, and, where n <= --exact-max, the relative difference to the exact solution
(`exact_dual_coef`).  The claim under test (Avron, Clarkson & Woodruff 2017): with s fixed, the
PCG iteration count does not grow with n.  Only training rows are used.
"""
import argparse
import time

import numpy as np

from skylite.datasets import load_mnist, load_pendigits
from skylite.kernels import Gaussian
from skylite.krr import exact_dual_coef, pcg_dual_coef

from _data import DATA, require  # noqa: E402


def training_rows(name, rows):
    """The first `rows` training rows and labels of pendigits (shipped), MNIST (load_mnist) or
    letter (letter.npz in skylite's data folder)."""
    if name == "pendigits":
        return load_pendigits()[:2]
    if name == "mnist":
        return load_mnist(rows)[:2]
    require(f"{name}.npz")
    with np.load(DATA / f"{name}.npz") as z:
        return z["X_train"][:rows], z["y_train"][:rows]
SIGMAS = {"pendigits": 60.0, "letter": 4.0, "mnist": 6.0}   # fixed a priori


def one_vs_rest(y):
    classes = np.unique(y)
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mnist-rows", type=int, nargs="+", default=[5000, 10000, 20000])
    parser.add_argument("--features", type=int, default=2048)
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--cg-max", type=int, default=300)
    parser.add_argument("--exact-max", type=int, default=20000)
    parser.add_argument("--alpha", type=float, default=1e-4,
                        help="smaller alpha, harder system (pendigits 4000 rows, s = 2048: 18 "
                             "PCG iterations at 1e-4, 46 at 1e-5, 130 at 1e-6)")
    args = parser.parse_args()
    runs = [("pendigits", None), ("letter", None)] + [("mnist", n) for n in args.mnist_rows]
    print(f"Gaussian kernel, alpha = {args.alpha:g}, tol = {args.tol:g}, "
          f"preconditioner s = {args.features}")
    print(f"{'data':<10} {'n':>6} {'PCG iters':>9} {'PCG s':>7} {'CG iters':>9} {'CG s':>7} "
          f"{'|A-A_exact|/|A_exact|':>22}")
    for name, rows in runs:
        X, y = training_rows(name, rows)
        X = X.astype(np.float64)
        Y = one_vs_rest(y)
        n = len(X)
        kernel, alpha = Gaussian(SIGMAS[name]), args.alpha
        fmap = kernel.feature_map(args.features, n_blocks=max(1, args.features // 1024),
                                  random_state=0)
        tick = time.perf_counter()
        pcg = pcg_dual_coef(kernel, X, Y, alpha, fmap, tol=args.tol)
        pcg_seconds = time.perf_counter() - tick
        tick = time.perf_counter()
        cg = pcg_dual_coef(kernel, X, Y, alpha, fmap, tol=args.tol, preconditioner=False,
                           max_iter=args.cg_max)
        cg_seconds = time.perf_counter() - tick
        cg_iters = f"{cg.n_iter}" if cg.converged else f">{cg.n_iter}"
        error = "-"
        if n <= args.exact_max:
            A = exact_dual_coef(kernel, X, Y, alpha)
            error = f"{np.linalg.norm(pcg.dual_coef - A) / np.linalg.norm(A):.1e}"
        print(f"{name:<10} {n:6d} {pcg.n_iter:9d} {pcg_seconds:7.1f} {cg_iters:>9} "
              f"{cg_seconds:7.1f} {error:>22}", flush=True)


if __name__ == "__main__":
    main()
