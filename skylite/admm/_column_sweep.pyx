# cython: language_level=3
"""The column sweep of BlockADMM's graph projection for one row block i (docs/engine.md):
for every column block j, in parallel over threads (`prange`, no GIL):

    Z     <- T[X_i, j]                         (cached, or regenerated from (seed, j))
    P     <- Z^T B                             B = [Dbar/(C+1) + nu  |  Dbar/(C+1)]
    W'_j  <- (Z^T Z + I)^-1 [ Wbar_j - mu'_j + U_j + P[:, :m] ]
    O'_j  <- Z W'_j
    U_j   <- a Z^T Z W'_j + (1 - a) (U_j + P[:, m:])        a: the relaxation; the second
                                                              half of B exists only if a != 1
    S     <- S + O'_j                          (in block order: S = sum_j O'_j = Z_i W'_i)

Each thread holds one whole n_i x s_j block; the factors, caches and precision rules are the
block store's (`skylite.admm._column_blocks`).

Bitwise independence of the thread count.  The blocks run in waves of `n_threads`; each block
writes its O'_j to the slot of its position in the wave, and after the wave the slots are
added to S in block order (parallel over rows).  S is therefore the same sum, in the same
order, for any number of threads, and nothing else is shared between blocks.
"""
cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from openmp cimport omp_get_wtime
from scipy.linalg.cython_blas cimport dgemm, dsyrk, dtrsm, sgemm

from skylite.sketch._transform cimport BlockTransform, TILE_ROWS
from skylite._native.narrow cimport sky_narrow_times_f32, sky_narrow_times_f64
from skylite.admm._column_blocks cimport (
    ColumnBlocks, Scratch, Lengths, Buffers, thread_lengths, carve, release, add_zt_b,
    add_gram_f32, factor_plus_identity, padded, transposed_into, right_hand_side, update_u,
    PART_Z, PART_Z64, PART_PARAMS, PART_WORK, PART_P, PART_SOLVE, PART_V, PART_TILE32,
    PART_OUT32, PART_GRAM32, T_TRANSFORM, T_FACTOR, T_PRODUCTS, T_SOLVE, T_REDUCE, FACTOR_ROWS)

cnp.import_array()

# Every buffer of Scratch (the column sweep needs them all; PART_Z only for uncached blocks).
cdef int ALL_PARTS = (PART_Z64 | PART_PARAMS | PART_WORK | PART_P | PART_SOLVE | PART_V
                      | PART_TILE32 | PART_OUT32 | PART_GRAM32)


def sweep_buffer_bytes(BlockTransform transform_op, Py_ssize_t n_rows, Py_ssize_t m,
                       Py_ssize_t k, bint single, int n_threads, bint any_regenerated):
    """What one sweep of `ColumnSweep.sweep` allocates for its threads, in bytes:
    {"parameters": the map parameters of a block, per thread; "blocks": the regenerated
    feature block, per thread; "other": the rest (products, solves, wave slots)}."""
    cdef Lengths L = thread_lengths(transform_op, n_rows, m, k, single,
                                    ALL_PARTS | (PART_Z if any_regenerated else 0))
    return {"parameters": n_threads * L.params * 8,
            "blocks": n_threads * (L.z * L.zsize + L.z64 * 8),
            "other": n_threads * ((L.doubles - L.params) * 8 + L.floats * 4
                                  + n_rows * m * 8)}


