# Regularizers r(W) of docs/prox.md as strategy objects with a nogil interface.
#
# r is a sum over the entries of W (s x m), so its prox is elementwise and these methods act
# on any contiguous run of entries: a row (m entries), a column block's rows, or the whole
# C-contiguous matrix (n = s rows of m).  The ADMM engine cimports:
#
#     from skylite.prox._regularizers cimport Regularizer
#     cdef Regularizer reg = skylite.prox.get_regularizer("l1")
#     reg.prox_row(&V[a, 0], t, &X[a, 0], m)                  # one row
#     reg.prox_rows(&V[0, 0], t, &X[0, 0], s, m, n_threads)   # all rows
#
# float64 only; the Python fronts validate input (finite, t > 0 finite) beforehand.  x may
# alias v (in place).  Results do not depend on the number of threads.

cdef class Regularizer:
    # r restricted to m entries
    cdef double value_row(self, const double *w, Py_ssize_t m) noexcept nogil

    # x <- prox_{t r}(v) = argmin_x t r(x) + 1/2 ||x - v||^2 on m entries
    cdef void prox_row(self, const double *v, double t, double *x, Py_ssize_t m) noexcept nogil

    # r(W) over n C-contiguous rows of m entries (NaN if scratch memory is unavailable)
    cdef double value_rows(self, const double *W, Py_ssize_t n, Py_ssize_t m,
                           int n_threads) noexcept nogil

    # prox_row over n C-contiguous rows of m entries, in parallel
    cdef void prox_rows(self, const double *V, double t, double *X, Py_ssize_t n,
                        Py_ssize_t m, int n_threads) noexcept nogil


cdef class L2(Regularizer):
    pass


cdef class L1(Regularizer):
    pass


cdef class NoRegularizer(Regularizer):
    pass
