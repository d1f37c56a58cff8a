# cython: language_level=3
"""Native core of the Fastfood feature map (Le, Sarlos & Smola, 2013).

Block j (s_j features) of the map for the Gaussian kernel exp(-||x - x'||^2 / (2 sigma^2)) is

    z_j(x) = a * cos(V_j x + b_j),   a = sqrt(2 / s)   (sqrt(2 / s_j) times the block scale
                                                       sqrt(s_j / s) of docs/feature_maps.md),

where x is zero-padded to d' = the next power of two >= d and V_j stacks
n_chunks = ceil(s_j / d') independent d' x d' chunks (the last one truncated to its first
s_j - (n_chunks - 1) d' rows), each

    V = 1 / (sigma sqrt(d')) * S H G Pi H B,

B = diag(+/-1), H the unnormalized Walsh-Hadamard matrix, Pi a permutation matrix
((Pi y)_k = y_{pi(k)}), G = diag(N(0, 1)), S = diag(c_k / ||G||_F) with c_k ~ chi(d'), so that
every row of V has the norm of a d'-dimensional N(0, I / sigma^2) vector.  b_j ~ U[0, 2 pi).

For the Matern kernel (nu > 0; libSkylark's FastMaternRFT) sigma is the length scale l and
c_k ~ chi(d') sqrt(nu / Gamma(nu, 1)): the norm of a d'-dimensional multivariate t vector with
2 nu degrees of freedom (scale 1 / l), the radial part of Matern's spectral measure, whose
first d coordinates are the d-dimensional spectral measure (x is zero-padded).

Parameters of block j (a flat float32/float64 array of param_size(j) =
4 d' n_chunks + s_j values), chunk c at offset 4 d' c:

    [c * 4d' + 0   : +d')   B      the signs, +1.0 or -1.0
    [c * 4d' + d'  : +d')   Pi     pi(k) as a floating value (exact: d' <= 2^24)
    [c * 4d' + 2d' : +d')   G      the Gaussian diagonal
    [c * 4d' + 3d' : +d')   S'     c_k / (||G||_F sigma sqrt(d')): S and the global scale
    [4 d' n_chunks : +s_j)  b      the phases

All of them are pure functions of (seed, j) through the counter-based generator, with one
stream tag per array (the chunk's element k has index c d' + k in its stream):
B from TAG_SIGN, Pi by Fisher-Yates (swap k <-> sky_below(k + 1), k = d'-1 .. 1) from
TAG_PERM, G from TAG_GAUSS, c_k = sqrt(2 Gamma(d'/2, 1)) from TAG_CHI (times
sqrt(nu / Gamma(nu, 1)) from TAG_RADIAL for Matern), b from TAG_PHASE.

Evaluation (skylite_fastfood.h, C cloned for AVX-512 / AVX2 / baseline), one row at a time,
for each chunk c: u = B x (x zero-padded; a CSR row is first scattered into a zeroed padded
row), u <- H u (in-place FWHT), w_k = G_k u_{pi(k)}, w <- H w, out[c d' + k] = S'_k w_k;
then the vectorized cosine sky_cos_shift over the row's s_j values while they are still in
cache.  work_size = 3 d' values per thread (u, w and the padded CSR row), whatever the
number of rows.  Cost O(s_j log d' + nnz s_j / d') per row.

The same module holds the subsampled randomized Hadamard transform (SRHT, libSkylark's FJLT),
a linear sketch z(x) = S x with E[z(x).z(x')] = x.x': chunk c of block j is

    z_c(x) = (H B_c x)[R_c] / sqrt(s),

B_c = diag(+/-1) (TAG_SIGN), R_c the first min(d', s_j - c d') entries of a random permutation
of 0..d'-1 (TAG_PERM; rows sampled without replacement).  H B_c / sqrt(d') is orthogonal, so
each of the d' rotated coordinates carries ||x||^2 / d' on average and the s sampled ones,
scaled by sqrt(d' / s), keep ||x||^2 in expectation; the random signs spread x's mass evenly
over the coordinates (the Johnson-Lindenstrauss property).  Parameters: [B_c (d'), R_c (d')]
per chunk (param_size = 2 d' n_chunks), work_size = 2 d' values (u and a padded CSR row).
Cost O(n_chunks d' log d') per row.
"""
import numpy as np
from libc.math cimport sqrt
from libc.string cimport memset
from libc.stdint cimport uint32_t, uint64_t

