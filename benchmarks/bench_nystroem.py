"""Nystroem features against random Fourier features: Gram error, accuracy and fit time.

    python benchmarks/bench_nystroem.py [--part gram mnist20k design sweep whitening lloyd]
                                        [--no-exact] [--seeds 2]

Protocols, fixed before the runs (the 10,000 MNIST test rows are touched once, to report):

1. gram: relative Frobenius error ||Z Z^T - K|| / ||K|| of the Gaussian kernel (sigma = 6) on
   the first 1,000 MNIST training rows, at s = 128 ... 1000, n_blocks = 1: Nystroem with
   k-means and uniform landmarks against Gaussian RFF, each the mean over 3 seeds.
2. mnist20k: the first 20,000 training rows, Gaussian sigma = 6, hinge loss, C = 10
   (alpha = 1 / (n C)), float32, run to tol = 1e-3 with the default blocks; Nystroem
   (k-means, then uniform landmarks) at s = 2048 and 4096 beside Gaussian RFF at s = 4096 and
   16384, and exact SVC (libsvm) with the same C (--no-exact leaves it out).  Target: Nystroem
   with s <= 4096 within 0.05 points of exact SVC, in at most a third of RFF s = 16384's fit.
3. design: how the whitening K_LL^{-1/2} meets the column blocks, on the same 20k rows with
   s = 4096 k-means landmarks in 8 blocks: (a) block-diagonal whitening with the plain l2
   norm; (a) with the RKHS norm of the functions spanned (skylite's choice, what
   `method="nystroem"` does); (b) one whitening of all landmarks (one block of 4096);
   (c) Falkon's parameterization, the unwhitened k(x, L_j) with the non-separable norm
   1/2 tr(W^T K_LL W).

4. sweep: the phases of 8 iterations of the row sweep with nothing cached (memory_budget=0)
   on all 60,000 MNIST rows, float32: what an iteration costs where Z cannot be held, as at
   10^6 rows (the row sweep then regenerates every block each iteration), for Nystroem and
   Fastfood features.
5. whitening: `KernelSVC(sigma=4, n_features=4096)` (Nystroem k-means landmarks in 8 blocks,
   the RKHS norm, float64, every block in memory) on the first 10,000 and 20,000 MNIST rows,
   C = 10, run to tol = 1e-3 without early stopping, with the features whitened once (what
   the estimators do when they fit in memory) and with the RKHS norm's prox every iteration
   (whitening turned off); then a path over C = 1, 10, 100, 1000 on 13,334 rows (a 3-fold
   search's fold) with the default early stopping, both ways.  Iterations, fit seconds, the
   phases that differ, the training objective and the test accuracy.
6. lloyd: how many Lloyd iterations k-means landmarks need, judged on selection rows only
   (rows no fit sees; the test rows are not used): KernelSVC run to tol (early stopping off)
   with k-means landmarks after 1, 2, 3 and 5 Lloyd iterations (the pool and the start as
   `landmarks="kmeans"` draws them), for seeds 0 .. --seeds - 1 (the start, the pool and the
   features).  MNIST: the first 20,000 training rows in float64 (so float64 features),
   `n_features=4096`, C = 10, sigma = 4 (the 20k search's choice) and the default sigma
   ("scale"), training rows 50,000-59,999 as selection rows.  letter and pendigits:
   KernelSVC's defaults, a stratified 20% of the training rows (split by the seed) as
   selection rows.  Printed: the selection accuracy
   (mean over the seeds), the seconds of the k-means step and of the whole fit.

Every contender runs in its own process (`--child`), on a quiet machine.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import DATA, require  # noqa: E402
from bench_vs_peers import (SIGMA, child, exact_svc, mnist, run_child,  # noqa: E402
                            skylite_svc, table)

C_SVM = 10.0


def gram_errors(rows=1000, sizes=(128, 256, 512, 1000), seeds=3):
    from skylite.kernels import Gaussian
    from skylite.sketch import Nystroem
    X = mnist(rows)[0].astype(np.float64)
    kernel = Gaussian(SIGMA)
    K = kernel.gram(X)
    norm = np.linalg.norm(K)

    def error(fmap):
        Z = fmap.fit(X).transform(X)
        return float(np.linalg.norm(Z @ Z.T - K) / norm)
    table = {}
    for s in sizes:
        table[s] = {
            "rff": np.mean([error(kernel.feature_map(s, random_state=r)) for r in range(seeds)]),
            "kmeans": np.mean([error(Nystroem(kernel, s, landmarks="kmeans", random_state=r))
                               for r in range(seeds)]),
            "uniform": np.mean([error(Nystroem(kernel, s, landmarks="uniform",
                                               random_state=r)) for r in range(seeds)])}
    return table


def design(variant, rows=20000, s=4096, blocks=8):
    """One whitening design on MNIST 20k (see the module docstring), hinge, C = 10."""
    from skylite.admm import BlockADMM
    from skylite.kernels import Gaussian
    from skylite.prox import RKHSNorm, get_loss, get_regularizer
    from skylite.prox.coding import code_labels
    from skylite.sketch import Nystroem
    X, y, Xt, yt = mnist(rows)
    start = time.perf_counter()
    fmap = Nystroem(Gaussian(SIGMA), s, n_blocks=1 if variant == "b" else blocks).fit(X)
    if variant == "a_l2" or variant == "b":
        regularizer = get_regularizer("l2")
    elif variant == "a_rkhs":
        regularizer = RKHSNorm(fmap, np.float32)
    else:   # "c": features a k(x, L_j), norm 1/2 a^2 w^T K_LL w (a^2 = s_j / s)
        a = np.sqrt(1.0 / blocks)
        fmap._set_landmarks(fmap.landmarks_, fmap.seed_, np.concatenate(
            [a * np.eye(b).ravel() for b in fmap.block_sizes]))
        regularizer = _FalkonNorm(fmap, a * a)
    hinge = get_loss("hinge")
    Y, classes = code_labels(y, hinge)
    engine = BlockADMM(fmap, hinge, regularizer, 1.0 / (rows * C_SVM), precision="float32",
                       relaxation=1.8, acceleration=None).fit(X, Y)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    predicted = classes[np.argmax(fmap.transform(Xt.astype(np.float32)) @ engine.coef_,
                                  axis=1)]
    predict = time.perf_counter() - start
    return {"accuracy": float(np.mean(predicted == yt)), "fit": fit, "predict": predict,
            "detail": f"{engine.n_iter_} iterations, "
                      f"{'converged' if engine.converged_ else 'max_iter'}"}


class _FalkonNorm:
    """r(W) = 1/2 scale tr(W^T K_LL W): the RKHS norm of f = k(., L) W (design (c))."""

    name = "rkhs"

    def __init__(self, fmap, scale):
        from skylite.prox import RKHSNorm
        self._norm = RKHSNorm(fmap, np.float32)
        self._norm._gram = (scale * fmap.kernel.gram(fmap.landmarks_)).astype(np.float32)

    def __getattr__(self, name):
        return getattr(self._norm, name)


def uncached_sweep(method, s, blocks, rows=60000, iterations=8):
    """Phase seconds of `iterations` row-sweep iterations with nothing cached
    (memory_budget=0), as at 10^6 rows, where Z cannot be held: every iteration
    regenerates every block."""
    import warnings
    from skylite import KernelSVC
    from skylite.admm import ConvergenceWarning
    X, y = mnist(rows)[:2]
    model = KernelSVC(sigma=SIGMA, method=method, n_features=s, n_blocks=blocks,
                      alpha=1.0 / (rows * C_SVM), precision="float32", max_iter=iterations,
                      tol=1e-12, memory_budget=0, early_stopping=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return {"phases": {k: float(v) for k, v in model.phase_seconds_.items()},
            "sweep": model.sweep_, "iterations": model.n_iter_}


def whitening_fit(rows, whiten, path=False):
    """One fit (or path) of the whitening part, whitened or with the RKHS norm's prox."""
    import skylite.estimators
    from skylite import KernelSVC
    if not whiten:                                       # the RKHS norm's prox every step
        skylite.estimators.whitening_factor = lambda *args, **kwargs: None
    X, y, Xt, yt = mnist(rows)
    model = KernelSVC(sigma=4.0, n_features=4096, C=10.0, random_state=0, precision="float64",
                      early_stopping="auto" if path else False)
    start = time.perf_counter()
    if path:
        models = model.fit_path(X, y, [1.0, 10.0, 100.0, 1000.0])
    else:
        models = [model.fit(X, y)]
    fit = time.perf_counter() - start
    last = models[-1]
    return {"fit": fit, "iterations": [m.n_iter_ for m in models],
            "accuracy": [float(m.score(Xt, yt)) for m in models],
            "objective": [float(m.objective(X, y)) for m in models],
            "phases": {k: float(v) for k, v in last.phase_seconds_.items()},
            "whitened": "whitening" in last.phase_seconds_}


