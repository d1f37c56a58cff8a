# cython: language_level=3
"""The row sweep of BlockADMM's graph projection for one row block i (docs/engine.md, "Two
ways through Z"), used when every block has s_j <= n_i: `solve` every block from
G = Z_i^T B (carried from the previous iteration; `factor_and_project` makes it, with the
factors, at the start and after Anderson moves the state), then `row_sweep`, one pass over
tiles of rows that computes S = Z_i W'_i and the next G from the same tile of every
block.  It holds no n_i x s_j block.  `Iteration._row_sweep` (skylite/admm/iteration.py) says
why that is the same step as the column sweep's; the factors, caches and precision rules are
the block store's (`skylite.admm._column_blocks`).
"""
cimport numpy as cnp
from cython.parallel cimport parallel, prange, threadid
from libc.stdint cimport uint16_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from openmp cimport omp_get_num_threads, omp_get_wtime
from scipy.linalg.cython_blas cimport dgemm, dsyrk, sgemm

from skylite._native.omp cimport sky_omp_barrier
from skylite._native.narrow cimport (
    sky_narrow_times_f32, sky_narrow_times_bf16, sky_narrow_times_f64, sky_narrow_t_times_f32,
    sky_narrow_t_times_bf16, sky_narrow_t_times_f64)
from skylite.sketch._transform cimport BlockTransform, TILE_ROWS
from skylite.admm._column_blocks cimport (
    ColumnBlocks, Scratch, Lengths, Buffers, thread_lengths, carve, release, add_zt_b,
    add_gram_f32, factor_plus_identity, padded, aligned, transposed_into, add_transposed,
    product_rows, ALIGN, PART_Z, PART_PARAMS, PART_WORK, PART_SOLVE, PART_TILE32, PART_GRAM32,
    T_TRANSFORM, T_FACTOR, T_PRODUCTS, T_SOLVE, T_REDUCE, N_PHASES, FACTOR_ROWS, SUM_ROWS)

cnp.import_array()

# Rows per tile of the row sweep, at most: the transform's own tile, so that the row sweep
# transforms the same row ranges as the block caches are filled with (BLAS may round a
# row's product differently with the number of rows in the call, as OpenBLAS's sgemm does on
# AMD EPYC, and a cached block must equal a regenerated one).  A sweep that regenerates no
# block, or whose map computes row by row (Fastfood), takes tiles of SUM_ROWS rows instead:
# a tile of every block (SUM_ROWS x s features, 16 MiB in float32 at s = 16384) then stays
# in the 32 MiB L3 cache between Z W' and Z^T B (at 512 rows, 32 MiB, a Fastfood iteration
# at 60,000 rows took 0.78 and 0.92 s against 0.76 and 0.83 s).  The product calls are the
# same either way (`product_rows`).
cdef enum:
    ROW_TILE = TILE_ROWS


cdef inline Py_ssize_t wt_start(Py_ssize_t off, Py_ssize_t j, Py_ssize_t m) noexcept nogil:
    """Where block j (first feature `off`) starts in the narrow kernels' W'^T buffer: a
    multiple of 16 floats, with room for m x padded(s_j) before the next block's start."""
    return padded(m * off + 16 * (m + 1) * j)


cdef inline Py_ssize_t wt_length(Py_ssize_t s_all, Py_ssize_t n_blocks,
                                 Py_ssize_t m) noexcept nogil:
    """Floats of the W'^T buffer for n_blocks blocks of s_all features (`wt_start`)."""
    return m * s_all + 16 * (m + 1) * n_blocks


cdef inline Py_ssize_t regenerating_tile_rows(BlockTransform T) noexcept nogil:
    """Rows per tile of a sweep that regenerates blocks of T (ROW_TILE)."""
    return SUM_ROWS if T.row_by_row else ROW_TILE


# The threads' buffers of each pass (`thread_lengths`): the factorization's, the solve's,
# and the pass over the rows' (whose tiles, below, all threads share; PART_TILE32 gives its
# float64 kernels their Z_tj^T B_t).
cdef int FACTOR_PARTS = PART_Z | PART_PARAMS | PART_WORK | PART_TILE32 | PART_GRAM32
cdef int SOLVE_PARTS = PART_SOLVE
cdef int ROW_PASS_PARTS = PART_WORK | PART_TILE32


