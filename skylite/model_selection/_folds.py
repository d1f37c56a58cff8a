"""Cross-validation folds by global row id: the same folds on any number of MPI ranks.

Under a communicator each rank holds its own rows; the rows are numbered globally, rank 0's
first, then rank 1's, and so on.  The folds are computed from the global targets (and group
labels, for a group splitter such as GroupKFold) alone (every rank gathers them: one value
per row) by the same splitter on every rank, so a row is in the same fold whatever the number
of ranks; each rank then keeps the part of each fold that it holds.  Serially this is exactly
scikit-learn's `check_cv(cv, y, classifier).split(X, y, groups)` applied to the rows.
"""
import numbers

import numpy as np
from sklearn.model_selection import check_cv

__all__ = ["Folds"]


class Folds:
    """The folds of a search, as this rank's (train, test) row indices.

    Parameters
    ----------
    cv : int, cross-validation generator or iterable
        As for scikit-learn's GridSearchCV: an int k is `StratifiedKFold(k)` for a
        classifier and `KFold(k)` otherwise; a splitter's `split` is given the global
        targets (and placeholder rows); an iterable yields (train, test) global indices.
    y : ndarray of shape (n_i,) or (n_i, m)
        This rank's targets.
    classifier : bool
        Whether y holds class labels.
    dist : skylite._distributed.Distributed
        The ranks.
    groups : array-like of shape (n_i,) or None, default=None
        This rank's group label of each row, for a group splitter (GroupKFold,
        LeaveOneGroupOut, ...); equal labels on different ranks are one group.  Other
        splitters ignore it, as in scikit-learn.

    Attributes
    ----------
    splits : list of (ndarray, ndarray)
        This rank's (train, test) row indices of each fold.
    n_splits : int
        The number of folds.
    n_rows : int
        The rows over every rank.
    """

    def __init__(self, cv, y, classifier, dist, groups=None):
        y = np.asarray(y)
        counts = dist.allgather(len(y))
        offset = int(sum(counts[:dist.rank]))
        y_all = np.concatenate(dist.allgather(y)) if not dist.serial else y
        n = len(y_all)
        dist.same_everywhere("groups given (every rank or none passes groups)",
                             groups is not None)
        groups_all = dist.agree(_checked_groups, groups, len(y))
        if groups_all is not None and not dist.serial:
            groups_all = np.concatenate(dist.allgather(groups_all))
        if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
            if cv < 2:
                raise ValueError(f"cv must be at least 2 folds, got {cv}")
            if cv > n:
                raise ValueError(f"cv={cv} folds need at least {cv} rows, got {n}")
        splitter = check_cv(cv, y_all, classifier=classifier)
        global_splits = list(splitter.split(np.zeros((n, 1)), y_all, groups_all))
        if not global_splits:
            raise ValueError(f"cv={cv!r} gives no fold")
        mine = np.arange(offset, offset + len(y))
        self.splits = []
        for k, (train, test) in enumerate(global_splits):
            train, test = np.asarray(train), np.asarray(test)
            if len(train) == 0 or len(test) == 0:
                raise ValueError(f"fold {k} of cv={cv!r} has no training or no test row")
            if classifier:
                _check_classes(y_all, train, k)
            self.splits.append((np.intersect1d(train, mine) - offset,
                                np.intersect1d(test, mine) - offset))
        self.n_splits, self.n_rows = len(self.splits), n


def _checked_groups(groups, n_rows):
    """This rank's group labels as a 1-d array of n_rows values (None stays None); raises
    ValueError for another shape or a missing (NaN) label."""
    if groups is None:
        return None
    groups = np.asarray(groups)
    if groups.ndim != 1 or len(groups) != n_rows:
        raise ValueError(f"groups must hold one label per row: {n_rows} rows, got groups of "
                         f"shape {groups.shape}")
    if groups.dtype.kind == "f" and not np.isfinite(groups).all():
        raise ValueError("groups holds NaN or inf: give every row a group label")
    return groups


def _check_classes(y_all, train, k):
    """Every class of y must have a training row in every fold: a fold model that has not
    seen a class cannot be compared with the others."""
    labels = y_all.reshape(len(y_all), -1)[:, 0] if y_all.ndim > 1 else y_all
    missing = np.setdiff1d(np.unique(labels), np.unique(labels[train]))
    if missing.size:
        raise ValueError(f"fold {k}'s training rows hold no row of class {missing[0].item()!r}: "
                         f"use fewer folds or a stratified splitter")
