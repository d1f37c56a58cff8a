"""Input checks of the prox fronts (the style of `skylite._validation`).

The Cython kernels of `skylite.prox` assume finite float64 C-contiguous n x m arrays, a step
t > 0 finite and targets coded as the loss requires.  These functions make sure of it before
any GIL release and raise ValueError naming the problem otherwise.
"""
import warnings

import numpy as np

from .._validation import as_real_array, check_positive
from . import _scan


def _threads(A, n_threads):
    """Scan threads: the caller's for big arrays, one for small ones (no parallel region)."""
    return max(1, min(n_threads, A.size >> 16))


class ProxConvergenceWarning(RuntimeWarning):
    """An iterative prox (the multinomial logistic one) hit its iteration cap on some rows."""


def check_matrix(A, name, *, ndim=2, n_threads=1):
    """A finite real array as a C-contiguous float64 ndarray (float32 and integers converted).

    ndim=2 requires an n x m matrix; ndim=None accepts any number of dimensions.
    n_threads: threads of the finiteness scan (for large arrays).
    """
    A = as_real_array(A, name)  # rejects complex, strings, ...
    if ndim is not None and A.ndim != ndim:
        hint = " (reshape a single row with .reshape(1, -1))" if A.ndim == 1 else ""
        raise ValueError(f"{name} must be a {ndim}-D array (n x m), got {A.ndim}-D{hint}")
    A = np.ascontiguousarray(A, dtype=np.float64)
    if A.size and _scan.count_nonfinite(A.reshape(-1), _threads(A, n_threads)):
        raise ValueError(f"{name} contains NaN or infinity")
    return A


def check_same_shape(A, B, name_a, name_b):
    if A.shape != B.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {A.shape} and "
                         f"{B.shape}")


def check_step(t):
    """The prox step t: a finite number > 0, as a Python float."""
    return float(check_positive(t, "t"))


def check_plus_minus_one(Y, who, n_threads=1):
    """Every entry of Y is +1 or -1 (one-vs-rest classification coding)."""
    if Y.size == 0 or not _scan.count_not_plus_minus_one(Y.reshape(-1), _threads(Y, n_threads)):
        return
    bad = (Y != 1.0) & (Y != -1.0)
    if bad.any():
        value = Y[bad].flat[0]
        raise ValueError(f"{who} targets must be coded +1/-1 (one-vs-rest); Y contains "
                         f"{value!r} (see skylite.prox.coding.code_labels)")


def check_one_hot(Y, who, n_threads=1):
    """Every row of Y is one-hot: entries 0 or 1, exactly one 1."""
    if Y.shape[0] == 0 or not _scan.count_not_one_hot(Y, _threads(Y, n_threads)):
        return
    bad = (Y != 0.0) & (Y != 1.0)
    if bad.any():
        raise ValueError(f"{who} targets must be one-hot rows of 0/1; Y contains "
                         f"{Y[bad].flat[0]!r} (see skylite.prox.coding.code_labels)")
    counts = Y.sum(axis=1)
    if (counts != 1).any():
        i = int(np.flatnonzero(counts != 1)[0])
        raise ValueError(f"{who} targets must be one-hot rows with exactly one 1; row {i} "
                         f"has {int(counts[i])}")


def check_out(out, shape):
    """A caller's output buffer: a writeable C-contiguous float64 ndarray of `shape`."""
    if not isinstance(out, np.ndarray):
        raise ValueError(f"out must be a numpy array, got {type(out).__name__}")
    if out.dtype != np.float64:
        raise ValueError(f"out must have dtype float64, got {out.dtype}")
    if out.shape != shape:
        raise ValueError(f"out must have shape {shape}, got {out.shape}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def warn_unconverged(count, n, who, max_iter):
    if count > 0:
        warnings.warn(f"{who}: {count} of {n} rows did not converge in {max_iter} Newton "
                      f"iterations; their result is the last iterate", ProxConvergenceWarning,
                      stacklevel=3)
