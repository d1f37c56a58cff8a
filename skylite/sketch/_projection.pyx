# cython: language_level=3
"""Native cores of the random-projection feature maps.

Block j of these maps is z_j(x) = a * f(W_j^T x + b_j) with a d x s_j random matrix W_j:

    spectrum      W entries                                   f, b            kernel
    GAUSSIAN      N(0, 1) / sigma                             cos, U[0, 2pi)  Gaussian RBF
    CAUCHY        Cauchy(0, 1) / sigma                        cos, U[0, 2pi)  Laplacian (L1)
    STUDENT_T     N(0, 1) * sqrt(nu / Gamma(nu, 1)) / l       cos, U[0, 2pi)  Matern(nu, l)
                  (one Gamma draw per column: multivariate t with 2 nu degrees of freedom)
    LEVY          Levy(0, beta^2 / 2)                         exp(-.), none   exp-semigroup
    GAUSSIAN      N(0, 1) / sqrt(s)                           identity, none  linear (JLT)

With the block scaling sqrt(s_j / s) (docs/feature_maps.md) folded in, a = sqrt(2 / s) for the
cosine maps and sqrt(1 / s) for the exponential one; the linear activation (the dense
Johnson-Lindenstrauss sketch) has a = 1 and the 1 / sqrt(s) folded into W.  Parameters are laid
out as W_j (d x s_j, row-major) followed, for the cosine maps, by the s_j phases b_j.

Monte Carlo (sequence MONTE_CARLO): the entries are i.i.d. draws of the streams
(seed, j, TAG_W) (W row-major, element r s_j + k), (seed, j, TAG_COLUMN) (the Gamma of column
k) and (seed, j, TAG_PHASE) (b).

Quasi-Monte Carlo (sequence HALTON or SOBOL, cosine spectra only; skylite/_native/skylite_qmc.h
and skylite.sketch.qmc): the columns come in pairs sharing one frequency.  Global column
c = offsets[j] + k takes point f = c // 2 of the sequence and the phase b_c = 0 (c even) or
3 pi / 2 (c odd), so a pair is (a cos(w.x), a sin(w.x)) and contributes (2 / s) cos(w.(x - x'))
to z(x).z(x'): the QMC estimate of k(x - x') = E cos(w.(x - x')).  If s is odd the last
column c = s - 1 is alone and takes the phase 2 pi u_D(f) from the point's last coordinate.
Coordinates of point f (the inverse CDFs of the spectral measure):

    GAUSSIAN      w_r = Phi^{-1}(u_r(f)) / sigma                          r < d, D = d
    CAUCHY        w_r = tan(pi (u_r(f) - 1/2)) / sigma                    r < d, D = d
    STUDENT_T     w_r = Phi^{-1}(u_{r+1}(f)) sqrt(nu / G) / l,            r < d, D = d + 1
                  G = P^{-1}(nu, u_0(f))  (the Gamma(nu, 1) quantile: the radial part of the
                  multivariate t takes the sequence's first, best-distributed coordinate)

so a block's columns are a pure function of the global column index: block j is its own slice
of the sequence, the same whatever the order blocks are made in or how s is split into blocks.
"""
import numpy as np
from libc.math cimport sqrt, tan
from libc.string cimport memset
from libc.stdint cimport uint32_t, uint64_t
from scipy.linalg.cython_blas cimport dgemm, sgemm
from scipy.special.cython_special cimport ndtri, gammaincinv

from skylite._native.random cimport (sky_fill_normal, sky_cauchy, sky_levy, sky_gamma,
                                     sky_uniform)
from skylite._native.qmc cimport sky_halton, sky_sobol
from skylite._native.vmath cimport (sky_cos_shift_f64, sky_cos_shift_f32, sky_exp_neg_f64,
                                    sky_exp_neg_f32)
from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE
from skylite.sketch import qmc

cpdef enum Spectrum:
    # distributions of W's entries
    GAUSSIAN = 0
    CAUCHY = 1
    STUDENT_T = 2
    LEVY = 3

cpdef enum Activation:
    # f applied to W^T x (+ b)
    COS = 0         # a cos(. + b)
    EXP_NEG = 1     # a exp(-.)
    LINEAR = 2      # the identity (a dense JL sketch)

cpdef enum Sequence:
    # where the uniforms behind W come from
    MONTE_CARLO = 0
    HALTON = 1
    SOBOL = 2

SEQUENCE_CODES = {"monte_carlo": MONTE_CARLO, "halton": HALTON, "sobol": SOBOL}

