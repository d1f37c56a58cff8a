# cython: language_level=3
"""The engine's calls of the loss and regularizer kernels (skylite/prox/_losses.pxd and
_regularizers.pxd), without the Python fronts' checks.

The fronts `Loss.prox` / `Loss.value` re-scan their input (finite values, target coding) on
every call; the engine validates its targets once at setup (`Loss.value` on Y) and checks
its iterates for non-finite values after every sweep, so each iteration calls the nogil
row drivers directly.  Every array is a C-contiguous float64 n x m matrix (memoryviews
check the layout); results do not depend on `n_threads`.
"""
from skylite.prox._losses cimport Loss
from skylite.prox._regularizers cimport Regularizer


def loss_prox(Loss loss, const double[:, ::1] V, const double[:, ::1] Y, double t,
              double[:, ::1] X, int n_threads):
    """X <- prox_{t V(y_i, .)}(v_i) row by row; X holds a warm start on entry (used by the
    iterative logistic prox) and must not alias V or Y.  Returns the number of rows whose
    iterative prox hit its iteration cap."""
    cdef Py_ssize_t n = V.shape[0], m = V.shape[1], bad
    if Y.shape[0] != n or Y.shape[1] != m or X.shape[0] != n or X.shape[1] != m:
        raise ValueError("V, Y and X must have the same shape")
    if n == 0:
        return 0
    with nogil:
        bad = loss.prox_rows(&V[0, 0], &Y[0, 0], t, &X[0, 0], n, m, True, n_threads)
    if bad < 0:
        raise MemoryError("could not allocate the prox work buffers")
    return bad


def loss_value(Loss loss, const double[:, ::1] O, const double[:, ::1] Y, int n_threads):
    """sum_i V(y_i, o_i) over the rows of O and Y (n x m)."""
    cdef Py_ssize_t n = O.shape[0], m = O.shape[1]
    cdef double total
    if Y.shape[0] != n or Y.shape[1] != m:
        raise ValueError("O and Y must have the same shape")
    if n == 0:
        return 0.0
    with nogil:
        total = loss.value_rows(&O[0, 0], &Y[0, 0], n, m, n_threads)
    if total != total:
        raise MemoryError("could not allocate the partial sums")
    return total


def regularizer_prox(Regularizer reg, const double[:, ::1] V, double t, double[:, ::1] X,
                     int n_threads):
    """X <- prox_{t r}(V) elementwise (X may be V)."""
    if X.shape[0] != V.shape[0] or X.shape[1] != V.shape[1]:
        raise ValueError("V and X must have the same shape")
    if V.shape[0] * V.shape[1] == 0:
        return
    with nogil:
        reg.prox_rows(&V[0, 0], t, &X[0, 0], V.shape[0], V.shape[1], n_threads)


def regularizer_value(Regularizer reg, const double[:, ::1] W, int n_threads):
    """r(W) for an s x m matrix."""
    cdef double total
    if W.shape[0] * W.shape[1] == 0:
        return 0.0
    with nogil:
        total = reg.value_rows(&W[0, 0], W.shape[0], W.shape[1], n_threads)
    if total != total:
        raise MemoryError("could not allocate the partial sums")
    return total
