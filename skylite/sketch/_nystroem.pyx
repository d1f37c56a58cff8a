# cython: language_level=3
"""Native core of the Nystroem feature map (skylite.sketch.nystroem).

Block j holds its own landmarks L_j (s_j rows of the training data, or k-means centres) and
their whitening M_j = a_j K(L_j, L_j)^{-1/2} (a pseudo-inverse square root, a_j = sqrt(s_j / s)
folded in), both fixed at fit and passed in here:

    z_j(x) = k(x, L_j) M_j                               (1 x s_j)

computed for a tile of rows as one kernel block K = k(X_tile, L_j) (n x s_j, in `work`) and
one GEMM.  The kernel block takes one GEMM of the rows against L_j^T for the Gaussian and
polynomial kernels, and a direct O(n s_j d) loop for the Laplacian, Matern and exp-semigroup
kernels; for CSR rows every kernel costs O(nnz s_j), the zero entries' share being
precomputed per landmark.

Parameters of block j (make_params_*), in the compute type:

    LT   d x s_j   L_j transposed, row-major (column c is landmark c)
    aux  s_j       ||l_c||^2 (Gaussian, Matern), ||l_c||_1 (Laplacian),
                   sum_k sqrt(l_ck) (exp-semigroup), 0 (polynomial)
    M    s_j x s_j the whitening, scale included

They are a copy of the map's landmarks and whitening (float64, owned by the Python front),
so a block is a pure function of (landmarks, whitening, j): the same on every thread and rank.
"""
import numpy as np
from libc.float cimport DBL_MAX
from libc.math cimport exp, fabs, pow, sqrt
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm
from scipy.special.cython_special cimport kv, gamma as gamma_fn

from skylite._native.vmath cimport sky_exp_neg_f32, sky_exp_neg_f64
from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE

cpdef enum KernelCode:
    GAUSSIAN = 0        # exp(-p0 ||x - l||^2),            p0 = 1 / (2 sigma^2)
    LAPLACIAN = 1       # exp(-p0 ||x - l||_1),            p0 = 1 / sigma
    MATERN = 2          # Matern(nu = p0, length_scale = 1 / p1)
    POLYNOMIAL = 3      # (p0 x.l + p1)^p2
    EXP_SEMIGROUP = 4   # exp(-p0 sum_k sqrt(x_k + l_k))


ctypedef fused floating_t:
    float
    double


cdef class NystroemTransform(BlockTransform):
    """z_j(x) = k(x, L_j) M_j; see the module docstring.

    NystroemTransform(d, offsets, kernel_code, p0, p1, p2, landmarks, whitening):
    landmarks is s x d float64 (block j's are rows offsets[j]:offsets[j + 1]); whitening is
    the flat float64 concatenation of the s_j x s_j matrices M_j (row-major, scale included).
    """
    cdef int kernel
    cdef double p0, p1, p2
    cdef const double[:, ::1] landmarks
    cdef const double[::1] whitening
    cdef Py_ssize_t[::1] m_offsets       # where M_j starts in `whitening`

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, int kernel_code, double p0,
                 double p1, double p2, landmarks, whitening):
        self._set_blocks(d, offsets, 0)
        self.kernel = kernel_code
        self.p0, self.p1, self.p2 = p0, p1, p2
        L = np.ascontiguousarray(landmarks, dtype=np.float64)
        M = np.ascontiguousarray(whitening, dtype=np.float64).ravel()
        sizes = np.diff(np.asarray(offsets))
        if L.ndim != 2 or L.shape[0] != self.n_features or L.shape[1] != d:
            raise ValueError(f"landmarks must be {self.n_features} x {d}, got {L.shape}")
        m_offsets = np.concatenate([[0], np.cumsum(sizes * sizes)]).astype(np.intp)
        if M.shape[0] != m_offsets[-1]:
            raise ValueError(f"whitening must hold {m_offsets[-1]} values (the blocks' "
                             f"s_j x s_j matrices), got {M.shape[0]}")
        self.landmarks = L
        self.whitening = M
        self.m_offsets = m_offsets

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t s_j = self.block_size(j)
        return s_j * (self.n_features_in + 1 + s_j)

    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil:
        return n_rows * self.block_size(j)

    cdef void make_params_f64(self, Py_ssize_t j, double *params) noexcept nogil:
        _make_params(self, j, params)

    cdef void make_params_f32(self, Py_ssize_t j, float *params) noexcept nogil:
        _make_params(self, j, params)

    cdef void apply_f64(self, Py_ssize_t j, const double *params, const Rows *rows,
                        double *out, Py_ssize_t ldo, double *work) noexcept nogil:
        _apply(self, j, params, rows, out, ldo, work)

    cdef void apply_f32(self, Py_ssize_t j, const float *params, const Rows *rows,
                        float *out, Py_ssize_t ldo, float *work) noexcept nogil:
        _apply(self, j, params, rows, out, ldo, work)


