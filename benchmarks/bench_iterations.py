"""Iterations to tol: plain ADMM, over-relaxation, Anderson acceleration, both.

    python benchmarks/bench_iterations.py [--rows 20000] [--features 4096] [--tol 1e-3]
                                          [--blocks C] [--losses hinge,...] [--variants ...]
                                          [--plot FILE]

MNIST rows (skylite.datasets.load_mnist), Gaussian RFF (sigma = 6, float32 blocks, all cached),
10 classes, alpha = 1 / (n C) with C = 10 (fixed a priori, as for the exact SVC peer), the
hinge, multinomial logistic and squared (one-vs-rest) losses, l2.  Every variant runs from
the same start with the same rho (1, adapted) until the residuals meet tol (max 2000
iterations).  Printed per loss and variant: iterations, seconds, and F(coef_) evaluated on
the explicit features relative to the best F found by any variant (the "same optimum"
check: within 1e-4 of plain ADMM's, at a run to tol).  No test data is used.

--plot FILE draws the runs of the first loss (`skylite.plotting.plot_history`: objective,
residuals, rho and validation accuracy, against the iteration and the seconds) into FILE.
The validation rows are the --validation-rows MNIST training rows after the first --rows
(never fitted, never test rows); scoring them every iteration does not change the iterates.
"""
import argparse
import time
import warnings

import numpy as np

from skylite.admm import BlockADMM
from skylite.sketch import default_n_blocks
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels, decode_decision
from skylite.sketch import GaussianRFF
from skylite.datasets import load_mnist


VARIANTS = {                      # name: engine settings
    "plain": dict(relaxation=1.0, acceleration=None),
    "relaxation 1.8": dict(relaxation=1.8, acceleration=None),
    "anderson": dict(relaxation=1.0, acceleration="anderson"),
    "anderson + relaxation 1.8": dict(relaxation=1.8, acceleration="anderson"),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, default=4096)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--losses", default="hinge,logistic,squared")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--blocks", type=int, default=None,
                        help="column blocks C (default: the estimators' default for s and n, "
                             "skylite.sketch.default_n_blocks)")
    parser.add_argument("--plot", metavar="FILE", help="draw the first loss's runs into FILE")
    parser.add_argument("--validation-rows", type=int, default=2000,
                        help="with --plot: training rows after --rows scored every iteration")
    args = parser.parse_args()
    X_all, y_all = load_mnist()[:2]
    X, y = X_all[:args.rows], y_all[:args.rows]
    n, s = len(X), args.features
    alpha = 1.0 / (n * 10.0)
    blocks = args.blocks or default_n_blocks(s, n)
    fmap = GaussianRFF(s, sigma=6.0, n_blocks=blocks, random_state=0).fit(X)
    Z = fmap.transform(X).astype(np.float64)
    validation = None
    if args.plot:
        X_val = X_all[n:n + args.validation_rows]
        y_val = y_all[n:n + args.validation_rows]
        Z_val = fmap.transform(X_val).astype(np.float64)

        def validation(W):
            return float(np.mean(decode_decision(Z_val @ W) == y_val))
    histories = {}
    print(f"MNIST {n} rows, Gaussian RFF s={s} in {blocks} blocks (float32, cached), "
          f"alpha=1/(10 n), tol={args.tol:g}")
    print(f"{'loss':<9} {'variant':<27} {'iters':>6} {'seconds':>8} {'s/iter':>7} "
          f"{'F(coef_)':>12} {'F/F_best-1':>11}")
    for name in args.losses.split(","):
        loss = (get_loss(name, classification=True) if name == "squared" else get_loss(name))
        reg = get_regularizer("l2")
        Y, _ = code_labels(y, loss)
        rows = []
        for variant in args.variants.split(","):
            engine = BlockADMM(fmap, loss, reg, alpha, tol=args.tol, max_iter=2000,
                               precision="float32", memory_budget=10**10,
                               validation=validation, **VARIANTS[variant])
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                engine.fit(X, Y)
            seconds = time.perf_counter() - start
            W = engine.coef_
            F = loss.value(Z @ W, Y) / n + alpha * reg.value(W)
            rows.append((variant, engine.n_iter_, seconds, F))
            histories.setdefault(name, {})[variant] = engine.history_
            del engine
        best = min(r[3] for r in rows)
        for variant, iters, seconds, F in rows:
            print(f"{name:<9} {variant:<27} {iters:6d} {seconds:8.1f} {seconds / iters:7.3f} "
                  f"{F:12.6f} {F / best - 1:11.2e}", flush=True)
    if args.plot:
        plot(args, blocks, *next(iter(histories.items())))


def plot(args, blocks, loss, runs):
    """Draw the runs of one loss into args.plot, and store them for benchmarks/replot.py."""
    data = {"rows": args.rows, "features": args.features, "blocks": blocks, "tol": args.tol,
            "validation_rows": args.validation_rows, "loss": loss,
            "runs": {variant: list(history) for variant, history in runs.items()}}
    draw(data, args.plot)


def draw(data, path, made_by=None):
    """The runs of one loss, against the iteration (top) and the seconds (bottom).
    `data`: {"rows", "features", "blocks", "tol", "validation_rows", "loss",
    "runs": {variant: history_ (a list of records)}}."""
    from _plots import figure, save

    from skylite.plotting import plot_history
    fig, axes = figure(2, 4, figsize=(15, 7.5))
    for variant, history in data["runs"].items():
        plot_history(history, axes=axes[0], label=variant)
        plot_history(history, x="seconds", axes=axes[1], label=variant)
    for panel in axes[:, 3]:
        panel.set_title(f"validation accuracy\n({data['validation_rows']:,} training rows, "
                        f"not fitted)")
    fig.suptitle(f"BlockADMM on MNIST, {data['rows']:,} rows: {data['loss']} loss, Gaussian "
                 f"RFF s={data['features']} in {data['blocks']} blocks, alpha=1/(10 n), "
                 f"tol={data['tol']:g}")
    save(fig, path, "convergence", data, made_by)


if __name__ == "__main__":
    main()
