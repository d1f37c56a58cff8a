# cython: language_level=3
"""X = (L L^T)^-1 V for a lower Cholesky factor L (s x s) and a narrow V (s x m, m of 1 to a
few dozen): the RKHS norm's prox (skylite.prox.rkhs) and the engine's solve with each
column block's factor of Z^T Z + I (skylite.admm._column_blocks, `cholesky_solve_rows`),
once per ADMM iteration.

LAPACK's potrs makes the two triangular solves with m right-hand sides as level-2-like
sweeps over L: 10 ms at s = 4096, m = 10 in float32 and 20 ms in float64 (one thread, as the
prox runs it).  Here each solve goes over L in blocks of BLOCK rows of X, as a product with
the narrow kernels (skylite/_native/skylite_narrow.c) and a small triangular solve (trsm)
with the diagonal block:

    forward,  L Y = V:    Y[a:b] = L[a:b, a:b]^-1 (V[a:b] - L[a:b, :a] Y[:a]),     a ascending
    backward, L^T X = Y:  X[a:b] = L[a:b, a:b]^-T (Y[a:b] - L[b:, a:b]^T X[b:]),   a descending

4.5-4.9 ms at s = 4096, m = 10 in float32 and 10.5 ms in float64, the same results as potrs
up to rounding (7e-7 and 1e-15 relative).  It runs on one thread: split between two
threads, the products ran no faster (a parallel region per block wakes the other thread
each time).  Without AVX-512 the two solves are trsm calls on the whole of L, as potrs
makes them.

L is given as LAPACK's potrf leaves it in Fortran order: read in C order, the s x s array is
U = L^T (upper triangular, row-major; entries below its diagonal are not read).
"""
import numpy as np
cimport numpy as cnp
from libc.stdlib cimport malloc, free
from scipy.linalg.cython_blas cimport dtrsm, strsm

from skylite._native.narrow cimport (
    sky_narrow_available, sky_narrow_times_f32, sky_narrow_times_f64, sky_narrow_t_times_f32,
    sky_narrow_t_times_f64)

cnp.import_array()

ctypedef fused real:
    float
    double

# Rows of X per block (128 took 4.5 ms at s = 4096, float32; 256 5.0 ms, 512 5.1 ms)
cdef enum:
    BLOCK = 128


def cholesky_solve(factor, V, bint narrow=True):
    """X = (L L^T)^-1 V.

    Parameters
    ----------
    factor : ndarray of shape (s, s), float32 or float64, Fortran order
        The lower Cholesky factor L (LAPACK potrf's output; above the diagonal not read).
    V : ndarray of shape (s, m) or (s,)
        The right-hand sides (converted to the factor's dtype; non-finite values spread
        through the result, as with potrs).
    narrow : bool, default=True
        Use the narrow kernels where the CPU runs them (False: the two trsm calls on the
        whole factor, the path of CPUs without AVX-512).

    Returns
    -------
    X : ndarray of the shape of V, in the factor's dtype
    """
    if factor.ndim != 2 or factor.shape[0] != factor.shape[1]:
        raise ValueError(f"the factor must be a square matrix, got shape {factor.shape}")
    if factor.dtype not in (np.float32, np.float64) or not factor.flags.f_contiguous:
        raise ValueError("the factor must be a Fortran-ordered float32 or float64 array")
    shape = np.shape(V)
    X = np.array(V, dtype=factor.dtype, order="C").reshape(shape[0] if shape else 0, -1)
    if X.shape[0] != factor.shape[0]:
        raise ValueError(f"V has {X.shape[0]} rows, the factor {factor.shape[0]}")
    if X.size:
        if factor.dtype == np.float32:
            _solve[float](factor.T, X, narrow)
        else:
            _solve[double](factor.T, X, narrow)
    return X.reshape(shape)


cdef void _solve(real[:, ::1] U, real[:, ::1] X, bint narrow) except *:
    cdef Py_ssize_t s = U.shape[0], m = X.shape[1]
    cdef real *work = <real *> malloc(cholesky_solve_work(s, m) * sizeof(real))
    if work == NULL:
        raise MemoryError("could not allocate the triangular solves' buffers")
    try:
        with nogil:
            _solve_rows(&U[0, 0], s, &X[0, 0], m, work, narrow)
    finally:
        free(work)