def lloyd_fit(data, iterations, seed, sigma=None):
    """One fit of the lloyd part: selection accuracy, k-means seconds, fit seconds."""
    from sklearn.model_selection import train_test_split

    import skylite.sketch.nystroem as nystroem
    from skylite import KernelSVC
    if data == "mnist20k":
        X_all, y_all = mnist(60000)[:2]
        X, y, Xs, ys = X_all[:20000], y_all[:20000], X_all[50000:], y_all[50000:]
        model = KernelSVC(n_features=4096, C=10.0, sigma=sigma)
    else:
        if data == "pendigits":
            from skylite.datasets import load_pendigits
            X_all, y_all = load_pendigits()[:2]
        else:
            require("letter.npz")
            with np.load(DATA / "letter.npz") as z:
                X_all, y_all = z["X_train"], z["y_train"]
        X, Xs, y, ys = train_test_split(X_all, y_all, test_size=0.2, stratify=y_all,
                                        random_state=seed)
        model = KernelSVC()
    model.set_params(random_state=seed, early_stopping=False)
    nystroem.KMEANS_ITERATIONS = iterations
    kmeans, seconds = nystroem.kmeans_centres, [0.0]

    def timed(*args):
        start = time.perf_counter()
        centres = kmeans(*args)
        seconds[0] += time.perf_counter() - start
        return centres
    nystroem.kmeans_centres = timed
    start = time.perf_counter()
    model.fit(X, y)
    return {"fit": time.perf_counter() - start, "kmeans": seconds[0],
            "selection": float(model.score(Xs, ys)), "iterations": model.n_iter_}


