"""Which feature map should `KernelSVC()` use by default: accuracy and fit time per map.

    SKYLITE_DATA=folder python benchmarks/bench_default_map.py [--rows 2000 6000 20000 60000]
        [--maps svc rff fastfood nystroem nystroem-uniform] [--pendigits]

The protocol, fixed before the runs: `KernelSVC(C=1)` with every other default (sigma
"scale", n_features 2048, early stopping "auto", float64) except the map, on MNIST's first `--rows`
training rows (pixels in [0, 1]) and, with `--pendigits`, on the shipped pendigits training
rows; accuracy on the test rows (MNIST's 10,000; pendigits' 3,498), touched once, to report.
Contenders, each in a fresh process, one after the other on the same machine:

- "rff": Gaussian random Fourier features;
- "rff-4096": the same with 4,096 features (not a default contender: an equal-time check,
  `--maps svc rff-4096`);
- "fastfood": Fastfood;
- "nystroem": Nystroem features with k-means landmarks;
- "nystroem-uniform": Nystroem features with uniformly drawn landmarks;
- "svc": scikit-learn's `SVC()` (LIBSVM, the exact kernel machine; the same C and gamma);
- "default": `KernelSVC()` with every default, the map and C included (not a map contender:
  the defaults against `SVC()`'s, `--maps svc default`).

Where the rows are fewer than n_features, Nystroem uses one landmark per row (it is then the
exact kernel machine on its features) and the random maps keep 2048 features.  The table
prints fit seconds, test accuracy and the difference from `SVC()`.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _child import run_child  # noqa: E402
from _data import mnist_file  # noqa: E402


CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.svm import SVC
from skylite import KernelSVC
from skylite.datasets import load_pendigits
name, rows, source = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if source == "pendigits":
    X, y, Xt, yt = load_pendigits()
    X, Xt = X.astype(np.float64), Xt.astype(np.float64)
else:
    with np.load(source) as f:
        X, y = f["X_train"][:rows].astype(np.float64), f["y_train"][:rows]
        Xt, yt = f["X_test"].astype(np.float64), f["y_test"]
if name == "svc":
    model = SVC()
elif name == "default":
    model = KernelSVC()
else:
    kw = {"rff": {"method": "rff"}, "rff-4096": {"method": "rff", "n_features": 4096},
          "fastfood": {"method": "fastfood"},
          "nystroem": {"method": "nystroem", "n_features": min(2048, len(X))},
          "nystroem-uniform": {"method": "nystroem", "landmarks": "uniform",
                               "n_features": min(2048, len(X))}}[name]
    model = KernelSVC(C=1.0, random_state=0, **kw)
start = time.perf_counter()
model.fit(X, y)
seconds = time.perf_counter() - start
print("RESULT", json.dumps({"seconds": seconds, "test": float(model.score(Xt, yt)),
                            "rows": len(X)}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[2000, 6000, 20000, 60000])
    parser.add_argument("--maps", nargs="+",
                        default=["svc", "rff", "fastfood", "nystroem", "nystroem-uniform"])
    parser.add_argument("--pendigits", action="store_true")
    args = parser.parse_args()
    sets = [("pendigits", 0, "pendigits")] if args.pendigits else []
    sets += [(f"MNIST {rows:,}", rows, mnist_file()) for rows in args.rows]
    print("KernelSVC(C=1) defaults but the map (\"default\": every default), against SVC(); "
          "fit seconds and test accuracy")
    print(f"{'data':<14} {'map':<17} {'seconds':>8} {'test acc':>9} {'- SVC()':>8}",
          flush=True)
    for label, rows, source in sets:
        results = {}
        for name in args.maps:
            r = results[name] = run_child(CHILD, name, rows, source)
            diff = (f"{100 * (r['test'] - results['svc']['test']):+7.2f}"
                    if "svc" in results and name != "svc" else "")
            print(f"{label:<14} {name:<17} {r['seconds']:>8.1f} {100 * r['test']:>8.2f}% "
                  f"{diff:>8}", flush=True)


if __name__ == "__main__":
    main()
