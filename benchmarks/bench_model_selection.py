"""Tuning sigma and C: skylite's KernelGridSearchCV against scikit-learn's searches.

    SKYLITE_DATA=folder python benchmarks/bench_model_selection.py [--rows 20000]
        [--contenders ours grid svc-halving svc-grid] [--features 4096]
    python benchmarks/bench_model_selection.py --part path [--rows 10000] [--solver dcd]

The protocol, fixed before the runs: MNIST's first `--rows` training rows (pixels in
[0, 1], float32, as `skylite.datasets.load_mnist` returns them); the grid sigma in {4, 6, 9} x C in {1, 10, 100, 1000} (SVC: gamma = 1/(2 sigma^2));
`StratifiedKFold(3, shuffle=True, random_state=0)`; refit on all the rows; the 10,000 test
rows scored once, after the search.  Contenders, each in a fresh process, one after the
other on the same machine:

- "ours": `KernelGridSearchCV(KernelSVC(n_features=4096, random_state=0, method=None))`
  (random Fourier features; racing on);
- "grid": `GridSearchCV` over the same estimator;
- "ours-auto" and "grid-auto" (not run by default): "ours" and "grid" with `method="auto"`
  (Nystroem features with k-means landmarks for this Gaussian kernel, KernelSVC's default);
- "ours-dcd" and "grid-dcd" (not run by default): "ours-auto" and "grid-auto" with
  `solver="dcd"` (dual coordinate descent; early stopping "auto" is then off);
- "ours-bf16" and "grid-bf16" (not run by default): "ours-auto" and "grid-auto" with
  `cache_precision="bfloat16"` (the cached feature blocks, whitened or not, in 16 bits);
- "svc-halving": `HalvingGridSearchCV(SVC())` (its defaults: factor 3, rows as the
  resource);
- "svc-grid": `GridSearchCV(SVC())`;
- "svc-fit": one exact fit, `SVC(gamma=1/72, C=10)` (sigma 6, C 10: `FIT_POINT`), the yardstick
  for a search at 60,000 rows (no CV score: its "CV acc" column reads nan).

Every skylite estimator uses the estimator's defaults otherwise (the default feature map,
precision "auto", so float32 features for these float32 rows, early stopping "auto": on above 10,000 training rows, on a split of each fold's training
rows).  The table prints each contender's search time (search + refit), the chosen point,
its test accuracy, and the time ratios.

`--part path` measures the regularization path alone: on the first `--rows` rows,
sigma = 6, C = 1, 10, 100, 1000 solved by `fit_path` (one setup, each solve continuing from
the previous one's state) and by cold fits, early stopping off, tol = 1e-3: iterations and
seconds per C, the objective each stopped at, and the iterations the cold fit needed to
reach the objective the path's solve stopped at (the cold fits run with max_iter 3000;
solver="dcd" records the objective every tenth epoch, so its count is rounded up to the
next record).
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _child import run_child  # noqa: E402
from _data import mnist_file  # noqa: E402

MNIST = mnist_file()
GRID = {"sigma": [4, 6, 9], "C": [1, 10, 100, 1000]}
#: the one exact fit the searches are measured against at 60,000 rows ("svc-fit")
FIT_POINT = {"sigma": 6, "C": 10}

CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.model_selection import StratifiedKFold, GridSearchCV
from sklearn.experimental import enable_halving_search_cv  # noqa
from sklearn.model_selection import HalvingGridSearchCV
from sklearn.svm import SVC
from skylite import KernelSVC
from skylite.model_selection import KernelGridSearchCV
name, rows, features, grid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
with np.load(sys.argv[5]) as f:
    X, y = f["X_train"][:rows].astype(np.float32), f["y_train"][:rows]
    Xt, yt = f["X_test"].astype(np.float32), f["y_test"]
cv = StratifiedKFold(3, shuffle=True, random_state=0)
if name == "svc-fit":
    point = json.loads(sys.argv[6])
    search = SVC(gamma=1.0 / (2 * point["sigma"] ** 2), C=point["C"])
elif name.startswith("svc"):
    grid = {"gamma": [1.0 / (2 * s * s) for s in grid["sigma"]], "C": grid["C"]}
    search = (GridSearchCV if name == "svc-grid" else HalvingGridSearchCV)(SVC(), grid, cv=cv)
else:
    method = "auto" if name.endswith(("-auto", "-dcd", "-bf16")) else None
    solver = "dcd" if name.endswith("-dcd") else "auto"
    cache = "bfloat16" if name.endswith("-bf16") else "auto"
    est = KernelSVC(n_features=features, random_state=0, method=method, solver=solver,
                    cache_precision=cache)
    search = (KernelGridSearchCV if name.startswith("ours") else GridSearchCV)(est, grid,
                                                                              cv=cv)
start = time.perf_counter()
search.fit(X, y)
seconds = time.perf_counter() - start
if name == "svc-fit":
    best, cv_score = {"gamma": search.gamma, "C": search.C}, float("nan")
else:
    best, cv_score = dict(search.best_params_), float(search.best_score_)
if "gamma" in best:
    best["sigma"] = round(float(np.sqrt(1.0 / (2 * best.pop("gamma")))), 3)
print("RESULT", json.dumps({"seconds": seconds, "best": best,
                            "cv": cv_score,
                            "test": float(search.score(Xt, yt))}))
"""

