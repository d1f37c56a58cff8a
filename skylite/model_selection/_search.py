"""KernelGridSearchCV: an exhaustive grid search over a skylite estimator that shares work.

For each fold, the grid points that differ only in the regularization (C for the
classifiers, alpha otherwise) form one regularization path, solved on one setup by the
estimator's `fit_path` (skylite._path): the input checks, the target coding, the feature
map (bandwidth, landmarks, layout), the early-stopping split, the memory plan and the
cached feature blocks are made once per fold and kernel setting and serve every C, each C
continuing from the previous one's ADMM state, from strong to weak regularization; k-means
landmarks of Nystroem features, which do not depend on the bandwidth, are computed once per
fold and serve every sigma, and so is the bandwidth-free part of their kernel blocks (the
dot products of the fold's rows with the landmarks; skylite.sketch._landmarks); the
features of a fold's test rows
are made once per path and score every C (skylite._outputs.kept_features).  Racing
(skylite.model_selection._racing) stops fitting grid points that are clearly behind after
the first folds.  The folds are by global row id (skylite.model_selection._folds), so the
search gives the same folds under any number of MPI ranks.  A Pipeline ending in a skylite
estimator is searched the same way on its other steps' output (skylite.model_selection._pipeline).
"""
import numbers
import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid
from sklearn.model_selection._search import BaseSearchCV
from sklearn.utils import indexable

from .._all_or_nothing import restored_on_failure
from .._machine import available_memory_bytes
from .._outputs import kept_features
from .._path import path_parameter
from .._threads import jobs_as_threads
from .._validation import check_positive, take_rows
from ..sketch._landmarks import shared_across_bandwidths
from ._failures import check_error_score, failure_text, report_failures
from ._folds import Folds
from ._pipeline import FoldSteps, final_step, pipeline_prefix, rows_of
from ._racing import co_correct, surviving
from ._results import best_index, chosen_index, search_results, warn_non_finite
from ._scoring import Scorings
from ._stacked import StackedPath, stackable

__all__ = ["KernelGridSearchCV"]

# The most the features of a fold's test rows may take while a path's models are scored on
# them (transformed once per path, not once per C): this, or an eighth of the available
# memory if less
KEPT_TEST_FEATURES_BYTES = 2**30


