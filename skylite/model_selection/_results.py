"""The results of a search: ``cv_results_`` with GridSearchCV's keys and meanings, and the
best grid point.

Ranks: the grid points that ran every fold to a finite mean score come first, then those
racing dropped (skylite.model_selection._racing), each group by decreasing mean (ties
share the lower rank, as scipy's rankdata "min"); a NaN mean (a failed fit with
error_score=np.nan, skylite.model_selection._failures) ranks last.
"""
import numbers
import warnings

import numpy as np
from scipy.stats import rankdata

__all__ = ["search_results", "best_index", "chosen_index", "warn_non_finite"]


def search_results(candidates, scores, fit_times, score_times, alive, ran,
                   train_scores=None):
    """cv_results_ of a search.

    Parameters
    ----------
    candidates : list of dict
        The grid points' parameters.
    scores, train_scores : dict of name -> ndarray of shape (n_candidates, n_splits)
        Test (and, if given, training) scores per scoring, NaN where a point did not run.
    fit_times, score_times : ndarray of shape (n_candidates, n_splits)
        Seconds per point and fold.
    alive : ndarray of bool, shape (n_candidates,)
        The points that ran every fold.
    ran : ndarray of bool, shape (n_candidates, n_splits)
        The folds each point was fitted on (or tried to be).

    Returns
    -------
    dict
    """
    fit_times, score_times = (np.where(ran, t, np.nan) for t in (fit_times, score_times))
    results = {"mean_fit_time": _row_mean(fit_times),
               "std_fit_time": _row_std(fit_times),
               "mean_score_time": _row_mean(score_times),
               "std_score_time": _row_std(score_times)}
    for key in sorted({k for c in candidates for k in c}):
        results[f"param_{key}"] = _masked_column(candidates, key)
    results["params"] = candidates
    for name, table in scores.items():
        for k in range(table.shape[1]):
            results[f"split{k}_test_{name}"] = table[:, k]
        mean = _row_mean(table)
        results[f"mean_test_{name}"] = mean
        results[f"std_test_{name}"] = _row_std(table)
        # the points that ran every fold to a finite mean first, then those racing
        # dropped, each group by decreasing mean (ties: min); NaN means last
        complete = alive & np.isfinite(mean)
        key = np.where(complete, mean, np.nan)
        ranks = rankdata(-np.nan_to_num(key, nan=-np.inf), method="min")
        behind = ~complete
        if behind.any():
            ranks[behind] = complete.sum() + rankdata(
                -np.nan_to_num(mean[behind], nan=-np.inf), method="min")
        results[f"rank_test_{name}"] = ranks.astype(np.int32)
        if train_scores is not None:
            for k in range(table.shape[1]):
                results[f"split{k}_train_{name}"] = train_scores[name][:, k]
            results[f"mean_train_{name}"] = _row_mean(train_scores[name])
            results[f"std_train_{name}"] = _row_std(train_scores[name])
    return results


def warn_non_finite(results, names):
    """A UserWarning, as GridSearchCV's, for each scoring in `names` whose mean test (or
    train) scores are not all finite (a failed fit's NaN, or a scorer's own)."""
    for name in names:
        for part in ("test", "train"):
            means = results.get(f"mean_{part}_{name}")
            if means is not None and not np.isfinite(means).all():
                warnings.warn(f"One or more of the {part} scores are non-finite: {means}",
                              UserWarning, stacklevel=4)


def best_index(results, main):
    """The best grid point: rank 1 of the scoring named `main`."""
    return int(np.argmin(results[f"rank_test_{main}"]))


def chosen_index(choose, results):
    """best_index_ from a callable refit given cv_results_, checked as GridSearchCV checks
    it (TypeError for a non-integer, IndexError out of range)."""
    index = choose(results)
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise TypeError(f"refit={choose!r} returned {index!r}: it must return the index "
                        f"of the best grid point, an int")
    if not 0 <= index < len(results["params"]):
        raise IndexError(f"refit={choose!r} returned {index}, out of bounds for "
                         f"{len(results['params'])} grid points")
    return int(index)


def _row_mean(table):
    """The mean of each row of `table` over its non-NaN entries; NaN, without a warning,
    for a row of NaNs only (a grid point whose every fit failed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(table, axis=1)


def _row_std(table):
    """As _row_mean, the standard deviation."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanstd(table, axis=1)


def _masked_column(candidates, key):
    """param_<key> of cv_results_: the values, masked where a grid point lacks the key."""
    values = [c.get(key) for c in candidates]
    mask = [key not in c for c in candidates]
    present = [v for v, m in zip(values, mask) if not m]
    numeric = all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in present)
    dtype = np.result_type(*present) if numeric and present else object
    column = np.ma.MaskedArray(np.empty(len(values), dtype=dtype), mask=mask)
    for i, (v, m) in enumerate(zip(values, mask)):
        if not m:
            column[i] = v
    return column
