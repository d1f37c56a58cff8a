"""Every fold of a regularization path in one solve: the folds' models stacked side by side.

The k fold models of one grid point are k problems on the same random features of the same
rows, each on its own rows (the fold's training rows, less its early-stopping split).  With
the classifiers' C they are one problem in W = [W_1 ... W_k] (skylite.prox.StackedLoss):

    (1/N) sum_f [ sum_{i in rows_f} V(y_i, W_f^T z_i) + ||W_f||^2 / (2 C) ]

whose minimizer is each fold's own (fold f's problem, (1/n_f) sum V + alpha_f ||W_f||^2 / 2
with alpha_f = 1/(n_f C), times n_f / N), so that alpha = 1/(N C) for the N rows of the
search and the ADMM preconditioner c, a function of C alone (c^2 = 1/(alpha N) = C, or
sqrt(C) for hinge and LAD at C > 1: skylite.admm.iteration.preconditioning), is every
fold's.  One solve reads each
feature block once per iteration for all k folds; the setup (features, caches, factors) is
made once per kernel setting and serves every fold and every C, each C continuing from the
previous one's ADMM state.

Early stopping, when the estimator would use it on a fold, is each fold's own: the fold's
held-out rows are the ones its independent fit would hold out (the estimator's rule on the
fold's training rows), they are left out of the fold's problem, each fold's validation score
is watched by its own copy of the rule, and the fold keeps its own best iterate; the solve
stops when every fold has stopped.

It applies when the fold models share their feature map: a kernel given by name with a
numeric bandwidth (not "scale", which each fold computes from its rows), a map that does not
look at the rows (not Nystroem), the same column-block layout for every fold, a path over C,
and the iterative solver; `stackable` says why not otherwise, and the search then fits fold
by fold.
"""
import time

import numpy as np

from .._early_stopping import EarlyStopping
from .._path import fitted_copy
from .._problem import resolved_method
from .._solvers import regularizer_for_map, resolve_solver
from .._validation import take_rows
from ..admm import BlockADMM
from ..prox import StackedLoss, get_regularizer, stack_targets
from ..prox.coding import code_labels, decode_decision
from ..sketch import default_layout_blocks

__all__ = ["stackable", "StackedPath"]


def stackable(estimator, name, dist):
    """None if the folds of `estimator`'s path over `name` can be one solve, else why not."""
    if name != "C":
        return "the path is over alpha, whose folds' problems differ in scale"
    if estimator.feature_map is not None or not isinstance(estimator.kernel, str):
        return "a user's feature map or kernel object"
    if estimator.kernel.lower() == "linear":
        return "the linear kernel"
    if resolved_method(estimator.method, estimator.kernel) == "nystroem":
        return "Nystroem landmarks are drawn from each fold's rows"
    if "scale" in (estimator.sigma, estimator.gamma) or (
            estimator.sigma is None and estimator.gamma is None
            and estimator.kernel.lower() in ("gaussian", "rbf", "laplacian", "matern")):
        return "the bandwidth 'scale' is computed from each fold's rows"
    if estimator.solver == "dcd":
        return "solver='dcd' solves each fold's problem by itself"
    if estimator.checkpoint is not None or estimator.callback is not None:
        return "a checkpoint or a callback belongs to one fit"
    loss = estimator._loss_object()
    if not loss.classification:
        return "a regression loss"
    if estimator.early_stopping is not False and not dist.serial:
        return "early stopping under MPI"
    if estimator.early_stopping is not False and estimator.n_iter_no_change is None:
        return "early stopping that only records the validation score"
    return None


