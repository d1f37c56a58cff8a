# The block store of one row block X_i (docs/engine.md): what the two sweeps over its column
# blocks share.  `ColumnBlocks` keeps, per column block j, the graph-projection factor, the
# cached Z_ij or map parameters the memory plan allows, and regenerates Z_ij from (seed, j);
# the sweeps are its subclasses, one file each: `_column_sweep.ColumnSweep` (one whole block
# per thread) and `_row_sweep.RowSweep` (one pass over tiles of rows).  Per-thread scratch
# sizes come from one formula (`thread_lengths`) and are carved in one place (`carve`).
cimport numpy as cnp

from skylite.sketch._transform cimport BlockTransform, Rows

# Phases timed by the sweeps, in the order of `ColumnBlocks.seconds` (PHASES names them).
cdef enum Phase:
    T_TRANSFORM
    T_FACTOR
    T_PRODUCTS
    T_SOLVE
    T_REDUCE
    N_PHASES

# FACTOR_ROWS: rows per float32 ssyrk product whose result is added to the float64 factor.
# SUM_ROWS: rows per Z^T B partial sum (float32 for float32 blocks) added into float64, from
# row 0 or a multiple of SUM_ROWS, in every pass; a divisor of TILE_ROWS and FACTOR_ROWS.
cdef enum:
    FACTOR_ROWS = 2048
    SUM_ROWS = 256

ctypedef struct Scratch:
    # One thread's buffers (sizes for the widest block, s_max; `thread_lengths`).
    void *z             # n x s_max block in the transform's precision (uncached blocks)
    double *z64         # n x s_max float64 widening of a float32 Woodbury block
    double *params      # map parameters (float32 in the first half when single)
    double *work        # the transform's work space
    double *p           # s_max x k: P = Z^T B
    double *r           # s_max x m: right-hand side, then W'_j
    double *u           # s_max x m: Z^T Z W'_j
    double *solve_work  # the blocked Cholesky solve's work space (cholesky_solve_work)
    double *v           # n x m: Woodbury temporary
    float *b32          # TILE_ROWS x k: a tile of B in float32
    float *p32          # s_max x k: one tile's Z^T B in float32
    float *w32          # s_max x m: W'_j in float32
    float *o32          # n x m: O'_j in float32
    float *g32          # s_max x s_max: one chunk's Z^T Z in float32
    double *w64         # padded(s_max) x m: W'_j^T in float64 (narrow kernels)
    double *pt64        # k x s_max: one tile's (Z^T B)^T in float64 (narrow kernels)
    double *clock       # N_PHASES seconds

# The buffers of Scratch a pass needs (`thread_lengths`'s `parts`).
cdef enum Part:
    PART_Z = 1          # z
    PART_Z64 = 2        # z64 (float32 with a Woodbury block only)
    PART_PARAMS = 4     # params
    PART_WORK = 8       # work
    PART_P = 16         # p
    PART_SOLVE = 32     # r, u, solve_work
    PART_V = 64         # v
    PART_TILE32 = 128   # b32, p32 (float32); pt64 (float64)
    PART_OUT32 = 256    # w32, o32 (float32); w64 (float64)
    PART_GRAM32 = 512   # g32 (float32 only)

ctypedef struct Lengths:
    # Elements of each of one thread's buffers (0: not needed); see `thread_lengths`.
    Py_ssize_t zsize    # bytes per element of a feature block (4 with float32, else 8)
    Py_ssize_t z, z64, w64, pt64, params, work, p, r, u, solve_work, v, clock
    Py_ssize_t b32, p32, w32, o32, g32
    Py_ssize_t doubles  # w64 + pt64 + params + work + p + r + u + solve_work + v + clock,
                        # padded
    Py_ssize_t floats   # b32 + p32 + w32 + o32 + g32

ctypedef struct Buffers:
    # The memory behind every thread's Scratch (`carve`, `release`).
    char *z
    double *z64
    double *d
    float *f
    Scratch *scratch

# Values per product call with a tile: rows PRODUCT_VALUES // s_j at a time (256 KiB of the
# tile in float32, 512 KiB in float64).  With 10 columns on one thread, OpenBLAS's sgemm took
# 70 us (Z W') and 78 us (Z^T B) for a 256 x 512 tile in one call, 47 us and 45 us in calls of
# 128 rows; at s_j = 1024 and 2048 calls of 64 and 32 rows gained as much, calls of 512 KiB
# nothing.  dgemm gained as much at the same rows: 118 -> 56 us (Z W') at s_j = 512 and
# 128 rows, 231 -> 120 us at 1024 and 64 rows, 473 -> 249 us at 2048 and 32 rows
# (docs/engine.md).
cdef enum:
    PRODUCT_VALUES = 65536

