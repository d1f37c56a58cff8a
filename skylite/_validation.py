"""Input checks shared by every public entry point.

Native code never sees unchecked input.  `check_rows` runs scikit-learn's `check_array`
(dtype, dimensions, NaN / infinity, minimum sizes) and then turns the result into the exact
layouts the Cython kernels assume: C-contiguous float32/float64 rows, or canonical CSR with
int32 indices and int64 indptr.  The estimators go through `sklearn.utils.validation.
validate_data` first (feature names, `n_features_in_`) and then `native_rows`.
"""
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

#: the dtypes native code computes in: float32 stays float32, every other real becomes float64
FLOAT_DTYPES = (np.float64, np.float32)


def check_rows(X, *, name="X", n_features=None, who=None, min_rows=0, nonnegative=False):
    """Validate a 2-D input of rows; return a C-contiguous ndarray or a canonical CSR matrix.

    float32 input stays float32; every other real dtype becomes float64.
    Raises ValueError for NaN/inf, a wrong number of dimensions or columns, a non-real dtype,
    fewer than `min_rows` rows, or (with `nonnegative`) a negative entry.
    """
    X = native_rows(check_array(sparse_structure_checked(X, name), accept_sparse="csr",
                                dtype=FLOAT_DTYPES, order="C", ensure_min_samples=min_rows,
                                input_name=name))
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {who or 'the model'} "
                         f"is expecting {n_features} features as input")
    if nonnegative:
        check_nonnegative(X, name, who)
    return X


def check_nonnegative(X, name="X", who=None):
    """Raise ValueError if the rows X (ndarray or sparse) have a negative entry."""
    values = X.data if sp.issparse(X) else X
    if values.size and values.min() < 0:
        raise ValueError(f"{name} has negative entries; {who or 'this map'} needs x >= 0")


def sparse_structure_checked(X, name="X"):
    """X itself, after checking that a scipy CSR (or CSC) matrix is well formed: indptr of
    n + 1 entries, starting at 0, never decreasing, ending at nnz; every index in
    [0, number of columns).  A malformed matrix is refused with ValueError before scipy or
    native code reads it (an out-of-range index would be read out of bounds).  O(nnz)."""
    if not (sp.issparse(X) and X.format in ("csr", "csc")):
        return X
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    what = f"{name} is a malformed sparse matrix"
    if indptr.ndim != 1 or len(indptr) != major + 1:
        raise ValueError(f"{what}: indptr has {len(indptr)} entries, expected {major + 1}")
    if len(indptr) and indptr[0] != 0:
        raise ValueError(f"{what}: indptr starts at {indptr[0]}, not 0")
    if len(indices) != len(X.data) or (len(indptr) and indptr[-1] != len(indices)):
        raise ValueError(f"{what}: indptr ends at {indptr[-1]} but it has {len(indices)} "
                         f"indices and {len(X.data)} values")
    steps = np.diff(indptr)
    if steps.size and steps.min() < 0:
        raise ValueError(f"{what}: indptr decreases at row {int(np.argmax(steps < 0))}")
    if indices.size and (indices.min() < 0 or indices.max() >= minor):
        bad = indices[(indices < 0) | (indices >= minor)][0]
        raise ValueError(f"{what}: index {int(bad)} is outside [0, {minor}) (it has "
                         f"{minor} {'columns' if X.format == 'csr' else 'rows'})")
    return X


def native_rows(X):
    """Rows already checked by scikit-learn (`check_array` / `validate_data` with
    accept_sparse="csr" and dtype=FLOAT_DTYPES) in the layout native code reads: a
    C-contiguous ndarray, or a canonical CSR matrix with int32 indices and int64 indptr."""
    if not sp.issparse(X):
        return np.ascontiguousarray(X)
    sparse_structure_checked(X)
    if X.shape[1] >= 2**31:
        raise ValueError(f"X has {X.shape[1]} columns; at most 2**31 - 1 are supported")
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return with_native_index_dtypes(X)


def take_rows(X, rows):
    """Rows `rows` (an index array) of rows X that were already checked (`check_rows` or
    `native_rows`), in the same layout, without checking them again."""
    taken = X[rows]
    return with_native_index_dtypes(taken) if sp.issparse(taken) else np.ascontiguousarray(taken)


def as_real_array(A, name):
    """A as an ndarray of a real dtype (object arrays of numbers become float64); raises
    ValueError naming `name` for anything else.  Shape and layout are left to the caller."""
    if not hasattr(A, "dtype"):
        A = np.asarray(A)
    if A.dtype == object:
        try:
            A = A.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name} must hold real numbers: {exc}") from None
    _real_dtype(A.dtype, name)
    return A


def with_native_index_dtypes(X):
    """A CSR matrix with the index dtypes native code reads: int64 indptr, int32 indices
    (scipy picks its own when it slices or copies).  Shares the data."""
    X.indptr = X.indptr.astype(np.int64, copy=False)
    X.indices = X.indices.astype(np.int32, copy=False)
    return X


def _real_dtype(dtype, name):
    if dtype == np.float32:
        return np.float32
    if np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer) or dtype == bool:
        return np.float64
    if np.issubdtype(dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers, got dtype {dtype}: Complex data "
                         f"not supported")
    raise ValueError(f"{name} must hold real numbers, got dtype {dtype}")


# The largest integer option: what native code holds in a C int.
MAX_INTEGER = 2**31 - 1


def check_positive(value, name, *, integer=False, allow_zero=False):
    """Return `value` if it is a positive (or, with allow_zero, non-negative) finite number;
    an integer (with `integer`) at most MAX_INTEGER.  Raises ValueError naming `name`."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    bound = ">= 0" if allow_zero else "> 0"
    if integer:
        if value < 0 or (value == 0 and not allow_zero) or value > MAX_INTEGER:
            raise ValueError(f"{name} must be an integer {bound} and at most {MAX_INTEGER}, "
                             f"got {value!r}")
        return value
    try:
        finite = bool(np.isfinite(float(value)))
    except OverflowError:            # an int beyond float64
        finite = False
    if not finite or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return value


# The range of a length scale (a bandwidth sigma, Matern's length_scale, a kernel's beta)
# whose square and inverse square are finite, nonzero float64 numbers: the kernels and maps
# compute 1 / (2 sigma^2) and sigma^-1.
SCALE_RANGE = (1e-150, 1e150)


def check_scale(value, name):
    """`value` if it is a number within SCALE_RANGE (a length scale the kernels can square
    and invert in float64); ValueError naming `name` otherwise."""
    check_positive(value, name)
    low, high = SCALE_RANGE
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}] (its square and inverse "
                         f"square must be finite float64 numbers), got {value!r}; rescale the "
                         f"rows instead")
    return value


def resolve_seed(random_state):
    """The 64-bit seed of a map: an int as given, fresh entropy for None, or a draw from a
    numpy Generator / RandomState.  The seed is stored, so a model never needs its random
    numbers saved."""
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if not 0 <= random_state < 2**64:
            raise ValueError(f"random_state must be in [0, 2**64), got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a numpy random generator, "
                     f"got {random_state!r}")
