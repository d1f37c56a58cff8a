"""The `skylite` command line.

    skylite demo [--features S] [--blocks C] [--sigma SIGMA] [--alpha ALPHA] [--seed SEED]

`demo` trains a kernel SVM (hinge loss, Gaussian random features, BlockADMM) on pendigits,
which ships with skylite, and prints its test accuracy beside a linear SVM trained by the same
engine on the raw features.
"""
import argparse
import sys
import time
import warnings

from .admm import ConvergenceWarning
from .datasets import load_pendigits
from .estimators import KernelSVC


def demo(args):
    X_train, y_train, X_test, y_test = load_pendigits()
    X_train, X_test = X_train / 100.0, X_test / 100.0   # features are integers 0..100
    print(f"pendigits: {len(X_train)} train / {len(X_test)} test rows, "
          f"{X_train.shape[1]} features, {len(set(y_train))} classes")
    models = [
        ("linear SVM", KernelSVC("linear", alpha=args.alpha)),
        (f"kernel SVM (gaussian sigma={args.sigma}, s={args.features})",
         KernelSVC(sigma=args.sigma, n_features=args.features, n_blocks=args.blocks,
                   alpha=args.alpha, random_state=args.seed)),
    ]
    print(f"{'model':<46} {'test accuracy':>13} {'iterations':>10} {'seconds':>8}")
    for name, model in models:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)   # shown as "(max)" below
            model.fit(X_train, y_train)
        accuracy = model.score(X_test, y_test)
        iterations = f"{model.n_iter_}{'' if model.converged_ else ' (max)'}"
        print(f"{name:<46} {100 * accuracy:>12.2f}% {iterations:>10} "
              f"{time.perf_counter() - start:>8.2f}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="skylite", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("demo", help="train on pendigits (shipped): kernel vs linear")
    p.add_argument("--features", type=int, default=2048, help="random features s")
    p.add_argument("--blocks", type=int, default=None, help="column blocks C (default: auto)")
    p.add_argument("--sigma", type=float, default=0.6, help="Gaussian kernel bandwidth")
    p.add_argument("--alpha", type=float, default=1e-5, help="regularization")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as exc:   # bad option values: one line, no traceback
        print(f"skylite {args.command}: error: {exc}", file=sys.stderr)
        return 2