class KernelGridSearchCV(BaseSearchCV):
    """Exhaustive search over a grid of a skylite estimator's parameters, by
    cross-validation, sharing work between grid points (module docstring).

    A drop-in for scikit-learn's `GridSearchCV` over `KernelSVC`,
    `KernelLogisticRegression`, `KernelRidge`, `KernelLADRegression` and `KernelMachine`,
    or a `Pipeline` ending in one: the same grid, folds, scores and fitted attributes.
    Grid points that differ only in C (or alpha) share one setup per fold and kernel
    setting; the others are separate fits.
    Each fold model is the model an independent fit on the fold's training rows gives (up
    to the solver's tolerance), and its score comes from the fold's test rows only: the
    estimator's early stopping, when on, holds out part of the fold's training rows.

    Parameters
    ----------
    estimator : skylite estimator, or a Pipeline whose last step is one
        The estimator to tune (cloned; its `comm` makes the search collective).  A
        Pipeline's other steps are fitted on each fold's training rows, once per setting of
        their parameters (skylite.model_selection._pipeline), and the grid names the last
        step's parameters as GridSearchCV's does ("kernelsvc__C"); not under a
        communicator, and not with stack_folds=True.
    param_grid : dict or list of dicts
        Parameter names to lists of values, as for GridSearchCV.
    cv : int, cross-validation generator or iterable, default=5
        The folds: an int k is StratifiedKFold(k) for a classifier, KFold(k) otherwise
        (over every rank's rows, by global row id); a group splitter (GroupKFold, ...)
        splits by the `groups` given to `fit`.
    scoring : None, str, callable, list, tuple, set or dict, default=None
        None: the estimator's `score` (accuracy or R^2); else a scikit-learn scorer, or
        several (scorer names, or a dict of names to scorers: GridSearchCV's multi-metric
        evaluation, skylite.model_selection._scoring).  Under MPI only None, whose score is
        collective.
    refit : bool, str or callable, default=True
        Refit the best grid point on all the rows (``best_estimator_``).  With several
        scorings: the name of the one that chooses the best grid point, or False.  A
        callable chooses the best grid point itself, as GridSearchCV's: given
        ``cv_results_``, it returns ``best_index_`` (e.g. the smallest C whose mean score
        is within one standard deviation of the best); ``best_score_`` is then not set,
        and racing does not apply (accuracy does not choose).  Under MPI every rank calls
        it on the same ``cv_results_``.
    racing : bool, default=True
        Drop grid points whose accuracy is clearly behind after a fold
        (skylite.model_selection._racing; only where accuracy chooses the best point)
        among the points fitted fold by fold.  False: every grid point runs every fold.
    stack_folds : bool, default=False
        Solve the folds of a path over C together, as one problem whose models sit side by
        side (skylite.model_selection._stacked), where they share their feature map (a
        numeric bandwidth, a map that does not look at the rows): one setup for every fold
        and C, and each feature block read once per iteration for all folds.  The fold
        models are the same.  Off by default: on MNIST (20,000 rows, s = 4096, 10 classes or
        2) it was no faster than fold by fold, since the products grow with the stacked
        columns and the stacked solve stops when its slowest fold does.
    n_jobs : int or None, default=None
        Threads of the search's fits, as scikit-learn counts jobs (-1: every usable core,
        -2: all but one): the estimator's `n_threads` where it is None, and BLAS, are
        limited to them for the search (threadpoolctl).  None: as the estimator says (by
        default every usable core).  GridSearchCV runs n_jobs fits at once in separate
        processes; this search shares work between its fits, so it runs them one after
        another, each on these threads.
    verbose : int, default=0
        1: a line per grid point and fold (its score, fit time and iterations) and one per
        racing decision; on the root rank only under MPI.
    pre_dispatch : int, str or None, default="2*n_jobs"
        GridSearchCV's bound on the fits dispatched to its worker processes at once.  This
        search runs its fits one after another in this process, so nothing is dispatched
        and the value changes nothing; it is taken so that code written for GridSearchCV
        runs unchanged.
    error_score : "raise" or float, default=np.nan
        A grid point's score on a fold whose fit (or scoring) raises an exception, as in
        GridSearchCV: "raise" re-raises it and ends the search; a number is recorded as
        that fold's test (and train) score, and a `FitFailedWarning` at the end of the
        search lists the errors.  If every fit fails the search raises ValueError.  A
        failure inside a regularization path costs only its own grid point: the path's
        remaining values are solved by a new path from the next one.  Input that no fit
        could take (an unknown parameter, C <= 0, ...) is refused before any fit, whatever
        error_score says.
    return_train_score : bool, default=False
        Also score each fold model on the fold's training rows (``split<k>_train_score``,
        ``mean_train_score``, ...), to see how far the fit is from the test scores; it
        costs a prediction of the training rows per grid point and fold.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As GridSearchCV's: mean/std fit and score times, ``param_<name>``, ``params``,
        ``split<k>_test_score``, mean/std/rank test score.  A grid point dropped by racing
        has NaN for the folds it did not run, its mean over those it ran, and ranks after
        every point that ran all folds; a point whose mean is NaN (a failed fit with
        error_score=np.nan) ranks last.
    best_index_, best_params_, best_score_ : int, dict, float
        The best grid point (rank 1) among those that ran every fold with a finite mean
        score.
    best_estimator_ : estimator
        The best grid point refitted on all the rows (refit=True).
    refit_time_ : float
        Seconds of that refit.
    n_splits_ : int
        The number of folds.
    scorer_ : callable
        The scorer used.
    dropped_after_ : ndarray of int, shape (n_candidates,)
        For each grid point, the fold after which racing dropped it (0-based), or -1.
    """

    def __init__(self, estimator, param_grid, *, cv=5, scoring=None, refit=True,
                 racing=True, stack_folds=False, n_jobs=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.racing = racing
        self.stack_folds = stack_folds
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.return_train_score = return_train_score

    def fit(self, X, y, groups=None, **fit_params):
        """Run the search on rows X and targets y (this rank's rows under MPI).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            Training rows.
        y : array-like of shape (n,) or (n, m)
            Class labels or real targets.
        groups : array-like of shape (n,) or None, default=None
            Group labels of the rows for a group splitter as `cv` (GroupKFold,
            LeaveOneGroupOut, ...), as GridSearchCV's; other splitters ignore it.  Under
            MPI each rank gives its own rows' labels, and equal labels on different ranks
            are one group.
        **fit_params : dict
            Not taken (a TypeError): the estimator's fit parameters (X_val, warm_start)
            belong to one fit, not to a search.

        Returns
        -------
        self : KernelGridSearchCV
            The search, with its results (``cv_results_``, ``best_params_``, ...).

        Notes
        -----
        Every argument is checked before any fit: an empty grid, an unknown parameter, a
        bad value (e.g. C <= 0), more folds than rows or a class missing from a fold's
        training rows raise ValueError at once.  A search that raises or is interrupted
        leaves this object as it was.
        """
        if fit_params:
            raise TypeError(f"{type(self).__name__}.fit takes no fit parameters, got "
                            f"{sorted(fit_params)}")
        with restored_on_failure(self), jobs_as_threads(self.n_jobs):
            return self._search(X, y, groups)

    # ---- the checks made before any fit ----

    def _checked(self):
        """(the base estimator, the grid's candidates, the scorer, whether racing applies)."""
        if not hasattr(final_step(self.estimator), "fit_path"):
            raise ValueError(f"estimator must be a skylite estimator (KernelSVC, "
                             f"KernelRidge, ...) or a Pipeline ending in one, got "
                             f"{self.estimator!r}")
        for flag in ("racing", "stack_folds", "return_train_score"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        if not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ValueError(f"verbose must be an int >= 0, got {self.verbose!r}")
        check_error_score(self.error_score)
        _check_pre_dispatch(self.pre_dispatch)
        base = clone(self.estimator)
        final, prefix = final_step(base), pipeline_prefix(base)
        if prefix and self.stack_folds:
            raise ValueError("stack_folds=True solves every fold on the same rows, but a "
                             "Pipeline's other steps are fitted on each fold's rows: use "
                             "stack_folds=False")
        if prefix and final.comm is not None:
            raise ValueError("a Pipeline under a communicator would fit its other steps on "
                             "each rank's rows alone: transform the rows before the search, "
                             "or search the skylite estimator without the Pipeline")
        candidates = self._candidates(final._distributed())
        valid = base.get_params(deep=bool(prefix))
        for candidate in candidates:
            unknown = sorted(set(candidate) - set(valid))
            if unknown:
                raise ValueError(f"unknown parameter {unknown[0]!r} for "
                                 f"{type(base).__name__}; its parameters are "
                                 f"{sorted(valid)}")
            if prefix and prefix[:-2] in candidate:
                raise ValueError(f"the grid replaces the Pipeline's last step "
                                 f"{prefix[:-2]!r}: {type(self).__name__} tunes one skylite "
                                 f"estimator; search each in its own {type(self).__name__}")
            _check_candidate(final_step(clone(base).set_params(**candidate)), candidate)
        if self.scoring is not None and final.comm is not None:
            raise ValueError("under a communicator scoring must be None (the estimator's "
                             "collective score)")
        scorings = Scorings(base, self.scoring, self.refit)
        return base, candidates, scorings, final.is_classifier and scorings.accuracy

    def _candidates(self, dist):
        """The grid points, in ParameterGrid's order (the same on every rank)."""
        grid = self.param_grid
        if not grid or (isinstance(grid, (list, tuple)) and not all(grid)):
            raise ValueError(f"param_grid is empty: give each parameter a non-empty list "
                             f"of values, got {grid!r}")
        return list(ParameterGrid(grid))

    # ---- the search ----

    def _search(self, X, y, groups):
        base, candidates, scorings, accuracy = self._checked()
        final, prefix = final_step(base), pipeline_prefix(base)
        dist = final._distributed()
        checker = clone(final)
        if prefix:        # the Pipeline's first step takes the rows as they are
            X, y = _pipeline_rows(X, y)
            take = rows_of
        else:
            X, y = dist.agree(checker._validate_training_rows, X, y)
            take = take_rows
        folds = Folds(self.cv, y, final.is_classifier, dist, groups)
        varied = {k[len(prefix):] for c in candidates for k in c if k.startswith(prefix)}
        name = prefix + path_parameter(final, varied=varied)
        default = base.get_params()[name]
        value_of = lambda i: candidates[i].get(name, default)     # noqa: E731
        paths = _paths(candidates, name, value_of)
        n, k_folds = len(candidates), folds.n_splits
        scores = {metric: np.full((n, k_folds), np.nan) for metric in scorings.scorers}
        train_scores = ({metric: np.full((n, k_folds), np.nan) for metric in scorings.scorers}
                        if self.return_train_score else None)
        trains = {}              # fold -> its training rows and targets, while it is fitted

        def train_rows(k):
            if k not in trains:
                rows = folds.splits[k][0]
                trains[k] = (take(X, rows), y[rows])
            return trains[k]
        shown = scorings.main or next(iter(scorings.scorers))      # in the progress lines
        fit_times, score_times = np.zeros((n, k_folds)), np.zeros((n, k_folds))
        attempted = np.zeros((n, k_folds), dtype=bool)  # fitted, or tried to be
        failures = []                  # the tracebacks of the fits that raised (error_score)
        alive, dropped = np.ones(n, dtype=bool), np.full(n, -1)
        scored_rows = 0
        fitted_inputs = {key: value for key, value in checker.__dict__.items()
                         if key in ("n_features_in_", "feature_names_in_")}
        say = (lambda text: print(text, flush=True)) if (self.verbose and dist.is_root) else (
            lambda text: None)
        tests = [(take(X, test), y[test]) for _, test in folds.splits]
        racing = self.racing and accuracy
        # racing: which of this rank's test rows of each fold each point's model gets right
        correct = [np.zeros((n, len(test) if racing else 0), dtype=bool)
                   for _, test in folds.splits]

        by_pipeline = any(not (spec is None or isinstance(spec, str))
                          for spec in _specs(self.scoring))

        def score(i, k, model, seconds, how, view=None):
            """Score grid point i's model of fold k on the fold's test rows (and training
            rows, with return_train_score).  view, for a Pipeline: (the test rows through
            its other steps, the model -> the fitted pipeline, the training rows through its
            other steps); a callable scoring is given the pipeline and the raw rows."""
            fit_times[i, k] = seconds
            attempted[i, k] = True
            start = time.perf_counter()
            X_test, y_test = tests[k]
            rows = X_test if view is None else view[0]
            targets = [(scores, X_test, y_test, rows)]
            if train_scores is not None:
                X_train, y_train = train_rows(k)
                targets.append((train_scores, X_train, y_train,
                                X_train if view is None else view[2]))
            for table, raw, truth, seen in targets:
                if view is not None and by_pipeline:
                    values = scorings(view[1](model), raw, truth)
                else:
                    values = scorings(model, seen, truth)
                for metric, value in values.items():
                    table[metric][i, k] = value
            if racing:              # a rank may hold no test row of a fold
                predicted, truth = dist.agree(model._predictions_and_targets, rows, y_test)
                correct[k][i] = predicted == truth
            score_times[i, k] = time.perf_counter() - start
            say(f"[fold {k + 1}/{k_folds}] {_describe(candidates[i])}: score "
                f"{scores[shown][i, k]:.4f} ({seconds:.1f} s{how}, {model.n_iter_} "
                f"iterations)")

        def fail(i, k, error, seconds):
            """Record grid point i's failed fit (or scoring) of fold k: error_score."""
            fit_times[i, k], score_times[i, k] = seconds, 0.0
            attempted[i, k] = True
            for table in (scores, train_scores):
                for metric in (table or {}):
                    table[metric][i, k] = self.error_score
            if racing:
                correct[k][i] = False
            failures.append(failure_text(error))
            say(f"[fold {k + 1}/{k_folds}] {_describe(candidates[i])}: fit failed "
                f"({type(error).__name__}: {error}), score {self.error_score}")

        keep_going = not (isinstance(self.error_score, str) and self.error_score == "raise")
        stacked = set()
        for p, (fixed, members) in enumerate(paths):
            estimator = clone(base).set_params(**fixed)
            if not self.stack_folds or stackable(estimator, name, dist) is not None:
                continue

            def on_fold_model(index, k, model, seconds, members=members):
                score(members[index], k, model, seconds, " of a solve of every fold")

            path = StackedPath(estimator, X, y, folds.splits, fitted_inputs)
            try:
                solved_together = path.run([value_of(i) for i in members], on_fold_model,
                                           dist)
            except Exception as error:
                if not keep_going:
                    raise
                say(f"the solve of every fold for {_describe(fixed)} failed "
                    f"({type(error).__name__}: {error}): fold by fold instead")
                solved_together = False
            if solved_together:
                stacked.add(p)
        done = np.zeros(n, dtype=bool)
        for p in stacked:
            done[paths[p][1]] = True
        for k, (train, test) in enumerate(folds.splits):
            X_train, y_train = train_rows(k)
            steps = FoldSteps(X_train, y_train, tests[k][0]) if prefix else None
            _fit_fold(base, paths, stacked, alive, value_of, X_train, y_train,
                      lambda i, model, seconds, view, k=k: score(i, k, model, seconds, "",
                                                                  view),
                      (lambda i, error, seconds, k=k: fail(i, k, error, seconds))
                      if keep_going else None, steps)
            trains.pop(k)                                # a copy of the fold's rows
            scored_rows += int(dist.sum_to_all(np.array([len(test)]))[0])
            if racing and k < k_folds - 1:
                counts = dist.sum_to_all(co_correct(np.concatenate(correct[:k + 1], axis=1)))
                still = surviving(counts, alive, scored_rows)
                still |= done          # the stacked points have run every fold
                dropped[alive & ~still] = k
                if (alive & ~still).any():
                    say(f"racing: {int((alive & ~still).sum())} grid point(s) clearly behind "
                        f"after fold {k + 1} are not fitted on the others")
                alive = still
        if failures:
            report_failures(failures, int(attempted.sum()), self.error_score)
        self.cv_results_ = search_results(candidates, scores, fit_times, score_times,
                                          alive, attempted, train_scores)
        warn_non_finite(self.cv_results_, scores)
        if scorings.choose is not None:
            self.best_index_ = chosen_index(scorings.choose, self.cv_results_)
        elif scorings.main is not None:
            self.best_index_ = best_index(self.cv_results_, scorings.main)
            self.best_score_ = float(
                self.cv_results_[f"mean_test_{scorings.main}"][self.best_index_])
        if scorings.choose is not None or scorings.main is not None:
            self.best_params_ = candidates[self.best_index_]
        self.dropped_after_ = dropped
        self.scorer_, self.multimetric_ = scorings.scorer_, scorings.multimetric
        self.n_splits_ = k_folds
        if self.refit:
            estimator = clone(base).set_params(**self.best_params_)
            start = time.perf_counter()
            self.best_estimator_ = estimator.fit(X, y)
            self.refit_time_ = time.perf_counter() - start
            if not prefix:      # fitted on the checked rows: the names the user's rows had
                self.best_estimator_.__dict__.update(fitted_inputs)
            if hasattr(self.best_estimator_, "feature_names_in_"):    # as GridSearchCV
                self.feature_names_in_ = self.best_estimator_.feature_names_in_
            say(f"refit {_describe(self.best_params_)} on all {folds.n_rows} rows: "
                f"{self.refit_time_:.1f} s")
        return self

def _specs(scoring):
    """The scorings given (several as a list, set, tuple or dict's values, or one)."""
    if isinstance(scoring, dict):
        return list(scoring.values())
    return list(scoring) if isinstance(scoring, (list, tuple, set)) else [scoring]


def _fit_fold(base, paths, stacked, alive, value_of, X_fit, y_fit, score, fail=None,
              steps=None):
    """Fit one fold: for each path not in `stacked` (the indices of paths solved already),
    its grid points still alive, on the fold's training rows X_fit, y_fit, in one
    `fit_path`; score(i, model, seconds, view) after each grid point i's solve.  The fold's
    k-means landmarks and the sigma-free part of their kernel blocks are computed once for
    every path, and each path's models are scored on test rows transformed once.  steps:
    for a Pipeline, its other steps fitted on the fold (a FoldSteps), whose transformed rows
    the last step's path is fitted on (view: see `score` in KernelGridSearchCV._search).
    fail(i, error, seconds), if given, takes an exception raised while grid point i was
    fitted or scored, and the path goes on from the next point in a new `fit_path`;
    without it the exception propagates."""
    with shared_across_bandwidths():
        for p, (fixed, members) in enumerate(paths):
            if p in stacked:
                continue
            pending = [i for i in members if alive[i]]
            while pending:
                clock = [time.perf_counter()]
                try:
                    _fit_path(base, fixed, pending, value_of, X_fit, y_fit, score, steps,
                              clock)
                except Exception as error:
                    if fail is None or not pending:
                        raise
                    fail(pending.pop(0), error, time.perf_counter() - clock[0])


def _fit_path(base, fixed, pending, value_of, X_fit, y_fit, score, steps, clock):
    """One `fit_path` of the estimator base with the parameters `fixed` over the grid points
    `pending` (see _fit_fold), each removed from it once scored; clock[0]: when the
    current point's fit began."""
    estimator, rows, view = clone(base).set_params(**fixed), X_fit, None
    if steps is not None:
        estimator, rows, test_rows, pipeline_of = steps.prepared(estimator)
        view = (test_rows, pipeline_of, rows)

    def on_model(model):
        score(pending[0], model, time.perf_counter() - clock[0], view)
        pending.pop(0)
        clock[0] = time.perf_counter()

    budget = min(available_memory_bytes() // 8, KEPT_TEST_FEATURES_BYTES)
    with kept_features(budget):
        estimator.fit_path(rows, y_fit, [value_of(i) for i in pending], on_model=on_model)


def _check_pre_dispatch(pre_dispatch):
    """pre_dispatch is None, an int >= 1 or a str (joblib's expression), as GridSearchCV
    takes it (ValueError otherwise); it has no effect here."""
    if pre_dispatch is None or isinstance(pre_dispatch, str):
        return
    if (isinstance(pre_dispatch, bool) or not isinstance(pre_dispatch, numbers.Integral)
            or pre_dispatch < 1):
        raise ValueError(f"pre_dispatch must be None, an int >= 1 or a str such as "
                         f"'2*n_jobs', got {pre_dispatch!r}")


def _pipeline_rows(X, y):
    """The rows and targets of a search over a Pipeline: X as given (its first step checks
    it), y as an array; ValueError if their numbers of rows differ."""
    X, y = indexable(X, y)
    return X, np.asarray(y)


def _check_candidate(estimator, candidate):
    """The checks of a grid point's parameters that need no data (ValueError naming the
    parameter): the loss, early stopping, the engine options, C or alpha and the
    bandwidth."""
    try:
        estimator._loss_object()
        estimator._patience()
        estimator._engine_settings()
        estimator._checked_regularization()
        for bandwidth in ("sigma", "gamma"):
            value = getattr(estimator, bandwidth, None)
            if value is not None and not (isinstance(value, str) and value == "scale"):
                check_positive(value, bandwidth)
    except (TypeError, ValueError) as error:
        raise ValueError(f"grid point {candidate}: {error}") from None


def _paths(candidates, name, value_of):
    """The regularization paths of the grid: [(the fixed parameters, the candidate indices
    from strong to weak regularization)], one per setting of the other parameters;
    value_of(i): grid point i's value of the path's parameter `name`."""
    groups = {}
    for i, candidate in enumerate(candidates):
        fixed = {k: v for k, v in candidate.items() if k != name}
        groups.setdefault(repr(sorted(fixed.items(), key=lambda kv: kv[0])),
                          (fixed, []))[1].append(i)
    # C (or a Pipeline's <step>__C) grows, alpha shrinks, from strong to weak
    strength = value_of if name.rpartition("__")[2] == "C" else (lambda i: -value_of(i))
    paths = []
    for fixed, members in groups.values():
        members.sort(key=strength)
        if name in candidates[members[0]]:
            fixed = {**fixed, name: candidates[members[0]][name]}
        paths.append((fixed, members))
    return paths


def _describe(params):
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())
