"""What early stopping costs: iterations, fit seconds and accuracy against the run to tol.

    python benchmarks/bench_early_stopping.py [--data pendigits mnist-sample mnist20k]
        [--seeds 5] [--method rff]
    python benchmarks/bench_early_stopping.py --select [--data ...] [--splits 4] [--method rff]
    python benchmarks/bench_early_stopping.py --full-mnist [--rows 60000]

Every fit uses KernelSVC's default feature map (method="auto": Nystroem features with
k-means landmarks) unless `--method` names another.  `--seeds K` repeats the default table
for random_state 0..K-1 (the map and the held-out rows) and prints the mean difference and
its standard error: one seed's difference on a few thousand test rows is mostly noise.

The data sets, each with its settings fixed a priori:

- "pendigits": the quick start's `KernelSVC(sigma=0.6, n_features=2048, alpha=1e-5,
  early_stopping=True)` in float64 on the shipped pendigits (pixels / 100), its 3,498 test
  rows.
- "mnist-sample": tests/data/mnist_sample.npz, rows 0-1999 to fit and rows 2000-2999 as an
  explicit validation set (`fit(X, y, X_val=, y_val=)`), `KernelSVC(sigma=6,
  n_features=2048)` with C = 10 (alpha = 1 / (n C)); MNIST's 10,000 test rows.
- "mnist20k": MNIST's first 20,000 training rows, `KernelSVC(sigma=6, n_features=4096,
  precision="float32")` with C = 10 and the default early_stopping="auto"; the 10,000 test
  rows.
- "mnist50k": the same model on the first 50,000 training rows (a selection set, with
  `--select`: training rows 50,000-59,999 are its selection rows).

C = 10 sets alpha = 1 / (n C) with n the rows the model is fitted on (the held-out rows
excluded).  The default table fits each data set four times, each fit in a fresh process:
the early stopping of this version ("default": the rule scores 500 training rows, which stay
in the fit), the same rule on 500 rows held out of the fit ("held out":
validation_fraction="auto"; on the MNIST sample, which has its X_val, it is the default),
the rule before it ("old": 10% of the rows held out, the best validation value from the
first iteration on, the first of equal values, 10 iterations of patience), and
`early_stopping=False` (run to tol = 1e-3 on all the rows).  The test rows are scored once
per fit, after it.

`--select` is how the rule's settings were chosen, without test rows: one run to tol per
data set with the validation rows scored every iteration (`n_iter_no_change=None`), every
iterate scored on selection rows the fit never sees (pendigits and letter: a stratified 20%
of their training rows, the fit on the rest; MNIST 20k: training rows 20,000-29,999; MNIST
50k: rows 50,000-59,999), and each
contender rule replayed on that run: from which relative residual it monitors, its
patience, and which rows it scores (`--kinds`: "scored", 500 training rows that stay in the
fit, the default; "held-out", 500 rows held out; "old", 10% held out from the first
iteration).  It prints the kept and the stopping iteration, the share of the run-to-tol
time, the selection accuracy of the kept iterate against that of the iterate at the stop,
of the last iterate of the recorded run (to tol on the fit rows) and of a run to tol on all
the rows, and the share of selection rows the kept iterate classifies otherwise than the
last iterate.  "letter" (16,000 training rows, KernelSVC's defaults) is a selection set
only unless named with `--data`.  The criterion the default was chosen by: with patience 10,
the largest relative residual whose kept iterate scores, in the mean over the splits, within
0.05 points of the run to tol on all the rows on every selection set (pendigits, letter,
MNIST 20k; the default feature map; MNIST 50k, added later, agrees).

`--full-mnist` is the earlier table: the default "auto" against early_stopping=False on full
MNIST with three models (`KernelSVC()`, sigma = 6 and s = 8192 in float32, and the same
with C = 10).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _data import mnist_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MNIST = mnist_file()                   # the data folder's MNIST (skylite.datasets.load_mnist)
SAMPLE = ROOT / "tests" / "data" / "mnist_sample.npz"
# the children run outside the checkout: `python -c` there would import its source tree
OUTSIDE = tempfile.gettempdir()

# the child's data sets: (X, y, X_val or None, y_val, X_test, y_test, params), and
# `alpha_for`: alpha = 1 / (n C) on the rows a model is fitted on
COMMON = """
import json, os, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from skylite import KernelSVC
from skylite.datasets import load_pendigits
from skylite._early_stopping import holdout_rows