# Stream tags: independent random arrays of one block.
cdef uint32_t TAG_W = 0, TAG_PHASE = 1, TAG_COLUMN = 2
cdef double TWO_PI = 6.283185307179586
cdef double PI = 3.141592653589793
cdef double THREE_HALF_PI = 4.71238898038469

# Columns of W_j generated per pass of _make_params, whose scratch is two stack arrays of
# this length (make_params_* has no work buffer and must not allocate).
cdef enum:
    PARAM_CHUNK = 256


ctypedef fused floating_t:
    float
    double


cdef class ProjectionTransform(BlockTransform):
    """z_j(x) = a * f(W_j^T x + b_j); see the module docstring for the spectra, activations
    and sequences.

    ProjectionTransform(d, offsets, seed, spectrum, scale, nu=0.0, activation=None,
    sequence=MONTE_CARLO): scale is 1/sigma, 1/length_scale, the Levy scale beta^2/2 or
    1/sqrt(s); the activation defaults to EXP_NEG for LEVY and COS otherwise.
    """
    cdef int spectrum
    cdef double scale     # 1/sigma, 1/length_scale, the Levy scale beta^2/2, or 1/sqrt(s)
    cdef double nu        # Matern smoothness (STUDENT_T only)
    cdef int activation
    cdef bint cosine      # activation == COS: there are phases
    cdef double amplitude
    cdef readonly int sequence
    cdef readonly Py_ssize_t qmc_dims       # coordinates of a point (QMC only)
    cdef uint64_t[::1] halton_bases
    cdef uint64_t halton_leap
    cdef double[::1] halton_shift
    cdef uint32_t[:, ::1] sobol_v
    cdef uint32_t[::1] sobol_e

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed, int spectrum,
                 double scale, double nu=0.0, activation=None, int sequence=MONTE_CARLO):
        self._set_blocks(d, offsets, seed)
        self.spectrum = spectrum
        self.scale = scale
        self.nu = nu
        self.activation = (EXP_NEG if spectrum == LEVY else COS) if activation is None \
            else int(activation)
        self.cosine = self.activation == COS
        self.amplitude = sqrt((2.0 if self.cosine else 1.0) / self.n_features)
        self.sequence = sequence
        if sequence != MONTE_CARLO:
            self._make_sequence_table(sequence)

    def _make_sequence_table(self, int sequence):
        name = {HALTON: "halton", SOBOL: "sobol"}.get(sequence)
        if name is None:
            raise ValueError(f"unknown sequence code {sequence}")
        if not self.cosine or self.spectrum == LEVY:
            raise ValueError("quasi-Monte-Carlo sequences need a cosine map (Gaussian, "
                             "Laplacian or Matern spectrum)")
        qmc.check_points((self.n_features + 1) // 2, name)
        self.qmc_dims = self.n_features_in + (2 if self.spectrum == STUDENT_T else 1)
        if sequence == HALTON:
            bases, leap, shifts = qmc.halton_table(self.qmc_dims, self.seed)
            self.halton_bases = np.ascontiguousarray(bases, dtype=np.uint64)
            self.halton_leap = leap
            self.halton_shift = np.ascontiguousarray(shifts, dtype=np.float64)
        else:
            v, e = qmc.sobol_table(self.qmc_dims, self.seed)
            self.sobol_v = np.ascontiguousarray(v, dtype=np.uint32)
            self.sobol_e = np.ascontiguousarray(e, dtype=np.uint32)

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
    cdef Py_ssize_t d = T.n_features_in, s_j = T.block_size(j), r, k0, chunk, width
    cdef double column_scale[PARAM_CHUNK]
    for chunk in range((s_j + PARAM_CHUNK - 1) // PARAM_CHUNK):
        k0 = chunk * PARAM_CHUNK
        width = min(<Py_ssize_t> PARAM_CHUNK, s_j - k0)
        _column_scales(T, j, k0, width, column_scale)
        for r in range(d):
            if T.sequence == MONTE_CARLO:
                _random_row(T, j, r * s_j + k0, width, column_scale, params + r * s_j + k0)
            else:
                _qmc_row(T, j, r, k0, width, column_scale, params + r * s_j + k0)
    if T.cosine:
        _phases(T, j, params + d * s_j)


cdef void _column_scales(ProjectionTransform T, Py_ssize_t j, Py_ssize_t k0, Py_ssize_t width,
                         double *column_scale) noexcept nogil:
    """The scales of columns k0..k0+width of W_j: T.scale, for Matern times sqrt(nu / G) with
    G the column's Gamma(nu, 1) draw (Monte Carlo) or quantile of its point's coordinate 0."""
    cdef Py_ssize_t k
    cdef double G
    for k in range(width):
        column_scale[k] = T.scale
        if T.spectrum == STUDENT_T:
            if T.sequence == MONTE_CARLO:
                G = sky_gamma(T.seed, <uint32_t> j, TAG_COLUMN, k0 + k, T.nu)
            else:
                G = gammaincinv(T.nu, _qmc_u(T, <uint64_t> ((T.offsets[j] + k0 + k) // 2), 0))
            column_scale[k] = T.scale * sqrt(T.nu / max(G, 1e-300))


cdef void _random_row(ProjectionTransform T, Py_ssize_t j, Py_ssize_t first, Py_ssize_t width,
                      const double *column_scale, floating_t *out) noexcept nogil:
    """Elements first..first+width of W_j (row-major) from the stream (seed, j, TAG_W)."""
    cdef uint32_t blk = <uint32_t> j
    cdef double row[PARAM_CHUNK]
    cdef Py_ssize_t k
    if T.spectrum == GAUSSIAN or T.spectrum == STUDENT_T:
        sky_fill_normal(T.seed, blk, TAG_W, first, row, width)
    elif T.spectrum == CAUCHY:
        for k in range(width):
            row[k] = sky_cauchy(T.seed, blk, TAG_W, first + k)
    else:  # LEVY: the scale is Levy's own
        for k in range(width):
            row[k] = sky_levy(T.seed, blk, TAG_W, first + k, 1.0)
    for k in range(width):
        out[k] = <floating_t> (row[k] * column_scale[k])


cdef inline double _qmc_u(ProjectionTransform T, uint64_t f, Py_ssize_t i) noexcept nogil:
    """Coordinate i of point f of the map's sequence, in (0, 1)."""
    if T.sequence == HALTON:
        return sky_halton(T.halton_bases[i], T.halton_leap, T.halton_shift[i], f)
    return sky_sobol(&T.sobol_v[i, 0], T.sobol_e[i], f)


cdef void _qmc_row(ProjectionTransform T, Py_ssize_t j, Py_ssize_t r, Py_ssize_t k0,
                   Py_ssize_t width, const double *column_scale,
                   floating_t *out) noexcept nogil:
    """Row r, columns k0..k0+width of W_j from the sequence (see the module docstring); the
    two columns of a pair share their point, computed once."""
    cdef Py_ssize_t c0 = T.offsets[j] + k0, k
    cdef Py_ssize_t coordinate = r + (1 if T.spectrum == STUDENT_T else 0)
    cdef uint64_t f, last = <uint64_t> -1
    cdef double u, w = 0.0
    for k in range(width):
        f = <uint64_t> ((c0 + k) // 2)
        if f != last:
            u = _qmc_u(T, f, coordinate)
            w = tan(PI * (u - 0.5)) if T.spectrum == CAUCHY else ndtri(u)
            last = f
        out[k] = <floating_t> (w * column_scale[k])


cdef void _phases(ProjectionTransform T, Py_ssize_t j, floating_t *b) noexcept nogil:
    """b_j: U[0, 2 pi) draws (Monte Carlo); 0 / 3 pi / 2 for the columns of a pair and
    2 pi u_{D-1}(f) for a lone last column (QMC)."""
    cdef Py_ssize_t s_j = T.block_size(j), s = T.n_features, c0 = T.offsets[j], k
    if T.sequence == MONTE_CARLO:
        for k in range(s_j):
            b[k] = <floating_t> (TWO_PI * sky_uniform(T.seed, <uint32_t> j, TAG_PHASE, k))
        return
    for k in range(s_j):
        b[k] = 0 if (c0 + k) % 2 == 0 else <floating_t> THREE_HALF_PI
    if s % 2 == 1 and c0 + s_j == s:     # the last column is alone
        b[s_j - 1] = <floating_t> (TWO_PI * _qmc_u(T, <uint64_t> ((s - 1) // 2),
                                                   T.qmc_dims - 1))


cdef void _apply(ProjectionTransform T, Py_ssize_t j, const floating_t *params,
                 const Rows *rows, floating_t *out, Py_ssize_t ldo) noexcept nogil:
    cdef Py_ssize_t d = T.n_features_in, s_j = T.block_size(j), n = rows.n_rows
    cdef const floating_t *W = params
    _project(rows, W, d, s_j, out, ldo)
    if T.activation == COS:
        if floating_t is double:
            sky_cos_shift_f64(n, s_j, out, ldo, params + d * s_j, T.amplitude)
        else:
            sky_cos_shift_f32(n, s_j, out, ldo, params + d * s_j, <float> T.amplitude)
    elif T.activation == EXP_NEG:
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
