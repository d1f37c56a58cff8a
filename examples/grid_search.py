"""
Choosing sigma and C by cross-validation
========================================

A kernel machine is only as good as its bandwidth sigma and its C, so they are chosen by
cross-validation.  ``skylite.model_selection.KernelGridSearchCV`` is scikit-learn's
``GridSearchCV`` for skylite estimators, with the same grid, folds and results, but it
shares work: in each fold, the values of C of one sigma are one regularization path,
solved on one setup (features, caches, factors) from strong to weak regularization, each
started from the previous model; grid points clearly behind after a fold are not fitted on
the others (racing).  The test rows are scored once, by the chosen model.  Run it with::

    python examples/grid_search.py
"""
import time
import warnings

import matplotlib.pyplot as plt
from sklearn.model_selection import GridSearchCV

from skylite import KernelSVC
from skylite.admm import ConvergenceWarning
from skylite.datasets import load_pendigits
from skylite.model_selection import KernelGridSearchCV
from skylite.plotting import plot_search

X, y, X_test, y_test = load_pendigits()
X, y = X[:3000] / 100.0, y[:3000]                    # 3,000 rows, pixels in [0, 1]
X_test = X_test / 100.0
estimator = KernelSVC(n_features=512)
grid = {"sigma": [0.15, 0.3, 0.6, 1.2], "C": [1, 10, 100]}
warnings.simplefilter("ignore", ConvergenceWarning)

start = time.perf_counter()
search = KernelGridSearchCV(estimator, grid, cv=3).fit(X, y)
ours = time.perf_counter() - start
start = time.perf_counter()
reference = GridSearchCV(estimator, grid, cv=3).fit(X, y)
theirs = time.perf_counter() - start

for params, score, dropped in zip(search.cv_results_["params"],
                                  search.cv_results_["mean_test_score"],
                                  search.dropped_after_):
    note = f"  (dropped after fold {dropped + 1})" if dropped >= 0 else ""
    print(f"sigma={params['sigma']:<5} C={params['C']:<4} cv accuracy {100 * score:.2f}%{note}")
print(f"KernelGridSearchCV: {ours:.1f} s, best {search.best_params_}, "
      f"test accuracy {100 * search.score(X_test, y_test):.2f}%")
print(f"GridSearchCV:       {theirs:.1f} s, best {reference.best_params_}, "
      f"test accuracy {100 * reference.score(X_test, y_test):.2f}%")

# %%
# The mean cross-validated accuracy over the grid, C on a log2 scale as in LIBSVM's
# grid.py.  Too small a sigma (a narrow kernel) fits each training point on its own and
# generalizes worst; racing dropped those points after the first fold (hatched: their
# mean is over the folds they ran).
ax = plot_search(search, title="pendigits: mean 3-fold CV accuracy (%)")
plt.show()
