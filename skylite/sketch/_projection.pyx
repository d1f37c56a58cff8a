# cython: language_level=3
"""Native cores of the random-projection feature maps.

Block j of these maps is z_j(x) = a * f(W_j^T x + b_j) with a d x s_j random matrix W_j:

    spectrum      W entries                                   f, b            kernel
    GAUSSIAN      N(0, 1) / sigma                             cos, U[0, 2pi)  Gaussian RBF
    CAUCHY        Cauchy(0, 1) / sigma                        cos, U[0, 2pi)  Laplacian (L1)
    STUDENT_T     N(0, 1) * sqrt(nu / Gamma(nu, 1)) / l       cos, U[0, 2pi)  Matern(nu, l)
                  (one Gamma draw per column: multivariate t with 2 nu degrees of freedom)
    LEVY          Levy(0, beta^2 / 2)                         exp(-.), none   exp-semigroup

With the block scaling sqrt(s_j / s) (docs/feature_maps.md) folded in, a = sqrt(2 / s) for the
cosine maps and sqrt(1 / s) for the exponential one.  Parameters are laid out as W_j (d x s_j,
row-major) followed, for the cosine maps, by the s_j phases b_j.
"""
import numpy as np
from libc.math cimport sqrt
from libc.string cimport memset
from libc.stdint cimport uint32_t, uint64_t
from scipy.linalg.cython_blas cimport dgemm, sgemm

from skylite._native.random cimport (sky_fill_normal, sky_cauchy, sky_levy, sky_gamma,
                                     sky_uniform)
from skylite._native.vmath cimport (sky_cos_shift_f64, sky_cos_shift_f32, sky_exp_neg_f64,
                                    sky_exp_neg_f32)
from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE

cpdef enum Spectrum:
    # distributions of W's entries
    GAUSSIAN = 0
    CAUCHY = 1
    STUDENT_T = 2
    LEVY = 3

# Stream tags: independent random arrays of one block.
cdef uint32_t TAG_W = 0, TAG_PHASE = 1, TAG_COLUMN = 2
cdef double TWO_PI = 6.283185307179586

# Columns of W_j generated per pass of _make_params, whose scratch is two stack arrays of
# this length (make_params_* has no work buffer and must not allocate).
cdef enum:
    PARAM_CHUNK = 256


ctypedef fused floating_t:
    float
    double


cdef class ProjectionTransform(BlockTransform):
    """z_j(x) = a * f(W_j^T x + b_j); see the module docstring for the spectra."""
    cdef int spectrum
    cdef double scale     # 1/sigma, 1/length_scale, or the Levy scale beta^2/2
    cdef double nu        # Matern smoothness (STUDENT_T only)
    cdef bint cosine      # f = cos(. + b) (else f = exp(-.), no phases)
    cdef double amplitude

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed, int spectrum,
                 double scale, double nu=0.0):
        self._set_blocks(d, offsets, seed)
        self.spectrum = spectrum
        self.scale = scale
        self.nu = nu
        self.cosine = spectrum != LEVY
        self.amplitude = sqrt((2.0 if self.cosine else 1.0) / self.n_features)

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t s_j = self.block_size(j)
        return self.n_features_in * s_j + (s_j if self.cosine else 0)

    cdef void make_params_f64(self, Py_ssize_t j, double *params) noexcept nogil:
        _make_params(self, j, params)

    cdef void make_params_f32(self, Py_ssize_t j, float *params) noexcept nogil:
        _make_params(self, j, params)

    cdef void apply_f64(self, Py_ssize_t j, const double *params, const Rows *rows,
                        double *out, Py_ssize_t ldo, double *work) noexcept nogil:
        _apply(self, j, params, rows, out, ldo)

    cdef void apply_f32(self, Py_ssize_t j, const float *params, const Rows *rows,
                        float *out, Py_ssize_t ldo, float *work) noexcept nogil:
        _apply(self, j, params, rows, out, ldo)