cdef void _make_params(NystroemTransform T, Py_ssize_t j, floating_t *params) noexcept nogil:
    """LT, aux and M of block j (module docstring) from the stored float64 arrays."""
    cdef Py_ssize_t d = T.n_features_in, s_j = T.block_size(j), first = T.offsets[j]
    cdef Py_ssize_t c, k
    cdef floating_t *LT = params
    cdef floating_t *aux = params + d * s_j
    cdef floating_t *M = aux + s_j
    cdef const double *W = &T.whitening[T.m_offsets[j]] if s_j > 0 else NULL
    cdef double v, total
    for c in range(s_j):
        total = 0.0
        for k in range(d):
            v = T.landmarks[first + c, k]
            LT[k * s_j + c] = <floating_t> v
            if T.kernel == GAUSSIAN or T.kernel == MATERN:
                total += v * v
            elif T.kernel == LAPLACIAN:
                total += fabs(v)
            elif T.kernel == EXP_SEMIGROUP:
                total += sqrt(v)
        aux[c] = <floating_t> total
    for c in range(s_j * s_j):
        M[c] = <floating_t> W[c]


cdef void _apply(NystroemTransform T, Py_ssize_t j, const floating_t *params,
                 const Rows *rows, floating_t *out, Py_ssize_t ldo,
                 floating_t *K) noexcept nogil:
    cdef Py_ssize_t d = T.n_features_in, s_j = T.block_size(j), n = rows.n_rows
    cdef const floating_t *LT = params
    cdef const floating_t *aux = params + d * s_j
    cdef const floating_t *M = aux + s_j
    cdef int mm = <int> s_j, nn = <int> n, kk = <int> s_j, lda = <int> s_j
    cdef int ldk = <int> s_j, ldc = <int> ldo
    cdef floating_t one = 1, zero = 0
    if n == 0 or s_j == 0:
        return
    if T.kernel == GAUSSIAN or T.kernel == POLYNOMIAL:
        _dot_products(rows, LT, d, s_j, K)
    else:
        _separable_sums(T, rows, LT, aux, d, s_j, K)
    _kernel_values(T, rows, aux, d, s_j, K)
    # row-major out = K M  <=>  column-major out^T = M^T K^T
    if floating_t is double:
        dgemm(b'N', b'N', &mm, &nn, &kk, &one, <double *> M, &lda, K, &ldk, &zero, out, &ldc)
    else:
        sgemm(b'N', b'N', &mm, &nn, &kk, &one, <float *> M, &lda, K, &ldk, &zero, out, &ldc)


cdef void _dot_products(const Rows *rows, const floating_t *LT, Py_ssize_t d, Py_ssize_t s_j,
                        floating_t *K) noexcept nogil:
    """K (n x s_j) = X L_j^T: one GEMM for dense rows, an axpy per stored entry for CSR."""
    cdef int m = <int> s_j, n = <int> rows.n_rows, k = <int> d
    cdef int lda = <int> s_j, ldb = <int> rows.ld, ldc = <int> s_j
    cdef floating_t one = 1, zero = 0, v
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef const floating_t *w
    cdef floating_t *o
    cdef Py_ssize_t i, p, c
    if rows.kind == ROWS_DENSE:
        if floating_t is double:
            dgemm(b'N', b'N', &m, &n, &k, &one, <double *> LT, &lda, <double *> x, &ldb,
                  &zero, K, &ldc)
        else:
            sgemm(b'N', b'N', &m, &n, &k, &one, <float *> LT, &lda, <float *> x, &ldb,
                  &zero, K, &ldc)
        return
    for i in range(rows.n_rows):
        o = K + i * s_j
        memset(o, 0, s_j * sizeof(floating_t))
        for p in range(rows.indptr[i], rows.indptr[i + 1]):
            v = x[p]
            w = LT + rows.indices[p] * s_j
            for c in range(s_j):
                o[c] += v * w[c]


