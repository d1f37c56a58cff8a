# cython: language_level=3
"""The column-block sweep of BlockADMM for one row block i (DESIGN.md section 3).

For every column block j, in parallel over threads (one `prange`, no GIL):

    Z    <- T[X_i, j]                                 (cached, or regenerated from (seed, j))
    W'_j <- (Z^T Z + I)^-1 [ Wbar_j - mu'_j + U_j + Z^T B ]      B = Dbar / (C+1) + nu
    O'   <- Z W'_j
    U_j  <- Z^T O'
    S    <- S + O'                                    (per-thread partial sums)

then, in thread order, Delta <- Delta - S and Obar <- Obar + S / (C+1).

The graph-projection factor is computed on a block's first visit and kept: the Cholesky
factor L of Z^T Z + I (s_j x s_j), or, when n_i < s_j, of I + Z Z^T (n_i x n_i), used through
the Woodbury identity (Z^T Z + I)^-1 r = r - Z^T (I + Z Z^T)^-1 Z r.  With the s_j x s_j factor,
U_j = Z^T Z W'_j = L L^T W'_j - W'_j costs O(s_j^2 m) instead of another pass over Z.

Layout: every matrix is row-major.  A row-major a x b matrix is the column-major b x a matrix
of its transpose, which is how the BLAS calls below read them (Z^T is s_j x n_i with leading
dimension s_j; a block of an s x m state matrix is m x s_j with leading dimension m).
BLAS runs single-threaded inside the parallel region (the caller limits it).
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, free, calloc
from libc.string cimport memcpy, memset
from openmp cimport omp_get_wtime
from scipy.linalg.cython_blas cimport dgemm, dsyrk, dtrsm, dtrmm
from scipy.linalg.cython_lapack cimport dpotrf

from skylite.sketch._transform cimport BlockTransform, Rows, rows_of, rows_range, TILE_ROWS

cnp.import_array()

# Phases timed by the sweep, in the order of `ColumnBlocks.seconds`.
PHASES = ("transform", "factor", "products", "solve", "reduce")
DEF N_PHASES = 5
DEF T_TRANSFORM = 0
DEF T_FACTOR = 1
DEF T_PRODUCTS = 2
DEF T_SOLVE = 3
DEF T_REDUCE = 4


cdef class ColumnBlocks:
    """Everything kept per column block for one row block X_i: the graph-projection factors
    and, as the memory budget allows, cached Z blocks or cached map parameters.

    Parameters
    ----------
    transform_op : BlockTransform
        The fitted feature map's native operator.
    X : validated rows of this row block (C-contiguous ndarray or canonical CSR).
    single : bool
        Compute Z in float32 (half the transform cost); the solver state stays float64.
    cache_z, cache_params : sequences of bool, one per block
        Keep Z_ij (n_i x s_j, in the transform's precision) / keep the map parameters.
    scale : float
        The sweep works with c Z_ij instead of Z_ij (the engine's preconditioning).
    """
    cdef BlockTransform T
    cdef Rows rows
    cdef list keep
    cdef readonly Py_ssize_t n_rows, n_blocks, max_block
    cdef readonly bint single
    cdef Py_ssize_t[::1] offsets
    cdef int[::1] woodbury, factored, z_filled
    cdef void **factor
    cdef void **zcache
    cdef void **params
    cdef list arrays            # owners of the memory behind the pointers above
    cdef readonly double[::1] seconds
    cdef readonly double scale

    def __cinit__(self):
        self.factor = NULL
        self.zcache = NULL
        self.params = NULL

    def __init__(self, BlockTransform transform_op, X, bint single, cache_z, cache_params,
                 double scale=1.0):
        cdef Py_ssize_t j, s_j
        self.T = transform_op
        self.keep = []
        self.rows = rows_of(X, self.keep)
        self.single = single
        self.scale = scale
        self.n_rows = self.rows.n_rows
        self.n_blocks = transform_op.n_blocks
        self.offsets = transform_op.block_offsets
        self.max_block = max(self.offsets[j + 1] - self.offsets[j] for j in range(self.n_blocks))
        self.woodbury = np.zeros(self.n_blocks, dtype=np.intc)
        self.factored = np.zeros(self.n_blocks, dtype=np.intc)
        self.z_filled = np.zeros(self.n_blocks, dtype=np.intc)
        self.seconds = np.zeros(N_PHASES)
        self.factor = <void **> calloc(self.n_blocks, sizeof(void *))
        self.zcache = <void **> calloc(self.n_blocks, sizeof(void *))
        self.params = <void **> calloc(self.n_blocks, sizeof(void *))
        if self.factor == NULL or self.zcache == NULL or self.params == NULL:
            raise MemoryError()
        self.arrays = []
        zdtype = np.float32 if single else np.float64
        for j in range(self.n_blocks):
            s_j = self.offsets[j + 1] - self.offsets[j]
            self.woodbury[j] = self.n_rows < s_j
            k = self.n_rows if self.woodbury[j] else s_j
            self.factor[j] = self._own(np.zeros((k, k)))
            if cache_z[j]:
                self.zcache[j] = self._own(np.empty((self.n_rows, s_j), dtype=zdtype))
            elif cache_params[j]:
                p = transform_op.block_params(j, zdtype)
                self.params[j] = self._own(p)

    cdef void *_own(self, cnp.ndarray a):
        self.arrays.append(a)
        return cnp.PyArray_DATA(a)

    def __dealloc__(self):
        free(self.factor)
        free(self.zcache)
        free(self.params)

    @property
    def n_factored(self):
        return int(np.sum(self.factored))

    def sweep(self, double[:, ::1] Wbar, double[:, ::1] mu_p, double[:, ::1] U,
              double[:, ::1] Wp, double[:, ::1] B, double[:, ::1] Delta, double[:, ::1] Obar,
              int n_threads):
        """One parallel pass over the column blocks; see the module docstring.

        Wbar, mu_p (mu'), U, Wp (W', written): s x m.  B, Delta, Obar (updated): n_i x m.
        Returns the number of blocks whose factorization failed (non-finite Z).
        """
        cdef Py_ssize_t n = self.n_rows, m = Wbar.shape[1], C = self.n_blocks
        cdef Py_ssize_t smax = self.max_block, t, i, j
        cdef double inv_c1 = 1.0 / (C + 1), start
        if (Wbar.shape[0] != self.T.n_features or B.shape[0] != n or B.shape[1] != m
                or Delta.shape[0] != n or Obar.shape[0] != n):
            raise ValueError("state arrays do not match the column blocks")
        # per-thread buffers: Z in float64 (and float32), map parameters and work, the
        # right-hand side, O', a Woodbury temporary, and the partial sum of the O'
        cdef Py_ssize_t len_z = n * smax, len_nm = n * m, len_sm = smax * m
        cdef Py_ssize_t len_p = 1, len_w = 1
        for j in range(C):
            len_p = max(len_p, self.T.param_size(j) + 1)
            len_w = max(len_w, self.T.work_size(j, TILE_ROWS) + 1)
        cdef double *z64 = <double *> malloc(n_threads * len_z * sizeof(double))
        cdef Py_ssize_t len_z32 = len_z if self.single else 0
        cdef float *z32 = <float *> malloc((n_threads * len_z32 + 1) * sizeof(float))
        cdef double *pw = <double *> malloc(n_threads * (len_p + len_w) * sizeof(double))
        cdef double *rhs = <double *> malloc(n_threads * 2 * len_sm * sizeof(double))
        cdef double *onm = <double *> malloc(n_threads * 2 * len_nm * sizeof(double))
        cdef double *partial = <double *> calloc(n_threads * len_nm, sizeof(double))
        cdef double *clock = <double *> calloc(n_threads * N_PHASES, sizeof(double))
        cdef int failures = 0
        try:
            if (z64 == NULL or z32 == NULL or pw == NULL or rhs == NULL or onm == NULL
                    or partial == NULL or clock == NULL):
                raise MemoryError("could not allocate the per-thread buffers of the sweep")
            for j in prange(C, nogil=True, schedule='static', num_threads=n_threads):
                t = threadid()
                failures += self._block(j, &Wbar[0, 0], &mu_p[0, 0], &U[0, 0], &Wp[0, 0],
                                        &B[0, 0], m, z64 + t * len_z, z32 + t * len_z32,
                                        pw + t * (len_p + len_w), len_p,
                                        rhs + t * 2 * len_sm, len_sm,
                                        onm + t * 2 * len_nm, len_nm,
                                        partial + t * len_nm, clock + t * N_PHASES)
            start = omp_get_wtime()
            for t in range(n_threads):       # fixed order: same sums on every run
                for i in range(len_nm):
                    (&Delta[0, 0])[i] -= partial[t * len_nm + i]
                    (&Obar[0, 0])[i] += inv_c1 * partial[t * len_nm + i]
            self.seconds[T_REDUCE] += omp_get_wtime() - start
            for i in range(N_PHASES - 1):
                for t in range(n_threads):
                    self.seconds[i] += clock[t * N_PHASES + i] / n_threads
        finally:
            free(z64); free(z32); free(pw); free(rhs); free(onm); free(partial); free(clock)
        return failures

    cdef int _block(self, Py_ssize_t j, const double *Wbar, const double *mu_p, double *U,
                    double *Wp, const double *B, Py_ssize_t m_, double *z64, float *z32,
                    double *pw, Py_ssize_t len_p, double *rhs, Py_ssize_t len_sm,
                    double *onm, Py_ssize_t len_nm, double *partial,
                    double *clock) noexcept nogil:
        """Column block j of the sweep (one thread); returns 1 if its factorization failed."""
        cdef Py_ssize_t off = self.offsets[j], k
        cdef int s = <int> (self.offsets[j + 1] - off), n = <int> self.n_rows, m = <int> m_
        cdef int info = 0, kk
        cdef double one = 1.0, zero = 0.0, minus = -1.0
        cdef double *Z
        cdef double *L = <double *> self.factor[j]
        cdef double *r = rhs                    # s x m: right-hand side, then W'_j
        cdef double *u = rhs + len_sm           # s x m: temporary for U_j
        cdef double *o = onm                    # n x m: O'
        cdef double *v = onm + len_nm           # n x m: Woodbury temporary
        cdef double start = omp_get_wtime()
        cdef bint fused

        # r = Wbar_j - mu'_j + U_j (+ Z^T B, fused into the transform when Z is regenerated)
        for k in range(s * m):
            r[k] = Wbar[off * m + k] - mu_p[off * m + k] + U[off * m + k]
        Z = self._z_block(j, z64, z32, pw, len_p, B, r, m, &fused, clock)
        clock[T_TRANSFORM] += omp_get_wtime() - start

        if not self.factored[j]:
            start = omp_get_wtime()
            if self.woodbury[j]:        # L L^T = I + Z Z^T  (n x n)
                dsyrk(b'L', b'T', &n, &s, &one, Z, &s, &zero, L, &n)
                kk = n
            else:                       # L L^T = Z^T Z + I  (s x s)
                dsyrk(b'L', b'N', &s, &n, &one, Z, &s, &zero, L, &s)
                kk = s
            for k in range(kk):
                L[k * kk + k] += 1.0
            dpotrf(b'L', &kk, L, &kk, &info)
            self.factored[j] = 1
            clock[T_FACTOR] += omp_get_wtime() - start
            if info != 0:
                return 1

        if not fused:
            start = omp_get_wtime()
            _add_zt_b_by_tiles(Z, B, r, 0, n, s, m)
            clock[T_PRODUCTS] += omp_get_wtime() - start

        start = omp_get_wtime()
        if self.woodbury[j]:
            # W' = r - Z^T (I + Z Z^T)^-1 Z r
            dgemm(b'N', b'N', &m, &n, &s, &one, r, &m, Z, &s, &zero, v, &m)
            dtrsm(b'R', b'L', b'T', b'N', &m, &n, &one, L, &n, v, &m)
            dtrsm(b'R', b'L', b'N', b'N', &m, &n, &one, L, &n, v, &m)
            dgemm(b'N', b'T', &m, &s, &n, &minus, v, &m, Z, &s, &one, r, &m)
        else:
            # W'^T = r^T L^-T L^-1
            dtrsm(b'R', b'L', b'T', b'N', &m, &s, &one, L, &s, r, &m)
            dtrsm(b'R', b'L', b'N', b'N', &m, &s, &one, L, &s, r, &m)
        memcpy(Wp + off * m, r, s * m * sizeof(double))
        clock[T_SOLVE] += omp_get_wtime() - start

        # O' = Z W'_j, U_j = Z^T O', partial += O'
        start = omp_get_wtime()
        dgemm(b'N', b'N', &m, &n, &s, &one, r, &m, Z, &s, &zero, o, &m)
        if self.woodbury[j]:
            dgemm(b'N', b'T', &m, &s, &n, &one, o, &m, Z, &s, &zero, U + off * m, &m)
        else:
            # U_j = (L L^T - I) W'_j: O(s^2 m) instead of a pass over Z
            memcpy(u, r, s * m * sizeof(double))
            dtrmm(b'R', b'L', b'N', b'N', &m, &s, &one, L, &s, u, &m)
            dtrmm(b'R', b'L', b'T', b'N', &m, &s, &one, L, &s, u, &m)
            for k in range(s * m):
                U[off * m + k] = u[k] - r[k]
        for k in range(n * m):
            partial[k] += o[k]
        clock[T_PRODUCTS] += omp_get_wtime() - start
        return 0

    cdef double *_z_block(self, Py_ssize_t j, double *z64, float *z32, double *pw,
                          Py_ssize_t len_p, const double *B, double *r, Py_ssize_t m_,
                          bint *fused, double *clock) noexcept nogil:
        """Z_ij in float64 (already multiplied by `scale`): the cached block, or T[X_i, j]
        regenerated tile by tile (and cached if so planned).  While a regenerated tile is
        still in cache, r += Z_tile^T B_tile is accumulated (*fused set), which saves a pass
        over Z; the time of those products goes to clock[T_PRODUCTS]."""
        cdef Py_ssize_t s_ = self.offsets[j + 1] - self.offsets[j], n = self.n_rows, k
        cdef Py_ssize_t t, first, stop, n_tiles = (n + TILE_ROWS - 1) // TILE_ROWS
        cdef int s = <int> s_, m = <int> m_, rows
        cdef double one = 1.0, tick
        cdef float *c32
        cdef void *params = self.params[j] if self.params[j] != NULL else <void *> pw
        cdef Rows tile
        fused[0] = False
        if self.zcache[j] != NULL and self.z_filled[j]:
            if not self.single:
                return <double *> self.zcache[j]     # cached already scaled
            c32 = <float *> self.zcache[j]
            for k in range(n * s_):
                z64[k] = self.scale * c32[k]
            return z64
        if self.params[j] == NULL:
            if self.single:
                self.T.make_params_f32(j, <float *> pw)
            else:
                self.T.make_params_f64(j, pw)
        for t in range(n_tiles):
            first = t * TILE_ROWS
            stop = min(n, first + TILE_ROWS)
            rows = <int> (stop - first)
            tile = rows_range(&self.rows, first, stop)
            if self.single:
                self.T.apply_f32(j, <float *> params, &tile, z32 + first * s_, s_,
                                 <float *> (pw + len_p))
                for k in range(first * s_, stop * s_):
                    z64[k] = self.scale * z32[k]
            else:
                self.T.apply_f64(j, <double *> params, &tile, z64 + first * s_, s_,
                                 pw + len_p)
                if self.scale != 1.0:
                    for k in range(first * s_, stop * s_):
                        z64[k] *= self.scale
            tick = omp_get_wtime()
            _add_zt_b_by_tiles(z64, B, r, first, stop, s, m)
            tick = omp_get_wtime() - tick
            clock[T_PRODUCTS] += tick
            clock[T_TRANSFORM] -= tick          # the caller times the whole call
        fused[0] = True
        if self.zcache[j] != NULL:
            if self.single:
                memcpy(self.zcache[j], z32, n * s_ * sizeof(float))
            else:
                memcpy(self.zcache[j], z64, n * s_ * sizeof(double))
            self.z_filled[j] = 1
        return z64


cdef void _add_zt_b_by_tiles(const double *Z, const double *B, double *r, Py_ssize_t first,
                             Py_ssize_t stop, int s, int m) noexcept nogil:
    """r += Z[rows]^T B[rows] for rows first:stop, one GEMM per TILE_ROWS tile.  Cached and
    regenerated blocks both go through here, so the sums, and the model, do not depend on
    the memory budget."""
    cdef Py_ssize_t a, b
    cdef int rows
    cdef double one = 1.0
    a = first
    while a < stop:
        b = min(stop, (a // TILE_ROWS + 1) * TILE_ROWS)
        rows = <int> (b - a)
        dgemm(b'N', b'T', &m, &s, &rows, &one, <double *> B + a * m, &m,
              <double *> Z + a * s, &s, &one, r, &m)
        a = b