ctypedef struct RowPass:
    # The buffers of one pass over the rows, shared by the threads (each block writes its
    # own part of the tile and slots, each thread its own B_t).
    char *tile          # a step x s_j tile of every uncached block, one after another
    double *slots       # 2 x C x ROW_TILE x m: each block's Z_tj W'_j, by tile parity
    double *bt          # T x ROW_TILE x k: each thread's B_t
    float *b32          # T x ROW_TILE x k: each thread's B_t in float32
    float *w32          # s x m: W' in float32 (`narrow`: each block's W'_j^T, `wt_start`)
    double *w64         # float64 blocks with `narrow`: each block's W'_j^T (`wt_start`)
    float *p32          # s x k: each block's Z_tj^T B_t in float32 (`narrow`: transposed)
    float *o32          # C x ROW_TILE x m: each block's Z_tj W'_j in float32
    bint narrow         # products by skylite_narrow.c's kernels, not BLAS
    Py_ssize_t step     # rows per tile, ROW_TILE or SUM_ROWS (see ROW_TILE)
    double *gt          # `narrow`: each block's G_j^T (k x s_j), moved to G after the pass


def row_sweep_buffer_bytes(BlockTransform transform_op, Py_ssize_t n_rows, Py_ssize_t m,
                           Py_ssize_t k, bint single, int n_threads):
    """What the row sweep keeps and allocates, in bytes (the larger of its two passes,
    `factor_and_project` and `row_sweep`): {"parameters": every block's map parameters,
    kept for the run; "blocks": the feature tiles; "other": the rest}."""
    cdef Py_ssize_t j, C = transform_op.n_blocks, s_all = transform_op.n_features
    cdef Py_ssize_t chunk = min(n_rows, <Py_ssize_t> FACTOR_ROWS)
    cdef Lengths F = thread_lengths(transform_op, chunk, 0, k, single, FACTOR_PARTS, n_rows)
    cdef Lengths R = thread_lengths(transform_op, ROW_TILE, m, k, single, ROW_PASS_PARTS,
                                    n_rows)
    cdef Py_ssize_t params = 0, team = min(<Py_ssize_t> n_threads, C)
    for j in range(C):
        params += transform_op.param_size(j)
    factor_pass = {"blocks": n_threads * F.z * F.zsize,
                   "other": n_threads * (8 * F.doubles + 4 * F.floats)}
    row_pass = {"blocks": regenerating_tile_rows(transform_op) * s_all * R.zsize,
                "other": (8 * (2 * C * ROW_TILE * m + (ROW_TILE * k + R.doubles) * team
                               + s_all * k)
                          + 4 * (ROW_TILE * k * team + s_all * k + C * ROW_TILE * m
                                 + R.floats * team)
                          + R.zsize * wt_length(s_all, C, m))}
    return {"parameters": params * R.zsize,
            "blocks": max(factor_pass["blocks"], row_pass["blocks"]),
            "other": max(factor_pass["other"], row_pass["other"])}


