"""Tuning a least-squares classifier solved in closed form: a path over alpha on one set of
normal equations, and KernelGridSearchCV against GridSearchCV.

    SKYLITE_DATA=folder python benchmarks/bench_ridge_search.py [--rows 20000]
    SKYLITE_DATA=folder python benchmarks/bench_ridge_search.py --solver exact --rows 6000

The protocol, fixed before the runs: MNIST's first `--rows` training rows (pixels in [0, 1],
float32); `KernelMachine(loss="squared", classification=True, n_features=4096,
random_state=0)`, libSkylark's regularized least-squares classifier, which the default
solver "auto" solves in closed form; alpha in {1e-3, 1e-4, 1e-5, 1e-6, 1e-7}.  Each part runs
in a fresh process:

- "path": `fit_path` over the five alphas at sigma 6 (the normal equations Z^T Z, Z^T Y made
  once), against five separate fits;
- "ours" and "grid": `KernelGridSearchCV` and `GridSearchCV` over sigma in {4, 6, 9} x the
  five alphas, `StratifiedKFold(3, shuffle=True, random_state=0)`, refit; the 10,000 test
  rows scored once, after the search.

`--solver exact` solves the exact kernel problem instead (`solver="exact"`, the n x n kernel
matrix factored for each alpha; n_features is then unused): the path makes K once and
factors it for each alpha.
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _child import run_child  # noqa: E402
from _data import mnist_file  # noqa: E402

ALPHAS = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
SIGMAS = [4, 6, 9]

CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from skylite import KernelMachine
from skylite.model_selection import KernelGridSearchCV
name, rows, alphas, sigmas, solver = (sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]),
                                      json.loads(sys.argv[4]), sys.argv[6])
with np.load(sys.argv[5]) as f:
    X, y = f["X_train"][:rows].astype(np.float32), f["y_train"][:rows]
    Xt, yt = f["X_test"].astype(np.float32), f["y_test"]
est = KernelMachine(loss="squared", classification=True, n_features=4096, random_state=0,
                    solver=solver)
if name == "path":
    est.set_params(sigma=6)
    start = time.perf_counter()
    models = est.fit_path(X, y, alphas)
    path = time.perf_counter() - start
    start = time.perf_counter()
    cold = [clone(est).set_params(alpha=a).fit(X, y) for a in alphas]
    cold_seconds = time.perf_counter() - start
    same = all(np.array_equal(m.coef_ if m.coef_ is not None else m.dual_coef_,
                              c.coef_ if c.coef_ is not None else c.dual_coef_)
               for m, c in zip(models, cold))
    print("RESULT", json.dumps({"path": path, "cold": cold_seconds, "same": same,
                                "solver": models[0].solver_,
                                "test": [float(m.score(Xt, yt)) for m in models]}))
else:
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"sigma": sigmas, "alpha": alphas}
    search = (KernelGridSearchCV if name == "ours" else GridSearchCV)(est, grid, cv=cv)
    start = time.perf_counter()
    search.fit(X, y)
    seconds = time.perf_counter() - start
    print("RESULT", json.dumps({"seconds": seconds, "best": search.best_params_,
                                "cv": float(search.best_score_),
                                "test": float(search.score(Xt, yt))}))
"""


def main(args):
    mnist = mnist_file()
    print(f"MNIST first {args.rows:,} rows, KernelMachine(loss='squared', classification=True, "
          f"n_features=4096, solver={args.solver!r}); {os.cpu_count()} cores")
    r = run_child(CHILD, "path", args.rows, json.dumps(ALPHAS), json.dumps(SIGMAS), mnist,
                  args.solver)
    print(f"sigma 6, alpha {ALPHAS}: fit_path {r['path']:.1f} s, separate fits "
          f"{r['cold']:.1f} s ({r['path'] / r['cold']:.2f}x), solver {r['solver']}, models "
          f"{'bitwise equal' if r['same'] else 'DIFFERENT'}; test accuracy per alpha "
          + ", ".join(f"{100 * t:.2f}%" for t in r["test"]), flush=True)
    print(f"{'search':<8} {'seconds':>9} {'best sigma, alpha':>18} {'CV acc':>8} {'test acc':>9}")
    results = {}
    for name in ("ours", "grid"):
        s = results[name] = run_child(CHILD, name, args.rows, json.dumps(ALPHAS),
                                      json.dumps(SIGMAS), mnist, args.solver)
        best = f"{s['best']['sigma']:g}, {s['best']['alpha']:g}"
        print(f"{name:<8} {s['seconds']:>9.1f} {best:>18} {100 * s['cv']:>7.2f}% "
              f"{100 * s['test']:>8.2f}%", flush=True)
    print(f"ours / grid: time {results['ours']['seconds'] / results['grid']['seconds']:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--solver", choices=("auto", "exact"), default="auto",
                        help="auto: the closed form on random features; exact: the exact "
                             "kernel matrix")
    main(parser.parse_args())
