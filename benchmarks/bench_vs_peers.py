"""skylite beside the tools a data scientist would otherwise use: accuracy, fit seconds, peak RSS.

    python benchmarks/bench_vs_peers.py [--part mnist20k mnist60k reuters] [--features60k 16384]
                                        [--plot FILE]

Every contender runs in a fresh child process, so its peak RSS (VmHWM) is its own; data loading
is not timed, the feature transform of the peers is (it is part of their fit / predict).

1. mnist20k: MNIST, first 20,000 training rows, the 10,000 test rows; Gaussian kernel
   sigma = 6 (gamma = 1/72), s = 4096 random features.  skylite's KernelSVC (hinge loss,
   BlockADMM) against scikit-learn's RBFSampler + LinearSVC (which materializes Z).
   Target: KernelSVC's test accuracy within 0.2 points of the peer's, in at most half its
   fit time.  KernelSVC runs with several seeds (feature draws), and the mean is compared.
   Exact SVC (libsvm through scikit-learn) with KernelSVC's C = 1 / (n alpha) is the
   reference (--no-exact20k leaves it out).
2. mnist60k: full MNIST, 10 classes: exact SVC (libsvm through scikit-learn, C = --C60k,
   gamma = 1/72), RBFSampler + LinearSVC at s = 4096, and KernelSVC with as many features as
   fit comfortably (--features60k, float32 blocks cached within the default memory budget;
   Fastfood features, --method60k, in the default 4 blocks of 4096),
   alpha = 1 / (n C) with the exact SVC's C, under two protocols fixed a priori, neither of
   which looks at the test rows: (a) early stopping on a seeded stratified 10% split of the
   training rows (6,000 rows; 10 iterations without a better validation accuracy, the
   estimator's default `scoring="score"`; the model fits the other 54,000 rows), (b) run to
   tol = 1e-3 on all 60,000 rows.
3. reuters: the sparse Reuters set (reuters_lasvm.svm.gz and reuters_lasvm.t.svm.gz in
   skylite's data folder, $SKYLITE_DATA) through the command line
   (`skylite train` then `skylite predict` on the .svm.gz files).  Target: >= 97% test accuracy.
   The linear kernel: on these tf-idf rows exact Gaussian SVC gains little (97.42% at best
   over C and gamma, against LinearSVC's 97.27%), and random features need s = 16384 to get
   within 0.4 points of it.

--plot FILE draws the MNIST tables of the parts run (test accuracy, fit seconds, peak RSS
per contender) into FILE.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from _memory import peak_rss

from _data import DATA, require  # noqa: E402
SIGMA = 6.0


def mnist(rows):
    from skylite.datasets import load_mnist
    X, y, X_test, y_test = load_mnist(rows, DATA)
    return X.astype(np.float64), y, X_test.astype(np.float64), y_test


# ---- contenders (each runs in its own child process) ----

def fit_and_score(fit, predict, X, y, Xt, yt):
    """Seconds of fit(X, y) and of predict(Xt), and the test accuracy."""
    start = time.perf_counter()
    fit(X, y)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = float(np.mean(predict(Xt) == yt))
    return {"accuracy": accuracy, "fit": seconds, "predict": time.perf_counter() - start}


def skylite_svc(rows, s, alpha, precision="float64", seed=0, max_iter=500,
                early_stopping=False, method=None, n_blocks=None, landmarks=None):
    from skylite import KernelSVC
    model = KernelSVC(sigma=SIGMA, n_features=s, alpha=alpha, precision=precision,
                      random_state=seed, max_iter=max_iter, early_stopping=early_stopping,
                      method=method or "rff", n_blocks=n_blocks, landmarks=landmarks)
    result = fit_and_score(model.fit, model.predict, *mnist(rows))
    stop = (f"early-stopped on the validation {model.scoring}, best iteration "
            f"{model.best_iteration_}" if early_stopping
            else "converged" if model.converged_ else "max_iter")
    result["detail"] = (f"s={s}, {method or 'rff'}{f' {landmarks}' if landmarks else ''}, {len(model.feature_map_.block_sizes)} "
                        f"blocks, alpha={alpha:g}, seed {seed}, {precision}, {model.n_iter_} "
                        f"iterations, {stop}")
    return result


def rff_linear_svc(rows, s, C):
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.svm import LinearSVC
    sampler = RBFSampler(gamma=1.0 / (2 * SIGMA**2), n_components=s, random_state=0)
    svm = LinearSVC(C=C)
    result = fit_and_score(lambda X, y: svm.fit(sampler.fit_transform(X), y),
                           lambda X: svm.predict(sampler.transform(X)), *mnist(rows))
    result["detail"] = f"s={s}, C={C:g} (squared hinge, liblinear)"
    return result


def exact_svc(rows, C):
    from sklearn.svm import SVC
    svm = SVC(C=C, gamma=1.0 / (2 * SIGMA**2), cache_size=2000)
    result = fit_and_score(svm.fit, svm.predict, *mnist(rows))
    result["detail"] = f"C={C:g}, {int(svm.n_support_.sum())} support vectors"
    return result


CONTENDERS = {"skylite": skylite_svc, "rff_linear_svc": rff_linear_svc,
              "exact_svc": exact_svc}


def child(name, kwargs, contenders=CONTENDERS):
    """Run one contender in this (child) process and print its result as JSON."""
    import warnings
    warnings.simplefilter("ignore")
    result = contenders[name](**kwargs)
    result["peak_rss"] = peak_rss()
    print(json.dumps(result))


def run_child(name, script=__file__, **kwargs):
    """The result of contender `name` run by `script --child name KWARGS` in a fresh
    process (its peak RSS is its own)."""
    run = subprocess.run([sys.executable, script, "--child", name, json.dumps(kwargs)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def table(title, rows):
    print(f"\n### {title}\n")
    print("| method | test accuracy | fit s | predict s | peak RSS | settings |")
    print("|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {100 * r['accuracy']:.2f}% | {r['fit']:.1f} | {r['predict']:.1f} | "
              f"{r['peak_rss'] / 2**30:.2f} GiB | {r['detail']} |")


def verdict(ok, text):
    print(f"- {'ok' if ok else 'MISSED'}: {text}")


# ---- the three parts ----

def part_mnist20k(args):
    n = 20000
    exact = ([("exact SVC (libsvm)", run_child("exact_svc", rows=n, C=1.0 / (n * args.alpha)))]
             if args.exact20k else [])
    peer = run_child("rff_linear_svc", rows=n, s=4096, C=args.C)
    ours = [run_child("skylite", rows=n, s=4096, alpha=args.alpha, seed=seed)
            for seed in range(args.seeds)]
    title = "MNIST 20k train / 10k test, Gaussian sigma = 6, s = 4096"
    rows = exact + [("RBFSampler + LinearSVC", peer)] + [("skylite KernelSVC", r) for r in ours]
    table(title, rows)
    accuracy = np.mean([r["accuracy"] for r in ours])
    fit = np.mean([r["fit"] for r in ours])
    print(f"\nskylite over {args.seeds} feature draws: accuracy {100 * accuracy:.2f}% "
          f"(spread {100 * np.ptp([r['accuracy'] for r in ours]):.2f} points), fit {fit:.1f}s")
    gap = 100 * (peer["accuracy"] - accuracy)
    verdict(gap <= 0.2, f"mean accuracy within 0.2 points of the peer (gap {gap:+.2f})")
    verdict(fit <= 0.5 * peer["fit"], f"fit time at most half the peer's "
                                      f"({fit / peer['fit']:.2f}x)")
    return title, rows


def part_mnist60k(args):
    n = 60000
    rows = [("exact SVC (libsvm)", run_child("exact_svc", rows=n, C=args.C60k)),
            ("RBFSampler + LinearSVC", run_child("rff_linear_svc", rows=n, s=4096, C=args.C)),
            ("skylite KernelSVC, early stopping on 6k training rows",
             run_child("skylite", rows=n, s=args.features60k, alpha=1.0 / (n * args.C60k),
                       precision="float32", early_stopping=True, method=args.method60k)),
            ("skylite KernelSVC, to tol = 1e-3",
             run_child("skylite", rows=n, s=args.features60k, alpha=1.0 / (n * args.C60k),
                       precision="float32", method=args.method60k))]
    title = "full MNIST 60k train / 10k test, Gaussian sigma = 6"
    table(title, rows)
    exact = rows[0][1]
    for label, ours in rows[2:]:
        gap = 100 * (ours["accuracy"] - exact["accuracy"])
        print(f"- {label}: {abs(gap):.2f} points {'above' if gap >= 0 else 'below'} exact "
              f"SVC in {ours['fit'] / exact['fit']:.2f}x its fit time and "
              f"{ours['predict'] / exact['predict']:.2f}x its predict time")
    return title, rows


def part_reuters(args):
    require("reuters_lasvm.svm.gz", "reuters_lasvm.t.svm.gz")
    train, test = DATA / "reuters_lasvm.svm.gz", DATA / "reuters_lasvm.t.svm.gz"
    options = ["--kernel", "linear", "--alpha", str(args.reuters_alpha), "--quiet"]
    with tempfile.TemporaryDirectory() as folder:
        model = os.path.join(folder, "reuters.sky")
        command = ["skylite", "train", str(train), "-m", model, *options]
        start = time.perf_counter()
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        fit = time.perf_counter() - start
        start = time.perf_counter()
        err = subprocess.run(["skylite", "predict", model, str(test), "-o",
                              os.path.join(folder, "pred.txt")],
                             capture_output=True, text=True, check=True).stdout
        predict = time.perf_counter() - start
    accuracy = float(re.search(r"accuracy ([\d.]+)%", err).group(1)) / 100
    print("\n### sparse Reuters (7770 train / 3299 test, 8315 features) through the CLI\n")
    print(f"`{' '.join(command[:2])} reuters_lasvm.svm.gz -m reuters.sky {' '.join(options)}`"
          f"\n\n{out.strip().splitlines()[-3]}\n")
    print(f"| test accuracy | train s (incl. reading) | predict s |\n|---|---|---|\n"
          f"| {100 * accuracy:.2f}% | {fit:.1f} | {predict:.1f} |")
    verdict(accuracy >= 0.97, f"at least 97% test accuracy ({100 * accuracy:.2f}%)")


PARTS = {"mnist20k": part_mnist20k, "mnist60k": part_mnist60k, "reuters": part_reuters}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", nargs="+", choices=list(PARTS), default=list(PARTS))
    parser.add_argument("--C", type=float, default=1.0, help="LinearSVC's C (20k and 60k)")
    parser.add_argument("--alpha", type=float, default=1e-5,
                        help="KernelSVC's alpha on MNIST 20k (hinge loss; LinearSVC's default "
                             "squared hinge at C = 1 is matched by the hinge at C = 5)")
    parser.add_argument("--seeds", type=int, default=3,
                        help="feature draws of KernelSVC on MNIST 20k (accuracy varies by "
                             "about 0.3 points between draws at s = 4096)")
    parser.add_argument("--C60k", type=float, default=10.0,
                        help="exact SVC's C on full MNIST; KernelSVC gets alpha = 1 / (n C)")
    parser.add_argument("--features60k", type=int, default=16384)
    parser.add_argument("--method60k", default="fastfood",
                        help="KernelSVC's Gaussian feature map on full MNIST: fastfood (the "
                             "fastest, as in docs/scale.md), rff for dense random Fourier "
                             "features, or nystroem (with --features60k 4096)")
    parser.add_argument("--reuters-alpha", type=float, default=1e-4)
    parser.add_argument("--no-exact20k", dest="exact20k", action="store_false",
                        help="leave exact SVC out of the MNIST 20k part")
    parser.add_argument("--plot", metavar="FILE", help="draw the MNIST tables into FILE")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], json.loads(args.child[1]))
    print(f"bench_vs_peers on {os.cpu_count()} cores")
    tables = [PARTS[part](args) for part in args.part]
    tables = [t for t in tables if t]              # the MNIST parts
    if args.plot and tables:
        plot(tables, args.plot)


def plot(tables, path):
    """Draw the MNIST tables (test accuracy, fit seconds, peak RSS of each contender) into
    path, and store what is drawn for benchmarks/replot.py."""
    data = [{"title": title,
             "rows": [{"name": name, "accuracy": r["accuracy"], "fit": r["fit"],
                       "peak_rss": r["peak_rss"], "detail": r["detail"]} for name, r in rows]}
            for title, rows in tables]
    draw(data, path)


def draw(data, path, made_by=None):
    """One row of three panels per table of `data` (a list of {"title", "rows"}, each row
    {"name", "accuracy", "fit", "peak_rss" in bytes, "detail"})."""
    from _plots import bars, figure, save
    longest = max(len(table["rows"]) for table in data)
    fig, axes = figure(len(data), 3, figsize=(12, (0.9 + 0.62 * longest) * len(data)),
                       squeeze=False)
    for panels, table in zip(axes, data):
        rows = table["rows"]
        labels = [f"{r['name']}\n{', '.join(r['detail'].split(', ')[:3])}" for r in rows]
        bars(panels[0], labels, [100 * r["accuracy"] for r in rows], "test accuracy (%)",
             "{:.2f}%")
        panels[0].set_xlim(80, 102.5)
        panels[0].set_xticks(range(80, 101, 5))
        bars(panels[1], labels, [r["fit"] for r in rows], "fit seconds")
        bars(panels[2], labels, [r["peak_rss"] / 2**30 for r in rows], "peak RSS (GiB)",
             "{:.2f}")
        for panel in panels[1:]:
            panel.set_yticks([])
        if len(data) > 1:
            panels[1].set_title(table["title"])
    fig.suptitle("Test accuracy, fit time and peak memory"
                 + (f": {data[0]['title']}" if len(data) == 1 else ""))
    save(fig, path, "peers", data, made_by)


if __name__ == "__main__":
    main()
