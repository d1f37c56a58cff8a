# cython: language_level=3, boundscheck=False, wraparound=False
"""A Cholesky factorization and a triangular inverse by tiles, on several threads.

Both split an s x s matrix into fixed TILE x TILE tiles and make each tile's step one call
of single-threaded LAPACK/BLAS (potrf on a diagonal tile, trsm, syrk or gemm on the
others), the tiles of one step in parallel (OpenMP, without the GIL): the same calls in the
same order on any number of threads, so the same bits.  Right-looking Cholesky, A = L L^T:

    for each diagonal tile k:   L_kk = potrf(A_kk)
                                A_ik <- A_ik L_kk^-T                   (tiles i > k)
                                A_ij <- A_ij - A_ik A_jk^T             (k < j <= i)

and column tile [a, b) of L^-1 solves L[a:, a:] X = I[a:, a:b] (one trsm; rows above a are
zero).  scipy's own threaded potrf is not used: the multithreaded OpenBLAS potrf of its
wheels crashed (segmentation fault) on a 16,000 x 16,000 kernel matrix on a 2-core machine,
and on one thread the other cores idle (s = 4096, float64, 2 cores: 0.32 s against 0.57 s
for the factor, 0.32 s against 0.55 s for the inverse; docs/engine.md, "Whitened Nystroem
features").

A C-order array is handled through its transpose (the same memory read in Fortran order),
so that the "lower triangle" is always meant by index, A[i, j] with i >= j, whatever the
order: only it is read, and L is written there.  Both hold the BLAS libraries to one thread
while they run (skylite._threads.blas_single_threaded).
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.stdlib cimport malloc, free
from scipy.linalg import LinAlgError
from scipy.linalg.cython_blas cimport dgemm, dsyrk, dtrsm, sgemm, ssyrk, strsm
from scipy.linalg.cython_lapack cimport dpotrf, spotrf

from .._threads import blas_single_threaded, resolve_threads

cnp.import_array()

__all__ = ["tiled_cholesky", "inverse_transpose", "TILE"]

ctypedef fused real:
    float
    double

#: the side of a tile (the results depend on it, not on the number of threads)
TILE = 256


def tiled_cholesky(A, n_threads=None):
    """A = L L^T for a symmetric positive definite A, in place; returns A.

    Parameters
    ----------
    A : ndarray of shape (s, s), float32 or float64, C or Fortran order
        Only the lower triangle (A[i, j], i >= j) is read; L overwrites it, and the strict
        upper triangle is left as it was.
    n_threads : int or None, default=None
        Threads (None: skylite._threads.resolve_threads); the result does not depend on it.

    Raises
    ------
    numpy.linalg.LinAlgError
        A is not numerically positive definite, or has non-finite entries.
    """
    buffer, upper = _fortran_view(A, "tiled_cholesky")
    cdef int threads = resolve_threads(n_threads), failed
    with blas_single_threaded():
        if buffer.dtype == np.float32:
            failed = _factor[float](buffer, upper, threads)
        else:
            failed = _factor[double](buffer, upper, threads)
    if failed >= 0:
        raise LinAlgError(f"the matrix is not positive definite (or not finite): the "
                          f"factorization failed at row {failed}")
    return A


def inverse_transpose(L, n_threads=None):
    """U = L^-T (s x s, upper triangular, C order, L's dtype) of a nonsingular lower
    triangular L (C or Fortran order; above its diagonal not read).

    Raises
    ------
    numpy.linalg.LinAlgError
        L has a zero or non-finite diagonal entry.
    """
    buffer, upper = _fortran_view(L, "inverse_transpose")
    diagonal = np.diagonal(L)
    if not (np.isfinite(diagonal).all() and (diagonal != 0).all()):
        raise LinAlgError("the triangular matrix is singular or not finite")
    U = np.zeros(L.shape, dtype=L.dtype)               # C order: its Fortran view is L^-1
    cdef int threads = resolve_threads(n_threads)
    with blas_single_threaded():
        if buffer.dtype == np.float32:
            _inverse[float](buffer, upper, U.T, threads)
        else:
            _inverse[double](buffer, upper, U.T, threads)
    return U


def _fortran_view(A, who):
    """(A or A.T as a Fortran-ordered array, whether the index-lower triangle of A is the
    upper triangle of that view)."""
    if not isinstance(A, np.ndarray) or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{who} needs a square ndarray, got {getattr(A, 'shape', A)!r}")
    if A.dtype not in (np.float32, np.float64):
        raise ValueError(f"{who} needs float32 or float64, got {A.dtype}")
    if A.flags.f_contiguous:
        return A, False
    if A.flags.c_contiguous:
        return A.T, True
    raise ValueError(f"{who} needs a C- or Fortran-contiguous array")


cdef inline void _potrf(char *uplo, int *n, real *a, int *lda, int *info) noexcept nogil:
    if real is float:
        spotrf(uplo, n, a, lda, info)
    else:
        dpotrf(uplo, n, a, lda, info)


cdef inline void _trsm(char *side, char *uplo, char *trans, int m, int n, real *a, int lda,
                       real *b, int ldb) noexcept nogil:
    cdef char *unit = b'N'
    cdef real one = 1
    if real is float:
        strsm(side, uplo, trans, unit, &m, &n, &one, a, &lda, b, &ldb)
    else:
        dtrsm(side, uplo, trans, unit, &m, &n, &one, a, &lda, b, &ldb)


cdef inline void _update(bint upper, bint diagonal, int m, int n, int k, real *a, real *b,
                         real *c, int ld) noexcept nogil:
    """c -= a b^T (lower) or a^T b (upper): syrk on a diagonal tile, gemm elsewhere."""
    cdef real minus = -1, one = 1
    cdef char *transposed = b'T'
    cdef char *plain = b'N'
    cdef char *uplo = b'U' if upper else b'L'
    if diagonal:
        if real is float:
            ssyrk(uplo, transposed if upper else plain, &m, &k, &minus, a, &ld, &one, c, &ld)
        else:
            dsyrk(uplo, transposed if upper else plain, &m, &k, &minus, a, &ld, &one, c, &ld)
    elif upper:
        if real is float:
            sgemm(transposed, plain, &m, &n, &k, &minus, a, &ld, b, &ld, &one, c, &ld)
        else:
            dgemm(transposed, plain, &m, &n, &k, &minus, a, &ld, b, &ld, &one, c, &ld)
    else:
        if real is float:
            sgemm(plain, transposed, &m, &n, &k, &minus, a, &ld, b, &ld, &one, c, &ld)
        else:
            dgemm(plain, transposed, &m, &n, &k, &minus, a, &ld, b, &ld, &one, c, &ld)


cdef int _factor(real[::1, :] A, bint upper, int threads) except -2:
    """The tiled Cholesky of A's lower (upper, if `upper`) triangle in place, Fortran
    order; -1, or the first row at which it failed."""
    cdef int s = A.shape[0], ld = s, T = TILE, nt = (s + T - 1) // T
    cdef int k, t, i, j, n_pairs, a, nk, info, r
    cdef real *base = &A[0, 0]
    cdef real *tile
    cdef char *uplo = b'U' if upper else b'L'
    cdef int *pairs = <int *> malloc(max(1, nt * (nt + 1)) * sizeof(int))
    if pairs == NULL:
        raise MemoryError()
    try:
        with nogil:
            for k in range(nt):
                a = k * T
                nk = min(T, s - a)
                tile = base + a + <Py_ssize_t> a * ld
                _potrf(uplo, &nk, tile, &ld, &info)
                if info != 0:
                    return a + max(info, 1) - 1
                for r in range(nk):
                    if not (isfinite(tile[r + <Py_ssize_t> r * ld]) and
                            tile[r + <Py_ssize_t> r * ld] > 0):
                        return a + r
                # the panel: the tiles below (right of, if upper) the diagonal one
                for t in prange(k + 1, nt, schedule='dynamic', num_threads=threads):
                    if upper:
                        _trsm(b'L', b'U', b'T', nk, min(T, s - t * T), tile, ld,
                              base + a + <Py_ssize_t> t * T * ld, ld)
                    else:
                        _trsm(b'R', b'L', b'T', min(T, s - t * T), nk, tile, ld,
                              base + t * T + <Py_ssize_t> a * ld, ld)
                # the trailing tiles (i, j), k < j <= i
                n_pairs = 0
                for i in range(k + 1, nt):
                    for j in range(k + 1, i + 1):
                        pairs[2 * n_pairs] = i
                        pairs[2 * n_pairs + 1] = j
                        n_pairs = n_pairs + 1
                for t in prange(n_pairs, schedule='dynamic', num_threads=threads):
                    _trailing(base, s, T, a, nk, pairs[2 * t], pairs[2 * t + 1], upper)
        return -1
    finally:
        free(pairs)


cdef inline void _trailing(real *base, int s, int T, int a, int nk, int i, int j,
                           bint upper) noexcept nogil:
    """Tile (i, j) (index-lower) of the trailing matrix minus the panel's product."""
    cdef int ld = s, mi = min(T, s - i * T), mj = min(T, s - j * T)
    if upper:       # in the Fortran view the tile is (j, i), the panel tiles are row k
        _update(True, i == j, mj, mi, nk, base + a + <Py_ssize_t> j * T * ld,
                base + a + <Py_ssize_t> i * T * ld, base + j * T + <Py_ssize_t> i * T * ld, ld)
    else:
        _update(False, i == j, mi, mj, nk, base + i * T + <Py_ssize_t> a * ld,
                base + j * T + <Py_ssize_t> a * ld, base + i * T + <Py_ssize_t> j * T * ld, ld)


cdef void _inverse(real[::1, :] L, bint upper, real[::1, :] X, int threads) noexcept:
    """X = (the triangle's lower factor)^-1 in Fortran order, X zero on entry: column tile
    [a, b) solves L[a:, a:] X[a:, a:b] = I (lower) or L[a:, a:]^T X[a:, a:b] = I (upper:
    the view holds L^T)."""
    cdef int s = L.shape[0], ld = s, T = TILE, nt = (s + T - 1) // T, t, a, w, r
    cdef real *l = &L[0, 0]
    cdef real *x = &X[0, 0]
    with nogil:
        for t in prange(nt, schedule='dynamic', num_threads=threads):
            a = t * T
            w = min(T, s - a)
            for r in range(w):
                x[a + r + <Py_ssize_t> (a + r) * ld] = 1
            _trsm(b'L', b'U' if upper else b'L', b'T' if upper else b'N', s - a, w,
                  l + a + <Py_ssize_t> a * ld, ld, x + a + <Py_ssize_t> a * ld, ld)