cdef inline int product_rows(Py_ssize_t done, Py_ssize_t end, int s,
                             bint blas) noexcept nogil:
    """Rows of the next product call with s_j = s features from row `done` of rows that end
    at `end` (both counted from a multiple of SUM_ROWS): PRODUCT_VALUES // s rows for BLAS,
    all the rest for one call otherwise, never past a multiple of SUM_ROWS, at which float32
    partial sums are added in float64.  Every pass cuts its products here, so a tile of
    TILE_ROWS rows makes the same calls as the two tiles of SUM_ROWS rows it covers, and
    the column blocks' passes the same as the row sweep's narrow kernels: the same
    roundings."""
    cdef Py_ssize_t part = SUM_ROWS - done % SUM_ROWS
    if blas:
        part = min(part, max(1, <Py_ssize_t> PRODUCT_VALUES // s))
    return <int> min(part, end - done)

# Feature rows, W'^T and the float32 buffers start on 64-byte boundaries (a cache line, an
# AVX-512 vector): a load that straddles two lines made the narrow products up to 1.8x
# slower.  `padded` rounds a length of floats up to a multiple of 16; `aligned` rounds a
# pointer up to the next boundary (allocate ALIGN more bytes).
cdef enum:
    ALIGN = 64

cdef inline Py_ssize_t padded(Py_ssize_t n) noexcept nogil:
    return (n + 15) // 16 * 16

cdef inline void *aligned(void *p) noexcept nogil:
    return <void *> ((<size_t> p + ALIGN - 1) // ALIGN * ALIGN)

# The narrow kernels take W' and return Z^T B transposed (skylite_narrow.c); these move
# blocks between the two layouts, in float32 or float64.
ctypedef fused real:
    float
    double

cdef inline void transposed_into(const double *A, Py_ssize_t rows, Py_ssize_t cols, real *At,
                                 Py_ssize_t ld) noexcept nogil:
    """At (cols x rows, leading dimension ld) <- A^T, for A rows x cols (contiguous)."""
    cdef Py_ssize_t a, c
    for a in range(rows):
        for c in range(cols):
            At[c * ld + a] = <real> A[a * cols + c]

cdef inline void add_transposed(const real *At, Py_ssize_t rows, Py_ssize_t cols,
                                double *A) noexcept nogil:
    """A (rows x cols, contiguous) += At^T, for At cols x rows (contiguous)."""
    cdef Py_ssize_t a, c
    for a in range(rows):
        for c in range(cols):
            A[a * cols + c] += At[c * rows + a]

cdef Lengths thread_lengths(BlockTransform T, Py_ssize_t n, Py_ssize_t m, Py_ssize_t k,
                            bint single, int parts, Py_ssize_t block_rows=*)
cdef bint carve(Buffers *b, Lengths L, int n_threads)
cdef void release(Buffers *b)
cdef void add_zt_b(const void *Z, bint f32, bint narrow, const double *B, double *p,
                   Py_ssize_t first, Py_ssize_t stop, int s, int k, Scratch *sc) noexcept nogil
cdef void add_gram_f32(const float *Z, int rows, int s, double *L, float *g) noexcept nogil
cdef int factor_plus_identity(double *L, int n) noexcept nogil

# Per-element steps of both sweeps' solves, inline in each (one O(s_j m) loop each).
cdef inline void right_hand_side(double *r, const double *Wbar, const double *mu_p,
                                 const double *U, const double *p, Py_ssize_t off, int s,
                                 int m, int k) noexcept nogil:
    """r = Wbar_j - mu'_j + U_j + p[:, :m] for block j (rows off:off+s of the s x m state)."""
    cdef Py_ssize_t a, c
    for a in range(s):
        for c in range(m):
            r[a * m + c] = (Wbar[(off + a) * m + c] - mu_p[(off + a) * m + c]
                            + U[(off + a) * m + c] + p[a * k + c])


cdef inline void update_u(double *U, const double *u, const double *p, Py_ssize_t off, int s,
                          int m, int k, double relax) noexcept nogil:
    """U_j <- relax u + (1 - relax) (U_j + p[:, m:]), p[:, m:] = (Z^T Dbar/(C+1))_j."""
    cdef Py_ssize_t a, c
    for a in range(s):
        for c in range(m):
            if relax == 1.0:
                U[(off + a) * m + c] = u[a * m + c]
            else:
                U[(off + a) * m + c] = (relax * u[a * m + c] + (1.0 - relax) * (
                    U[(off + a) * m + c] + p[a * k + m + c]))


cdef class ColumnBlocks:
    cdef BlockTransform T
    cdef Rows rows
    cdef list keep
    cdef readonly Py_ssize_t n_rows, n_blocks, max_block
    cdef readonly bint single
    cdef readonly bint bfloat16     # features rounded to bfloat16; Z caches hold 16 bits
    cdef readonly bint narrow       # products by skylite_narrow.c's kernels
    cdef Py_ssize_t zitem           # bytes per element of a Z cache (2, 4 or 8)
    cdef Py_ssize_t[::1] offsets
    cdef int[::1] woodbury, factored, z_filled
    cdef void **factor
    cdef void **zcache
    cdef void **params
    cdef list arrays            # owners of the memory behind the pointers above
    cdef dict z_arrays          # block j -> its cached Z array (the owner of zcache[j])
    cdef readonly double[::1] seconds
    cdef readonly double scale

    cdef void *_own(self, cnp.ndarray a)
    cdef void _add_clocks(self, Scratch *scratch, int n_threads, int first, int stop)
    cdef void _generate(self, Py_ssize_t j, const void *params, Py_ssize_t first,
                        Py_ssize_t stop, void *out, Py_ssize_t ld, Scratch *sc) noexcept nogil
    cdef void *_cache_rows(self, Py_ssize_t j, Py_ssize_t first) noexcept nogil
    cdef void _load16(self, Py_ssize_t j, Py_ssize_t first, Py_ssize_t stop, float *out,
                      Py_ssize_t ld) noexcept nogil
    cdef void _store16(self, Py_ssize_t j, Py_ssize_t first, Py_ssize_t stop,
                       const float *src, Py_ssize_t ld) noexcept nogil
    cdef void _solve_factored(self, Py_ssize_t j, const double *Wbar, const double *mu_p,
                              double *U, double *Wp, const double *p, int m, int k,
                              double relax, Scratch *sc) noexcept nogil
    cdef void _factor_block(self, Py_ssize_t j, double *V, int m, bint inverse) noexcept nogil
