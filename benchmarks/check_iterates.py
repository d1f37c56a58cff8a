"""Snapshot the engine's iterates, to check that a refactoring changes no arithmetic.

    python benchmarks/check_iterates.py --save before.npz     # on the old code
    python benchmarks/check_iterates.py --compare before.npz  # on the new code

Each case fits a small problem (pendigits rows shipped in the package) for a fixed number of
iterations and stores the model, the objective and residual history and, for the squared-loss
solvers, the closed-form and PCG solutions: 120 arrays over hinge, logistic and squared loss,
float32 and float64, Anderson on and off, both sweeps, relaxation 1.0 and 1.5 and the preset
estimators.  `--compare` prints every array that differs in a single bit and exits 1 if any does.
"""
import argparse
import itertools
import sys
import warnings

import numpy as np


def cases():
    """(name, estimator factory) pairs; each factory builds a fresh estimator."""
    from skylite import (KernelLADRegression, KernelLogisticRegression, KernelMachine,
                         KernelRidge, KernelSVC)
    common = dict(sigma=60.0, n_features=256, n_blocks=4, max_iter=12, tol=1e-12,
                  random_state=3, early_stopping=False)
    out = []
    for loss, precision, accel, sweep, relax in itertools.product(
            ("hinge", "logistic", "squared"), ("float64", "float32"), ("anderson", None),
            ("rows", "columns"), (1.0, 1.5)):
        name = f"{loss}-{precision}-{accel}-{sweep}-{relax}"
        out.append((name, lambda loss=loss, precision=precision, accel=accel, sweep=sweep,
                    relax=relax: (KernelMachine(
                        loss=loss, precision=precision, acceleration=accel, relaxation=relax,
                        solver="admm", classification=loss != "squared", **common), sweep)))
    for cls in (KernelSVC, KernelLogisticRegression, KernelLADRegression):
        out.append((f"preset-{cls.__name__}",            # alpha: the same problem as ever
                    lambda cls=cls: (cls(alpha=1e-4, **common), "auto")))
    out.append(("ridge-direct", lambda: (KernelRidge(solver="direct", **common), "auto")))
    out.append(("ridge-pcg", lambda: (KernelRidge(solver="pcg", **dict(common, max_iter=30)),
                                      "auto")))
    return out


def _forced_sweep(sweep):
    """The sweep is an engine option the estimators do not expose: force it on every
    EngineSettings built while the fit runs."""
    from unittest import mock

    from skylite.admm.settings import EngineSettings
    original = EngineSettings.__post_init__

    def post_init(self):
        original(self)
        if sweep != "auto":
            object.__setattr__(self, "sweep", sweep)
    return mock.patch.object(EngineSettings, "__post_init__", post_init)


def data(regression):
    from skylite.datasets import load_pendigits
    X, y, _, _ = load_pendigits()
    X, y = X[:600], y[:600]
    return (X, y.astype(float) / 9.0) if regression else (X, y)


def snapshot():
    arrays = {}
    for name, make in cases():
        model, sweep = make()
        regression = not model.is_classifier
        X, y = data(regression)
        with warnings.catch_warnings(), _forced_sweep(sweep):
            warnings.simplefilter("ignore")
            model.fit(X, y)
        if sweep != "auto":
            assert model.sweep_ == sweep, (name, model.sweep_)
        coef = model.coef_ if model.coef_ is not None else model.dual_coef_
        arrays[f"{name}/coef"] = np.asarray(coef)
        history = model.history_
        keys = [k for k in ("objective", "primal", "dual", "rho", "residual")
                if history and k in history[0]]
        if keys:
            arrays[f"{name}/history"] = np.array([[r[k] for k in keys] for r in history])
    return arrays


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", metavar="FILE")
    group.add_argument("--compare", metavar="FILE")
    args = parser.parse_args()
    arrays = snapshot()
    if args.save:
        np.savez(args.save, **arrays)
        print(f"{len(arrays)} arrays saved to {args.save}")
        return 0
    with np.load(args.compare) as before:
        names = sorted(set(before.files) | set(arrays))
        differ = [n for n in names if n not in before.files or n not in arrays
                  or before[n].shape != arrays[n].shape
                  or before[n].tobytes() != arrays[n].tobytes()]
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(names)} arrays, {len(differ)} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
