"""What the default early_stopping="auto" changes on full MNIST: iterations, fit seconds, accuracy.

    python benchmarks/bench_early_stopping.py [--rows 60000] [--features 2048 8192]

MNIST's training rows (pixels in [0, 1]) and its 10,000 test rows.  For each s in
--features, a kernel SVM fitted twice with the same settings: `early_stopping=False` (before
"auto" became the default: run to tol = 1e-3 on all the rows) and the default "auto" (above
10,000 rows: a seeded stratified 10% of the training rows held out, stop after 10 iterations
without a better validation accuracy, keep the best W).  s = 2048 is `KernelSVC()` as it
comes (sigma from the data); the other sizes use sigma = 6 and float32 blocks, the settings
of the other MNIST benchmarks, fixed a priori.  The test rows are scored once per model,
after its fit.  Each fit runs in a fresh process.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist.npz"
# the children run outside the checkout: `python -c` there would import its source tree
OUTSIDE = tempfile.gettempdir()
FIT = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from skylite import KernelSVC
data = np.load(sys.argv[1])
rows, s, early = int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
X, y = data["X_train"][:rows].astype(np.float64), data["y_train"][:rows]
params = {} if s == 2048 else dict(sigma=6.0, n_features=s, precision="float32")
model = KernelSVC(**params, early_stopping=early)
start = time.perf_counter()
model.fit(X, y)
seconds = time.perf_counter() - start
accuracy = model.score(data["X_test"].astype(np.float64), data["y_test"])
print(json.dumps(dict(seconds=seconds, accuracy=accuracy, n_iter=model.n_iter_,
                      best=model.best_iteration_, resolved=model.early_stopping_,
                      converged=model.converged_)))
"""


def fit(rows, s, early):
    run = subprocess.run([sys.executable, "-c", FIT, str(DATA), str(rows), str(s),
                          json.dumps(early)], capture_output=True, text=True, check=True,
                         cwd=OUTSIDE)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--features", type=int, nargs="+", default=[2048, 8192])
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"bench_early_stopping needs {DATA}")
    print(f"bench_early_stopping on {os.cpu_count()} cores: MNIST {args.rows} training rows, "
          f"10,000 test rows\n")
    print("| model | early_stopping | iterations (best) | fit s | test accuracy |")
    print("|---|---|---|---|---|")
    for s in args.features:
        name = "KernelSVC()" if s == 2048 else f"KernelSVC(sigma=6, n_features={s}, float32)"
        runs = {}
        for early in (False, "auto"):
            r = runs[early] = fit(args.rows, s, early)
            how = (f"auto (resolved: {'on' if r['resolved'] else 'off'})" if early == "auto"
                   else "False")
            ended = "" if r["converged"] or r["resolved"] else ", max_iter"
            print(f"| {name} | {how} | {r['n_iter']} ({r['best']}{ended}) | "
                  f"{r['seconds']:.1f} | {100 * r['accuracy']:.2f}% |", flush=True)
        ratio = runs["auto"]["seconds"] / runs[False]["seconds"]
        print(f"| {name} | auto / False | | {ratio:.2f}x | "
              f"{100 * (runs['auto']['accuracy'] - runs[False]['accuracy']):+.2f} points |",
              flush=True)


if __name__ == "__main__":
    main()