cdef Py_ssize_t cholesky_solve_work(Py_ssize_t s, Py_ssize_t m) noexcept nogil:
    """Elements of `cholesky_solve_rows`'s work space for an s x s factor and m columns:
    a product's result (BLOCK x m) and the finished rows of X transposed (m x (s + 16))."""
    return BLOCK * m + m * (s + 16)


cdef void cholesky_solve_rows(const double *U, Py_ssize_t s, double *X, Py_ssize_t m,
                              double *work, bint narrow) noexcept nogil:
    """X (s x m, C order) <- (L L^T)^-1 X, for L given as U = L^T (s x s, C order: LAPACK's
    potrf output in Fortran order), with `cholesky_solve_work(s, m)` doubles of work space:
    the float64 solve of `cholesky_solve` (`narrow` as there) for callers in nogil code
    (the engine's block solves)."""
    _solve_rows(U, s, X, m, work, narrow)


cdef void _solve_rows(const real *U, Py_ssize_t s, real *X, Py_ssize_t m, real *work,
                      bint narrow) noexcept nogil:
    if not (narrow and sky_narrow_available()):
        _trsm(b'T', <int> s, <int> m, U, <int> s, X, <int> m)
        _trsm(b'N', <int> s, <int> m, U, <int> s, X, <int> m)
    else:
        _forward(U, s, X, m, work)
        _backward(U, s, X, m, work, work + BLOCK * m, s + 16)


cdef inline void _trsm(char *trans, int n, int m, const real *L, int ld, real *X,
                       int ldx) noexcept nogil:
    """X (m x n in Fortran order) <- X L^-T (trans 'T') or X L^-1 ('N'), L lower."""
    cdef real one = 1
    if real is float:
        strsm(b'R', b'L', trans, b'N', &m, &n, &one, <float *> L, &ld, X, &ldx)
    else:
        dtrsm(b'R', b'L', trans, b'N', &m, &n, &one, <double *> L, &ld, X, &ldx)


cdef void _forward(const real *U, Py_ssize_t s, real *X, Py_ssize_t m,
                   real *pt) noexcept nogil:
    """X <- L^-1 X (the forward solve L Y = V of the module docstring), block by block from
    the top; pt holds one block's product (m x BLOCK)."""
    cdef Py_ssize_t a = 0, b, i, c
    while a < s:
        b = min(s, a + BLOCK)
        if a > 0:                           # X[a:b] -= (U[:a, a:b])^T X[:a]
            if real is float:
                sky_narrow_t_times_f32(a, b - a, U + a, s, X, m, pt)
            else:
                sky_narrow_t_times_f64(a, b - a, U + a, s, X, m, pt)
            for c in range(m):
                for i in range(b - a):
                    X[(a + i) * m + c] -= pt[c * (b - a) + i]
        _trsm(b'T', <int> (b - a), <int> m, U + a * s + a, <int> s, X + a * m, <int> m)
        a = b


cdef void _backward(const real *U, Py_ssize_t s, real *X, Py_ssize_t m, real *out, real *xt,
                    Py_ssize_t ldw) noexcept nogil:
    """X <- L^-T X (the backward solve L^T X = Y), block by block from the bottom; out holds
    one block's product (BLOCK x m), xt the finished rows of X transposed (m x ldw), as the
    narrow Z W kernel takes them."""
    cdef Py_ssize_t a, b, i, c
    a = ((s - 1) // BLOCK) * BLOCK
    while a >= 0:
        b = min(s, a + BLOCK)
        if b < s:                           # X[a:b] -= U[a:b, b:] X[b:]
            if real is float:
                sky_narrow_times_f32(b - a, s - b, U + a * s + b, s, xt + b, ldw, m, out)
            else:
                sky_narrow_times_f64(b - a, s - b, U + a * s + b, s, xt + b, ldw, m, out)
            for i in range(b - a):
                for c in range(m):
                    X[(a + i) * m + c] -= out[i * m + c]
        _trsm(b'N', <int> (b - a), <int> m, U + a * s + a, <int> s, X + a * m, <int> m)
        for i in range(a, b):
            for c in range(m):
                xt[c * ldw + i] = X[i * m + c]
        a -= BLOCK
