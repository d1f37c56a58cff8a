"""
Regression with corrupted targets: kernel ridge against LAD
===========================================================

Kernel ridge vs least absolute deviations when some targets are corrupted.  Run it with::

    python examples/regression_lad.py

Regress pendigits' last pen coordinate on the other 15 (a real, smooth target), after
replacing 10% of the training targets with large garbage.  The squared loss follows the
garbage; the absolute loss (LAD) ignores it.
"""
import numpy as np

from skylite import KernelLADRegression, KernelRidge
from skylite.datasets import load_pendigits

X, _, X_test, _ = load_pendigits()
X, X_test = X / 100.0, X_test / 100.0
X, y = X[:, :15], X[:, 15]
X_test, y_test = X_test[:, :15], X_test[:, 15]

rng = np.random.default_rng(0)
corrupted = y.copy()
bad = rng.random(len(y)) < 0.10
corrupted[bad] = rng.uniform(5, 10, bad.sum())

print(f"{'model':<22} {'test R^2 (clean y)':>18} {'test R^2 (corrupted y)':>22}")
for cls in (KernelRidge, KernelLADRegression):
    scores = []
    for target in (y, corrupted):
        model = cls(sigma=0.6, n_features=512, alpha=1e-5).fit(X, target)
        scores.append(model.score(X_test, y_test))
    print(f"{cls.__name__:<22} {scores[0]:>18.4f} {scores[1]:>22.4f}")
