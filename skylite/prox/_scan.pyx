# cython: language_level=3
"""Parallel single-pass scans behind the input checks of `_checks.py`.

numpy's `np.isfinite(A).all()` and `((Y != 1) & (Y != -1)).any()` allocate temporaries and
run on one core; on 10^6 x 10 inputs they cost as much as the prox itself.  These scans
count the offending entries (rows) without allocating; `_checks.py` locates the first one
with numpy only to word the error.  Counts are exact whatever the number of threads.
"""
from cython.parallel cimport prange
from libc.math cimport fabs, isfinite

cdef Py_ssize_t CHUNK = 8192


def count_nonfinite(const double[::1] a, int n_threads):
    """The number of NaN / infinite entries of a."""
    cdef Py_ssize_t n = a.shape[0], n_chunks = (n + CHUNK - 1) // CHUNK, c, i, bad = 0
    with nogil:
        for c in prange(n_chunks, schedule='static', num_threads=n_threads):
            for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
                if not isfinite(a[i]):
                    bad += 1
    return bad


def count_not_plus_minus_one(const double[::1] a, int n_threads):
    """The number of entries of a that are neither +1 nor -1."""
    cdef Py_ssize_t n = a.shape[0], n_chunks = (n + CHUNK - 1) // CHUNK, c, i, bad = 0
    with nogil:
        for c in prange(n_chunks, schedule='static', num_threads=n_threads):
            for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
                bad += fabs(a[i]) != 1.0  # branch-free: labels are unpredictable
    return bad


def count_not_one_hot(const double[:, ::1] Y, int n_threads):
    """The number of rows of Y that are not one-hot (0/1 entries, exactly one 1)."""
    cdef Py_ssize_t n = Y.shape[0], m = Y.shape[1], i, k, ones, zeros, bad = 0
    with nogil:
        for i in prange(n, schedule='static', num_threads=n_threads):
            ones = 0
            zeros = 0
            for k in range(m):  # branch-free counts
                ones = ones + (Y[i, k] == 1.0)
                zeros = zeros + (Y[i, k] == 0.0)
            bad += (ones != 1) | (zeros != m - 1)
    return bad
