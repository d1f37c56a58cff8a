# cython: language_level=3
"""The native kernel-block evaluator: K = k(X, L) for a range of rows X against m rows L.

One evaluator for every kernel skylite computes exactly (`KernelCode`, in the .pxd), called
by `Kernel.gram` (skylite.kernels, through `fill_kernel_matrix`) and by the Nystroem
transform (_nystroem.pyx), in float64 or float32, for dense or CSR rows:

* Gaussian, polynomial, linear: the dot products X L^T, one GEMM for dense rows (an axpy
  per stored entry for CSR), then k from x.l (and, for the Gaussian,
  ||x - l||^2 = ||x||^2 + ||l||^2 - 2 x.l, clipped at 0);
* Laplacian, Matern, exp-semigroup: a direct O(n m d) sum of g(x_k, l_k) (|x - l|,
  (x - l)^2, sqrt(x + l)); for CSR rows O(nnz m), from aux[c] = sum_k g(0, l_ck) corrected
  at the stored entries.  The Matern kernel takes the squared distance this way, without
  the cancellation of the expansion, which its square root would amplify near 0.

The Matern kernel of general nu is evaluated in log space (`matern`), so that it stays in
[0, 1] and tends to the Gaussian kernel as nu grows, where 2^(1-nu)/Gamma(nu), t^nu and
K_nu(t) would each overflow or underflow.
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport exp, fabs, lgamma, log, log1p, pow, sqrt
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm
from scipy.special.cython_special cimport kve

from skylite._native.vmath cimport sky_exp_neg_f32, sky_exp_neg_f64
from skylite._validation import with_native_index_dtypes
from skylite.sketch._transform cimport ROWS_DENSE, TILE_ROWS, rows_of, rows_range

cnp.import_array()

# From this nu on, the Matern kernel is evaluated by Debye's uniform asymptotic expansion of
# K_nu (five terms: relative error below 3e-12 at nu = 40, falling as nu^-6); below it by
# scipy's K_nu, whose t^nu K_nu(t) overflows for larger nu near t = 0.
cdef double ASYMPTOTIC_NU = 40.0
MATERN_ASYMPTOTIC_NU = ASYMPTOTIC_NU
cdef double LN2 = 0.6931471805599453


cdef void landmark_params(KernelSpec kernel, const double *L, Py_ssize_t m, Py_ssize_t d,
                          floating_t *LT, floating_t *aux) noexcept nogil:
    cdef Py_ssize_t c, k
    cdef double v, total
    cdef int code = kernel.code
    for c in range(m):
        total = 0.0
        for k in range(d):
            v = L[c * d + k]
            LT[k * m + c] = <floating_t> v
            if code == GAUSSIAN or code == MATERN:
                total += v * v
            elif code == LAPLACIAN:
                total += fabs(v)
            elif code == EXP_SEMIGROUP:
                total += sqrt(v)
        aux[c] = <floating_t> total


cdef void kernel_block(KernelSpec kernel, const Rows *rows, const floating_t *LT,
                       const floating_t *aux, Py_ssize_t d, Py_ssize_t m, floating_t *K,
                       Py_ssize_t ldk) noexcept nogil:
    kernel_precursor(kernel, rows, LT, aux, d, m, K, ldk)      # each returns on no rows
    kernel_values(kernel, rows, aux, d, m, K, ldk)


cdef void kernel_precursor(KernelSpec kernel, const Rows *rows, const floating_t *LT,
                           const floating_t *aux, Py_ssize_t d, Py_ssize_t m, floating_t *K,
                           Py_ssize_t ldk) noexcept nogil:
    cdef int code = kernel.code
    if rows.n_rows == 0 or m == 0:
        return
    if code == GAUSSIAN or code == POLYNOMIAL or code == LINEAR:
        _dot_products(rows, LT, d, m, K, ldk)
    else:
        _separable_sums(code, rows, LT, aux, d, m, K, ldk)


cdef void kernel_values(KernelSpec kernel, const Rows *rows, const floating_t *aux,
                        Py_ssize_t d, Py_ssize_t m, floating_t *K, Py_ssize_t ldk) noexcept nogil:
    if rows.n_rows == 0 or m == 0:
        return
    _kernel_values(kernel, rows, aux, d, m, K, ldk)


cdef void _dot_products(const Rows *rows, const floating_t *LT, Py_ssize_t d, Py_ssize_t m,
                        floating_t *K, Py_ssize_t ldk) noexcept nogil:
    """K (n x m) = X L^T: one GEMM for dense rows, an axpy per stored entry for CSR."""
    cdef int mm = <int> m, nn = <int> rows.n_rows, kk = <int> d
    cdef int lda = <int> m, ldb = <int> rows.ld, ldc = <int> ldk
    cdef floating_t one = 1, zero = 0, v
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef const floating_t *w
    cdef floating_t *o
    cdef Py_ssize_t i, p, c
    if rows.kind == ROWS_DENSE:
        # row-major K = X LT  <=>  column-major K^T = LT^T X^T
        if floating_t is double:
            dgemm(b'N', b'N', &mm, &nn, &kk, &one, <double *> LT, &lda, <double *> x, &ldb,
                  &zero, K, &ldc)
        else:
            sgemm(b'N', b'N', &mm, &nn, &kk, &one, <float *> LT, &lda, <float *> x, &ldb,
                  &zero, K, &ldc)
        return
    for i in range(rows.n_rows):
        o = K + i * ldk
        memset(o, 0, m * sizeof(floating_t))
        for p in range(rows.indptr[i], rows.indptr[i + 1]):
            v = x[p]
            w = LT + rows.indices[p] * m
            for c in range(m):
                o[c] += v * w[c]


cdef void _separable_sums(int code, const Rows *rows, const floating_t *LT,
                          const floating_t *aux, Py_ssize_t d, Py_ssize_t m, floating_t *K,
                          Py_ssize_t ldk) noexcept nogil:
    """K[i, c] = sum_k g(x_ik, l_ck) with g = |x - l| (Laplacian), (x - l)^2 (Matern) or
    sqrt(x + l) (exp-semigroup).  CSR rows start from aux[c] = sum_k g(0, l_ck) and correct
    the stored entries: g(x, l) - g(0, l)."""
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef const floating_t *w
    cdef floating_t *o
    cdef floating_t v
    cdef Py_ssize_t i, k, p, c
    for i in range(rows.n_rows):
        o = K + i * ldk
        if rows.kind == ROWS_DENSE:
            memset(o, 0, m * sizeof(floating_t))
            for k in range(d):
                v = x[i * rows.ld + k]
                w = LT + k * m
                if code == LAPLACIAN:
                    for c in range(m):
                        o[c] += fabs(v - w[c])
                elif code == MATERN:
                    for c in range(m):
                        o[c] += (v - w[c]) * (v - w[c])
                else:
                    for c in range(m):
                        o[c] += sqrt(v + w[c])
        else:
            for c in range(m):
                o[c] = aux[c]
            for p in range(rows.indptr[i], rows.indptr[i + 1]):
                v = x[p]
                w = LT + rows.indices[p] * m
                if code == LAPLACIAN:
                    for c in range(m):
                        o[c] += fabs(v - w[c]) - fabs(w[c])
                elif code == MATERN:
                    for c in range(m):
                        o[c] += v * (v - 2 * w[c])
                else:
                    for c in range(m):
                        o[c] += sqrt(v + w[c]) - sqrt(w[c])


cdef double _row_sq_norm(const Rows *rows, Py_ssize_t i, Py_ssize_t d) noexcept nogil:
    cdef double total = 0.0, v
    cdef Py_ssize_t k, p
    if rows.kind == ROWS_DENSE:
        if rows.itemsize == 8:
            for k in range(d):
                v = (<const double *> rows.values)[i * rows.ld + k]
                total += v * v
        else:
            for k in range(d):
                v = (<const float *> rows.values)[i * rows.ld + k]
                total += v * v
    else:
        for p in range(rows.indptr[i], rows.indptr[i + 1]):
            v = ((<const double *> rows.values)[p] if rows.itemsize == 8
                 else (<const float *> rows.values)[p])
            total += v * v
    return total


cdef void _kernel_values(KernelSpec kernel, const Rows *rows, const floating_t *aux,
                         Py_ssize_t d, Py_ssize_t m, floating_t *K,
                         Py_ssize_t ldk) noexcept nogil:
    """K <- k(x, l) in place, from the dot products (Gaussian, polynomial, linear) or the
    separable sums (Laplacian, Matern's squared distance, exp-semigroup) left in it."""
    cdef Py_ssize_t i, c, n = rows.n_rows
    cdef floating_t *o
    cdef double xx, sq, p0 = kernel.p0
    cdef int code = kernel.code
    if code == LINEAR:
        return
    for i in range(n):
        o = K + i * ldk
        if code == LAPLACIAN or code == EXP_SEMIGROUP:
            for c in range(m):
                o[c] = <floating_t> (p0 * o[c])
        elif code == POLYNOMIAL:
            for c in range(m):
                o[c] = <floating_t> pow(p0 * o[c] + kernel.p1, kernel.p2)
        elif code == MATERN:
            for c in range(m):
                o[c] = <floating_t> matern(p0, sqrt(o[c] if o[c] > 0 else 0.0) * kernel.p1)
        else:                                           # Gaussian
            xx = _row_sq_norm(rows, i, d)
            for c in range(m):
                sq = xx + aux[c] - 2.0 * o[c]
                o[c] = <floating_t> (sq if sq > 0.0 else 0.0)
                o[c] = <floating_t> (p0 * o[c])
    if code == GAUSSIAN or code == LAPLACIAN or code == EXP_SEMIGROUP:
        if floating_t is double:
            sky_exp_neg_f64(n, m, K, ldk, 1.0)
        else:
            sky_exp_neg_f32(n, m, K, ldk, 1.0)


cdef inline double _term(int code, double x, double y) noexcept nogil:
    """g(x, y), the coordinate's term of a separable kernel's sum."""
    if code == LAPLACIAN:
        return fabs(x - y)
    if code == MATERN:
        return (x - y) * (x - y)
    return sqrt(x + y)


cdef void _sparse_precursor(int code, const Rows *rows, const Rows *columns,
                            const double *aux, Py_ssize_t m, double *K,
                            Py_ssize_t ldk) noexcept nogil:
    """kernel_precursor for CSR rows x against m CSR rows y given by column: `columns` is
    Y^T (d rows; row k holds the rows of Y that store a value in column k).  Dot products
    sum x_k y_k over the columns both store; the separable sums start from
    aux[c] + sum_k g(x_k, 0) and correct the shared columns by
    g(x, y) - g(0, y) - g(x, 0).  O(nnz(x) + shared entries + m) per row x."""
    cdef const double *x = <const double *> rows.values
    cdef const double *y = <const double *> columns.values
    cdef bint dots = code == GAUSSIAN or code == POLYNOMIAL or code == LINEAR
    cdef double *o
    cdef double v, w, g_x0, alone
    cdef Py_ssize_t i, k, p, q, c
    for i in range(rows.n_rows):
        o = K + i * ldk
        if dots:
            memset(o, 0, m * sizeof(double))
        else:
            for c in range(m):
                o[c] = aux[c]
        alone = 0.0
        for p in range(rows.indptr[i], rows.indptr[i + 1]):
            k = rows.indices[p]
            v = x[p]
            if dots:
                for q in range(columns.indptr[k], columns.indptr[k + 1]):
                    o[columns.indices[q]] += v * y[q]
            else:
                g_x0 = _term(code, v, 0.0)
                alone += g_x0
                for q in range(columns.indptr[k], columns.indptr[k + 1]):
                    w = y[q]
                    o[columns.indices[q]] += _term(code, v, w) - _term(code, 0.0, w) - g_x0
        if not dots:
            for c in range(m):
                o[c] += alone


cdef _check_operands(bint rows_fit, str caller, str rows, double[:, :] K, Py_ssize_t n,
                     Py_ssize_t m, Py_ssize_t d):
    """Raise ValueError unless the rows fit (`rows_fit`: their kind, dtype and width) and K
    is an n x m float64 array with contiguous rows."""
    if not rows_fit or K.shape[0] != n or K.shape[1] != m:
        raise ValueError(f"{caller} needs float64 {rows} of {d} columns and an {n} x {m} "
                         f"float64 output")
    if m > 1 and K.strides[1] != sizeof(double):
        raise ValueError("the output's rows must be contiguous")


def fill_sparse_kernel_matrix(int code, double p0, double p1, double p2, X, Y, out,
                              int n_threads):
    """out[a, b] = k(x_a, y_b) for CSR rows X and Y, in O(nnz) work: no row is densified.

    X: n x d, Y: m x d, both canonical CSR matrices (float64 data, int32 indices, int64
    indptr); out: an n x m float64 array with contiguous rows.  The same kernels and values
    as `fill_kernel_matrix` (to rounding: the sums run over the stored entries in another
    order).  Row tiles of X go to n_threads threads; the values do not depend on their
    number.  Allocates Y^T (nnz(Y) values) and m per-row constants.
    """
    cdef KernelSpec kernel
    kernel.code, kernel.p0, kernel.p1, kernel.p2 = code, p0, p1, p2
    cdef double[:, :] K = out
    keep = []
    cdef Rows rows = rows_of(X, keep)
    cdef Rows y_rows = rows_of(Y, keep)
    cdef Py_ssize_t n = rows.n_rows, m = y_rows.n_rows, d = rows.n_cols
    _check_operands(rows.kind != ROWS_DENSE and y_rows.kind != ROWS_DENSE
                    and rows.itemsize == 8 and y_rows.itemsize == 8 and y_rows.n_cols == d,
                    "fill_sparse_kernel_matrix", "CSR rows", K, n, m, d)
    if n == 0 or m == 0:
        return out
    YT = with_native_index_dtypes(Y.T.tocsr())
    cdef Rows columns = rows_of(YT, keep)
    cdef cnp.ndarray aux_array = np.zeros(m)
    cdef double *aux = <double *> cnp.PyArray_DATA(aux_array)
    cdef const double *y = <const double *> y_rows.values
    cdef Py_ssize_t ldk = K.strides[0] // sizeof(double)
    cdef Py_ssize_t n_tiles = (n + TILE_ROWS - 1) // TILE_ROWS, t, start, c, p
    cdef Rows tile
    with nogil:
        if code != POLYNOMIAL and code != LINEAR:       # sum_k g(0, y_ck); 0 for the others
            for c in range(m):
                for p in range(y_rows.indptr[c], y_rows.indptr[c + 1]):
                    aux[c] += (y[p] * y[p] if code == GAUSSIAN
                               else _term(code, 0.0, y[p]))
        for t in prange(n_tiles, schedule='static', num_threads=n_threads):
            start = t * TILE_ROWS
            tile = rows_range(&rows, start, min(n, start + TILE_ROWS))
            _sparse_precursor(code, &tile, &columns, aux, m, &K[start, 0], ldk)
            kernel_values(kernel, &tile, aux, d, m, &K[start, 0], ldk)
    return out


cpdef double matern(double nu, double r) noexcept nogil:
    """The Matern kernel k(r) of smoothness nu at distance r (length scale 1):

        k(r) = 2^(1-nu) / Gamma(nu) t^nu K_nu(t),   t = sqrt(2 nu) r,   k(0) = 1,

    with scikit-learn's closed forms for nu = 0.5, 1.5, 2.5.  Otherwise in log space,
    log k = (1 - nu) log 2 - log Gamma(nu) + nu log t + log(K_nu(t) e^t) - t, by scipy's
    exponentially scaled K_nu below MATERN_ASYMPTOTIC_NU (where it overflows, t is so small
    that k = 1 to double precision) and by `_matern_asymptotic` from it on.  The result is
    clipped to [0, 1] against rounding.
    """
    cdef double t, scaled, log_k
    if nu == 0.5:
        return exp(-r)
    if nu == 1.5:
        t = sqrt(3.0) * r
        return (1.0 + t) * exp(-t)
    if nu == 2.5:
        t = sqrt(5.0) * r
        return (1.0 + t + t * t / 3.0) * exp(-t)
    if r == 0.0:
        return 1.0
    if nu >= ASYMPTOTIC_NU:
        log_k = _matern_asymptotic(nu, r)
    else:
        t = sqrt(2.0 * nu) * r
        scaled = kve(nu, t)
        if not scaled < 1e308:          # K_nu(t) e^t overflows only for t -> 0
            return 1.0
        if scaled == 0.0:
            return 0.0
        log_k = (1.0 - nu) * LN2 - lgamma(nu) + nu * log(t) + log(scaled) - t
    return exp(log_k) if log_k < 0.0 else 1.0


cdef double _matern_asymptotic(double nu, double r) noexcept nogil:
    """log k(r) for large nu, by Debye's expansion of K_nu(nu z) (DLMF 10.41.4, terms
    U_1..U_5) and Stirling's series of log Gamma(nu) (to 1/nu^7), with z = t / nu,
    q = sqrt(1 + z^2), p = 1 / q:

        log k = nu (1 - q + log((1 + q) / 2)) - 1/4 log(1 + z^2) + log sum_k (-1)^k U_k(p) / nu^k
                - (log Gamma(nu) - Stirling's leading terms),

    in which the terms of order nu log nu cancel exactly; as nu -> oo it tends to
    -r^2 / 2, the Gaussian kernel.  q - 1 = z^2 / (1 + q) avoids the cancellation at small z.
    """
    cdef double z2 = (2.0 / nu) * r * r
    cdef double q, w, p, p2, u1, u2, u3, u4, u5, series, stirling, inv = 1.0 / nu
    if not z2 < 1e300:
        return -1e300
    q = sqrt(1.0 + z2)
    w = z2 / (1.0 + q)                               # q - 1
    p = 1.0 / q
    p2 = p * p
    u1 = p * (3.0 - 5.0 * p2) / 24.0
    u2 = p2 * (81.0 + p2 * (-462.0 + p2 * 385.0)) / 1152.0
    u3 = p * p2 * (30375.0 + p2 * (-369603.0 + p2 * (765765.0 - p2 * 425425.0))) / 414720.0
    u4 = p2 * p2 * (4465125.0 + p2 * (-94121676.0 + p2 * (349922430.0 + p2 * (
        -446185740.0 + p2 * 185910725.0))))/ 39813120.0
    u5 = p * p2 * p2 * (1519035525.0 + p2 * (-49286948607.0 + p2 * (284499769554.0 + p2 * (
        -614135872350.0 + p2 * (566098157625.0 - p2 * 188699385875.0))))) / 6688604160.0
    series = 1.0 + inv * (-u1 + inv * (u2 + inv * (-u3 + inv * (u4 - inv * u5))))
    stirling = inv * (1.0 / 12.0 - inv * inv * (1.0 / 360.0 - inv * inv * (
        1.0 / 1260.0 - inv * inv / 1680.0)))
    return nu * (log1p(0.5 * w) - w) - stirling - 0.25 * log1p(z2) + log(series)


def fill_kernel_matrix(int code, double p0, double p1, double p2, X, Y, out, int n_threads):
    """out[a, b] = k(x_a, y_b) for the rows of X and Y (float64), the kernel given by its
    `KernelCode` and parameters p0, p1, p2.

    X: n x d, a C-contiguous float64 array or a canonical CSR matrix (float64 data, int32
    indices, int64 indptr).  Y: m x d, a C-contiguous float64 array.  out: an n x m float64
    array with contiguous rows (a column slice of a C-contiguous array will do).  Row tiles
    of X (TILE_ROWS rows) go to n_threads threads; the values do not depend on their number.
    Call it with single-threaded BLAS (skylite._threads.blas_single_threaded).  Allocates
    the parameters of Y: d x m + m float64.
    """
    cdef KernelSpec kernel
    kernel.code, kernel.p0, kernel.p1, kernel.p2 = code, p0, p1, p2
    cdef const double[:, ::1] L = Y
    cdef double[:, :] K = out
    keep = []
    cdef Rows rows = rows_of(X, keep)
    cdef Py_ssize_t n = rows.n_rows, m = L.shape[0], d = L.shape[1]
    _check_operands(rows.itemsize == 8 and rows.n_cols == d, "fill_kernel_matrix", "rows", K,
                    n, m, d)
    if n == 0 or m == 0:
        return out
    cdef cnp.ndarray params = np.empty(d * m + m)
    cdef double *LT = <double *> cnp.PyArray_DATA(params)
    cdef Py_ssize_t ldk = K.strides[0] // sizeof(double)
    cdef Py_ssize_t n_tiles = (n + TILE_ROWS - 1) // TILE_ROWS, t, start
    cdef Rows tile
    with nogil:
        landmark_params(kernel, &L[0, 0], m, d, LT, LT + d * m)
        for t in prange(n_tiles, schedule='static', num_threads=n_threads):
            start = t * TILE_ROWS
            tile = rows_range(&rows, start, min(n, start + TILE_ROWS))
            kernel_block(kernel, &tile, LT, LT + d * m, d, m, &K[start, 0], ldk)
    return out