CONTENDERS = {"skylite": skylite_svc, "exact_svc": exact_svc, "design": design,
              "uncached_sweep": uncached_sweep, "whitening": whitening_fit, "lloyd": lloyd_fit}


def part_gram(args):
    print("\n### Gram error on 1,000 MNIST rows, Gaussian sigma = 6 (mean of 3 seeds)\n")
    print("| s | RFF | Nystroem k-means | Nystroem uniform | k-means / RFF |")
    print("|---|---|---|---|---|")
    for s, e in gram_errors().items():
        print(f"| {s} | {e['rff']:.4f} | {e['kmeans']:.4f} | {e['uniform']:.4f} | "
              f"{e['kmeans'] / e['rff']:.2f} |")


def part_mnist20k(args):
    n, alpha = 20000, 1.0 / (20000 * C_SVM)

    def ours(s, method, landmarks=None):
        return run_child("skylite", script=__file__, rows=n, s=s, alpha=alpha,
                         precision="float32", method=method, landmarks=landmarks)
    rows = [("exact SVC (libsvm)", run_child("exact_svc", script=__file__, rows=n, C=C_SVM))
            ] if args.exact else []
    rows += [(f"skylite Nystroem k-means, s={s}", ours(s, "nystroem")) for s in (2048, 4096)]
    rows += [("skylite Nystroem uniform, s=4096", ours(4096, "nystroem", "uniform"))]
    rows += [(f"skylite RFF, s={s}", ours(s, "rff")) for s in (4096, 16384)]
    table(f"MNIST 20k train / 10k test, Gaussian sigma = 6, hinge, C = {C_SVM:g}, to tol", rows)
    results = dict(rows)
    best = results["skylite Nystroem k-means, s=4096"]
    rff = results["skylite RFF, s=16384"]
    print(f"\n- Nystroem k-means s=4096: {100 * best['accuracy']:.2f}% in {best['fit']:.1f} s, "
          f"{best['fit'] / rff['fit']:.2f}x the fit of RFF s=16384 "
          f"({100 * rff['accuracy']:.2f}%, {rff['fit']:.1f} s)")
    if args.exact:
        exact = results["exact SVC (libsvm)"]
        print(f"- against exact SVC: {100 * (best['accuracy'] - exact['accuracy']):+.2f} points")


