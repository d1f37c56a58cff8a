"""Racing: grid points clearly behind after the first folds are not fitted on the others.

A search scores every grid point on fold 1, then on fold 2, and so on.  After each fold but
the last, a grid point is dropped when its mean accuracy over the folds scored so far is
below the best point's by more than `RACING_STANDARD_ERRORS` standard errors of the
difference of two accuracies, each estimated on the v validation rows scored so far:

    drop if  best - score > RACING_STANDARD_ERRORS * sqrt(2 p (1 - p) / v),  p = best

(a binomial standard error at the best accuracy: a point that far behind would win only if
its deficit were a 4-sigma accident).  A dropped point keeps the scores it has; its later
folds are NaN in `cv_results_`, its mean is over the folds it ran, and it ranks after every
point that ran all folds, so the choice is always among the points that ran all of them.
The rule needs a score with a binomial error, so it applies to accuracy only (the
classifiers' default scoring or scoring="accuracy"); with any other scoring every point
runs every fold.
"""
import numpy as np

__all__ = ["RACING_STANDARD_ERRORS", "racing_margin", "surviving"]

#: how many standard errors behind the best a grid point may fall and stay in the race
RACING_STANDARD_ERRORS = 4.0


def racing_margin(best, n_scored_rows):
    """How far below the best mean accuracy `best` (over `n_scored_rows` validation rows)
    a grid point may be and stay in the race."""
    p = min(max(best, 0.0), 1.0)
    return RACING_STANDARD_ERRORS * np.sqrt(2.0 * p * (1.0 - p) / max(n_scored_rows, 1))


def surviving(scores, alive, n_scored_rows):
    """The grid points still in the race after a fold.

    Parameters
    ----------
    scores : ndarray of shape (n_candidates, n_folds_scored)
        The accuracies so far (NaN where a point did not run).
    alive : ndarray of bool, shape (n_candidates,)
        The points that ran the last fold.
    n_scored_rows : int
        The validation rows over the folds scored so far.

    Returns
    -------
    ndarray of bool, shape (n_candidates,)
    """
    means = np.where(alive, np.nanmean(np.where(alive[:, None], scores, 0.0), axis=1),
                     -np.inf)
    best = means.max()
    return alive & (means >= best - racing_margin(best, n_scored_rows))