cdef class ColumnSweep(ColumnBlocks):
    """The column blocks of one row block, swept one whole block per thread (module
    docstring); see `ColumnBlocks` for the parameters."""

    def sweep(self, double[:, ::1] Wbar, double[:, ::1] mu_p, double[:, ::1] U,
              double[:, ::1] Wp, double[:, ::1] B, double[:, ::1] S, double relax,
              int n_threads):
        """One parallel pass over the column blocks; see the module docstring.

        Wbar, mu_p (mu'), U (updated), Wp (W', written): s x m.  B: n_i x m, or n_i x 2m
        when relax != 1 (its second half is Dbar/(C+1)).  S (written): n_i x m, Z_i W'_i.
        Returns the number of blocks whose factorization failed (non-finite Z).
        """
        cdef Py_ssize_t n = self.n_rows, m = Wbar.shape[1], C = self.n_blocks
        cdef Py_ssize_t k = B.shape[1], smax = self.max_block, j, jj, w0, nb
        cdef Py_ssize_t len_nm = n * m
        cdef bint any_regenerated = False
        cdef double start
        cdef Py_ssize_t s_all = self.T.n_features
        if (Wbar.shape[0] != s_all or mu_p.shape[0] != s_all or U.shape[0] != s_all
                or Wp.shape[0] != s_all or mu_p.shape[1] != m or U.shape[1] != m
                or Wp.shape[1] != m or B.shape[0] != n or S.shape[0] != n
                or S.shape[1] != m):
            raise ValueError("state arrays do not match the column blocks")
        if k != (m if relax == 1.0 else 2 * m):
            raise ValueError(f"B must have {m if relax == 1.0 else 2 * m} columns "
                             f"(relax={relax}), got {k}")
        if not 0.0 < relax < 2.0:
            raise ValueError(f"the relaxation must lie in (0, 2), got {relax}")
        for j in range(C):
            any_regenerated |= self.zcache[j] == NULL or self.bfloat16
        cdef Lengths L = thread_lengths(self.T, n, m, k, self.single,
                                        ALL_PARTS | (PART_Z if any_regenerated else 0))
        cdef Buffers buffers
        # per wave slot: O'_j (n x m)
        cdef double *slots = <double *> malloc(n_threads * len_nm * sizeof(double) + 1)
        cdef bint carved = carve(&buffers, L, n_threads)
        cdef int failures = 0
        try:
            if not carved or slots == NULL:
                raise MemoryError(f"could not allocate the sweep's per-thread buffers "
                                  f"({n_threads} threads, {n} rows, blocks of {smax} "
                                  f"features): use fewer threads, more column blocks or "
                                  f"more row blocks")
            memset(&S[0, 0], 0, len_nm * sizeof(double))
            for w0 in range(0, C, n_threads):
                nb = min(n_threads, C - w0)
                for jj in prange(nb, nogil=True, schedule='static', chunksize=1,
                                 num_threads=nb):
                    failures += self._block(w0 + jj, &Wbar[0, 0], &mu_p[0, 0], &U[0, 0],
                                            &Wp[0, 0], &B[0, 0], m, k, relax,
                                            &buffers.scratch[threadid()],
                                            slots + jj * len_nm)
                start = omp_get_wtime()
                _add_slots_in_order(&S[0, 0], slots, nb, len_nm, n_threads)
                self.seconds[<int> T_REDUCE] += omp_get_wtime() - start
            self._add_clocks(buffers.scratch, n_threads, 0, <int> T_REDUCE)
        finally:
            if carved:
                release(&buffers)
            free(slots)
        return failures

    cdef int _block(self, Py_ssize_t j, const double *Wbar, const double *mu_p, double *U,
                    double *Wp, const double *B, Py_ssize_t m_, Py_ssize_t k_, double relax,
                    Scratch *sc, double *o) noexcept nogil:
        """Column block j of the sweep (one thread); O'_j goes to `o` (n x m).  Returns 1 if
        its factorization failed."""
        cdef Py_ssize_t off = self.offsets[j], a
        cdef int s = <int> (self.offsets[j + 1] - off), n = <int> self.n_rows
        cdef int m = <int> m_, k = <int> k_, info = 0, kk
        cdef double one = 1.0, zero = 0.0, minus = -1.0
        cdef float onef = 1.0, zerof = 0.0
        cdef bint woodbury = self.woodbury[j], fused
        cdef bint f32 = self.single and not woodbury      # products in float32
        cdef double *L = <double *> self.factor[j]
        cdef double *r = sc.r
        cdef double *p = sc.p
        cdef double *u = sc.u
        cdef double *clock = sc.clock
        cdef double start = omp_get_wtime()
        cdef void *Z

        memset(p, 0, s * k * sizeof(double))
        Z = self._z_block(j, sc, B, k, &fused)
        if self.single and woodbury:
            for a in range(<Py_ssize_t> n * s):
                sc.z64[a] = (<float *> Z)[a]
            Z = sc.z64
        clock[<int> T_TRANSFORM] += omp_get_wtime() - start

        if not self.factored[j]:
            start = omp_get_wtime()
            if woodbury:                # L L^T = I + Z Z^T  (n x n)
                dsyrk(b'L', b'T', &n, &s, &one, <double *> Z, &s, &zero, L, &n)
                kk = n
            elif f32:                   # L L^T = Z^T Z + I, float32 chunks into float64
                memset(L, 0, <Py_ssize_t> s * s * sizeof(double))
                a = 0
                while a < n:
                    add_gram_f32(<float *> Z + a * s, <int> min(<Py_ssize_t> FACTOR_ROWS,
                                                                n - a), s, L, sc.g32)
                    a += FACTOR_ROWS
                kk = s
            else:
                dsyrk(b'L', b'N', &s, &n, &one, <double *> Z, &s, &zero, L, &s)
                kk = s
            info = factor_plus_identity(L, kk)
            self.factored[j] = 1
            clock[<int> T_FACTOR] += omp_get_wtime() - start
            if info != 0:
                return 1

        start = omp_get_wtime()
        if not fused:
            add_zt_b(Z, f32, self.narrow and not woodbury, B, p, 0, n, s, k, sc)
        clock[<int> T_PRODUCTS] += omp_get_wtime() - start

        if not woodbury:
            self._solve_factored(j, Wbar, mu_p, U, Wp, p, m, k, relax, sc)
            # O'_j = Z W'_j (W'_j is left in sc.r)
            start = omp_get_wtime()
            if f32 and self.narrow:                 # the kernels take W'_j^T
                transposed_into(r, s, m, sc.w32, padded(s))
                sky_narrow_times_f32(n, s, <float *> Z, s, sc.w32, padded(s), m, sc.o32)
            elif f32:
                for a in range(s * m):
                    sc.w32[a] = <float> r[a]
                sgemm(b'N', b'N', &m, &n, &s, &onef, sc.w32, &m, <float *> Z, &s, &zerof,
                      sc.o32, &m)
            if f32:
                for a in range(<Py_ssize_t> n * m):
                    o[a] = sc.o32[a]
            elif self.narrow:
                transposed_into(r, s, m, sc.w64, padded(s))
                sky_narrow_times_f64(n, s, <double *> Z, s, sc.w64, padded(s), m, o)
            else:
                dgemm(b'N', b'N', &m, &n, &s, &one, r, &m, <double *> Z, &s, &zero, o, &m)
            clock[<int> T_PRODUCTS] += omp_get_wtime() - start
            return 0

        # Woodbury: r = Wbar_j - mu'_j + U_j + (Z^T B)_j, W' = r - Z^T (I + Z Z^T)^-1 Z r
        start = omp_get_wtime()
        right_hand_side(r, Wbar, mu_p, U, p, off, s, m, k)
        dgemm(b'N', b'N', &m, &n, &s, &one, r, &m, <double *> Z, &s, &zero, sc.v, &m)
        dtrsm(b'R', b'L', b'T', b'N', &m, &n, &one, L, &n, sc.v, &m)
        dtrsm(b'R', b'L', b'N', b'N', &m, &n, &one, L, &n, sc.v, &m)
        dgemm(b'N', b'T', &m, &s, &n, &minus, sc.v, &m, <double *> Z, &s, &one, r, &m)
        memcpy(Wp + off * m, r, s * m * sizeof(double))
        clock[<int> T_SOLVE] += omp_get_wtime() - start
        # O'_j = Z W'_j and u = Z^T Z W'_j = Z^T O'_j
        start = omp_get_wtime()
        dgemm(b'N', b'N', &m, &n, &s, &one, r, &m, <double *> Z, &s, &zero, o, &m)
        dgemm(b'N', b'T', &m, &s, &n, &one, o, &m, <double *> Z, &s, &zero, u, &m)
        update_u(U, u, p, off, s, m, k, relax)
        clock[<int> T_PRODUCTS] += omp_get_wtime() - start
        return 0

    cdef void *_z_block(self, Py_ssize_t j, Scratch *sc, const double *B, Py_ssize_t k_,
                        bint *fused) noexcept nogil:
        """Z_ij (already multiplied by `scale`) in the transform's precision: the cached
        block (a bfloat16 one decoded into the thread's buffer), or T[X_i, j] regenerated
        tile by tile into the cache (if so planned; bfloat16 caches take each tile's 16 bits
        from the thread's buffer) or the thread's buffer.  While a regenerated tile is still
        in cache, P += Z_tile^T B_tile is accumulated (*fused set), which saves a pass over
        Z; that time goes to T_PRODUCTS."""
        cdef Py_ssize_t s = self.offsets[j + 1] - self.offsets[j], n = self.n_rows
        cdef Py_ssize_t t, first, stop, n_tiles = (n + TILE_ROWS - 1) // TILE_ROWS
        cdef Py_ssize_t zsize = 4 if self.single else 8
        cdef bint f32 = self.single and not self.woodbury[j]
        cdef bint cached = self.zcache[j] != NULL
        cdef void *params = self.params[j] if self.params[j] != NULL else <void *> sc.params
        cdef void *dest = self.zcache[j] if (cached and not self.bfloat16) else sc.z
        cdef double tick
        fused[0] = False
        if cached and self.z_filled[j]:
            if self.bfloat16:
                self._load16(j, 0, n, <float *> sc.z, s)
                return sc.z
            return self.zcache[j]
        if self.params[j] == NULL:
            if self.single:
                self.T.make_params_f32(j, <float *> sc.params)
            else:
                self.T.make_params_f64(j, sc.params)
        fused[0] = not (self.single and self.woodbury[j])
        for t in range(n_tiles):
            first = t * TILE_ROWS
            stop = min(n, first + TILE_ROWS)
            self._generate(j, params, first, stop, <char *> dest + first * s * zsize, s, sc)
            if cached and self.bfloat16:
                self._store16(j, first, stop, <float *> dest + first * s, s)
            if fused[0]:
                tick = omp_get_wtime()
                add_zt_b(dest, f32, self.narrow and not self.woodbury[j], B, sc.p, first, stop,
                         <int> s, <int> k_, sc)
                tick = omp_get_wtime() - tick
                sc.clock[<int> T_PRODUCTS] += tick
                sc.clock[<int> T_TRANSFORM] -= tick      # the caller times the whole call
        if cached:
            self.z_filled[j] = 1
        return dest


cdef void _add_slots_in_order(double *S, const double *slots, Py_ssize_t nb,
                              Py_ssize_t size, int n_threads) noexcept nogil:
    """S += slot_0 + slot_1 + ... + slot_{nb-1}, added in that order for every entry
    (parallel over entries, so the result does not depend on the thread count)."""
    cdef Py_ssize_t e, q, chunk = 4096
    cdef Py_ssize_t n_chunks = (size + chunk - 1) // chunk, c, stop
    for c in prange(n_chunks, nogil=True, schedule='static', num_threads=n_threads):
        stop = min(size, (c + 1) * chunk)
        for q in range(nb):
            for e in range(c * chunk, stop):
                S[e] += slots[q * size + e]
