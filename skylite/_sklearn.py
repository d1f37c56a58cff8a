"""scikit-learn's estimator tags, built only when scikit-learn asks for them.

scikit-learn is not a dependency of skylite: `__sklearn_tags__` is called by scikit-learn
itself (`check_estimator`, `clone`, `Pipeline`, `GridSearchCV`, `is_classifier`), so importing
it there costs nothing for users who never load it.
"""
import importlib
import sys


def estimator_tags(classifier):
    """`sklearn.utils.Tags` for a skylite kernel machine: dense or CSR input without NaN,
    targets required; classifiers are multi-class, regressors multi-output."""
    # scikit-learn is optional: imported only when scikit-learn itself asks for the tags
    from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

    return Tags(
        estimator_type="classifier" if classifier else "regressor",
        target_tags=TargetTags(required=True, multi_output=not classifier,
                               single_output=True),
        classifier_tags=ClassifierTags(multi_class=True) if classifier else None,
        regressor_tags=None if classifier else RegressorTags(),
        input_tags=InputTags(sparse=True, allow_nan=False),
    )


def _sklearn_class(module, name):
    """scikit-learn's class if scikit-learn is already imported (only then can a caller be
    catching it), else None."""
    if "sklearn" not in sys.modules:
        return None
    return getattr(importlib.import_module(module), name)


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before `fit` (scikit-learn's NotFittedError when it is loaded)."""


class DataConversionWarning(UserWarning):
    """An input was converted to the shape an estimator needs (e.g. y of shape (n, 1))."""


def not_fitted_error(message):
    """The exception to raise for an unfitted estimator: scikit-learn's own class when
    scikit-learn is loaded (its checks and user code catch that), skylite's otherwise.
    Both are ValueError and AttributeError."""
    cls = _sklearn_class("sklearn.exceptions", "NotFittedError") or NotFittedError
    return cls(message)


def data_conversion_warning():
    """The warning category for a converted input (scikit-learn's when it is loaded)."""
    return _sklearn_class("sklearn.exceptions", "DataConversionWarning") or \
        DataConversionWarning