def dataset(name, mnist, sample):
    if name == "pendigits":
        X, y, Xt, yt = load_pendigits()
        return (X / 100.0, y, None, None, Xt / 100.0, yt,
                dict(sigma=0.6, n_features=2048, alpha=1e-5, precision="float64"))
    if name == "letter":
        with np.load(os.path.join(os.path.dirname(mnist), "letter.npz")) as z:
            return (z["X_train"].astype(np.float64), z["y_train"], None, None,
                    z["X_test"].astype(np.float64), z["y_test"], {})
    z = np.load(mnist)
    Xt, yt = z["X_test"].astype(np.float64), z["y_test"]
    if name == "mnist-sample":
        with np.load(sample) as s:
            X, y = (s["pixels"].astype(np.float32) / np.float32(255)).astype(np.float64), s["labels"]
        return (X[:2000], y[:2000], X[2000:], y[2000:], Xt, yt,
                dict(sigma=6.0, n_features=2048, C=10.0))
    rows = 50000 if name == "mnist50k" else 20000
    return (z["X_train"][:rows].astype(np.float64), z["y_train"][:rows], None, None, Xt, yt,
            dict(sigma=6.0, n_features=4096, precision="float32", C=10.0))

def fitted_rows(X, y, params, early_params):
    probe = KernelSVC(n_features=8, max_iter=1, **early_params).fit(X, y)
    held = probe.validation_indices_ if probe.validation_fraction is not None else None
    return len(y) - (0 if held is None else len(held))

def with_alpha(X, y, params, early_params):
    params = dict(params)
    if "C" in params:
        params["alpha"] = 1.0 / (fitted_rows(X, y, params, early_params) * params.pop("C"))
    return params
"""

FIT = COMMON + """
name, rule = sys.argv[1], sys.argv[2]
X, y, X_val, y_val, X_test, y_test, params = dataset(name, sys.argv[3], sys.argv[4])
params.update(json.loads(sys.argv[6]))
on = True if name == "pendigits" else "auto"
early = {"default": dict(early_stopping=on),
         "held out": dict(early_stopping=on, validation_fraction="auto"),
         "old": dict(early_stopping=X_val is None, validation_fraction=0.1,
                     n_iter_no_change=None),
         "to tol": dict(early_stopping=False, n_iter_no_change=None)}[rule]
params = with_alpha(X, y, params, early)
old = dict(best=-np.inf, W=None, at=0)

def old_rule(iteration, record, W):
    if record["validation"] > old["best"]:
        old.update(best=record["validation"], W=W.copy(), at=iteration)
    return iteration - old["at"] >= 10

kw = dict(callback=old_rule) if rule == "old" else {}
model = KernelSVC(**params, **early, **kw, random_state=int(sys.argv[5]))
start = time.perf_counter()
model.fit(X, y, **({} if X_val is None or rule == "to tol" else dict(X_val=X_val, y_val=y_val)))
seconds = time.perf_counter() - start
kept = model.best_iteration_
if rule == "old":
    model.coef_, kept = old["W"], old["at"]
print(json.dumps(dict(seconds=seconds, accuracy=model.score(X_test, y_test),
                      n_iter=model.n_iter_, kept=kept,
                      held=0 if model.validation_indices_ is None
                      or model.validation_fraction is None
                      else len(model.validation_indices_),
                      scored=0 if model.validation_indices_ is None
                      else len(model.validation_indices_))))
"""

RECORD = COMMON + """
name, fraction, split = sys.argv[1], json.loads(sys.argv[5]), int(sys.argv[6])
X, y, X_val, y_val, X_test, y_test, params = dataset(name, sys.argv[3], sys.argv[4])
params.update(json.loads(sys.argv[7]))
del X_test, y_test                               # never read: selection rows only
z = np.load(sys.argv[3])
if name in ("pendigits", "letter"):
    fit, sel = holdout_rows(y, 0.2, np.random.default_rng(123 + split))
    X, y, X_sel, y_sel = X[fit], y[fit], X[sel], y[sel]
else:                                            # the 10,000 training rows after the fit's
    a = 50000 if name == "mnist50k" else 20000
    X_sel, y_sel = z["X_train"][a:a + 10000].astype(np.float64), z["y_train"][a:a + 10000]
if fraction is None:                              # the run to tol on all the rows
    early = dict(early_stopping=False, n_iter_no_change=None)
elif fraction == "scored":                        # validation_fraction=None
    early = dict(early_stopping=True, validation_fraction=None, n_iter_no_change=None)
elif X_val is not None:
    early = dict(early_stopping="auto", n_iter_no_change=None)
else:
    early = dict(early_stopping=True, validation_fraction=fraction, n_iter_no_change=None)
params = with_alpha(X, y, params, early)
iterates = {}
model = KernelSVC(**params, **early, random_state=split,
                  callback=lambda iteration, record, W: iterates.__setitem__(iteration, W.copy()))
start = time.perf_counter()
model.fit(X, y, **({} if X_val is None or fraction is None else dict(X_val=X_val, y_val=y_val)))
seconds = time.perf_counter() - start
Z = model.feature_map_.transform(X_sel)
predictions = np.array([model.classes_[np.argmax(Z @ iterates[i], axis=1)]
                        for i in sorted(iterates)])