from skylite._native.random cimport sky_fill_normal, sky_gamma, sky_uniform, sky_below
from skylite._native.vmath cimport sky_cos_shift_f64, sky_cos_shift_f32
from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE

cdef extern from "skylite_fastfood.h" nogil:
    void sky_fwht_f64(double *a, Py_ssize_t n)
    void sky_fwht_f32(float *a, Py_ssize_t n)
    void sky_fastfood_row_f64(Py_ssize_t d, Py_ssize_t D, Py_ssize_t n_chunks, Py_ssize_t s_j,
                              const double *x, const double *params, double *out,
                              double *u, double *w)
    void sky_fastfood_row_f32(Py_ssize_t d, Py_ssize_t D, Py_ssize_t n_chunks, Py_ssize_t s_j,
                              const float *x, const float *params, float *out,
                              float *u, float *w)
    void sky_srht_row_f64(Py_ssize_t d, Py_ssize_t D, Py_ssize_t n_chunks, Py_ssize_t s_j,
                          const double *x, const double *params, double *out, double *u,
                          double scale)
    void sky_srht_row_f32(Py_ssize_t d, Py_ssize_t D, Py_ssize_t n_chunks, Py_ssize_t s_j,
                          const float *x, const float *params, float *out, float *u,
                          float scale)

# Stream tags: independent random arrays of one block.
cdef uint32_t TAG_SIGN = 0, TAG_PERM = 1, TAG_GAUSS = 2, TAG_CHI = 3, TAG_PHASE = 4
cdef uint32_t TAG_RADIAL = 5
cdef double TWO_PI = 6.283185307179586

# Largest padded dimension: permutation indices are stored exactly in float32.
MAX_PADDED_DIM = 1 << 24

# Normals of G generated per pass of _make_params, into a stack array of this length
# (make_params_* has no work buffer and must not allocate).
cdef enum:
    PARAM_CHUNK = 256


ctypedef fused floating_t:
    float
    double


def padded_dim(Py_ssize_t d):
    """d' = the smallest power of two >= d."""
    cdef Py_ssize_t p = 1
    while p < d:
        p *= 2
    return p


def fwht(a):
    """In-place unnormalized Walsh-Hadamard transform of each row of a C-contiguous 2-D
    float32/float64 array whose row length is a power of two (for tests); returns a."""
    cdef double[:, ::1] a64
    cdef float[:, ::1] a32
    cdef Py_ssize_t i, n
    if a.ndim != 2 or a.shape[1] & (a.shape[1] - 1) or a.shape[1] == 0:
        raise ValueError("fwht needs a 2-D array with a power-of-two row length")
    if a.dtype == np.float64:
        a64 = a
        n = a64.shape[1]
        with nogil:
            for i in range(a64.shape[0]):
                sky_fwht_f64(&a64[i, 0], n)
    elif a.dtype == np.float32:
        a32 = a
        n = a32.shape[1]
        with nogil:
            for i in range(a32.shape[0]):
                sky_fwht_f32(&a32[i, 0], n)
    else:
        raise ValueError("fwht needs float32 or float64")
    return a


cdef class HadamardTransform(BlockTransform):
    """Base of the maps that work on x zero-padded to d' (the power of two >= d) in chunks of
    d' output features: block j has n_chunks(j) = ceil(s_j / d') chunks."""
    cdef readonly Py_ssize_t padded     # d'

    cdef int _set_padded(self, str who) except -1:
        self.padded = padded_dim(self.n_features_in)
        if self.padded > MAX_PADDED_DIM:
            raise ValueError(f"{who} supports at most {MAX_PADDED_DIM} input features, "
                             f"got {self.n_features_in}")
        return 0

    cdef inline Py_ssize_t n_chunks(self, Py_ssize_t j) noexcept nogil:
        return (self.block_size(j) + self.padded - 1) // self.padded


cdef class FastfoodTransform(HadamardTransform):
    """Fastfood blocks z_j(x) = sqrt(2/s) cos(V_j x + b_j); see the module docstring.

    FastfoodTransform(d, offsets, seed, sigma, nu=0.0): the Gaussian kernel of bandwidth
    sigma, or with nu > 0 the Matern kernel of smoothness nu and length scale sigma."""
    cdef readonly double sigma
    cdef readonly double nu             # 0: Gaussian; > 0: Matern
    cdef double amplitude

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed, double sigma,
                 double nu=0.0):
        self._set_blocks(d, offsets, seed)
        self._set_padded("Fastfood")
        self.sigma = sigma
        self.nu = nu
        self.amplitude = sqrt(2.0 / self.n_features)

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        return 4 * self.padded * self.n_chunks(j) + self.block_size(j)

    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil:
        return 3 * self.padded

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