PATH_CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.base import clone
from skylite import KernelSVC
rows, features, method, solver = int(sys.argv[1]), int(sys.argv[2]), sys.argv[4], sys.argv[5]
with np.load(sys.argv[3]) as f:
    X, y = f["X_train"][:rows].astype(np.float32), f["y_train"][:rows]
Cs = [1, 10, 100, 1000]
est = KernelSVC(method=method, sigma=6, n_features=features, random_state=0, early_stopping=False,
                max_iter=3000, solver=solver)
out = {"path": [], "cold": []}
clock = [time.perf_counter()]
def on_model(m):
    out["path"].append([m.C, m.n_iter_, time.perf_counter() - clock[0],
                        float(m.history_[-1]["objective"])])
    clock[0] = time.perf_counter()
est.fit_path(X, y, Cs, on_model=on_model)
for C in Cs:
    start = time.perf_counter()
    m = clone(est).set_params(C=C).fit(X, y)
    out["cold"].append([C, m.n_iter_, time.perf_counter() - start,
                        float(m.history_[-1]["objective"]),
                        [float(r.get("objective", "nan")) for r in m.history_]])
print("RESULT", json.dumps(out))
"""


def searches(args):
    print(f"MNIST first {args.rows:,} rows, grid sigma {GRID['sigma']} x C {GRID['C']}, "
          f"3-fold stratified CV (shuffled, seed 0), refit, 10,000 test rows; "
          f"{os.cpu_count()} cores")
    print(f"{'contender':<14} {'seconds':>9} {'best sigma, C':>15} {'CV acc':>8} "
          f"{'test acc':>9}", flush=True)
    results = {}
    for name in args.contenders:
        r = results[name] = run_child(CHILD, name, args.rows, args.features,
                                      json.dumps(GRID), MNIST, json.dumps(FIT_POINT))
        best = f"{r['best']['sigma']:g}, {r['best']['C']:g}"
        print(f"{name:<14} {r['seconds']:>9.1f} {best:>15} {100 * r['cv']:>7.2f}% "
              f"{100 * r['test']:>8.2f}%", flush=True)
    for mine, same in (("ours", "grid"), ("ours-auto", "grid-auto"), ("ours-dcd", "grid-dcd"),
                       ("ours-bf16", "grid-bf16")):
        for other in (same, "ours-auto", "svc-halving", "svc-grid", "svc-fit"):
            if other == mine:
                continue
            if mine in results and other in results:
                ratio = results[mine]["seconds"] / results[other]["seconds"]
                gain = 100 * (results[mine]["test"] - results[other]["test"])
                print(f"{mine} / {other}: time {ratio:.3f}, test accuracy {gain:+.2f} pt")


def path(args):
    r = run_child(PATH_CHILD, args.rows, args.features, MNIST, args.method, args.solver)
    print(f"MNIST first {args.rows:,} rows, KernelSVC(sigma=6, n_features={args.features}, "
          f"method={args.method!r}, solver={args.solver!r}), "
          f"early stopping off, tol 1e-3")
    print(f"{'C':>6} {'path iters':>10} {'cold iters':>10} {'ratio':>6} {'path s':>7} "
          f"{'cold s':>7} {'F path / F cold - 1':>20} {'cold iters to F path':>21} "
          f"{'ratio':>6}")
    for (C, pi, ps, po), (_, ci, cs, co, history) in zip(r["path"], r["cold"]):
        # the iterations a cold fit needs to reach the objective the path's solve stopped at
        reach = next((i + 1 for i, F in enumerate(history) if F <= po), None)
        same = f"{reach:>21} {pi / reach:>6.2f}" if reach else f"{'not reached':>21} {'':>6}"
        print(f"{C:>6g} {pi:>10} {ci:>10} {pi / ci:>6.2f} {ps:>7.1f} {cs:>7.1f} "
              f"{po / co - 1:>20.2e} {same}")
    total = sum(x[2] for x in r["path"]), sum(x[2] for x in r["cold"])
    print(f"whole path {total[0]:.1f} s, cold fits {total[1]:.1f} s: {total[0] / total[1]:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("search", "path"), default="search")
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, default=4096)
    parser.add_argument("--method", default="rff",
                        help="with --part path: the feature map (rff, auto, ...)")
    parser.add_argument("--solver", default="auto",
                        help="with --part path: the solver (auto, admm, dcd)")
    parser.add_argument("--contenders", nargs="+",
                        default=["ours", "grid", "svc-halving", "svc-grid"])
    a = parser.parse_args()
    searches(a) if a.part == "search" else path(a)