h = model.history_
print(json.dumps(dict(seconds=seconds, elapsed=[r["elapsed"] for r in h],
                      ratio=[r["residual_ratio"] for r in h],
                      validation=[r.get("validation") for r in h],
                      accuracy=(predictions == y_sel).mean(axis=1).tolist(),
                      changed=(predictions != predictions[-1]).mean(axis=1).tolist())))
"""

FULL_MNIST = """
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
DATASETS = ("pendigits", "mnist-sample", "mnist20k", "letter", "mnist50k")
# --select: (name, relative residual from which the rule monitors, share held out, patience)
CONTENDERS = [("old: from iteration 1, first best", None, 0.1, 10)] + [
    (f"from relative residual {gate:g}, latest best", gate, "500 rows", patience)
    for gate in (0.03, 0.02, 0.01) for patience in (10, 20)] + [
    (f"from relative residual {gate:g}, latest best", gate, "scored", patience)
    for gate in (0.03, 0.02, 0.015, 0.01, 0.005) for patience in (5, 10, 20)]


# --select --kinds: which of the contenders to replay
KINDS = {0.1: "old", "500 rows": "held-out", "scored": "scored"}


def child(code, *args):
    run = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                         text=True, check=True, cwd=OUTSIDE)
    return json.loads(run.stdout.strip().splitlines()[-1])


def replay(run, gate, patience=10):
    """(kept, last) iteration of a rule replayed on a recorded run: monitored from the first
    iteration with residual_ratio * tol <= gate (None: from the first), the best validation
    value kept (the first of equal values when gate is None, else the latest), stopped after
    `patience` iterations without a strictly better one."""
    best, kept, improved = -float("inf"), None, None
    for i, (value, ratio) in enumerate(zip(run["validation"], run["ratio"]), start=1):
        if kept is None and gate is not None and ratio * 1e-3 > gate:
            continue
        if value > best:
            best, kept, improved = value, i, i
        elif value == best and gate is not None:
            kept = i
        if i - improved >= patience:
            return kept, i
    return kept or len(run["ratio"]), len(run["ratio"])


