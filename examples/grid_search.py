"""Choose sigma and alpha by cross-validation with scikit-learn (needs scikit-learn).

    python examples/grid_search.py

skylite's estimators are scikit-learn estimators: they go into Pipeline and GridSearchCV
like SVC would, with scikit-learn's `gamma` or skylite's `sigma`.
"""
import warnings

from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skylite import KernelSVC
from skylite.admm import ConvergenceWarning
from skylite.datasets import load_pendigits

X, y, X_test, y_test = load_pendigits()
pipeline = make_pipeline(StandardScaler(), KernelSVC(n_features=1024, max_iter=200))
grid = {"kernelsvc__gamma": [0.01, 0.1, 1.0], "kernelsvc__alpha": [1e-5, 1e-4]}
search = GridSearchCV(pipeline, grid, cv=3)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    search.fit(X, y)
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    print(f"gamma={params['kernelsvc__gamma']:<5} alpha={params['kernelsvc__alpha']:<7} "
          f"cv accuracy {100 * score:.2f}%")
print(f"best {search.best_params_}: test accuracy {100 * search.score(X_test, y_test):.2f}%")
