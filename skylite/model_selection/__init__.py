"""Model selection that shares work between the models it compares.

`KernelGridSearchCV` is scikit-learn's `GridSearchCV` for skylite estimators: the grid
points of one kernel setting share their setup per fold (features, caches, the
early-stopping split), the values of C are solved as a regularization path, each
continuing from the last, and racing stops fitting grid points that are clearly behind
(docs/tuning.md).  `KernelRandomizedSearchCV` is RandomizedSearchCV's counterpart: it draws
its candidates as RandomizedSearchCV does and searches them the same way.
"""
from ._search import KernelGridSearchCV
from ._randomized import KernelRandomizedSearchCV
from ._racing import RACING_STANDARD_ERRORS

__all__ = ["KernelGridSearchCV", "KernelRandomizedSearchCV", "RACING_STANDARD_ERRORS"]