class StackedPath:
    """The folds of one kernel setting solved together along a path over C (module
    docstring).

    Parameters
    ----------
    estimator : skylite classifier
        With the grid point's fixed parameters (C is set per solve).
    X, y : validated rows and labels (this rank's)
    splits : list of (train, test) row indices (this rank's, skylite.model_selection._folds)
    fitted_inputs : dict
        The fitted input attributes of the estimator (n_features_in_, ...), set on each
        fold model.
    """

    def __init__(self, estimator, X, y, splits, fitted_inputs):
        self.estimator, self.X, self.y, self.splits = estimator, X, y, splits
        self.fitted_inputs = fitted_inputs

    def layout_differs(self, fit_rows, dist):
        est = self.estimator
        if est.n_blocks is not None:
            return False
        method = resolved_method(est.method, est.kernel)
        layouts = {default_layout_blocks(est.n_features, max(dist.allgather(len(rows))),
                                         method=method) for rows in fit_rows}
        return len(layouts) > 1

    def run(self, values, on_fold_model, dist):
        """Solve at each C in `values` (from strong to weak regularization), calling
        ``on_fold_model(value_index, fold, model, seconds)`` with each fold's fitted model.
        Returns False (having fitted nothing) if the folds' layouts differ."""
        est, X, y = self.estimator, self.X, self.y
        loss = est._loss_object()
        patience = est._patience()
        classes = dist.label_union(y)
        Y, _ = code_labels(y, loss, classes=classes)
        k = len(self.splits)
        fit_rows, val_rows, early = [], [], []
        for train, _ in self.splits:
            use = est._resolved_early_stopping(dist, len(train), loss,
                                               get_regularizer(est.regularizer), None)
            early.append(use)
            if use:
                kept, held = est._holdout(dist, y[train], classes)
                fit_rows.append(train[kept])
                val_rows.append(train[held])
            else:
                fit_rows.append(train)
                val_rows.append(None)
        if len(set(early)) > 1 or self.layout_differs(fit_rows, dist):
            return False
        members = np.zeros((len(y), k), dtype=bool)
        for f, rows in enumerate(fit_rows):
            members[rows, f] = True
        fmap, kernel = est._make_feature_map(take_rows(X, fit_rows[0]), dist)
        precision = est._resolved_precision(dist, X)
        est = fitted_copy(est)                  # the fold models' template
        est.precision_ = precision
        regularizer = regularizer_for_map(get_regularizer(est.regularizer), fmap, precision)
        if resolve_solver(est.solver, loss, regularizer, 1.0, fmap.n_features,
                          iterative=True, distributed=est.comm is not None) != "admm":
            return False
        n_all = int(dist.sum_to_all(np.array([len(y)]))[0])
        n_fit = [int(dist.sum_to_all(np.array([len(rows)]))[0]) for rows in fit_rows]
        validations = [None if rows is None else _FoldValidation(fmap, X, y, rows, classes,
                                                                 loss, Y, est)
                       for rows in val_rows]
        m = Y.shape[1]
        engine = None
        for index, C in enumerate(values):
            start = time.perf_counter()
            watch = _Watch(validations, patience, est.tol, est.scoring, m) if early[0] else None
            alpha = 1.0 / (n_all * C)
            if engine is None:
                settings = est._engine_settings(alpha=alpha, precision=precision)
                engine = BlockADMM(fmap, StackedLoss(loss, k), regularizer, settings,
                                   callback=watch, comm=est.comm)
                engine.fit(X, stack_targets(Y, members), checked=True)
            else:
                engine.driver_.callback = watch
                engine.solve(alpha=alpha, keep_state=True)
            result = engine.result_
            stacked = result.coef.copy()
            if watch is not None:
                for f in range(k):
                    if watch.rules[f].best_W is not None:
                        stacked[:, f * m:(f + 1) * m] = watch.rules[f].best_W
            seconds = (time.perf_counter() - start) / k
            for f in range(k):
                model = fitted_copy(est).set_params(C=C)
                model.__dict__.update(self.fitted_inputs)
                rule = watch.rules[f] if watch is not None else None
                model.__dict__.update(
                    classes_=classes, feature_map_=fmap, sigma_=getattr(kernel, "sigma", None),
                    coef_=stacked[:, f * m:(f + 1) * m].copy(), loss_=loss,
                    regularizer_=regularizer, alpha_=1.0 / (n_fit[f] * C), solver_="admm",
                    n_iter_=result.n_iter, converged_=result.converged,
                    best_iteration_=(rule.best_iteration if rule is not None
                                     and rule.best_W is not None else result.n_iter),
                    history_=result.history, early_stopping_=early[f],
                    validation_indices_=None, memory_estimate_=result.memory_estimate,
                    phase_seconds_=result.phase_seconds, n_threads_=engine.n_threads)
                on_fold_model(index, f, model, seconds)
        return True


class _FoldValidation:
    """One fold's early-stopping rows: the outputs of a fold model on them (feature blocks
    kept), its accuracy and its loss."""

    def __init__(self, fmap, X, y, rows, classes, loss, Y, est):
        self.outputs = est._validation_cache(take_rows(X, rows), fmap)
        self.y, self.Y, self.classes, self.loss = y[rows], Y[rows], classes, loss

    def record(self, W):
        O = self.outputs(W, None)
        return {"validation": float(np.mean(self.classes[decode_decision(O)] == self.y)),
                "validation_loss": self.loss.value(O, self.Y) / len(self.y)}


class _Watch:
    """The engine callback of a stacked solve with early stopping: each fold's own
    EarlyStopping rule on its own validation rows; the solve stops when every fold's rule
    has stopped (a fold that stopped is not watched again)."""

    def __init__(self, validations, patience, tol, scoring, m):
        self.validations, self.m = validations, m
        self.rules = [EarlyStopping(patience, tol, scoring) for _ in validations]
        self.stopped = [False] * len(validations)

    def __call__(self, iteration, record, W):
        m = self.m
        for f, (rule, validation) in enumerate(zip(self.rules, self.validations)):
            if self.stopped[f]:
                continue
            W_f = np.ascontiguousarray(W[:, f * m:(f + 1) * m])
            fold_record = {"residual_ratio": record.get("residual_ratio", 0.0),
                           **validation.record(W_f)}
            self.stopped[f] = bool(rule(iteration, fold_record, W_f))
        return all(self.stopped)
