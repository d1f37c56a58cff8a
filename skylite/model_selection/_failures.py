"""Fits that fail inside a search: `error_score`, as scikit-learn's GridSearchCV has it.

A grid point whose fit (or scoring) on a fold raises gets error_score as that fold's score
(skylite.model_selection._search); after the search, `report_failures` warns with every
distinct error and how often it came (FitFailedWarning), or raises if every fit failed.
"""
import numbers
import traceback
import warnings

from sklearn.exceptions import FitFailedWarning

__all__ = ["check_error_score", "failure_text", "report_failures"]


def check_error_score(error_score):
    """error_score is "raise" or a real number (ValueError otherwise)."""
    if isinstance(error_score, str):
        if error_score != "raise":
            raise ValueError(f"error_score must be 'raise' or a number, got {error_score!r}")
    elif isinstance(error_score, bool) or not isinstance(error_score, numbers.Real):
        raise ValueError(f"error_score must be 'raise' or a number, got {error_score!r}")


def failure_text(error):
    """What a failure report shows of an exception: its traceback."""
    return "".join(traceback.format_exception(error))


def report_failures(failures, n_fits, error_score):
    """After a search with failed fits: ValueError if every fit failed, else a
    FitFailedWarning; both list each distinct error (its traceback) and how often."""
    counts = {}
    for text in failures:
        counts[text] = counts.get(text, 0) + 1
    details = "\n".join(f"{count} fit(s) failed with the following error:\n{text}"
                         for text, count in counts.items())
    if len(failures) == n_fits:
        raise ValueError(f"All the {n_fits} fits failed: the estimator or the grid is "
                         f"probably misconfigured.  The errors:\n{details}")
    warnings.warn(f"{len(failures)} of the {n_fits} fits failed; their scores are set to "
                  f"error_score={error_score!r} (error_score='raise' raises the first "
                  f"instead).  The errors:\n{details}", FitFailedWarning, stacklevel=4)
