"""Tuning a Pipeline (StandardScaler, then a kernel SVM): KernelGridSearchCV against
scikit-learn's searches of the same pipeline.

    SKYLITE_DATA=folder python benchmarks/bench_pipeline_search.py
        [--contenders ours grid svc-grid svc-halving ours-random random]

The protocol, fixed before the runs: letter (letter.npz in the data folder: 16,000 training
rows, 4,000 test rows, 16 integer features, 26 classes); the pipeline
`make_pipeline(StandardScaler(), KernelSVC(random_state=0))` with KernelSVC's other defaults;
the grid sigma in {1, 2, 4} x C in {1, 10, 100, 1000} (around sigma = sqrt(8), what
gamma="scale" gives on 16 standardized features; SVC: gamma = 1/(2 sigma^2));
`StratifiedKFold(3, shuffle=True, random_state=0)`; refit on the 16,000 rows; the test rows
scored once, after the search.  Contenders, each in a fresh process, one after the other:

- "ours": `KernelGridSearchCV` over the pipeline (the scaler fitted once per fold);
- "grid": `GridSearchCV` over the same pipeline;
- "svc-grid" and "svc-halving": `GridSearchCV` and `HalvingGridSearchCV` (its defaults)
  over `make_pipeline(StandardScaler(), SVC())`, the exact kernel machine;
- "ours-random" and "random" (not run by default): `KernelRandomizedSearchCV` and
  `RandomizedSearchCV` over the skylite pipeline, 12 candidates drawn with random_state=0
  from sigma ~ loguniform(1, 4) and C ~ loguniform(1, 1000), the grid's ranges.

The table prints each contender's time (search + refit), the chosen point, its CV and test
accuracy, and the time ratios of "ours" to the others.
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _child import run_child  # noqa: E402
from _data import DATA, require  # noqa: E402

SIGMAS, CS = [1, 2, 4], [1, 10, 100, 1000]

CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.experimental import enable_halving_search_cv  # noqa
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from skylite import KernelSVC
from skylite.model_selection import KernelGridSearchCV
name, sigmas, Cs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
with np.load(sys.argv[4]) as f:
    X, y, Xt, yt = f["X_train"], f["y_train"], f["X_test"], f["y_test"]
cv = StratifiedKFold(3, shuffle=True, random_state=0)
if name.startswith("svc"):
    pipe = make_pipeline(StandardScaler(), SVC())
    grid = {"svc__gamma": [1.0 / (2 * s * s) for s in sigmas], "svc__C": Cs}
    search = (GridSearchCV if name == "svc-grid" else HalvingGridSearchCV)(pipe, grid, cv=cv)
elif name.endswith("random"):
    from scipy.stats import loguniform
    from sklearn.model_selection import RandomizedSearchCV
    from skylite.model_selection import KernelRandomizedSearchCV
    pipe = make_pipeline(StandardScaler(), KernelSVC(random_state=0))
    spaces = {"kernelsvc__sigma": loguniform(min(sigmas), max(sigmas)),
              "kernelsvc__C": loguniform(min(Cs), max(Cs))}
    search = (KernelRandomizedSearchCV if name == "ours-random" else RandomizedSearchCV)(
        pipe, spaces, n_iter=12, cv=cv, random_state=0)
else:
    pipe = make_pipeline(StandardScaler(), KernelSVC(random_state=0))
    grid = {"kernelsvc__sigma": sigmas, "kernelsvc__C": Cs}
    search = (KernelGridSearchCV if name == "ours" else GridSearchCV)(pipe, grid, cv=cv)
start = time.perf_counter()
search.fit(X, y)
seconds = time.perf_counter() - start
best = {k.split("__")[1]: v for k, v in search.best_params_.items()}
if "gamma" in best:
    best["sigma"] = round(float(np.sqrt(1.0 / (2 * best.pop("gamma")))), 3)
print("RESULT", json.dumps({"seconds": seconds, "best": best, "cv": float(search.best_score_),
                            "test": float(search.score(Xt, yt))}))
"""


def main(args):
    require("letter.npz")
    print(f"letter, 16,000 training rows, StandardScaler then a kernel SVM, grid sigma "
          f"{SIGMAS} x C {CS}, 3-fold stratified CV (shuffled, seed 0), refit, 4,000 test "
          f"rows; {os.cpu_count()} cores")
    print(f"{'contender':<12} {'seconds':>9} {'best sigma, C':>15} {'CV acc':>8} "
          f"{'test acc':>9}", flush=True)
    results = {}
    for name in args.contenders:
        r = results[name] = run_child(CHILD, name, json.dumps(SIGMAS), json.dumps(CS),
                                      DATA / "letter.npz")
        best = f"{r['best']['sigma']:.3g}, {r['best']['C']:.4g}"
        print(f"{name:<12} {r['seconds']:>9.1f} {best:>15} {100 * r['cv']:>7.2f}% "
              f"{100 * r['test']:>8.2f}%", flush=True)
    for mine, other in (("ours", "grid"), ("ours", "svc-grid"), ("ours", "svc-halving"),
                        ("ours-random", "random")):
        if mine in results and other in results:
            ratio = results[mine]["seconds"] / results[other]["seconds"]
            gain = 100 * (results[mine]["test"] - results[other]["test"])
            print(f"{mine} / {other}: time {ratio:.3f}, test accuracy {gain:+.2f} pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contenders", nargs="+",
                        default=["ours", "grid", "svc-grid", "svc-halving"])
    main(parser.parse_args())
