"""precision="auto" on float32 rows (float32 features) against the same rows in float64.

    SKYLITE_DATA=folder python benchmarks/bench_precision.py [--rows 20000] [--repeats 2]

Protocol, fixed before the runs: MNIST's first --rows training rows (pixels in [0, 1], float32
as `skylite.datasets.load_mnist` returns them) and the same rows converted to float64; two
workloads, each run on both, alternating, --repeats times:

- "default fit": `KernelSVC()` with every default (Nystroem features, early stopping), scored
  once on the 10,000 MNIST test rows (in the rows' dtype);
- "fold path": the first fold of `StratifiedKFold(3, shuffle=True, random_state=0)`, the path
  C = 1, 10, 100, 1000 of `KernelSVC(n_features=4096, sigma=9, random_state=0)` on one setup
  (`fit_path`, as `KernelGridSearchCV` runs it, with whitened features and early stopping),
  each C scored on the fold's held-out rows (training rows, not the test set).

Printed: seconds, iterations and scores per run; the two precisions should give the same
scores, and the float32 run less time.
"""
import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold

from skylite import KernelSVC
from skylite.admm import ConvergenceWarning
from skylite.datasets import load_mnist


def default_fit(X, y, Xt, yt):
    start = time.perf_counter()
    model = KernelSVC().fit(X, y)
    seconds = time.perf_counter() - start
    return model.precision_, seconds, str(model.n_iter_), f"{100 * model.score(Xt, yt):.2f}%"


def fold_path(X, y, Xt, yt):
    fit, held = next(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    start = time.perf_counter()
    models = KernelSVC(n_features=4096, sigma=9.0, random_state=0).fit_path(
        X[fit], y[fit], [1.0, 10.0, 100.0, 1000.0])
    seconds = time.perf_counter() - start
    scores = " / ".join(f"{100 * m.score(X[held], y[held]):.2f}%" for m in models)
    return (models[0].precision_, seconds, " / ".join(str(m.n_iter_) for m in models),
            scores)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    X, y, Xt, yt = load_mnist(args.rows)
    X, y = X[:args.rows], y[:args.rows]
    print(f"MNIST first {args.rows:,} rows, 2 threads\n")
    print("| workload | rows | precision_ | seconds | iterations | accuracy |")
    print("|---|---|---|---:|---|---|")
    for name, run in (("default fit", default_fit), ("fold path", fold_path)):
        for _ in range(args.repeats):
            for dtype in (np.float32, np.float64):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    precision, seconds, iterations, scores = run(
                        X.astype(dtype), y, Xt.astype(dtype), yt)
                print(f"| {name} | {np.dtype(dtype).name} | {precision} | {seconds:.1f} | "
                      f"{iterations} | {scores} |", flush=True)


if __name__ == "__main__":
    main()
