# cython: language_level=3
"""Regularizers r(W) of docs/prox.md and their (elementwise, closed-form) proxes.

Each regularizer is a small strategy object (a cdef class, see `_regularizers.pxd`) with nogil
kernels `value_row` / `prox_row` on any contiguous run of entries, drivers `value_rows` /
`prox_rows` parallel over fixed chunks of entries, and thin Python fronts `value(W)` and
`prox(V, t, out=None)`.  W and V are s x m (any shape is accepted: r is a sum over entries);
computation is in float64, float32 input is converted and results are float64.
prox_{t r}(v) = argmin_x t r(x) + 1/2 ||x - v||^2.  Results do not depend on the number of
threads.
"""
from cython.parallel cimport prange
from libc.math cimport copysign, fabs, NAN

import numpy as np

from skylite.prox._fixed_chunks cimport chunked_sum

from .._threads import resolve_threads
from ._checks import check_matrix, check_out, check_step

cdef Py_ssize_t CHUNK = 4096  # entries per parallel work item and per partial sum


ctypedef struct RegularizerEntries:  # what value_rows hands to chunked_sum
    void *regularizer  # the Regularizer (borrowed: value_rows holds it)
    const double *W


cdef double _entries_value(const void *data, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """r on the entries start..stop-1 of W (a chunk of `Regularizer.value_rows`)."""
    cdef const RegularizerEntries *e = <const RegularizerEntries *> data
    return (<Regularizer> e.regularizer).value_row(e.W + start, stop - start)


cdef class Regularizer:
    """Base class of the regularizers: r(W) = sum over entries of W of a scalar function.

    Attribute `name`: the registry name.
    """
    name = None

    def __cinit__(self, *args, **kwargs):
        if type(self) is Regularizer:
            raise TypeError("Regularizer is abstract: use L2, L1, NoRegularizer or "
                            "skylite.prox.get_regularizer(name)")

    cdef double value_row(self, const double *w, Py_ssize_t m) noexcept nogil:
        return NAN

    cdef void prox_row(self, const double *v, double t, double *x, Py_ssize_t m) noexcept nogil:
        pass

    cdef double value_rows(self, const double *W, Py_ssize_t n, Py_ssize_t m,
                           int n_threads) noexcept nogil:
        cdef RegularizerEntries entries
        entries.regularizer = <void *> self
        entries.W = W
        return chunked_sum(_entries_value, &entries, n * m, CHUNK, n_threads)

    cdef void prox_rows(self, const double *V, double t, double *X, Py_ssize_t n,
                        Py_ssize_t m, int n_threads) noexcept nogil:
        cdef Py_ssize_t size = n * m, n_chunks = (n * m + CHUNK - 1) // CHUNK, c, stop
        for c in prange(n_chunks, schedule='static', num_threads=n_threads):
            stop = min(size, (c + 1) * CHUNK)
            self.prox_row(V + c * CHUNK, t, X + c * CHUNK, stop - c * CHUNK)

    def value(self, W, *, n_threads=None):
        """r(W), summed over the entries of W.

        Parameters
        ----------
        W : array-like of shape (s, m)
            The weights (float32 or float64).
        n_threads : int or None, default=None
            OpenMP threads (None: the default of skylite._threads.resolve_threads).

        Returns
        -------
        value : float
            r(W).
        """
        cdef int nt = resolve_threads(n_threads)
        W = check_matrix(W, "W", ndim=None, n_threads=nt)
        if W.size == 0:
            return 0.0
        cdef const double[::1] w = W.reshape(-1)
        cdef Py_ssize_t size = W.size
        cdef double total
        nt = min(nt, 1 + size // (4 * CHUNK))  # small inputs: no parallel region
        with nogil:
            total = self.value_rows(&w[0], 1, size, nt)
        if total != total:
            raise MemoryError("could not allocate the partial sums")
        return total

    def prox(self, V, t, out=None, *, n_threads=None):
        """prox_{t r}(V), elementwise.

        Parameters
        ----------
        V : array-like of shape (s, m)
            The point (float32 or float64).
        t : float > 0
            The step, finite.
        out : ndarray of V's shape or None, default=None
            A C-contiguous float64 array to write into (returned; it may be V itself).
        n_threads : int or None, default=None
            OpenMP threads (None: the default of skylite._threads.resolve_threads); the result does not depend on it.

        Returns
        -------
        X : ndarray of V's shape, float64
            argmin_X t r(X) + 1/2 ||X - V||_F^2 (`out` when given).
        """
        cdef int nt = resolve_threads(n_threads)
        V = check_matrix(V, "V", ndim=None, n_threads=nt)
        cdef double step = check_step(t)
        if out is None:
            out = np.empty(V.shape, dtype=np.float64)
        else:
            check_out(out, V.shape)
            if np.may_share_memory(out, V) and out is not V:
                V = V.copy()
        if V.size == 0:
            return out
        cdef const double[::1] v = V.reshape(-1)
        cdef double[::1] x = out.reshape(-1)
        cdef Py_ssize_t size = V.size
        nt = min(nt, 1 + size // (4 * CHUNK))
        with nogil:
            self.prox_rows(&v[0], step, &x[0], 1, size, nt)
        return out

    def get_params(self):
        """The constructor arguments, as a dict (none)."""
        return {}

    def __reduce__(self):
        return (type(self), ())

    def __sklearn_clone__(self):
        """A new object with the same parameters (what scikit-learn's `clone` makes of an
        estimator parameter)."""
        return type(self)(**self.get_params())

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self).__name__)

    def __repr__(self):
        return f"{type(self).__name__}()"


cdef class L2(Regularizer):
    """r(W) = 1/2 ||W||_F^2;  prox_{t r}(v) = v / (1 + t)."""
    name = "l2"

    cdef double value_row(self, const double *w, Py_ssize_t m) noexcept nogil:
        cdef double s = 0.0
        cdef Py_ssize_t k
        for k in range(m):
            s += w[k] * w[k]
        return 0.5 * s

    cdef void prox_row(self, const double *v, double t, double *x, Py_ssize_t m) noexcept nogil:
        cdef double a = 1.0 / (1.0 + t)
        cdef Py_ssize_t k
        for k in range(m):
            x[k] = a * v[k]


cdef class L1(Regularizer):
    """r(W) = sum_ab abs(W_ab);  prox_{t r}(v) = sign(v) max(abs(v) - t, 0) (soft
    thresholding)."""
    name = "l1"

    cdef double value_row(self, const double *w, Py_ssize_t m) noexcept nogil:
        cdef double s = 0.0
        cdef Py_ssize_t k
        for k in range(m):
            s += fabs(w[k])
        return s

    cdef void prox_row(self, const double *v, double t, double *x, Py_ssize_t m) noexcept nogil:
        cdef double vk
        cdef Py_ssize_t k
        for k in range(m):  # a select, not a branch
            vk = v[k]
            x[k] = 0.0 if fabs(vk) <= t else vk - copysign(t, vk)


cdef class NoRegularizer(Regularizer):
    """r(W) = 0;  prox_{t r}(v) = v."""
    name = "none"

    cdef double value_row(self, const double *w, Py_ssize_t m) noexcept nogil:
        return 0.0

    cdef void prox_row(self, const double *v, double t, double *x, Py_ssize_t m) noexcept nogil:
        cdef Py_ssize_t k
        if x != v:
            for k in range(m):
                x[k] = v[k]
