"""The `skylite` command line.

    skylite demo [--features S] [--sigma SIGMA] [--alpha ALPHA] [--seed SEED]

`demo` trains on pendigits (shipped with skylite) and prints the test accuracy of a kernel
model beside a linear one.  Until the BlockADMM engine lands, both models are one-vs-rest
ridge classifiers solved exactly on their features, W = (Z^T Z + n alpha I)^-1 Z^T Y, with Z
accumulated block by block (Z^T Z and Z^T Y only, never Z whole).
"""
import argparse
import sys
import time

import numpy as np
import scipy.linalg

from .datasets import load_pendigits
from .kernels import Gaussian, Linear


def ridge_classifier(fmap, X, y, alpha, n_classes):
    """One-vs-rest ridge on z(X): W = (Z^T Z + n alpha I)^-1 Z^T Y with Y in {-1, +1}.

    Z^T Z and Z^T Y are accumulated over column blocks (Z_a^T Z_b), so no n x s array
    is formed.  Returns W (s x n_classes).
    """
    Y = np.where(y[:, None] == np.arange(n_classes), 1.0, -1.0)
    offsets = np.concatenate([[0], np.cumsum(fmap.block_sizes)])
    s = offsets[-1]
    gram = np.empty((s, s))
    rhs = np.empty((s, n_classes))
    blocks = range(len(offsets) - 1)
    for a in blocks:
        Za = fmap.block(X, a)
        rows = slice(offsets[a], offsets[a + 1])
        rhs[rows] = Za.T @ Y
        for b in range(a, len(offsets) - 1):
            Zb = Za if b == a else fmap.block(X, b)
            gram[rows, offsets[b]:offsets[b + 1]] = Za.T @ Zb
            gram[offsets[b]:offsets[b + 1], rows] = gram[rows, offsets[b]:offsets[b + 1]].T
    gram[np.diag_indices(s)] += len(X) * alpha
    return scipy.linalg.solve(gram, rhs, assume_a="pos")


def demo(args):
    X_train, y_train, X_test, y_test = load_pendigits()
    X_train, X_test = X_train / 100.0, X_test / 100.0   # features are integers 0..100
    n_classes = int(y_train.max()) + 1
    print(f"pendigits: {len(X_train)} train / {len(X_test)} test rows, "
          f"{X_train.shape[1]} features, {n_classes} classes")
    models = [
        ("linear", Linear().feature_map(None)),
        (f"gaussian (sigma={args.sigma}, s={args.features})",
         Gaussian(args.sigma).feature_map(args.features, n_blocks=args.blocks,
                                          random_state=args.seed)),
    ]
    print(f"{'model':<34} {'test accuracy':>13} {'seconds':>8}")
    for name, fmap in models:
        start = time.perf_counter()
        fmap.fit(X_train)
        W = ridge_classifier(fmap, X_train, y_train, args.alpha, n_classes)
        accuracy = np.mean(np.argmax(fmap.transform(X_test) @ W, axis=1) == y_test)
        print(f"{name:<34} {100 * accuracy:>12.2f}% {time.perf_counter() - start:>8.2f}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="skylite", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("demo", help="train on pendigits (shipped): kernel vs linear")
    p.add_argument("--features", type=int, default=2048, help="random features s")
    p.add_argument("--blocks", type=int, default=4, help="column blocks C")
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
