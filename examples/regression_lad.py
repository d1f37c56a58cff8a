"""
Regression with corrupted targets: kernel ridge against LAD
===========================================================

Kernel ridge vs least absolute deviations when some targets are corrupted.  Run it with::

    python examples/regression_lad.py

Regress pendigits' last pen coordinate on the other 15 (a real, smooth target), after
replacing 10% of the training targets with large garbage.  The squared loss follows the
garbage; the absolute loss (LAD) ignores it.
"""
import matplotlib.pyplot as plt
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
on_corrupted = {}
for cls in (KernelRidge, KernelLADRegression):
    scores = []
    for target in (y, corrupted):
        model = cls(sigma=0.6, n_features=512, alpha=1e-5).fit(X, target)
        scores.append(model.score(X_test, y_test))
    on_corrupted[cls.__name__] = model            # the fit on the corrupted targets
    print(f"{cls.__name__:<22} {scores[0]:>18.4f} {scores[1]:>22.4f}")

# %%
# Predictions on the test rows of the two models trained on the corrupted targets: the
# squared loss is pulled up towards the garbage values, LAD stays on the diagonal.
fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True, layout="constrained")
for ax, (name, model) in zip(axes, on_corrupted.items()):
    ax.plot(y_test, model.predict(X_test), ".", markersize=2, alpha=0.5)
    ax.plot([0, 1], [0, 1], "k--", linewidth=1)
    ax.set_title(f"{name}, trained on corrupted y")
    ax.set_xlabel("true last pen coordinate (test rows)")
axes[0].set_ylabel("prediction")
fig.suptitle("Kernel ridge against LAD on pendigits, 10% of the training targets corrupted")
plt.show()