cdef void _make_params(ProjectionTransform T, Py_ssize_t j, floating_t *params) noexcept nogil:
    """W_j (and b_j) into params, PARAM_CHUNK columns at a time: scratch on the stack, so
    this cannot fail."""
    cdef Py_ssize_t d = T.n_features_in, s_j = T.block_size(j), r, k, k0, chunk, width, first
    cdef uint64_t seed = T.seed
    cdef uint32_t blk = <uint32_t> j
    cdef double row[PARAM_CHUNK]
    cdef double column_scale[PARAM_CHUNK]
    for chunk in range((s_j + PARAM_CHUNK - 1) // PARAM_CHUNK):
        k0 = chunk * PARAM_CHUNK
        width = min(<Py_ssize_t> PARAM_CHUNK, s_j - k0)
        for k in range(width):
            column_scale[k] = T.scale
            if T.spectrum == STUDENT_T:
                column_scale[k] = T.scale * sqrt(
                    T.nu / sky_gamma(seed, blk, TAG_COLUMN, k0 + k, T.nu))
        for r in range(d):
            first = r * s_j + k0
            if T.spectrum == GAUSSIAN or T.spectrum == STUDENT_T:
                sky_fill_normal(seed, blk, TAG_W, first, row, width)
            elif T.spectrum == CAUCHY:
                for k in range(width):
                    row[k] = sky_cauchy(seed, blk, TAG_W, first + k)
            else:  # LEVY: the scale is Levy's own
                for k in range(width):
                    row[k] = sky_levy(seed, blk, TAG_W, first + k, 1.0)
            for k in range(width):
                params[first + k] = <floating_t> (row[k] * column_scale[k])
    if T.cosine:
        for k in range(s_j):
            params[d * s_j + k] = <floating_t> (TWO_PI * sky_uniform(seed, blk, TAG_PHASE, k))


cdef void _apply(ProjectionTransform T, Py_ssize_t j, const floating_t *params,
                 const Rows *rows, floating_t *out, Py_ssize_t ldo) noexcept nogil:
    cdef Py_ssize_t d = T.n_features_in, s_j = T.block_size(j), n = rows.n_rows
    cdef const floating_t *W = params
    _project(rows, W, d, s_j, out, ldo)
    if T.cosine:
        if floating_t is double:
            sky_cos_shift_f64(n, s_j, out, ldo, params + d * s_j, T.amplitude)
        else:
            sky_cos_shift_f32(n, s_j, out, ldo, params + d * s_j, <float> T.amplitude)
    else:
        if floating_t is double:
            sky_exp_neg_f64(n, s_j, out, ldo, T.amplitude)
        else:
            sky_exp_neg_f32(n, s_j, out, ldo, <float> T.amplitude)


cdef void _project(const Rows *rows, const floating_t *W, Py_ssize_t d, Py_ssize_t s_j,
                   floating_t *out, Py_ssize_t ldo) noexcept nogil:
    """out (n x s_j, row stride ldo) = X W, for dense rows (one GEMM) or CSR rows."""
    cdef int m = <int> s_j, n = <int> rows.n_rows, k = <int> d
    cdef int lda = <int> s_j, ldb = <int> rows.ld, ldc = <int> ldo
    cdef floating_t one = 1, zero = 0, v
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef floating_t *o
    cdef const floating_t *w
    cdef Py_ssize_t i, p, c
    if n == 0:
        return
    if rows.kind == ROWS_DENSE:
        # row-major out = X W  <=>  column-major out^T = W^T X^T
        if floating_t is double:
            dgemm(b'N', b'N', &m, &n, &k, &one, <double *> W, &lda, <double *> x, &ldb,
                  &zero, out, &ldc)
        else:
            sgemm(b'N', b'N', &m, &n, &k, &one, <float *> W, &lda, <float *> x, &ldb,
                  &zero, out, &ldc)
        return
    for i in range(n):
        o = out + i * ldo
        memset(o, 0, s_j * sizeof(floating_t))
        for p in range(rows.indptr[i], rows.indptr[i + 1]):
            v = x[p]
            w = W + rows.indices[p] * s_j
            for c in range(s_j):
                o[c] += v * w[c]
