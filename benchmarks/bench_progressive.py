"""Progressive warm starts: fit a prefix of the rows, then all of them from that model.

    SKYLITE_DATA=folder python benchmarks/bench_progressive.py [--rows 50000]
        [--prefixes 0.1 0.25 0.5] [--threads 2]

Whether a model fitted on a prefix of the training rows is a start that saves the full
fit's iterations (progressive sampling).  Protocol, fixed before the runs (the Nystroem
protocol of docs/scale.md on real digits): MNIST's first --rows training rows (pixels in
[0, 1], float32) are fitted; training rows 50,000-59,999 are the explicit validation rows
of early stopping (`fit(X, y, X_val=, y_val=)`, patience 10); `KernelSVC(sigma=6,
method="nystroem", n_features=4096, n_blocks=8, precision="float32", C = 10 as alpha =
1/(n C), memory_budget=16 GiB, random_state=0)`.

One Nystroem map is fitted on the --rows rows first, outside every timing, and every
contender uses it, so that a prefix model's weights are weights of the full fit's features
(a progressive fit inside `fit` would fit the map once, too).  Contenders, one after the
other in this process:

- cold: the fit on all the rows from zero;
- prefix p: a fit on the first p x rows at the same C (alpha = 1/(p n C)), then the fit on
  all the rows started at its model (`fit(..., warm_start=prefix.coef_)`, which puts every
  ADMM variable where a fixed point at that model would); its time is both fits'.

Printed per contender: seconds (prefix fit + full fit), ADMM iterations of each, the
kept iteration, the objective of the full fit's last iterate, the accuracy on the
validation rows and on the 10,000 MNIST test rows (reported once, never used to choose).
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skylite import KernelSVC

sys.path.insert(0, str(Path(__file__).parent))
from _data import mnist_file  # noqa: E402

SIGMA, C, FEATURES, BLOCKS, BUDGET = 6.0, 10.0, 4096, 8, 16 * 2**30
VALIDATION = slice(50000, 60000)


class FixedMapSVC(KernelSVC):
    """KernelSVC whose fits all use one fitted map (`fitted_map`, a class attribute set by
    the benchmark) instead of fitting one on their own rows."""
    fitted_map = None

    def _make_feature_map(self, X, dist):
        self.method_ = "nystroem"
        return self.fitted_map, self._kernel_object(X, dist)


def estimator(n_rows, threads):
    return FixedMapSVC(sigma=SIGMA, method="nystroem", n_features=FEATURES, n_blocks=BLOCKS,
                       precision="float32", alpha=1.0 / (n_rows * C), n_iter_no_change=10,
                       memory_budget=BUDGET, n_threads=threads, random_state=0)


def timed_fit(model, X, y, X_val, y_val, warm_start=None):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y, X_val=X_val, y_val=y_val, warm_start=warm_start)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--prefixes", type=float, nargs="+", default=[0.1, 0.25, 0.5])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if not 0 < args.rows <= VALIDATION.start:
        raise SystemExit(f"--rows must be in 1..{VALIDATION.start} (rows "
                         f"{VALIDATION.start}-{VALIDATION.stop - 1} validate)")
    with np.load(mnist_file()) as data:
        X_all, y_all = data["X_train"].astype(np.float32), data["y_train"]
        X_test, y_test = data["X_test"].astype(np.float32), data["y_test"]
    X, y = X_all[:args.rows], y_all[:args.rows]
    X_val, y_val = X_all[VALIDATION], y_all[VALIDATION]

    start = time.perf_counter()
    probe = KernelSVC(sigma=SIGMA, method="nystroem", n_features=FEATURES, n_blocks=BLOCKS,
                      precision="float32", max_iter=1, n_threads=args.threads,
                      random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe.fit(X, y)
    FixedMapSVC.fitted_map = probe.feature_map_
    print(f"MNIST {args.rows:,} rows, Nystroem s={FEATURES} in {BLOCKS} blocks, sigma={SIGMA:g}, "
          f"C={C:g}, float32, {args.threads} threads; the map fitted once "
          f"({time.perf_counter() - start:.1f} s with one iteration, not counted)", flush=True)

    rows = []
    cold = estimator(args.rows, args.threads)
    seconds = timed_fit(cold, X, y, X_val, y_val)
    rows.append(("cold", 0.0, seconds, "", cold))
    print(f"  cold: {seconds:.1f} s, {cold.n_iter_} iterations", flush=True)
    for p in args.prefixes:
        m = int(round(p * args.rows))
        prefix = estimator(m, args.threads)
        first = timed_fit(prefix, X[:m], y[:m], X_val, y_val)
        full = estimator(args.rows, args.threads)
        second = timed_fit(full, X, y, X_val, y_val, warm_start=prefix.coef_)
        rows.append((f"prefix {p:g} ({m:,} rows)", first, second, prefix.n_iter_, full))
        print(f"  prefix {p:g}: {first:.1f} s + {second:.1f} s, {prefix.n_iter_} + "
              f"{full.n_iter_} iterations", flush=True)

    print()
    print("| contender | seconds: prefix + full = total | / cold | iterations: prefix, full "
          "| kept | objective | validation accuracy | test accuracy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    cold_total = rows[0][2]
    for name, first, second, prefix_iterations, model in rows:
        total = first + second
        split = f"{first:.1f} + {second:.1f} = {total:.1f}" if first else f"{total:.1f}"
        iterations = (f"{prefix_iterations}, {model.n_iter_}" if prefix_iterations != ""
                      else f"{model.n_iter_}")
        print(f"| {name} | {split} | {total / cold_total:.2f} | {iterations} | "
              f"{model.best_iteration_} | {model.history_[-1]['objective']:.5f} | "
              f"{100 * model.score(X_val, y_val):.2f}% | "
              f"{100 * model.score(X_test, y_test):.2f}% |")


if __name__ == "__main__":
    main()
