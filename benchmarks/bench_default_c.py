"""Which default C should `KernelSVC()` have: validation accuracy over C, no test rows.

    SKYLITE_DATA=folder python benchmarks/bench_default_c.py [--C 1 2 5 10]
        [--maps rff auto] [--rows 2000 6000 20000]

`KernelSVC`'s loss is the one-vs-rest hinge loss without an intercept, where `SVC` (LIBSVM)
trains one-vs-one machines with an intercept, so the same C is not the same model, and
C = 1 (SVC's default) need not be the best default for skylite.  The protocol, fixed
before the runs:

- data: MNIST's first `--rows` training rows (pixels in [0, 1]), scored on training rows
  50,000-59,999, which no fit here reads; pendigits (shipped) and letter (`letter.npz` in
  the data folder, optional), each fitted on a stratified 80% of its training rows and
  scored on the other 20% (`holdout_rows`, seed 0).  No test row is read.
- contenders: `KernelSVC(C=c)` with every other default, for each map of `--maps`
  ("rff": the default random Fourier features; "auto": `method="auto"`), and `SVC()` as
  the reference; each fit in a fresh process, one after the other.
- the rule: the default C is the value of `--C` with the highest mean validation accuracy
  over the data sets for the map, C = 1 (scikit-learn's) unless another value is higher
  by more than 0.05 points.

It prints a table of validation accuracy and fit seconds, the means, and the rule's pick.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _child import run_child  # noqa: E402
from _data import DATA, mnist_file  # noqa: E402

CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.svm import SVC
from skylite import KernelSVC
from skylite.datasets import load_pendigits
from skylite._early_stopping import holdout_rows
data, rows, source, model = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
C = float(sys.argv[5])
if data == "mnist":
    with np.load(source) as f:
        X, y = f["X_train"][:rows].astype(np.float64), f["y_train"][:rows]
        Xv, yv = f["X_train"][50000:60000].astype(np.float64), f["y_train"][50000:60000]
else:
    if data == "pendigits":
        X, y, _, _ = load_pendigits()
    else:
        with np.load(source) as f:
            X, y = f["X_train"], f["y_train"]
    X = X.astype(np.float64)
    fit, val = holdout_rows(y, 0.2, np.random.default_rng(0))
    X, y, Xv, yv = X[fit], y[fit], X[val], y[val]
model = SVC() if model == "svc" else KernelSVC(C=C, method=model, random_state=0)
start = time.perf_counter()
model.fit(X, y)
seconds = time.perf_counter() - start
print("RESULT", json.dumps({"seconds": seconds, "validation": float(model.score(Xv, yv))}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 2.0, 5.0, 10.0])
    parser.add_argument("--maps", nargs="+", choices=("rff", "auto"), default=["rff", "auto"])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 6000, 20000])
    args = parser.parse_args()
    mnist = mnist_file()
    sets = [("mnist", rows, str(mnist), f"MNIST {rows:,}") for rows in args.rows]
    sets.append(("pendigits", 0, "", "pendigits"))
    if (DATA / "letter.npz").exists():
        sets.append(("letter", 0, str(DATA / "letter.npz"), "letter"))
    contenders = [("svc", 1.0)] + [(m, c) for m in args.maps for c in args.C]
    header = "".join(f"{'SVC()' if m == 'svc' else f'{m} C={c:g}':>16}" for m, c in contenders)
    print("validation accuracy (fit seconds); no test rows read\n")
    print(f"{'data':<14}{header}")
    accuracy = {key: [] for key in contenders}
    for data, rows, source, label in sets:
        cells = []
        for model, C in contenders:
            r = run_child(CHILD, data, rows, source, model, C)
            accuracy[(model, C)].append(r["validation"])
            cells.append(f"{100 * r['validation']:.2f}% ({r['seconds']:.1f})")
        print(f"{label:<14}" + "".join(f"{cell:>16}" for cell in cells), flush=True)
    means = {key: sum(v) / len(v) for key, v in accuracy.items()}
    print(f"{'mean':<14}" + "".join(f"{100 * means[key]:>15.2f}%" for key in contenders))
    for model in args.maps:
        best = max(args.C, key=lambda c: means[(model, c)])
        pick = (best if 1.0 not in args.C or
                means[(model, best)] - means[(model, 1.0)] > 0.0005 else 1.0)
        print(f"{model}: the rule picks C = {pick:g}")


if __name__ == "__main__":
    main()