def part_design(args):
    labels = {"a_l2": "(a) block-diagonal whitening, l2 norm",
              "a_rkhs": "(a) block-diagonal whitening, RKHS norm (skylite)",
              "b": "(b) one whitening of all landmarks (1 block)",
              "c": "(c) unwhitened k(x, L_j), norm tr(W^T K_LL W)"}
    rows = [(label, run_child("design", script=__file__, variant=variant))
            for variant, label in labels.items()]
    table("How the whitening meets the blocks: MNIST 20k, s = 4096 k-means landmarks, "
          "8 blocks, hinge, C = 10, relaxation 1.8, float32, to tol", rows)


def part_sweep(args):
    print("\n### Row sweep with nothing cached (memory_budget=0): 60,000 MNIST rows, "
          "8 iterations, float32, 2 threads\n")
    print("| map | transform s | products s | regularizer prox s | all phases s | "
          "per iteration at 10^6 rows (x 50/3) |")
    print("|---|---|---|---|---|---|")
    for method, s, blocks in (("nystroem", 4096, 8), ("nystroem", 2048, 4),
                              ("fastfood", 16384, 16)):
        r = run_child("uncached_sweep", script=__file__, method=method, s=s, blocks=blocks)
        p = r["phases"]
        total = sum(p.values())
        print(f"| {method}, s={s} ({blocks} blocks) | {p['transform']:.1f} | "
              f"{p['products']:.1f} | {p['prox']:.1f} | {total:.1f} | "
              f"{total / r['iterations'] * 1e6 / 60000:.0f} s |")


def part_whitening(args):
    print("\n### Whitened features against the RKHS norm's prox: MNIST, KernelSVC(sigma=4, "
          "n_features=4096), Nystroem k-means in 8 blocks, float64, 2 threads\n")
    print("| fit | features | iterations | fit s | prox s | whitening s | objective | "
          "test accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    runs = [(f"{n:,} rows, C = 10, to tol", dict(rows=n)) for n in (10000, 20000)]
    runs.append(("path C = 1, 10, 100, 1000 on 13,334 rows, early stopping",
                 dict(rows=13334, path=True)))
    for label, kwargs in runs:
        for whiten in (True, False):
            r = run_child("whitening", script=__file__, whiten=whiten, **kwargs)
            assert r["whitened"] == whiten
            p = r["phases"]
            print(f"| {label} | {'whitened' if whiten else 'RKHS prox'} | "
                  f"{' / '.join(map(str, r['iterations']))} | {r['fit']:.1f} | "
                  f"{p['prox']:.1f} | {p.get('whitening', 0.0):.1f} | "
                  f"{' / '.join(f'{v:.5f}' for v in r['objective'])} | "
                  f"{' / '.join(f'{100 * v:.2f}%' for v in r['accuracy'])} |", flush=True)


def part_lloyd(args):
    print("\n### Lloyd iterations of k-means landmarks: selection accuracy (mean of "
          f"{args.seeds} seeds), seconds of k-means and of the fit, run to tol\n")
    print("| data | Lloyd iterations | selection accuracy | k-means s | fit s |")
    print("|---|---|---|---|---|")
    sets = [("MNIST 20k, sigma 4", dict(data="mnist20k", sigma=4.0)),
            ("MNIST 20k, sigma scale", dict(data="mnist20k")),
            ("letter", dict(data="letter")), ("pendigits", dict(data="pendigits"))]
    for label, kwargs in sets:
        for iterations in (1, 2, 3, 5):
            runs = [run_child("lloyd", script=__file__, iterations=iterations, seed=seed,
                              **kwargs) for seed in range(args.seeds)]
            mean = {k: float(np.mean([r[k] for r in runs])) for k in ("selection", "kmeans",
                                                                       "fit")}
            print(f"| {label} | {iterations} | {100 * mean['selection']:.2f}% | "
                  f"{mean['kmeans']:.2f} | {mean['fit']:.1f} |", flush=True)


PARTS = {"gram": part_gram, "mnist20k": part_mnist20k, "design": part_design,
         "sweep": part_sweep, "whitening": part_whitening, "lloyd": part_lloyd}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", nargs="+", choices=list(PARTS), default=list(PARTS))
    parser.add_argument("--no-exact", dest="exact", action="store_false",
                        help="leave exact SVC out of the mnist20k part")
    parser.add_argument("--seeds", type=int, default=2, help="with --part lloyd: seeds")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], json.loads(args.child[1]), CONTENDERS)
    print(f"bench_nystroem on {os.cpu_count()} cores")
    for part in args.part:
        PARTS[part](args)


if __name__ == "__main__":
    main()
