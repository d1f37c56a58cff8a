"""Racing: grid points clearly behind after the first folds are not fitted on the others.

A search scores every grid point on fold 1, then on fold 2, and so on.  After each fold but
the last, a grid point is dropped when its accuracy over the v test rows scored so far is
below the best point's by more than `RACING_STANDARD_ERRORS` standard errors of that
difference.  Both points are scored on the same rows, so the difference is a mean over rows
of c_b - c_i (c = 1 where a point's model is right), and its standard error is the paired
one (McNemar's):

    drop if  d > RACING_STANDARD_ERRORS * sqrt((q - d^2) / (v - 1)),
             d = acc_b - acc_i,  q = (rows where exactly one of the two is right) / v

A point that far behind would win only if its deficit were a 4-sigma accident of the rows
scored.  Two models of the same rows mostly agree, so this is much tighter than the
unpaired error sqrt(2 p (1 - p) / v) of two accuracies measured apart.  The statistic needs
only the counts C[i, j] of rows that points i and j both classify right (`co_correct`: a
sum over rows, so one Allreduce under MPI).  A dropped point keeps the scores it has; its
later folds are NaN in `cv_results_`, its mean is over the folds it ran, and it ranks after
every point that ran all folds, so the choice is always among the points that ran all of
them.  The rule needs per-row correctness, so it applies to accuracy only (the classifiers'
default scoring or scoring="accuracy"); with any other scoring every point runs every fold.
"""
import numpy as np

__all__ = ["RACING_STANDARD_ERRORS", "co_correct", "surviving"]

#: how many standard errors behind the best a grid point may fall and stay in the race
RACING_STANDARD_ERRORS = 4.0


def co_correct(correct):
    """C[i, j] = the rows that points i and j both classify right, from `correct` (n_points x
    rows, bool: a point's model right on a row); its diagonal counts each point's right
    rows.  A sum over rows: the ranks' matrices add up to the global one."""
    right = np.asarray(correct, dtype=np.float64)
    return right @ right.T


def surviving(counts, alive, n_scored_rows):
    """The grid points still in the race after a fold (module docstring).

    Parameters
    ----------
    counts : ndarray of shape (n_points, n_points)
        `co_correct` over every test row scored so far (all ranks'); rows and columns of
        points that are not alive are not read.
    alive : ndarray of bool, shape (n_points,)
        The points that ran every fold so far.
    n_scored_rows : int
        v, the test rows scored so far (all ranks').

    Returns
    -------
    ndarray of bool, shape (n_points,)
    """
    v = max(int(n_scored_rows), 2)
    right = np.where(alive, np.diag(counts), -np.inf)
    best = int(np.argmax(right))
    d = (counts[best, best] - np.diag(counts)) / v
    q = (counts[best, best] + np.diag(counts) - 2.0 * counts[best]) / v
    margin = RACING_STANDARD_ERRORS * np.sqrt(np.maximum(q - d * d, 0.0) / (v - 1))
    return alive & (d <= margin)