cdef void _make_params(FastfoodTransform T, Py_ssize_t j, floating_t *params) noexcept nogil:
    """The parameters of block j (see the module docstring), with no heap scratch: the
    permutation is shuffled in place in its slot of params (exact: d' <= 2^24) and G is
    drawn PARAM_CHUNK normals at a time, so this cannot fail."""
    cdef Py_ssize_t D = T.padded, s_j = T.block_size(j), n_chunks = T.n_chunks(j)
    cdef Py_ssize_t c, k, k0, chunk, width, first
    cdef uint64_t seed = T.seed
    cdef uint32_t blk = <uint32_t> j
    cdef double g[PARAM_CHUNK]
    cdef double norm2, scale, radius
    cdef floating_t *P
    for c in range(n_chunks):
        P = params + 4 * D * c
        first = c * D
        # B: random signs; Pi: Fisher-Yates shuffle of the identity
        _signs_and_permutation(seed, blk, first, D, P, P + D)
        # G: Gaussian diagonal, and its Frobenius norm
        norm2 = 0.0
        for chunk in range((D + PARAM_CHUNK - 1) // PARAM_CHUNK):
            k0 = chunk * PARAM_CHUNK
            width = min(<Py_ssize_t> PARAM_CHUNK, D - k0)
            sky_fill_normal(seed, blk, TAG_GAUSS, first + k0, g, width)
            for k in range(width):
                P[2 * D + k0 + k] = <floating_t> g[k]
                norm2 += g[k] * g[k]
        # S' = chi(d') / (||G||_F sigma sqrt(d'))
        scale = 1.0 / (sqrt(norm2) * T.sigma * sqrt(<double> D))
        for k in range(D):
            radius = sqrt(2.0 * sky_gamma(seed, blk, TAG_CHI, first + k, 0.5 * D))
            if T.nu > 0:      # Matern: the multivariate t radius
                radius *= sqrt(T.nu / sky_gamma(seed, blk, TAG_RADIAL, first + k, T.nu))
            P[3 * D + k] = <floating_t> (radius * scale)
    for k in range(s_j):
        params[4 * D * n_chunks + k] = <floating_t> (
            TWO_PI * sky_uniform(seed, blk, TAG_PHASE, k))


cdef void _signs_and_permutation(uint64_t seed, uint32_t blk, Py_ssize_t first, Py_ssize_t D,
                                 floating_t *signs, floating_t *perm) noexcept nogil:
    """signs[k] = +/-1 (stream TAG_SIGN) and perm = a Fisher-Yates shuffle of 0..D-1 (swap
    k <-> sky_below(k + 1) from TAG_PERM, k = D-1 .. 1), element k at index first + k."""
    cdef Py_ssize_t k, r
    cdef floating_t tmp
    for k in range(D):
        signs[k] = 1.0 if sky_uniform(seed, blk, TAG_SIGN, first + k) < 0.5 else -1.0
    for k in range(D):
        perm[k] = <floating_t> k
    for k in range(D - 1, 0, -1):
        r = <Py_ssize_t> sky_below(seed, blk, TAG_PERM, first + k, <uint64_t> (k + 1))
        tmp = perm[k]
        perm[k] = perm[r]
        perm[r] = tmp


cdef void _apply(FastfoodTransform T, Py_ssize_t j, const floating_t *params,
                 const Rows *rows, floating_t *out, Py_ssize_t ldo,
                 floating_t *work) noexcept nogil:
    cdef Py_ssize_t d = T.n_features_in, D = T.padded, s_j = T.block_size(j)
    cdef Py_ssize_t n_chunks = T.n_chunks(j), i
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef const floating_t *phase = params + 4 * D * n_chunks
    cdef floating_t *u = work
    cdef floating_t *w = work + D
    cdef floating_t *xpad = work + 2 * D
    cdef floating_t *o
    for i in range(rows.n_rows):
        o = out + i * ldo
        if rows.kind == ROWS_DENSE:
            _row(d, D, n_chunks, s_j, x + i * rows.ld, params, o, u, w)
        else:
            _scatter_row(rows, i, xpad, D)
            _row(D, D, n_chunks, s_j, xpad, params, o, u, w)
        # the cosine while the row is still in cache
        if floating_t is double:
            sky_cos_shift_f64(1, s_j, o, ldo, phase, T.amplitude)
        else:
            sky_cos_shift_f32(1, s_j, o, ldo, phase, <float> T.amplitude)


cdef inline void _scatter_row(const Rows *rows, Py_ssize_t i, floating_t *xpad,
                              Py_ssize_t D) noexcept nogil:
    """Row i of CSR `rows` scattered into the zeroed padded row xpad[0:D]."""
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef Py_ssize_t p
    memset(xpad, 0, D * sizeof(floating_t))
    for p in range(rows.indptr[i], rows.indptr[i + 1]):
        xpad[rows.indices[p]] = x[p]


cdef inline void _row(Py_ssize_t d, Py_ssize_t D, Py_ssize_t n_chunks, Py_ssize_t s_j,
                      const floating_t *x, const floating_t *params, floating_t *out,
                      floating_t *u, floating_t *w) noexcept nogil:
    if floating_t is double:
        sky_fastfood_row_f64(d, D, n_chunks, s_j, x, params, out, u, w)
    else:
        sky_fastfood_row_f32(d, D, n_chunks, s_j, x, params, out, u, w)


cdef class SRHTTransform(HadamardTransform):
    """The subsampled randomized Hadamard transform z = S x; see the module docstring.

    SRHTTransform(d, offsets, seed)."""
    cdef double scale                   # 1 / sqrt(s)

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed):
        self._set_blocks(d, offsets, seed)
        self._set_padded("SRHT")
        self.scale = 1.0 / sqrt(<double> self.n_features)

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        return 2 * self.padded * self.n_chunks(j)

    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil:
        return 2 * self.padded

    cdef void make_params_f64(self, Py_ssize_t j, double *params) noexcept nogil:
        _srht_params(self, j, params)

    cdef void make_params_f32(self, Py_ssize_t j, float *params) noexcept nogil:
        _srht_params(self, j, params)

    cdef void apply_f64(self, Py_ssize_t j, const double *params, const Rows *rows,
                        double *out, Py_ssize_t ldo, double *work) noexcept nogil:
        _srht_apply(self, j, params, rows, out, ldo, work)

    cdef void apply_f32(self, Py_ssize_t j, const float *params, const Rows *rows,
                        float *out, Py_ssize_t ldo, float *work) noexcept nogil:
        _srht_apply(self, j, params, rows, out, ldo, work)