cdef class RowSweep(ColumnBlocks):
    """The column blocks of one row block, swept by tiles of rows (module docstring); see
    `ColumnBlocks` for the parameters."""

    @property
    def row_sweep_possible(self):
        """True when every block is factored as Z^T Z + I (n_i >= s_j) and has its map
        parameters or its Z cached, which the row sweep needs."""
        cdef Py_ssize_t j
        for j in range(self.n_blocks):
            if self.woodbury[j] or (self.params[j] == NULL and self.zcache[j] == NULL):
                return False
        return True

    def _require_row_sweep(self):
        if not self.row_sweep_possible:
            raise ValueError("the row sweep needs every block factored as Z^T Z + I "
                             "(n_i >= s_j) and every block's parameters or Z kept")

    def factor_and_project(self, double[:, ::1] B, double[:, ::1] G, bint project,
                           int n_threads):
        """Factor every block not yet factored (L L^T = Z^T Z + I, accumulated over chunks
        of FACTOR_ROWS rows) and, if `project`, G = Z_i^T B (s x k), one pass over each
        block in parallel over blocks; planned Z caches are filled on the way.

        B: n_i x k.  Returns the number of blocks whose factorization failed."""
        cdef Py_ssize_t n = self.n_rows, k = B.shape[1], i
        cdef Py_ssize_t C = self.n_blocks, chunk = min(n, <Py_ssize_t> FACTOR_ROWS)
        if B.shape[0] != n or G.shape[1] != k or G.shape[0] != self.T.n_features:
            raise ValueError("B and G do not match the column blocks")
        self._require_row_sweep()
        cdef Lengths L = thread_lengths(self.T, chunk, 0, k, self.single, FACTOR_PARTS, n)
        cdef Buffers buffers
        cdef int failures = 0
        if not carve(&buffers, L, n_threads):
            raise MemoryError("could not allocate the factorization's per-thread buffers")
        try:
            for i in prange(C, nogil=True, schedule='dynamic', chunksize=1,
                            num_threads=min(n_threads, C)):
                failures += self._factor_project_block(i, &B[0, 0], &G[0, 0], k, project,
                                                       &buffers.scratch[threadid()])
            self._add_clocks(buffers.scratch, n_threads, 0, <int> N_PHASES)
        finally:
            release(&buffers)
        return failures

    cdef int _factor_project_block(self, Py_ssize_t j, const double *B, double *G,
                                   Py_ssize_t k_, bint project, Scratch *sc) noexcept nogil:
        """Block j of `factor_and_project` (one thread).  Returns 1 if its factorization
        failed."""
        cdef Py_ssize_t off = self.offsets[j], n = self.n_rows, first, stop, a
        cdef int s = <int> (self.offsets[j + 1] - off), k = <int> k_, info = 0, rows
        cdef bint factor = not self.factored[j], cached = self.zcache[j] != NULL
        cdef double one = 1.0
        cdef double *L = <double *> self.factor[j]
        cdef double *p = G + off * k
        cdef double start
        cdef void *Z
        cdef void *params = self.params[j]
        if not factor and not project:
            return 0
        if params == NULL and not (cached and self.z_filled[j]):
            params = sc.params
            if self.single:
                self.T.make_params_f32(j, <float *> params)
            else:
                self.T.make_params_f64(j, <double *> params)
        if factor:
            memset(L, 0, <Py_ssize_t> s * s * sizeof(double))
        if project:
            memset(p, 0, <Py_ssize_t> s * k * sizeof(double))
        first = 0
        while first < n:
            stop = min(n, first + FACTOR_ROWS)
            rows = <int> (stop - first)
            start = omp_get_wtime()
            if cached and not self.bfloat16:
                Z = self._cache_rows(j, first)
                if not self.z_filled[j]:
                    self._generate(j, params, first, stop, Z, s, sc)
            elif cached and self.z_filled[j]:
                Z = sc.z
                self._load16(j, first, stop, <float *> Z, s)
            else:
                Z = sc.z
                self._generate(j, params, first, stop, Z, s, sc)
                if cached:
                    self._store16(j, first, stop, <float *> Z, s)
            sc.clock[<int> T_TRANSFORM] += omp_get_wtime() - start
            start = omp_get_wtime()
            if factor:
                if self.single:
                    add_gram_f32(<float *> Z, rows, s, L, sc.g32)
                else:
                    dsyrk(b'L', b'N', &s, &rows, &one, <double *> Z, &s, &one, L, &s)
            sc.clock[<int> T_FACTOR] += omp_get_wtime() - start
            start = omp_get_wtime()
            if project:
                add_zt_b(Z, self.single, self.narrow, B + first * k, p, 0, rows, s, k, sc)
            sc.clock[<int> T_PRODUCTS] += omp_get_wtime() - start
            first = stop
        if cached:
            self.z_filled[j] = 1
        if factor:
            start = omp_get_wtime()
            info = factor_plus_identity(L, s)
            self.factored[j] = 1
            sc.clock[<int> T_FACTOR] += omp_get_wtime() - start
        return info != 0

    def solve(self, double[:, ::1] Wbar, double[:, ::1] mu_p, double[:, ::1] U,
              double[:, ::1] Wp, double[:, ::1] G, double relax, int n_threads):
        """W'_j = (Z^T Z + I)^-1 [Wbar_j - mu'_j + U_j + G_j[:, :m]] and U_j <- relax Z^T Z
        W'_j + (1 - relax)(U_j + G_j[:, m:]) for every block, in parallel over blocks, from
        G = Z_i^T B (s x k) and the factors: no pass over Z."""
        cdef Py_ssize_t m = Wbar.shape[1], k = G.shape[1], s_all = self.T.n_features, i
        cdef Py_ssize_t C = self.n_blocks
        if (Wbar.shape[0] != s_all or mu_p.shape[0] != s_all or U.shape[0] != s_all
                or Wp.shape[0] != s_all or G.shape[0] != s_all or mu_p.shape[1] != m
                or U.shape[1] != m or Wp.shape[1] != m
                or k != (m if relax == 1.0 else 2 * m)):
            raise ValueError("state arrays do not match the column blocks")
        if not self.factored_all:
            raise ValueError("solve needs every block's factor: run factor_and_project first")
        cdef Lengths L = thread_lengths(self.T, 0, m, k, self.single, SOLVE_PARTS)
        cdef Buffers buffers
        if not carve(&buffers, L, n_threads):
            raise MemoryError("could not allocate the solve's per-thread buffers")
        try:
            for i in prange(C, nogil=True, schedule='dynamic', chunksize=1,
                            num_threads=min(n_threads, C)):
                self._solve_factored(i, &Wbar[0, 0], &mu_p[0, 0], &U[0, 0], &Wp[0, 0],
                                     &G[0, 0] + self.offsets[i] * k, <int> m, <int> k, relax,
                                     &buffers.scratch[threadid()])
            self._add_clocks(buffers.scratch, n_threads, <int> T_SOLVE, <int> T_SOLVE + 1)
        finally:
            release(&buffers)

    def row_sweep(self, double[:, ::1] Wp, double[:, ::1] E, double[::1] coefs,
                  double[:, ::1] S, double[:, ::1] G, int n_threads):
        """One pass over the rows, a tile of rows at a time (`RowPass.step`):

            S_t <- sum_j Z_tj W'_j                 (block order)
            B_t <- E_t + [coefs[0] S_t | coefs[1] S_t | ...]
            G_j <- G_j + Z_tj^T B_t                (tile order, per block)

        so that S = Z_i W'_i and G = Z_i^T (E + S coefs) come from one transform of each
        tile, read while it is in cache.  Block j belongs to thread j mod T for the whole
        pass; S sums the blocks and G_j the tiles in a fixed order, so the result does not
        depend on the thread count.  Wp: s x m; E: n_i x k; coefs: k/m values; S
        (written): n_i x m; G (written): s x k.

        The threads meet once per tile, inside one parallel region (`_sweep_tiles`): with a
        region per half-tile, passive waiting (skylite's default) woke a sleeping thread
        four times per tile, and an iteration on 240,000 rows took 1.29 s instead of 0.99 s
        (docs/engine.md, "Threads on a busy machine")."""
        cdef Py_ssize_t n = self.n_rows, m = Wp.shape[1], k = E.shape[1], C = self.n_blocks
        cdef Py_ssize_t s_all = self.T.n_features, h = k // m, a
        if (Wp.shape[0] != s_all or G.shape[0] != s_all or G.shape[1] != k
                or E.shape[0] != n or S.shape[0] != n or S.shape[1] != m
                or k not in (m, 2 * m) or coefs.shape[0] != h):
            raise ValueError("state arrays do not match the column blocks")
        self._require_row_sweep()
        cdef int T = <int> min(<Py_ssize_t> n_threads, C)
        cdef Lengths L = thread_lengths(self.T, ROW_TILE, m, k, self.single, ROW_PASS_PARTS,
                                        self.n_rows)
        cdef Py_ssize_t len_slots = C * ROW_TILE * m
        cdef RowPass rp
        cdef Buffers buffers
        cdef bint carved = carve(&buffers, L, T)
        cdef Py_ssize_t len_wt = wt_length(s_all, C, m)
        cdef Py_ssize_t step = SUM_ROWS
        for a in range(C):
            if self.zcache[a] == NULL:
                step = regenerating_tile_rows(self.T)
        cdef void *tile_memory = malloc(step * s_all * L.zsize + ALIGN)
        cdef void *wt_memory = malloc(len_wt * L.zsize + ALIGN)
        cdef void *float_memory = malloc((T * ROW_TILE * k + s_all * k + len_slots)
                                         * sizeof(float))
        rp.slots = <double *> malloc((2 * len_slots + T * ROW_TILE * k + s_all * k)
                                     * sizeof(double))
        try:
            if (not carved or tile_memory == NULL or rp.slots == NULL
                    or wt_memory == NULL or float_memory == NULL):
                raise MemoryError("could not allocate the row sweep's buffers")
            rp.tile = <char *> aligned(tile_memory)
            rp.bt = rp.slots + 2 * len_slots
            rp.gt = rp.bt + T * ROW_TILE * k
            rp.w32 = <float *> aligned(wt_memory)
            rp.w64 = <double *> aligned(wt_memory)
            rp.b32 = <float *> float_memory
            rp.p32 = rp.b32 + T * ROW_TILE * k
            rp.o32 = rp.p32 + s_all * k
            rp.narrow = self.narrow
            rp.step = step
            if rp.narrow:
                self._blocks_transposed(&Wp[0, 0], m, aligned(wt_memory))
            elif self.single:
                for a in range(s_all * m):
                    rp.w32[a] = <float> Wp[a // m, a % m]
            G[...] = 0.0
            if rp.narrow:
                memset(rp.gt, 0, s_all * k * sizeof(double))
            with nogil:
                self._sweep_tiles(&Wp[0, 0], &E[0, 0], &coefs[0], &S[0, 0], &G[0, 0], m, k,
                                  &rp, buffers.scratch, T)
                if rp.narrow:
                    self._add_blocks_transposed(rp.gt, &G[0, 0], k)
            self._add_clocks(buffers.scratch, T, 0, <int> N_PHASES)
        finally:
            if carved:
                release(&buffers)
            free(tile_memory); free(rp.slots); free(wt_memory); free(float_memory)

    cdef void _sweep_tiles(self, const double *Wp, const double *E, const double *coefs,
                           double *S, double *G, Py_ssize_t m, Py_ssize_t k, RowPass *rp,
                           Scratch *scratch, int n_threads) noexcept nogil:
        """`row_sweep`'s pass, in one parallel region.  Per tile, each thread makes the
        slots Z_tj W'_j of its blocks, waits at the barrier for everyone's, sums them into
        its own B_t (thread 0 also writes S_t), and adds Z_tj^T B_t to its blocks' G_j.
        The slots alternate between two buffers by tile parity: a thread that has moved on
        to tile t + 1 writes the other buffer while the rest still read tile t's, and none
        can reach tile t + 2 before all have left tile t (the barrier of tile t + 1)."""
        cdef Py_ssize_t n = self.n_rows, C = self.n_blocks, len_slots = C * ROW_TILE * m
        cdef Py_ssize_t first, rows, j, parity
        cdef int tid, team
        cdef double *slots
        cdef double start
        with parallel(num_threads=n_threads):
            tid = threadid()
            team = omp_get_num_threads()
            first = 0
            parity = 0
            while first < n:
                rows = min(rp.step, n - first)
                slots = rp.slots + parity * len_slots
                j = tid
                while j < C:
                    self._tile_outputs(j, first, rows, Wp, m, slots, rp, &scratch[tid])
                    j = j + team
                sky_omp_barrier()
                start = omp_get_wtime()
                self._tile_inputs(first, rows, E, coefs, S if tid == 0 else NULL, m, k,
                                  slots, rp.bt + tid * ROW_TILE * k,
                                  rp.b32 + tid * ROW_TILE * k)
                scratch[tid].clock[<int> T_REDUCE] += omp_get_wtime() - start
                # the thread's blocks in reverse: the last ones made are still in cache
                j = tid + (C - 1 - tid) // team * team
                while j >= tid:
                    self._tile_gradient(j, first, rows, G, k, rp.bt + tid * ROW_TILE * k,
                                        rp.b32 + tid * ROW_TILE * k, rp, &scratch[tid])
                    j = j - team
                first = first + rows
                parity = 1 - parity

    cdef void _add_blocks_transposed(self, const double *gt, double *G,
                                     Py_ssize_t k) noexcept nogil:
        """G += the blocks' G_j^T (k x s_j each, one after another) transposed."""
        cdef Py_ssize_t j, off
        for j in range(self.n_blocks):
            off = self.offsets[j]
            add_transposed(gt + off * k, self.offsets[j + 1] - off, k, G + off * k)

    cdef void _blocks_transposed(self, const double *Wp, Py_ssize_t m,
                                 void *wt) noexcept nogil:
        """wt <- W' in the blocks' precision, block by block transposed as the narrow
        kernels take it: block j's W'_j (s_j x m) becomes W'_j^T (m x s_j, leading dimension
        padded(s_j)) at wt_start(offset_j, j, m)."""
        cdef Py_ssize_t j, off, s, start
        for j in range(self.n_blocks):
            off = self.offsets[j]
            s = self.offsets[j + 1] - off
            start = wt_start(off, j, m)
            if self.single:
                transposed_into(Wp + off * m, s, m, <float *> wt + start, padded(s))
            else:
                transposed_into(Wp + off * m, s, m, <double *> wt + start, padded(s))

    cdef void _tile_inputs(self, Py_ssize_t first, Py_ssize_t rows, const double *E,
                           const double *coefs, double *S, Py_ssize_t m, Py_ssize_t k,
                           const double *slots, double *bt, float *b32) noexcept nogil:
        """S_t = sum_j slot_j (blocks in order; written only if S is not NULL) and
        B_t = E_t + [coefs[0] S_t | ...], in float64 and float32: ROW_TILE x m x C
        additions, which every thread does for itself rather than wait for one.  The sum
        runs block by block over contiguous slots, into B_t's first m columns; each value is
        still 0 + slot_0 + slot_1 + ... in block order.  (Summing each value over the blocks
        in turn strides across the slots: 7-10 ms of a 140 ms iteration at 60,000 rows and
        16 blocks, against 3 ms.)"""
        cdef Py_ssize_t a, c, q, h = k // m, C = self.n_blocks
        cdef const double *slot
        cdef double *row
        cdef double total
        for a in range(rows):
            row = bt + a * k
            for c in range(m):
                row[c] = 0.0
        for q in range(C):
            slot = slots + q * ROW_TILE * m
            for a in range(rows):
                row = bt + a * k
                for c in range(m):
                    row[c] += slot[a * m + c]
        for a in range(rows):
            row = bt + a * k
            for c in range(m):
                total = row[c]
                if S != NULL:
                    S[(first + a) * m + c] = total
                for q in range(h):
                    row[q * m + c] = E[(first + a) * k + q * m + c] + coefs[q] * total
                    b32[a * k + q * m + c] = <float> row[q * m + c]

    cdef void *_tile_z(self, Py_ssize_t j, Py_ssize_t first, RowPass *rp,
                       int *ld) noexcept nogil:
        """Where the tile's rows from `first` of block j are: in its cache (a bfloat16 one
        only for the narrow kernels, which decode it in registers), or in its part of the
        shared tile (regenerated, or decoded from a bfloat16 cache); ld s_j either way.
        The tile holds each block's step x s_j rows contiguously: with the blocks side by
        side (ld s), rows 64 KiB apart at s = 16384 fall into the same cache sets and the
        products run about a third slower."""
        cdef Py_ssize_t off = self.offsets[j], s = self.offsets[j + 1] - off
        ld[0] = <int> s
        if self.zcache[j] != NULL and (rp.narrow or not self.bfloat16):
            return self._cache_rows(j, first)      # bfloat16 here only with `narrow`
        return rp.tile + off * rp.step * (4 if self.single else 8)

    cdef void _tile_outputs(self, Py_ssize_t j, Py_ssize_t first, Py_ssize_t rows_,
                            const double *Wp, Py_ssize_t m_, double *slots,
                            RowPass *rp, Scratch *sc) noexcept nogil:
        """The first half of a tile for block j: Z_tj (regenerated unless cached, decoded if
        cached in bfloat16 and the narrow kernels do not run) and its slot Z_tj W'_j (rows x
        m, float64)."""
        cdef Py_ssize_t off = self.offsets[j], a
        cdef int s = <int> (self.offsets[j + 1] - off), m = <int> m_, rows = <int> rows_, ld
        cdef int first_row, part
        cdef double one = 1.0, zero = 0.0
        cdef float onef = 1.0, zerof = 0.0
        cdef double *slot = slots + j * ROW_TILE * m
        cdef float *o32 = rp.o32 + j * ROW_TILE * m
        cdef double start = omp_get_wtime()
        cdef void *Z = self._tile_z(j, first, rp, &ld)
        cdef bint bf16_cache = self.zcache[j] != NULL and self.bfloat16
        if self.zcache[j] == NULL:
            self._generate(j, self.params[j], first, first + rows, Z, ld, sc)
        elif self.bfloat16 and not rp.narrow:
            self._load16(j, first, first + rows, <float *> Z, ld)
        sc.clock[<int> T_TRANSFORM] += omp_get_wtime() - start
        start = omp_get_wtime()
        if rp.narrow and bf16_cache:
            sky_narrow_times_bf16(rows, s, <const uint16_t *> Z, ld, rp.w32 + wt_start(off, j, m),
                                  padded(s), m, o32)
        elif rp.narrow and self.single:
            sky_narrow_times_f32(rows, s, <const float *> Z, ld, rp.w32 + wt_start(off, j, m),
                                 padded(s), m, o32)
        elif rp.narrow:
            sky_narrow_times_f64(rows, s, <const double *> Z, ld,
                                 rp.w64 + wt_start(off, j, m), padded(s), m, slot)
        else:
            first_row = 0
            while first_row < rows:
                part = product_rows(first_row, rows, s, True)
                if self.single:
                    sgemm(b'N', b'N', &m, &part, &s, &onef, rp.w32 + off * m, &m,
                          <float *> Z + first_row * ld, &ld, &zerof, o32 + first_row * m, &m)
                else:
                    dgemm(b'N', b'N', &m, &part, &s, &one, Wp + off * m, &m,
                          <double *> Z + first_row * ld, &ld, &zero, slot + first_row * m, &m)
                first_row += part
        if self.single:
            for a in range(rows * m):
                slot[a] = o32[a]
        sc.clock[<int> T_PRODUCTS] += omp_get_wtime() - start

    cdef void _tile_gradient(self, Py_ssize_t j, Py_ssize_t first, Py_ssize_t rows_,
                             double *G, Py_ssize_t k_, const double *bt,
                             const float *b32, RowPass *rp, Scratch *sc) noexcept nogil:
        """The second half of a tile for block j: G_j += Z_tj^T B_t (float32 tiles: the
        narrow kernel or sgemm with the thread's B_t in float32, the result added in
        float64)."""
        cdef Py_ssize_t off = self.offsets[j], a
        cdef int s = <int> (self.offsets[j + 1] - off), k = <int> k_, rows = <int> rows_, ld
        cdef int first_row, part
        cdef double one = 1.0
        cdef float onef = 1.0, zerof = 0.0
        cdef float *p32 = rp.p32 + off * k
        cdef double *p = G + off * k
        cdef double *gt = rp.gt + off * k
        cdef double start = omp_get_wtime()
        cdef void *Z = self._tile_z(j, first, rp, &ld)
        first_row = 0
        if rp.narrow and self.single:      # G_j^T += (Z_tj^T B_t)^T, transposed after the pass
            while first_row < rows:
                part = product_rows(first_row, rows, s, False)
                if self.zcache[j] != NULL and self.bfloat16:
                    sky_narrow_t_times_bf16(part, s, <const uint16_t *> Z + first_row * ld, ld,
                                            b32 + first_row * k, k, p32)
                else:
                    sky_narrow_t_times_f32(part, s, <const float *> Z + first_row * ld, ld,
                                           b32 + first_row * k, k, p32)
                for a in range(s * k):
                    gt[a] += p32[a]
                first_row += part
        elif rp.narrow:
            while first_row < rows:
                part = product_rows(first_row, rows, s, False)
                sky_narrow_t_times_f64(part, s, <const double *> Z + first_row * ld, ld,
                                       bt + first_row * k, k, sc.pt64)
                for a in range(s * k):
                    gt[a] += sc.pt64[a]
                first_row += part
        else:
            while first_row < rows:
                part = product_rows(first_row, rows, s, True)
                if self.single:
                    sgemm(b'N', b'T', &k, &s, &part, &onef, <float *> b32 + first_row * k, &k,
                          <float *> Z + first_row * ld, &ld, &zerof, p32, &k)
                    for a in range(s * k):
                        p[a] += p32[a]
                else:
                    dgemm(b'N', b'T', &k, &s, &part, &one, <double *> bt + first_row * k, &k,
                          <double *> Z + first_row * ld, &ld, &one, p, &k)
                first_row += part
        sc.clock[<int> T_PRODUCTS] += omp_get_wtime() - start
