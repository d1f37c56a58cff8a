"""The estimators' checks of their inputs and parameters, collective under MPI.

`InputChecks` is a mixin of `skylite.estimators.KernelMachine`: before any check that could
raise on one rank alone, every rank compares its parameters with the others'
(`_agree_settings`, one allgather), so that each later check raises on every rank or on none;
the rank-local parameters are checked through `Distributed.agree`.  Training rows are
validated once per fit (scikit-learn's `validate_data`: dtype, NaN/inf, shape, feature names),
in the native layout the engine reads; below that, the solvers take them as checked.
Targets are coded here for the loss, and precision="auto" is resolved from the rows' dtype.
"""
import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (check_array, check_consistent_length, check_is_fitted,
                                      validate_data)

from ._distributed import different_settings_error
from ._threads import resolve_threads
from ._validation import FLOAT_DTYPES, check_rows, native_rows, sparse_structure_checked
from .admm.settings import EngineSettings
from .io.arrays import hdf5_rows, is_hdf5_dataset
from .prox.coding import code_labels

__all__ = ["InputChecks"]


class InputChecks:
    """The input and parameter checks of a KernelMachine (module docstring)."""

    def _agree_settings(self, dist, *flags):
        """Collective, before any check that could raise on one rank alone: every rank must
        have been given the same parameters (but the rank-local ones, _RANK_LOCAL), so that
        each check below raises on all ranks or on none.  Raises ValueError on every rank,
        naming the parameters that differ and each rank's value."""
        if dist.serial:
            return
        mine = {name: _comparable(value) for name, value in self.get_params(deep=False).items()
                if name not in _RANK_LOCAL}
        mine["X_val, y_val given"] = repr(flags)
        error = different_settings_error(dist.allgather(mine))
        if error is not None:
            raise error

    def _resolved_precision(self, dist, X):
        """`precision`, with "auto" made float32 when the validated rows X are float32 on
        every rank (EngineSettings.for_rows)."""
        single = all(dist.allgather(X.dtype == np.float32))
        return dist.agree(lambda: self._engine_settings().for_rows(single).precision)

    def _code_targets(self, y, loss, classes=None):
        """Y (n x m float64) from validated targets: class labels coded for the loss (and
        the classes), or real targets as columns."""
        if loss.classification:
            return code_labels(y, loss, classes=classes)
        self._y_1d = y.ndim == 1
        return _target_columns(y), None

    def _code_validation_targets(self, y_val, loss, classes, m):
        """Y_val (n_val x m) coded like the training targets, for the validation loss."""
        y_val = np.asarray(y_val)
        if loss.classification:
            unseen = ~np.isin(y_val, classes)
            if unseen.any():
                raise ValueError(f"y_val contains a label not among the training labels, "
                                 f"e.g. {y_val[unseen][0]!r}: the validation loss is undefined")
            return code_labels(y_val, loss, classes=classes)[0]
        Y_val = _target_columns(y_val)
        if Y_val.shape[1] != m:
            raise ValueError(f"y_val has {Y_val.shape[1]} targets per row, y has {m}")
        return Y_val

    def _check_rank_local(self):
        """Check the parameters a rank may hold alone (_RANK_LOCAL): through `dist.agree`,
        a bad value on one rank is an error on every rank.  Returns the resolved thread
        count."""
        EngineSettings.check("memory_budget", self.memory_budget)
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable or None, got {self.callback!r}")
        return resolve_threads(self.n_threads)

    def _validate_training_rows(self, X, y):
        """X (native layout) and y checked by scikit-learn's validate_data, which records
        n_features_in_ and feature_names_in_; class labels must be labels, real targets
        numbers (one or several columns)."""
        classifier = self.is_classifier
        X, y = validate_data(self, _in_place(sparse_structure_checked(X)), _in_place(y),
                             accept_sparse="csr", dtype=FLOAT_DTYPES,
                             multi_output=not classifier, y_numeric=not classifier)
        if classifier:
            check_classification_targets(y)
        return native_rows(X), y

    def _validate_validation_rows(self, X_val, y_val):
        """X_val, y_val checked like the training rows, against the fitted columns."""
        X_val, y_val = _in_place(X_val), _in_place(y_val)
        rows = check_rows(X_val, name="X_val", min_rows=1, n_features=self.n_features_in_,
                          who=type(self).__name__)
        validate_data(self, X_val, reset=False, skip_check_array=True)  # feature names
        classifier = self.is_classifier
        y_val = check_array(y_val, ensure_2d=False, dtype=None if classifier else "numeric",
                            input_name="y_val")
        check_consistent_length(rows, y_val)
        return rows, y_val

    def _check_X(self, X):
        """Rows to predict, checked against the fitted columns (number and names)."""
        check_is_fitted(self, "coef_")
        X = _in_place(sparse_structure_checked(X))
        return native_rows(validate_data(self, X, reset=False, accept_sparse="csr",
                                         dtype=FLOAT_DTYPES))


# parameters that may differ between MPI ranks: they change no collective decision
_RANK_LOCAL = ("comm", "callback", "verbose", "n_threads", "memory_budget", "checkpoint")


def _comparable(value):
    """A parameter's value as text that two ranks can compare (objects by their parameters;
    a random generator, whose state is each rank's own, by its type)."""
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return type(value).__name__
    return repr(value)


def _in_place(X):
    """An h5py dataset as an ndarray view of its file where HDF5 allows (contiguous,
    uncompressed: memory-mapped; else read in its own dtype, skylite.io.arrays.hdf5_rows);
    anything else as it is.  np.memmap / .npy arrays need nothing: float32 and float64 rows
    pass validation without a copy, and the engine reads them block by block."""
    return hdf5_rows(X) if is_hdf5_dataset(X) else X


def _target_columns(y):
    """Real targets y, (n,) or (n, m), as an n x m float64 array of columns."""
    return np.ascontiguousarray(y.reshape(len(y), -1), dtype=np.float64)
