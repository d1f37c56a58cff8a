"""What the default early_stopping="auto" changes on full MNIST: iterations, fit seconds, accuracy.

    python benchmarks/bench_early_stopping.py [--rows 60000] [--models default s8192 s8192-C10]

MNIST's training rows (pixels in [0, 1]) and its 10,000 test rows.  Each model is fitted
twice with the same settings: `early_stopping=False` (before "auto" became the default: run
to tol = 1e-3 on all the rows) and the default "auto" (above 10,000 rows: a seeded
stratified 10% of the training rows held out, stop after 10 iterations without a better
validation accuracy, keep the best W).  The models, fixed a priori: "default" is
`KernelSVC()` as it comes (s = 2048, sigma from the data, alpha = 1e-4); "s8192" adds
sigma = 6, s = 8192 and float32 blocks, the settings of the other MNIST benchmarks; "s8192-C10"
also sets alpha = 1 / (n C) with C = 10, the other benchmarks' regularization.  The test rows
are scored once per model, after its fit.  Each fit runs in a fresh process.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from _data import mnist_file  # noqa: E402

# the children run outside the checkout: `python -c` there would import its source tree
OUTSIDE = tempfile.gettempdir()
FIT = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from skylite import KernelSVC
data = np.load(sys.argv[1])
rows, params, early = int(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4])
X, y = data["X_train"][:rows].astype(np.float64), data["y_train"][:rows]
if "C" in params:
    params["alpha"] = 1.0 / (rows * params.pop("C"))
model = KernelSVC(**params, early_stopping=early)
start = time.perf_counter()
model.fit(X, y)
seconds = time.perf_counter() - start
accuracy = model.score(data["X_test"].astype(np.float64), data["y_test"])
print(json.dumps(dict(seconds=seconds, accuracy=accuracy, n_iter=model.n_iter_,
                      best=model.best_iteration_, resolved=model.early_stopping_,
                      converged=model.converged_)))
"""


MODELS = {
    "default": ("KernelSVC()", {}),
    "s8192": ("KernelSVC(sigma=6, n_features=8192, float32)",
              dict(sigma=6.0, n_features=8192, precision="float32")),
    "s8192-C10": ("the same with C = 10 (alpha = 1 / (10 n))",
                  dict(sigma=6.0, n_features=8192, precision="float32", C=10.0)),
}


def fit(rows, params, early):
    run = subprocess.run([sys.executable, "-c", FIT, str(mnist_file()), str(rows), json.dumps(params),
                          json.dumps(early)], capture_output=True, text=True, check=True,
                         cwd=OUTSIDE)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--models", nargs="+", choices=tuple(MODELS), default=list(MODELS))
    args = parser.parse_args()
    print(f"bench_early_stopping on {os.cpu_count()} cores: MNIST {args.rows} training rows, "
          f"10,000 test rows\n")
    print("| model | early_stopping | iterations (best) | fit s | test accuracy |")
    print("|---|---|---|---|---|")
    for model in args.models:
        name, params = MODELS[model]
        runs = {}
        for early in (False, "auto"):
            r = runs[early] = fit(args.rows, params, early)
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