cdef void _srht_params(SRHTTransform T, Py_ssize_t j, floating_t *params) noexcept nogil:
    cdef Py_ssize_t D = T.padded, c
    for c in range(T.n_chunks(j)):
        _signs_and_permutation(T.seed, <uint32_t> j, c * D, D, params + 2 * D * c,
                               params + 2 * D * c + D)


cdef void _srht_apply(SRHTTransform T, Py_ssize_t j, const floating_t *params,
                      const Rows *rows, floating_t *out, Py_ssize_t ldo,
                      floating_t *work) noexcept nogil:
    cdef Py_ssize_t d = T.n_features_in, D = T.padded, s_j = T.block_size(j)
    cdef Py_ssize_t n_chunks = T.n_chunks(j), i
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef floating_t *u = work
    cdef floating_t *xpad = work + D
    for i in range(rows.n_rows):
        if rows.kind == ROWS_DENSE:
            _srht_row(d, D, n_chunks, s_j, x + i * rows.ld, params, out + i * ldo, u, T.scale)
        else:
            _scatter_row(rows, i, xpad, D)
            _srht_row(D, D, n_chunks, s_j, xpad, params, out + i * ldo, u, T.scale)


cdef inline void _srht_row(Py_ssize_t d, Py_ssize_t D, Py_ssize_t n_chunks, Py_ssize_t s_j,
                           const floating_t *x, const floating_t *params, floating_t *out,
                           floating_t *u, double scale) noexcept nogil:
    if floating_t is double:
        sky_srht_row_f64(d, D, n_chunks, s_j, x, params, out, u, scale)
    else:
        sky_srht_row_f32(d, D, n_chunks, s_j, x, params, out, u, <float> scale)