def select(datasets, splits, method, kinds):
    """The contender rules replayed on recorded runs (`replay`), averaged over `splits`
    seeds (random_state: the features and the held-out rows) and, for pendigits, splits of
    its training rows into fit and selection rows; MNIST 20k has one fixed selection set of
    10,000 rows, the MNIST sample one run."""
    print("| data | rule | held out | patience | kept / last (of the run) | time / to tol | "
          "selection accuracy kept | at the stop | last | to tol, all rows | kept - to tol | "
          "rows classified otherwise |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in datasets:
        rows = {rule: [] for rule in CONTENDERS}
        for split in range(1 if name == "mnist-sample" else splits):
            tol = child(RECORD, name, "select", MNIST, SAMPLE, "null", split, method)
            runs = {}
            for rule in CONTENDERS:
                _, gate, held, patience = rule
                if name == "mnist-sample" and held != 0.1:
                    continue                           # an explicit validation set: no split
                if KINDS[held] not in kinds:
                    continue
                fraction = {0.1: 0.1, "500 rows": "auto", "scored": "scored"}[held]
                if fraction not in runs:
                    runs[fraction] = child(RECORD, name, "select", MNIST, SAMPLE,
                                           json.dumps(fraction), split, method)
                run = runs[fraction]
                kept, last = replay(run, gate, patience)
                setup = run["seconds"] - run["elapsed"][-1]
                rows[rule].append(dict(
                    kept=kept, last=last, n=len(run["ratio"]),
                    time=(setup + run["elapsed"][last - 1]) / tol["seconds"],
                    accuracy=run["accuracy"][kept - 1], stop=run["accuracy"][last - 1],
                    final=run["accuracy"][-1],
                    tol=tol["accuracy"][-1], changed=run["changed"][kept - 1]))
        for (label, _, held, patience), found in rows.items():
            held = "500 rows scored, in the fit" if held == "scored" else held
            if not found:
                continue
            mean = {key: sum(r[key] for r in found) / len(found) for key in found[0]}
            iterations = (f"{found[0]['kept']} / {found[0]['last']} ({found[0]['n']})"
                          if len(found) == 1 else
                          f"{mean['kept']:.0f} / {mean['last']:.0f} ({mean['n']:.0f}), mean")
            print(f"| {name} | {label} | {'X_val' if name == 'mnist-sample' else held} | "
                  f"{patience} | {iterations} | {mean['time']:.2f} | "
                  f"{100 * mean['accuracy']:.2f}% | {100 * mean['stop']:.2f}% | "
                  f"{100 * mean['final']:.2f}% | "
                  f"{100 * mean['tol']:.2f}% | "
                  f"{100 * (mean['accuracy'] - mean['tol']):+.3f} | "
                  f"{100 * mean['changed']:.2f}% |", flush=True)


def table(datasets, seeds, method):
    """Each rule against the run to tol on the test rows, for `seeds` values of random_state
    (the features and the held-out rows), one line per seed and their mean."""
    print("| data | rule | seed | held out | iterations kept / run | fit s | test accuracy | "
          "to tol: test accuracy | to tol: fit s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in datasets:
        # "held out" is the default with an explicit X_val (the MNIST sample)
        rules = ("default", "old") if name == "mnist-sample" else ("default", "held out", "old")
        differences = {rule: [] for rule in rules}
        for seed in range(seeds):
            tol = child(FIT, name, "to tol", MNIST, SAMPLE, seed, method)
            for rule in rules:
                r = child(FIT, name, rule, MNIST, SAMPLE, seed, method)
                held = ("X_val" if name == "mnist-sample" else
                        f"0 ({r['scored']} scored)" if r["held"] == 0 else r["held"])
                difference = 100 * (r["accuracy"] - tol["accuracy"])
                differences[rule].append((difference, r["seconds"] / tol["seconds"]))
                print(f"| {name} | {rule} | {seed} | {held} | {r['kept']} / {r['n_iter']} | "
                      f"{r['seconds']:.1f} ({r['seconds'] / tol['seconds']:.2f}x) | "
                      f"{100 * r['accuracy']:.2f}% ({difference:+.2f}) | "
                      f"{100 * tol['accuracy']:.2f}% | {tol['seconds']:.1f} |", flush=True)
        if seeds > 1:
            for rule, found in differences.items():
                mean = sum(d for d, _ in found) / seeds
                spread = (sum((d - mean) ** 2 for d, _ in found) / (seeds - 1)) ** 0.5
                print(f"| {name} | {rule} | mean of {seeds} | | | "
                      f"{sum(t for _, t in found) / seeds:.2f}x | "
                      f"{mean:+.2f} (standard error {spread / seeds ** 0.5:.2f}) | | |",
                      flush=True)


def full_mnist(rows, models):
    print("| model | early_stopping | iterations (best) | fit s | test accuracy |")
    print("|---|---|---|---|---|")
    for model in models:
        name, params = MODELS[model]
        runs = {}
        for early in (False, "auto"):
            r = runs[early] = child(FULL_MNIST, MNIST, rows, json.dumps(params),
                                    json.dumps(early))
            how = (f"auto (resolved: {'on' if r['resolved'] else 'off'})" if early == "auto"
                   else "False")
            ended = "" if r["converged"] or r["resolved"] else ", max_iter"
            print(f"| {name} | {how} | {r['n_iter']} ({r['best']}{ended}) | "
                  f"{r['seconds']:.1f} | {100 * r['accuracy']:.2f}% |", flush=True)
        ratio = runs["auto"]["seconds"] / runs[False]["seconds"]
        print(f"| {name} | auto / False | | {ratio:.2f}x | "
              f"{100 * (runs['auto']['accuracy'] - runs[False]['accuracy']):+.2f} points |",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", choices=DATASETS, default=list(DATASETS[:3]),
                        help="default: pendigits mnist-sample mnist20k")
    parser.add_argument("--select", action="store_true",
                        help="replay the contender rules on selection rows (no test rows)")
    parser.add_argument("--splits", type=int, default=4,
                        help="with --select: seeds (and splits of pendigits' rows)")
    parser.add_argument("--kinds", nargs="+", choices=tuple(KINDS.values()),
                        default=list(KINDS.values()),
                        help="with --select: the contenders replayed (old: 10%% held out from "
                             "iteration 1; held-out: 500 rows held out; scored: 500 training "
                             "rows scored, the default)")
    parser.add_argument("--method", help="the feature map of every fit (default: KernelSVC's, "
                                         "method=\"auto\"); e.g. rff")
    parser.add_argument("--seeds", type=int, default=1,
                        help="the default table: random_state 0..seeds-1, and the mean")
    parser.add_argument("--full-mnist", action="store_true",
                        help="the default against early_stopping=False on full MNIST")
    parser.add_argument("--rows", type=int, default=60000, help="with --full-mnist")
    parser.add_argument("--models", nargs="+", choices=tuple(MODELS), default=list(MODELS),
                        help="with --full-mnist")
    args = parser.parse_args()
    method = json.dumps({} if args.method is None else {"method": args.method})
    if not MNIST.exists():
        sys.exit(f"bench_early_stopping needs {MNIST}")
    print(f"bench_early_stopping on {os.cpu_count()} cores\n")
    if args.full_mnist:
        full_mnist(args.rows, args.models)
    elif args.select:
        select(args.data, args.splits, method, args.kinds)
    else:
        table(args.data, args.seeds, method)


if __name__ == "__main__":
    main()
