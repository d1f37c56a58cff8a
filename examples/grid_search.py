"""
Choosing gamma and alpha by cross-validation
============================================

skylite's estimators are scikit-learn estimators: they go into ``Pipeline`` and
``GridSearchCV`` like ``SVC`` would, with scikit-learn's ``gamma`` or skylite's ``sigma``.
Each fit here stops early on a validation split of its own training fold
(``early_stopping=True``), which keeps the 18 fits of the search short; the test rows
are scored once, by the chosen model.  Run it with::

    python examples/grid_search.py
"""
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skylite import KernelSVC
from skylite.admm import ConvergenceWarning
from skylite.datasets import load_pendigits

X, y, X_test, y_test = load_pendigits()
pipeline = make_pipeline(StandardScaler(), KernelSVC(n_features=512, early_stopping=True))
gammas, alphas = [0.01, 0.1, 1.0], [1e-5, 1e-4]
grid = {"kernelsvc__gamma": gammas, "kernelsvc__alpha": alphas}
search = GridSearchCV(pipeline, grid, cv=3)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    search.fit(X, y)
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    print(f"gamma={params['kernelsvc__gamma']:<5} alpha={params['kernelsvc__alpha']:<7} "
          f"cv accuracy {100 * score:.2f}%")
print(f"best {search.best_params_}: test accuracy {100 * search.score(X_test, y_test):.2f}%")

# %%
# The cross-validated accuracy over the grid: too large a gamma (a narrow kernel) fits
# each training point on its own and generalizes worst.
scores = np.array([[search.cv_results_["mean_test_score"][k]
                    for k, p in enumerate(search.cv_results_["params"])
                    if p["kernelsvc__gamma"] == gamma and p["kernelsvc__alpha"] == alpha]
                   for alpha in alphas for gamma in gammas]).reshape(len(alphas), len(gammas))
fig, ax = plt.subplots(figsize=(5.5, 3.2), layout="constrained")
image = ax.imshow(100 * scores, cmap="viridis")
ax.set_xticks(range(len(gammas)), [str(g) for g in gammas])
ax.set_yticks(range(len(alphas)), [str(a) for a in alphas])
ax.set_xlabel("gamma")
ax.set_ylabel("alpha")


def text_colour(rgba):
    """Black on a light cell, white on a dark one (the cell's relative luminance)."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3])
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "white"


for (i, j), value in np.ndenumerate(100 * scores):
    ax.text(j, i, f"{value:.1f}%", ha="center", va="center",
            color=text_colour(image.cmap(image.norm(value))))
fig.colorbar(image, label="3-fold cv accuracy (%)")
fig.suptitle("KernelSVC on pendigits: cv accuracy over the grid")
plt.show()
