# The base class of the losses V(y, o) of docs/prox.md: strategy objects with a nogil per-row
# interface.  The losses (_closed_form_losses.pyx, _logistic_loss.pyx) subclass it.
#
# The ADMM engine cimports this file and calls the kernels itself, from its own prange or
# through the row drivers:
#
#     from skylite.prox._losses cimport Loss
#     cdef Loss loss = skylite.prox.get_loss("logistic")
#     # per row, inside the engine's own prange (work: loss.work_size(m) doubles per thread)
#     status = loss.prox_row(&V[i, 0], &Y[i, 0], t, &X[i, 0], m, warm, work)
#     # or all n rows of C-contiguous n x m arrays, with n_threads OpenMP threads
#     n_unconverged = loss.prox_rows(&V[0, 0], &Y[0, 0], t, &X[0, 0], n, m, warm, n_threads)
#
# All arrays are float64.  The Python fronts (`value`, `prox`) validate their input before
# any of this runs (finite values, matching shapes, t > 0 finite, the target coding), so the
# kernels never check anything: they assume
#   * v, y, o finite; t > 0 finite; y coded as the loss requires (hinge: entries +/-1,
#     logistic: one-hot rows);
#   * x does not alias v or y (the closed forms tolerate x == v, the logistic prox does not).
# Each row is computed the same way whatever thread runs it, so results do not depend on the
# number of threads; value_rows sums over fixed chunks of rows (_fixed_chunks.pxd) for the same
# reason.

cdef class Loss:
    # True when the targets are class labels coded for this loss (checked by the fronts).
    cdef readonly bint classification

    # doubles of scratch space prox_row needs for a row of m outputs (0 for closed forms)
    cdef Py_ssize_t work_size(self, Py_ssize_t m) noexcept nogil

    # V(y, o) for one row of m outputs
    cdef double value_row(self, const double *o, const double *y, Py_ssize_t m) noexcept nogil

    # x <- prox_{t V(y, .)}(v) = argmin_x t V(y, x) + 1/2 ||x - v||^2 for one row.
    # warm: x holds a starting point on entry (used by iterative proxes, ignored by closed
    # forms).  Returns 0 on convergence, 1 if an iterative prox hit its iteration cap or its
    # line search failed (x is then its best iterate, still finite).  work: work_size(m)
    # doubles of scratch, private to the calling thread.
    cdef int prox_row(self, const double *v, const double *y, double t, double *x,
                      Py_ssize_t m, bint warm, double *work) noexcept nogil

    # sum_i V(y_i, o_i) over n C-contiguous rows (NaN if scratch memory is unavailable)
    cdef double value_rows(self, const double *O, const double *Y, Py_ssize_t n,
                           Py_ssize_t m, int n_threads) noexcept nogil

    # prox_row on n C-contiguous rows in parallel; returns the number of rows that hit the
    # iteration cap, or -1 if scratch memory could not be allocated (nothing written).
    cdef Py_ssize_t prox_rows(self, const double *V, const double *Y, double t, double *X,
                              Py_ssize_t n, Py_ssize_t m, bint warm,
                              int n_threads) noexcept nogil

