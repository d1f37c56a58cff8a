"""KernelRandomizedSearchCV: scikit-learn's RandomizedSearchCV for skylite estimators.

The candidates are drawn as RandomizedSearchCV draws them (scikit-learn's ParameterSampler:
n_iter points, each parameter from its list or distribution), and then searched as
KernelGridSearchCV searches a grid (skylite.model_selection._search): the candidates that
differ only in C share one setup per fold as a regularization path, the k-means landmarks of
Nystroem features and the sigma-free part of their kernel blocks are made once per fold for
every sigma drawn, and racing stops fitting candidates that are clearly behind after a fold.
With C and sigma both drawn from continuous distributions no two candidates share a path,
and racing and the per-fold landmarks are what is saved; C drawn from a list of values
(or sigma from one) makes paths again.

Under MPI every rank searches rank 0's draw, so random_state=None is safe there too.
"""
import numbers

import numpy as np
from sklearn.model_selection import ParameterSampler

from ._search import KernelGridSearchCV

__all__ = ["KernelRandomizedSearchCV"]


class KernelRandomizedSearchCV(KernelGridSearchCV):
    """Randomized search over a skylite estimator's parameters, by cross-validation, sharing
    work between the candidates (module docstring).

    A drop-in for scikit-learn's `RandomizedSearchCV` over the estimators (or a Pipeline
    ending in one) that `KernelGridSearchCV` takes: the same draw of candidates for the same
    `random_state`, the same folds, scores and fitted attributes.

    Parameters
    ----------
    estimator : skylite estimator, or a Pipeline whose last step is one
        As for KernelGridSearchCV.
    param_distributions : dict or list of dicts
        Parameter names to lists of values or to distributions with an ``rvs`` method
        (scipy.stats, e.g. ``loguniform(1, 1000)``), as for RandomizedSearchCV.
    n_iter : int, default=10
        Candidates drawn (all of them, without repeats, if every parameter is a list with
        fewer combinations).
    cv, scoring, refit, racing, stack_folds, n_jobs, verbose
        As for KernelGridSearchCV.
    pre_dispatch, error_score, return_train_score
        As for KernelGridSearchCV.
    random_state : int, numpy RandomState or None, default=None
        Seeds the draw (ParameterSampler's).  Under MPI rank 0's draw is used by every rank.

    Attributes
    ----------
    cv_results_, best_index_, best_params_, best_score_, best_estimator_, refit_time_,
    n_splits_, scorer_, dropped_after_
        As for KernelGridSearchCV, one entry per candidate.
    """

    def __init__(self, estimator, param_distributions, *, n_iter=10, cv=5, scoring=None,
                 refit=True, racing=True, stack_folds=False, n_jobs=None, verbose=0,
                 pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 random_state=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.racing = racing
        self.stack_folds = stack_folds
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state
        self.return_train_score = return_train_score
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score

    def _candidates(self, dist):
        """n_iter candidates drawn by ParameterSampler; under MPI, rank 0's draw."""
        if (isinstance(self.n_iter, bool) or not isinstance(self.n_iter, numbers.Integral)
                or self.n_iter < 1):
            raise ValueError(f"n_iter must be an int >= 1, got {self.n_iter!r}")
        spaces = self.param_distributions
        if not spaces or (isinstance(spaces, (list, tuple)) and not all(spaces)):
            raise ValueError(f"param_distributions is empty: give each parameter a "
                             f"non-empty list of values or a distribution, got {spaces!r}")
        draw = dist.agree(lambda: list(ParameterSampler(
            spaces, self.n_iter, random_state=self.random_state)) if dist.is_root else None)
        return draw if dist.serial else dist.allgather(draw)[0]
