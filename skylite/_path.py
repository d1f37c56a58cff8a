"""A regularization path of an estimator: one setup, many solves.

`PathFitting.fit_path(X, y, values)` fits the same estimator at several values of its
regularization parameter (C for the classifiers given C, alpha otherwise) on the same rows.
The work that does not depend on the regularization is done once: the input checks, the
target coding, the early-stopping split, the feature map (its bandwidth, landmarks and
layout), the memory plan and the cached feature blocks; each further value is a new solve
on that setup (`skylite.admm.BlockADMM.solve`: the cached blocks are rescaled, not
regenerated), continuing from the previous value's whole ADMM state (iterates, duals and
rho, rescaled to the new value's preconditioning: `BlockADMM.solve(keep_state=True)`), which
took 0.7-0.85 of a cold fit's iterations to the same objective on MNIST-10k at C = 100 and
1000 (docs/tuning.md).  Each solve's model equals an independent fit at that value up to
the solver's tolerance.  The closed form of the squared loss with l2 (solver="direct")
makes its normal equations Z^T Z and Z^T Y once and factors Z^T Z + n alpha I for each
value (skylite._solvers.ClosedForm): each model is bitwise a separate fit's.  The exact
kernel solver ("exact") solves each value from the kept rows and kernel; "pcg" falls back to
separate fits.

`PathFitting` is a mixin of `skylite.estimators.KernelMachine`.
"""
import copy

from ._all_or_nothing import restored_on_failure
from ._validation import check_positive

__all__ = ["PathFitting", "fitted_copy", "path_parameter"]


def fitted_copy(estimator):
    """A shallow copy of a fitted estimator that keeps its communicator (which pickling,
    and so `copy.copy`, drops)."""
    duplicate = copy.copy(estimator)
    duplicate.comm = estimator.comm
    return duplicate


def path_parameter(estimator, varied=()):
    """The name of the parameter a regularization path of `estimator` varies: "C" for a
    classifier that has C (unless only alpha is `varied`), else "alpha"."""
    params = estimator.get_params(deep=False)
    if "C" in params and not ("alpha" in varied and "C" not in varied):
        return "C"
    return "alpha"


class RegularizationPath:
    """The values still to solve after the first fit of a path, and what to do with each
    fitted model (`on_model(estimator)`, called with the estimator fitted at each value in
    turn)."""

    def __init__(self, name, values, on_model, warm_start, X, y):
        self.name, self.values, self.on_model = name, values, on_model
        self.warm_start, self.X, self.y = warm_start, X, y

    def continue_from(self, estimator, engine, dist, n_fit_rows, new_early_stopping, fitted):
        """Solve the remaining values after `estimator`'s first fit: on `engine`'s setup
        (a fitted BlockADMM, or the closed form's kept normal equations,
        skylite._solvers.ClosedForm) when there is one, else by separate fits."""
        self.on_model(estimator)
        for value in self.values[1:]:
            setattr(estimator, self.name, value)
            if engine is None:
                estimator._fit(self.X, self.y, None, None, None)
            elif not hasattr(engine, "driver_"):       # a closed form: another alpha
                estimator.alpha_ = estimator._resolved_alpha(dist, n_fit_rows)
                estimator._set_fitted(engine.solve(estimator.alpha_), None, *fitted)
            else:
                estimator.alpha_ = estimator._resolved_alpha(dist, n_fit_rows)
                early = new_early_stopping()
                engine.driver_.callback = early if early is not None else estimator.callback
                engine.solve(alpha=estimator.alpha_, keep_state=self.warm_start)
                estimator._set_fitted(engine.result_, early, *fitted)
            self.on_model(estimator)


class PathFitting:
    """`fit_path` for a KernelMachine (module docstring)."""

    def fit_path(self, X, y, values, *, warm_start=True, on_model=None):
        """Fit at each value of the regularization parameter in turn, on one setup.

        The parameter is C for `KernelSVC` and `KernelLogisticRegression` (alpha = 1/(n C))
        and alpha for the others (or for a classifier given alpha).  Everything that does not
        depend on it is done once (module docstring of skylite._path); each value after the
        first is solved on the first fit's setup, continuing from the previous solve.  The
        usual order is from strong to weak regularization (C increasing, alpha decreasing).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            Training rows.
        y : array-like of shape (n,) or (n, m)
            Class labels or real targets.
        values : sequence of float > 0
            The values of C (or alpha), solved in this order.
        warm_start : bool, default=True
            Continue each solve after the first from the previous value's ADMM state (its
            iterates, duals and rho); False: each solve starts cold.
        on_model : callable or None, default=None
            Called as ``on_model(estimator)`` right after each value's solve, with this
            estimator fitted at that value (e.g. to score it); the path then keeps no copy.

        Returns
        -------
        models : list of estimators
            With ``on_model=None``: one fitted copy per value, with the parameter set to
            the value (copies share the fitted feature map).  Else an empty list.  This
            estimator is left fitted at the last value.  A path that raises leaves this
            estimator as it was before.
        """
        name = path_parameter(self, varied=() if getattr(self, "alpha", None) is None
                              else ("alpha",))
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not values:
            raise ValueError(f"values must be a non-empty sequence of {name} > 0, "
                             f"got {values!r}")
        values = [check_positive(v, name) for v in values]
        models = []
        keep = on_model if on_model is not None else (lambda m: models.append(fitted_copy(m)))
        with restored_on_failure(self):
            setattr(self, name, values[0])
            path = RegularizationPath(name, values, keep, warm_start, X, y)
            self._fit(X, y, None, None, None, path=path)
        return models
