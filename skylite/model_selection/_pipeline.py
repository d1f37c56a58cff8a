"""A scikit-learn Pipeline whose last step is a skylite estimator, inside KernelGridSearchCV.

The steps before the last (a scaler, a projection, a feature selector) are fitted on each
fold's training rows, as GridSearchCV fits the whole pipeline per fold; the last step's grid
points then share their work as they do without a pipeline, on the transformed rows.  The
other steps are fitted once per fold and setting of their own parameters (a grid over
`svc__sigma` and `svc__C` fits a scaler three times in three folds, not 36 times), and
their transform of a fold's test rows is made once and serves every model of the fold.

A model of a fold is scored as the pipeline would be: the scorers of scoring=None (the
estimator's `score`) and of a scorer name ("accuracy", "f1_macro", ...) call the last step
on the transformed test rows, which is what the fitted pipeline does; a callable `scoring`
is given the fitted pipeline itself (the last function `FoldSteps.prepared` returns makes it
from a fold model) and the fold's raw test rows.
"""
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing

__all__ = ["final_step", "pipeline_prefix", "FoldSteps", "rows_of"]


def final_step(estimator):
    """The estimator a search tunes: a Pipeline's last step, else the estimator."""
    return estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator


def pipeline_prefix(estimator):
    """"<name of the last step>__" for a Pipeline (its grid's names of the last step's
    parameters start with it), else ""."""
    return f"{estimator.steps[-1][0]}__" if isinstance(estimator, Pipeline) else ""


def rows_of(X, rows):
    """Rows `rows` of X for a Pipeline's first step: any input its steps accept (numpy, CSR,
    a pandas DataFrame, a list), indexed as scikit-learn indexes it."""
    return _safe_indexing(X, rows)


class FoldSteps:
    """The steps before a Pipeline's last, fitted on one fold's training rows, for each
    setting of their parameters met in the grid.

    Parameters
    ----------
    X_fit, y_fit : the fold's training rows and targets (raw, as the pipeline takes them)
    X_test : the fold's test rows (raw)
    """

    def __init__(self, X_fit, y_fit, X_test):
        self.X_fit, self.y_fit, self.X_test = X_fit, y_fit, X_test
        self._fitted = {}

    def prepared(self, pipeline):
        """(the last step, unfitted, with the pipeline's parameters; the fold's training
        rows and test rows through the other steps; a function that makes a fold model of
        the last step into the fitted pipeline).  The other steps are fitted on the fold's
        training rows (with its targets, for a supervised step) once per setting."""
        head = Pipeline(pipeline.steps[:-1]) if len(pipeline.steps) > 1 else None
        key = repr(head.get_params(deep=True)) if head is not None else ""
        if key not in self._fitted:
            if head is None or all(step in (None, "passthrough") for _, step in head.steps):
                self._fitted[key] = (None, self.X_fit, self.X_test)
            else:
                fitted = clone(head)
                X_fit_t = fitted.fit_transform(self.X_fit, self.y_fit)
                self._fitted[key] = (fitted, X_fit_t, fitted.transform(self.X_test))
        fitted, X_fit_t, X_test_t = self._fitted[key]
        name = pipeline.steps[-1][0]

        def pipeline_of(model):
            steps = fitted.steps if fitted is not None else pipeline.steps[:-1]
            return Pipeline(list(steps) + [(name, model)])

        return clone(pipeline.steps[-1][1]), X_fit_t, X_test_t, pipeline_of
