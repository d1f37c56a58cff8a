# cython: language_level=3
"""Native core of TensorSketch (Pham & Pagh, 2013), the feature map of the polynomial kernel
k(x, x') = (gamma x.x' + coef0)^q.

Block j (size s = s_j) sketches the augmented vector x~ = [sqrt(gamma) x, sqrt(coef0)]
(D = d + 1 entries) with q independent CountSketches C_p (hash h_p: [D] -> [s], sign
sigma_p: [D] -> {+1, -1}; (C_p x~)_c = sum_{k: h_p(k) = c} sigma_p(k) x~_k), and

    z_j(x) = IFFT( prod_p FFT(C_p x~) ),     E[z_j(x) . z_j(x')] = (x~ . x~')^q,

the CountSketch of x~^{(x) q} under the hash sum_p h_p(i_p) mod s and the sign
prod_p sigma_p(i_p), computed as a circular convolution.  Values are scaled by sqrt(s / S)
(S = n_features), the block scaling of docs/feature_maps.md.  q = 1 is a plain CountSketch
(no FFT).

Parameters of block j (param_size = 2 q D values of the float or double array):
    params[p * D + k]        = h_p(k)        (an integer, exact in float32 for s < 2^24)
    params[(q + p) * D + k]  = sigma_p(k)    (+1 or -1)
for p < q, k < D (k = d is the constant coordinate sqrt(coef0)).  They are generated from
(seed, j) by the counter-based generator: h_p(k) = sky_below(seed, j, TAG_HASH, p D + k, s),
sigma_p(k) from sky_below(seed, j, TAG_SIGN, p D + k, 2).

Evaluation, all in double whatever the input type: for each row, the q sketches are
transformed two at a time, packed as the real and imaginary parts of one complex FFT
(U = FFT(a + i b) gives FFT(a) FFT(b) = (U_k^2 - conj(U_{-k})^2) / 4i), an odd last one alone;
the products of two rows are packed into one inverse FFT (P_1 + i P_2 -> z_1 + i z_2, both
real).  Per row that is ceil(q/2) + 1/2 complex FFTs of length s, in "plan order" (no
bit reversal for power-of-two s; Bluestein for other s, see skylite_fft.h).

Work per tile (the driver's buffer, counted in elements of the compute type, float32 or
float64, so twice the doubles it needs): 6 s doubles of sketches and spectra, plus 2 m for
Bluestein's convolution of length m (0 when s is a power of two), plus alignment slack.
"""
import numpy as np
cimport numpy as cnp
from libc.math cimport sqrt
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.stdint cimport int64_t, uint32_t, uint64_t, uintptr_t

from skylite._native.random cimport sky_below
from skylite._native.fft cimport (sky_fft_plan, sky_fft_plan_init, sky_fft_plan_free,
                                  sky_fft_work_size, sky_fft, sky_fft_forward_po,
                                  sky_fft_inverse_po)
from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE

cnp.import_array()

# Stream tags: the independent random arrays of one block.
cdef uint32_t TAG_HASH = 0, TAG_SIGN = 1


ctypedef fused floating_t:
    float
    double


cdef class TensorSketchTransform(BlockTransform):
    """z_j(x) = sqrt(s_j / s) IFFT(prod_p FFT(C_p x~)); see the module docstring."""
    cdef readonly int degree
    cdef readonly double gamma, coef0
    cdef double sqrt_gamma, sqrt_coef0
    cdef sky_fft_plan *plans           # one per distinct FFT length (none for degree 1)
    cdef Py_ssize_t n_plans
    cdef Py_ssize_t[::1] plan_of_block

    def __cinit__(self):
        self.plans = NULL
        self.n_plans = 0

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed, int degree,
                 double gamma, double coef0):
        self._set_blocks(d, offsets, seed)
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.sqrt_gamma = sqrt(gamma)
        self.sqrt_coef0 = sqrt(coef0)
        # the length of the convolution of each block (see _conv_length) and one plan per
        # distinct length
        lengths = [_conv_length(int(self.block_size(j)), degree) if degree > 1 else 0
                   for j in range(self.n_blocks)]
        distinct = sorted(set(lengths)) if degree > 1 else []
        self.plan_of_block = np.array([distinct.index(L) if degree > 1 else -1
                                       for L in lengths], dtype=np.intp)
        if distinct:
            self.plans = <sky_fft_plan *> calloc(len(distinct), sizeof(sky_fft_plan))
            if self.plans == NULL:
                raise MemoryError("could not allocate the FFT plans")
            for i, L in enumerate(distinct):
                if sky_fft_plan_init(&self.plans[i], L) != 0:
                    raise MemoryError(f"could not allocate the FFT plan of length {L}")
                self.n_plans = i + 1

    def __reduce__(self):
        # rebuilt from its sizes, seed and kernel parameters (the plans are recomputed)
        return (TensorSketchTransform, (self.n_features_in, self.block_offsets, self.seed,
                                        self.degree, self.gamma, self.coef0))

    def conv_length(self, Py_ssize_t j):
        """The length of the FFTs of block j (0 for degree 1)."""
        if not 0 <= j < self.n_blocks:
            raise IndexError(f"block index {j} out of range for {self.n_blocks} blocks")
        return 0 if self.degree == 1 else self.plans[self.plan_of_block[j]].n

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.plans != NULL:
            for i in range(self.n_plans):
                sky_fft_plan_free(&self.plans[i])
            free(self.plans)

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        return 2 * self.degree * (self.n_features_in + 1)

    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil:
        cdef Py_ssize_t L = self.block_size(j), fft_work = 0
        cdef const sky_fft_plan *plan
        if self.degree > 1:
            plan = &self.plans[self.plan_of_block[j]]
            L = plan.n
            fft_work = sky_fft_work_size(plan)
        # doubles needed, counted in floats (the smaller compute type), plus 64 bytes to align
        return 2 * (6 * L + fft_work) + 16

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


