"""What a search scores its fold models with: one scoring, or several (GridSearchCV's
multi-metric evaluation).

One scoring (None: the estimator's `score`, a scorer name, or a callable) is reported under
the name "score" (``mean_test_score``, ...).  Several (a list, tuple or set of scorer names,
or a dict of names to scorers) are each reported under their name (``mean_test_<name>``,
...), and `refit` names the one that chooses the best candidate, or is False (then no best
candidate is chosen), as in GridSearchCV.  With one scoring or several, `refit` may also be
a callable that chooses the best candidate from ``cv_results_`` (GridSearchCV's
``refit=callable``).
"""
from sklearn.metrics import check_scoring

__all__ = ["Scorings"]


class Scorings:
    """The scorers of a search (module docstring), checked.

    Parameters
    ----------
    estimator : estimator
        The searched estimator (what the scorers are checked against).
    scoring : None, str, callable, list, tuple, set or dict
        As for GridSearchCV.
    refit : bool, str or callable
        True or False with one scoring; False or the name of one of several scorings; or a
        callable ``cv_results_ -> best_index_``.

    Attributes
    ----------
    scorers : dict
        Name -> scorer, in the given order ("score" for a single scoring).
    main : str or None
        The name whose mean chooses the best candidate (None: several scorings with
        refit=False or a callable).
    choose : callable or None
        The callable refit, which chooses the best candidate instead of a mean score.
    multimetric : bool
        Whether several scorings were given.
    accuracy : bool
        Whether `main` scores accuracy and chooses the best candidate (racing counts
        correct rows, so it applies only then).
    """

    def __init__(self, estimator, scoring, refit):
        self.multimetric = isinstance(scoring, (list, tuple, set, dict))
        self.choose = refit if callable(refit) else None
        if not self.multimetric:
            if not (isinstance(refit, bool) or self.choose is not None):
                raise ValueError(f"refit must be True, False or a callable, got {refit!r}")
            self.scorers = {"score": check_scoring(estimator, scoring)}
            self.main = "score"
            self.accuracy = scoring in (None, "accuracy") and self.choose is None
            return
        if not scoring:
            raise ValueError("scoring is empty: give one scoring, or the names of several")
        if isinstance(scoring, dict):
            specs = dict(scoring)
        else:
            if not all(isinstance(name, str) for name in scoring):
                raise ValueError(f"several scorings are given as scorer names (str) or as a "
                                 f"dict of names to scorers, got {scoring!r}")
            if len(set(scoring)) != len(scoring):
                raise ValueError(f"scoring names a scorer twice: {scoring!r}")
            specs = {name: name for name in scoring}
        if (refit is not False and self.choose is None
                and (not isinstance(refit, str) or refit not in specs)):
            raise ValueError(f"with several scorings refit must be the name of one of them "
                             f"({sorted(specs)}), False or a callable, got {refit!r}")
        self.scorers = {name: check_scoring(estimator, spec) for name, spec in specs.items()}
        self.main = refit if isinstance(refit, str) else None
        self.accuracy = self.main is not None and specs[self.main] == "accuracy"

    def __call__(self, estimator, X, y):
        """{name: score} of a fitted estimator on rows X, targets y."""
        return {name: scorer(estimator, X, y) for name, scorer in self.scorers.items()}

    @property
    def scorer_(self):
        """The search's ``scorer_``: the scorer, or the dict of them with several."""
        return dict(self.scorers) if self.multimetric else self.scorers["score"]