cdef void _separable_sums(NystroemTransform T, const Rows *rows, const floating_t *LT,
                          const floating_t *aux, Py_ssize_t d, Py_ssize_t s_j,
                          floating_t *K) noexcept nogil:
    """K[i, c] = sum_k g(x_ik, l_ck) with g = |x - l| (Laplacian), (x - l)^2 (Matern: the
    squared distance without the cancellation of ||x||^2 + ||l||^2 - 2 x.l, which the square
    root of a rough Matern kernel would amplify near 0) or sqrt(x + l) (exp-semigroup).
    CSR rows start from aux[c] = sum_k g(0, l_ck) and correct the stored entries:
    g(x, l) - g(0, l)."""
    cdef int kind = T.kernel
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef const floating_t *w
    cdef floating_t *o
    cdef floating_t v
    cdef Py_ssize_t i, k, p, c
    for i in range(rows.n_rows):
        o = K + i * s_j
        if rows.kind == ROWS_DENSE:
            memset(o, 0, s_j * sizeof(floating_t))
            for k in range(d):
                v = x[i * rows.ld + k]
                w = LT + k * s_j
                if kind == LAPLACIAN:
                    for c in range(s_j):
                        o[c] += fabs(v - w[c])
                elif kind == MATERN:
                    for c in range(s_j):
                        o[c] += (v - w[c]) * (v - w[c])
                else:
                    for c in range(s_j):
                        o[c] += sqrt(v + w[c])
        else:
            for c in range(s_j):
                o[c] = aux[c]
            for p in range(rows.indptr[i], rows.indptr[i + 1]):
                v = x[p]
                w = LT + rows.indices[p] * s_j
                if kind == LAPLACIAN:
                    for c in range(s_j):
                        o[c] += fabs(v - w[c]) - fabs(w[c])
                elif kind == MATERN:
                    for c in range(s_j):
                        o[c] += v * (v - 2 * w[c])
                else:
                    for c in range(s_j):
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


cdef void _kernel_values(NystroemTransform T, const Rows *rows, const floating_t *aux,
                         Py_ssize_t d, Py_ssize_t s_j, floating_t *K) noexcept nogil:
    """K <- k(x, l) in place, from the dot products (Gaussian, polynomial) or the separable
    sums (Laplacian, Matern's squared distance, exp-semigroup) that _apply left in it."""
    cdef Py_ssize_t i, c, n = rows.n_rows
    cdef floating_t *o
    cdef double xx, sq
    if T.kernel == LAPLACIAN or T.kernel == EXP_SEMIGROUP:
        for i in range(n * s_j):
            K[i] = <floating_t> (T.p0 * K[i])
        _exp_neg(K, n, s_j)
        return
    if T.kernel == POLYNOMIAL:
        for i in range(n * s_j):
            K[i] = <floating_t> pow(T.p0 * K[i] + T.p1, T.p2)
        return
    if T.kernel == MATERN:
        _matern(T, K, n * s_j)
        return
    for i in range(n):
        o = K + i * s_j
        xx = _row_sq_norm(rows, i, d)
        for c in range(s_j):
            sq = xx + aux[c] - 2.0 * o[c]
            o[c] = <floating_t> (sq if sq > 0.0 else 0.0)
    for i in range(n * s_j):                        # Gaussian
        K[i] = <floating_t> (T.p0 * K[i])
    _exp_neg(K, n, s_j)


cdef void _matern(NystroemTransform T, floating_t *K, Py_ssize_t size) noexcept nogil:
    """K <- Matern(r) from K = r^2: scikit-learn's closed forms for nu = 0.5, 1.5, 2.5,
    else 2^(1-nu) / Gamma(nu) t^nu K_nu(t), t = sqrt(2 nu) r / l."""
    cdef Py_ssize_t i
    cdef double r, t, sq, nu = T.p0
    cdef double norm = 2.0 ** (1.0 - nu) / gamma_fn(nu)
    for i in range(size):
        r = sqrt(K[i] if K[i] > 0 else 0.0) * T.p1
        if nu == 0.5:
            K[i] = <floating_t> exp(-r)
        elif nu == 1.5:
            t = sqrt(3.0) * r
            K[i] = <floating_t> ((1.0 + t) * exp(-t))
        elif nu == 2.5:
            t = sqrt(5.0) * r
            K[i] = <floating_t> ((1.0 + t + t * t / 3.0) * exp(-t))
        else:
            t = sqrt(2.0 * nu) * r
            if t == 0.0:
                K[i] = 1
            else:
                sq = norm * pow(t, nu) * kv(nu, t)
                K[i] = <floating_t> (sq if sq == sq and sq <= DBL_MAX else 0.0)  # K_nu underflows


cdef inline void _exp_neg(floating_t *K, Py_ssize_t n, Py_ssize_t s_j) noexcept nogil:
    if floating_t is double:
        sky_exp_neg_f64(n, s_j, K, s_j, 1.0)
    else:
        sky_exp_neg_f32(n, s_j, K, s_j, 1.0)