def _conv_length(Py_ssize_t s, int degree):
    """The FFT length L used for a block of size s and the given degree (>= 2).

    A power of two s: L = s, the circular convolution directly.  Otherwise the circular
    convolution of length s is the linear convolution of the q sketches (length q (s - 1) + 1)
    folded mod s, computed with a power-of-two FFT of length L >= q (s - 1) + 1 on zero-padded
    sketches -- when that L is no longer than Bluestein's (the power of two >= 2 s - 1, and
    Bluestein needs two such FFTs per transform): always for q = 2.  Otherwise L = s, and the
    plan of length s uses Bluestein's algorithm.
    """
    def pow2_at_least(n):
        m = 1
        while m < n:
            m <<= 1
        return m
    if s & (s - 1) == 0:
        return s
    linear = pow2_at_least(degree * (s - 1) + 1)
    return linear if linear <= pow2_at_least(2 * s - 1) else s


cdef void _make_params(TensorSketchTransform T, Py_ssize_t j, floating_t *params) noexcept nogil:
    cdef Py_ssize_t D = T.n_features_in + 1, q = T.degree, s = T.block_size(j), i
    cdef uint32_t blk = <uint32_t> j
    for i in range(q * D):
        params[i] = <floating_t> sky_below(T.seed, blk, TAG_HASH, i, <uint64_t> s)
        params[q * D + i] = <floating_t> (1.0 if sky_below(T.seed, blk, TAG_SIGN, i, 2) else -1.0)


cdef inline void _count_sketch(const Rows *rows, Py_ssize_t r, const floating_t *hash,
                               const floating_t *sign, double sqrt_gamma, double sqrt_coef0,
                               Py_ssize_t d, double *u, Py_ssize_t L) noexcept nogil:
    """u[0:L] = C x~ (zero-padded to the FFT length L) for row r of `rows` (only the nonzeros
    of a CSR row are hashed)."""
    cdef const floating_t *x = <const floating_t *> rows.values
    cdef Py_ssize_t k, p
    memset(u, 0, L * sizeof(double))
    if rows.kind == ROWS_DENSE:
        x = x + r * rows.ld
        for k in range(d):
            u[<Py_ssize_t> hash[k]] += sign[k] * (sqrt_gamma * <double> x[k])
    else:
        for p in range(rows.indptr[r], rows.indptr[r + 1]):
            k = rows.indices[p]
            u[<Py_ssize_t> hash[k]] += sign[k] * (sqrt_gamma * <double> x[p])
    u[<Py_ssize_t> hash[d]] += sign[d] * sqrt_coef0


cdef void _row_spectrum(TensorSketchTransform T, const sky_fft_plan *plan,
                        const floating_t *params, const Rows *rows, Py_ssize_t r,
                        double *pr, double *pi, double *ur, double *ui,
                        double *fft_work) noexcept nogil:
    """(pr, pi) = prod_p FFT(C_p x~_r) (length L = plan.n), in plan order."""
    cdef Py_ssize_t d = T.n_features_in, D = d + 1, q = T.degree, s = plan.n
    cdef const int64_t *neg = plan.neg
    cdef Py_ssize_t p = 0, i, ni
    cdef bint first = True
    cdef double a, b, c, e, tr, ti, xr, xi
    while p + 1 < q:
        _count_sketch(rows, r, params + p * D, params + (q + p) * D, T.sqrt_gamma,
                      T.sqrt_coef0, d, ur, s)
        _count_sketch(rows, r, params + (p + 1) * D, params + (q + p + 1) * D, T.sqrt_gamma,
                      T.sqrt_coef0, d, ui, s)
        sky_fft_forward_po(plan, ur, ui, fft_work)
        # U = FFT(a + i b): FFT(a)_k FFT(b)_k = (U_k^2 - conj(U_-k)^2) / 4i.  Written to
        # (pr, pi), never in place, since position neg[i] is read again later.
        for i in range(s):
            ni = neg[i]
            a = ur[i]
            b = ui[i]
            c = ur[ni]
            e = ui[ni]
            tr = 0.25 * (a * a - b * b - c * c + e * e)
            ti = 0.5 * (a * b + c * e)
            # t / 4i = (Im t - i Re t) / 4
            if first:
                pr[i] = ti
                pi[i] = -tr
            else:
                xr = pr[i]
                xi = pi[i]
                pr[i] = xr * ti + xi * tr
                pi[i] = xi * ti - xr * tr
        first = False
        p += 2
    if p < q:
        _count_sketch(rows, r, params + p * D, params + (q + p) * D, T.sqrt_gamma,
                      T.sqrt_coef0, d, ur, s)
        memset(ui, 0, s * sizeof(double))
        sky_fft_forward_po(plan, ur, ui, fft_work)
        for i in range(s):
            if first:
                pr[i] = ur[i]
                pi[i] = ui[i]
            else:
                xr = pr[i]
                xi = pi[i]
                pr[i] = xr * ur[i] - xi * ui[i]
                pi[i] = xr * ui[i] + xi * ur[i]


