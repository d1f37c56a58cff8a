# The blocked Cholesky solve (skylite/prox/_cholesky_solve.pyx) for nogil callers.

cdef Py_ssize_t cholesky_solve_work(Py_ssize_t s, Py_ssize_t m) noexcept nogil
cdef void cholesky_solve_rows(const double *U, Py_ssize_t s, double *X, Py_ssize_t m,
                              double *work, bint narrow) noexcept nogil
