"""Iterations to tol along the regularization path: KernelSVC at C = 0.3 ... 100.

    SKYLITE_DATA=folder python benchmarks/bench_regularization_path.py
        [--C 0.3,1,10,30,100] [--rows 10000] [--settings before,after] [--reference-tol 1e-5]
        [--method rff]

MNIST ($SKYLITE_DATA/mnist.npz, benchmarks/_data.py): the first --rows training rows
(pixels in [0, 1]), `KernelSVC(method="rff", alpha=1/(n C), n_features=2048,
early_stopping=False, tol=1e-3, precision="float32", random_state=0)` with the default sigma,
run to tol (`--method auto`: KernelSVC's default Nystroem features instead).  Printed per C
and setting: ADMM iterations, fit seconds, F(coef_) on the training rows, and the accuracy
on the 10,000 MNIST test rows (touched only to report, never to choose).

Settings:
  after   the engine as it is: `skylite.admm.iteration.preconditioning` (c^2 = sqrt(C) for
          hinge loss at C > 1, the weight copies measured in the metric of c0 in the
          residuals);
  before  the preconditioning of every loss at c0 = 1/sqrt(alpha n) (c^2 = C) and the
          residuals in that metric: the engine's `preconditioning` replaced, for this
          process, by one returning (c0, 1).

--reference-tol T adds, per C, a run of the "after" engine at tol = T (max_iter 3000) and
prints each run's F(coef_) / F_ref - 1: whether stopping at tol means the same distance from
the optimum at every C.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import skylite
from skylite.admm import blockadmm

sys.path.insert(0, str(Path(__file__).parent))
from _data import mnist_file  # noqa: E402


def before_preconditioning(alpha, n, loss):
    """The preconditioning before the change: c0 = 1/sqrt(alpha n) for every loss and C."""
    return (1.0 / np.sqrt(alpha * n), 1.0) if alpha > 0 else (1.0, 1.0)


SETTINGS = {"after": blockadmm.preconditioning, "before": before_preconditioning}


def fit(X, y, C, setting, tol, method, max_iter=500):
    """A fitted KernelSVC at C under `setting`, and its fit seconds."""
    blockadmm.preconditioning = SETTINGS[setting]
    est = skylite.KernelSVC(method=method, alpha=1.0 / (len(X) * C), n_features=2048,
                            early_stopping=False, tol=tol, max_iter=max_iter,
                            precision="float32", random_state=0)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--C", default="0.3,1,10,30,100")
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--settings", default="before,after")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--reference-tol", type=float, default=None)
    parser.add_argument("--method", default="rff", help="the feature map (rff, auto, ...)")
    args = parser.parse_args()
    z = np.load(mnist_file())
    X, y = z["X_train"][:args.rows], z["y_train"][:args.rows]
    settings = args.settings.split(",")
    for name in settings:
        if name not in SETTINGS:
            raise SystemExit(f"--settings: unknown {name!r}; choose from {sorted(SETTINGS)}")
    print(f"MNIST {len(X)} rows, KernelSVC method={args.method} s=2048 float32, default sigma, "
          f"tol={args.tol:g}")
    print(f"{'C':>6} {'setting':<7} {'iters':>6} {'seconds':>8} {'F(coef_)':>11} "
          f"{'F/F_ref-1':>10} {'test acc':>9}")
    for C in map(float, args.C.split(",")):
        runs = [(name, *fit(X, y, C, name, args.tol, args.method)) for name in settings]
        ref = None
        if args.reference_tol is not None:
            est, _ = fit(X, y, C, "after", args.reference_tol, args.method, max_iter=3000)
            ref = est.objective(X, y)
        for name, est, seconds in runs:
            F = est.objective(X, y)
            gap = f"{F / ref - 1:10.2e}" if ref is not None else f"{'':>10}"
            accuracy = 100 * est.score(z["X_test"], z["y_test"])
            print(f"{C:6g} {name:<7} {est.n_iter_:6d} {seconds:8.1f} {F:11.6f} {gap} "
                  f"{accuracy:8.2f}%", flush=True)
        if ref is not None:
            print(f"{C:6g} {'ref':<7} tol={args.reference_tol:g}: F_ref = {ref:.6f}")


if __name__ == "__main__":
    main()