cdef void _apply(TensorSketchTransform T, Py_ssize_t j, const floating_t *params,
                 const Rows *rows, floating_t *out, Py_ssize_t ldo,
                 floating_t *work_raw) noexcept nogil:
    cdef Py_ssize_t s = T.block_size(j), n = rows.n_rows, q = T.degree
    cdef Py_ssize_t d = T.n_features_in, r, k, t, L
    cdef double amp = sqrt(<double> s / <double> T.n_features)
    # the driver's buffer may be only float-aligned: align it for doubles (and SIMD)
    cdef double *work = <double *> ((<uintptr_t> work_raw + 63) & ~(<uintptr_t> 63))
    cdef double *ur = work
    cdef double *ui
    cdef double *p0r
    cdef double *p0i
    cdef double *p1r
    cdef double *p1i
    cdef double *fft_work
    cdef const sky_fft_plan *plan
    cdef floating_t *o
    if q == 1:
        # a CountSketch: no convolution
        for r in range(n):
            _count_sketch(rows, r, params, params + (d + 1), T.sqrt_gamma, T.sqrt_coef0,
                          d, ur, s)
            o = out + r * ldo
            for k in range(s):
                o[k] = <floating_t> (amp * ur[k])
        return
    plan = &T.plans[T.plan_of_block[j]]
    L = plan.n
    ui = work + L
    p0r = work + 2 * L
    p0i = work + 3 * L
    p1r = work + 4 * L
    p1i = work + 5 * L
    fft_work = work + 6 * L
    r = 0
    while r < n:
        _row_spectrum(T, plan, params, rows, r, p0r, p0i, ur, ui, fft_work)
        if r + 1 < n:
            # pack two rows' spectra into one inverse FFT: P0 + i P1 -> z0 + i z1
            _row_spectrum(T, plan, params, rows, r + 1, p1r, p1i, ur, ui, fft_work)
            for k in range(L):
                p0r[k] -= p1i[k]
                p0i[k] += p1r[k]
        sky_fft_inverse_po(plan, p0r, p0i, fft_work)
        if L != s:
            # a linear convolution: fold it mod s
            k = 0
            for t in range(s, L):
                p0r[k] += p0r[t]
                p0i[k] += p0i[t]
                k += 1
                if k == s:
                    k = 0
        o = out + r * ldo
        for k in range(s):
            o[k] = <floating_t> (amp * p0r[k])
        if r + 1 < n:
            o = out + (r + 1) * ldo
            for k in range(s):
                o[k] = <floating_t> (amp * p0i[k])
        r += 2


def fft(x, bint inverse=False):
    """The FFT of skylite_fft.c on a 1-D complex array (for tests and benchmarks):
    numpy.fft.fft(x), or numpy.fft.ifft(x) with `inverse`."""
    x = np.asarray(x, dtype=np.complex128)
    if x.ndim != 1 or x.shape[0] < 1:
        raise ValueError("x must be a non-empty 1-D array")
    cdef cnp.ndarray re = np.ascontiguousarray(x.real, dtype=np.float64).copy()
    cdef cnp.ndarray im = np.ascontiguousarray(x.imag, dtype=np.float64).copy()
    cdef sky_fft_plan plan
    if sky_fft_plan_init(&plan, x.shape[0]) != 0:
        raise MemoryError("could not allocate the FFT plan")
    cdef double *work = <double *> malloc((sky_fft_work_size(&plan) + 1) * sizeof(double))
    if work == NULL:
        sky_fft_plan_free(&plan)
        raise MemoryError("could not allocate the FFT work space")
    with nogil:
        sky_fft(&plan, <double *> cnp.PyArray_DATA(re), <double *> cnp.PyArray_DATA(im),
                inverse, work)
    free(work)
    sky_fft_plan_free(&plan)
    return re + 1j * im
