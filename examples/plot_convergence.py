"""
Watching a fit converge: the ``history_`` of a kernel SVM
=========================================================

Every ADMM iteration of a fit leaves a record in ``model.history_``: the objective, the
primal and dual residuals, the penalty rho, the seconds it took and, when the fit has a
validation set, the validation score.  :func:`skylite.plotting.plot_history` draws them.
Here a kernel SVM on random Fourier features (``method="rff"``) on pendigits (shipped with
skylite) is run to its tolerance twice, with
plain ADMM (``relaxation=1.0``) and with the default over-relaxation (1.8).  Run it with::

    python examples/plot_convergence.py

The same picture for MNIST (20,000 rows, s = 4096) is on the :doc:`../performance` page.
"""

# %%
# Two fits with a validation split
# --------------------------------
# ``early_stopping=True, validation_fraction=0.1`` holds out 10% of the training rows (per
# class) and scores them
# every iteration; ``n_iter_no_change=None`` only records the scores, so both runs go on
# until the residuals meet ``tol``.  The test rows are not used.
import matplotlib.pyplot as plt

from skylite import KernelSVC
from skylite.datasets import load_pendigits
from skylite.plotting import plot_history

X, y, _, _ = load_pendigits()
X = X / 100.0                     # features are integers 0..100

models = {}
for relaxation in (1.0, 1.8):
    models[relaxation] = KernelSVC(sigma=0.6, method="rff", n_features=1024, alpha=1e-5,
                                   relaxation=relaxation, early_stopping=True, validation_fraction=0.1,
                                   n_iter_no_change=None, random_state=0).fit(X, y)
    model = models[relaxation]
    print(f"relaxation {relaxation}: {model.n_iter_} iterations, converged "
          f"{model.converged_}, {model.history_[-1]['elapsed']:.1f} s, validation accuracy "
          f"{model.history_[-1]['validation']:.4f}")

# %%
# Against the iteration
# ---------------------
# Both residuals fall until they meet the tolerance; rho changes every 10 iterations to
# keep them balanced.  Over-relaxation reaches the tolerance in fewer iterations; the
# validation accuracy settles long before the residuals do, which is what early stopping
# (``n_iter_no_change``) exploits.
axes = None
for relaxation, model in models.items():
    axes = plot_history(model, axes=axes, label=f"relaxation {relaxation}")
plt.gcf().suptitle("KernelSVC on pendigits, s = 1024")
plt.show()

# %%
# Against the seconds
# -------------------
# The first iteration also factors the blocks' small systems, so it takes longer than the
# others.
axes = None
for relaxation, model in models.items():
    axes = plot_history(model, x="seconds", axes=axes, label=f"relaxation {relaxation}")
plt.gcf().suptitle("KernelSVC on pendigits, s = 1024")
plt.show()
