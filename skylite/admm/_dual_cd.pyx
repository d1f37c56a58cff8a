# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""One epoch of dual coordinate descent for m independent hinge-loss problems (nogil).

Each target column k of the one-vs-rest hinge loss is its own problem in the dual
(Hsieh, Chang, Lin, Keerthi & Sundararajan 2008, LIBLINEAR's L1-loss SVM without bias):

    min_a  1/2 a^T Q a - sum_i a_i,   0 <= a_i <= C,   Q_ij = y_i y_j z_i . z_j,
    w = sum_i a_i y_i z_i,

solved one coordinate at a time: g = y_i w . z_i - 1, a_i <- clip(a_i - g / ||z_i||^2, 0, C),
w += (a_i new - a_i old) y_i z_i.  An epoch visits the active coordinates in a random order;
shrinking (LIBLINEAR's rule) drops a coordinate at a bound whose gradient points out of the
box by more than the last epoch's largest projected-gradient violation, and a problem whose
projected gradients span at most `tol` on its active set is checked once more on every
coordinate before it counts as solved.

Problem k is computed by one thread from its own state alone (its order of visits is drawn
from its own generator, seeded by the caller), so the result does not depend on the number
of threads.  The dot products and updates are BLAS level-1 calls on one row of Z.
"""
from cython.parallel cimport prange
from libc.math cimport INFINITY, fabs
from libc.stdint cimport uint64_t
from scipy.linalg.cython_blas cimport daxpy, ddot

import numpy as np

__all__ = ["dual_cd_epoch"]


cdef inline uint64_t _next(uint64_t *state) noexcept nogil:
    """xorshift64: the next value of a problem's visiting-order generator."""
    cdef uint64_t x = state[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    state[0] = x
    return x


cdef double _epoch(const double *Z, int s, const double *y, const double *q, double C,
                   double tol, double *w, double *a, int *order, int *active, double *bounds,
                   uint64_t *state, Py_ssize_t n, unsigned char *solved) noexcept nogil:
    """One epoch of problem k (its arrays passed at k's offsets); returns the span of its
    projected gradients over the coordinates it visited.  bounds[0], bounds[1]: the last
    epoch's largest and smallest projected gradient (the shrinking thresholds)."""
    cdef int size = active[0], p = 0, i, j, t, one = 1
    cdef double g, pg, old, step, high = -INFINITY, low = INFINITY
    for p in range(size - 1):                          # Fisher-Yates over the active set
        j = p + <int> (_next(state) % <uint64_t> (size - p))
        t = order[p]; order[p] = order[j]; order[j] = t
    p = 0
    while p < size:
        i = order[p]
        g = y[i] * ddot(&s, <double *> Z + <Py_ssize_t> i * s, &one, w, &one) - 1.0
        pg = 0.0
        if a[i] == 0.0:
            if g > bounds[0]:                          # out of the box, and far: shrink
                size -= 1
                t = order[p]; order[p] = order[size]; order[size] = t
                continue
            if g < 0.0:
                pg = g
        elif a[i] == C:
            if g < bounds[1]:
                size -= 1
                t = order[p]; order[p] = order[size]; order[size] = t
                continue
            if g > 0.0:
                pg = g
        else:
            pg = g
        if pg > high:
            high = pg
        if pg < low:
            low = pg
        if fabs(pg) > 1e-12:
            if q[i] > 0.0:
                old = a[i]
                a[i] = min(max(old - g / q[i], 0.0), C)
                step = (a[i] - old) * y[i]
                daxpy(&s, &step, <double *> Z + <Py_ssize_t> i * s, &one, w, &one)
            else:                      # a zero row: g = -1 whatever w, so a_i = C (free)
                a[i] = C
        p += 1
    if size == 0:
        high, low = 0.0, 0.0
    if high - low <= tol:
        if size == n:
            solved[0] = 1
        else:                                          # check every coordinate next epoch
            size = <int> n
            bounds[0], bounds[1] = INFINITY, -INFINITY
    else:
        bounds[0] = high if high > 0.0 else INFINITY
        bounds[1] = low if low < 0.0 else -INFINITY
    active[0] = size
    return high - low


def dual_cd_epoch(const double[:, ::1] Z, const double[:, ::1] YT, const double[::1] q,
                  double C, double tol, double[:, ::1] WT, double[:, ::1] AT,
                  int[:, ::1] order, int[::1] active, double[:, ::1] bounds,
                  uint64_t[::1] states, unsigned char[::1] solved, int n_threads):
    """One epoch of every unsolved problem (module docstring), in parallel over problems.

    Parameters
    ----------
    Z : (n, s) float64, the rows' features.
    YT : (m, n) float64, the +/-1 targets, one problem per row.
    q : (n,) float64, ||z_i||^2.
    C : float > 0, the box.
    tol : float > 0, the projected-gradient span at which a problem is solved.
    WT, AT : (m, s) and (m, n) float64, each problem's w and dual variables (updated).
    order, active, bounds, states, solved : each problem's visiting order and active-set
        size, shrinking thresholds, generator state and solved flag (updated).
    n_threads : int >= 1.

    Returns
    -------
    ndarray of shape (m,)
        Each problem's projected-gradient span this epoch (0 for a problem already solved).
    """
    cdef Py_ssize_t n = Z.shape[0], m = YT.shape[0], k
    cdef int s = <int> Z.shape[1]
    if (YT.shape[1] != n or q.shape[0] != n or WT.shape[0] != m or WT.shape[1] != s
            or AT.shape[0] != m or AT.shape[1] != n or order.shape[0] != m
            or order.shape[1] != n or active.shape[0] != m or bounds.shape[0] != m
            or bounds.shape[1] != 2 or states.shape[0] != m or solved.shape[0] != m):
        raise ValueError("dual_cd_epoch: the arrays' shapes do not agree")
    if not C > 0 or not tol > 0 or n_threads < 1 or n > 2147483647:
        raise ValueError(f"dual_cd_epoch: C = {C!r}, tol = {tol!r}, n_threads = "
                         f"{n_threads!r}, n = {n}")
    spans = np.zeros(m)
    cdef double[::1] span = spans
    if n == 0 or m == 0:
        return spans
    for k in prange(m, nogil=True, num_threads=n_threads, schedule='dynamic', chunksize=1):
        if not solved[k]:
            span[k] = _epoch(&Z[0, 0], s, &YT[k, 0], &q[0], C, tol, &WT[k, 0], &AT[k, 0],
                             &order[k, 0], &active[k], &bounds[k, 0], &states[k], n,
                             &solved[k])
    return spans
