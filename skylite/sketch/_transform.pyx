# cython: language_level=3
"""The block transform operator T[X_i, j] and its parallel driver.

`BlockTransform` is the base of every native feature map (see `_transform.pxd` for the
nogil interface).  The driver here evaluates whole maps or single blocks for the Python
fronts: for each requested block, its parameters are generated once from (seed, j), then
row tiles of TILE_ROWS rows are transformed in parallel (`prange`) straight into the output.
Tiles never overlap and each is computed the same way whatever thread takes it, so the
result does not depend on the number of threads.
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.math cimport NAN
from libc.stdint cimport int32_t, int64_t, uint64_t

cnp.import_array()

# TILE_ROWS (in the .pxd), rows per work item: large enough for an efficient GEMM, small
# enough that a 20000-row input gives every thread many tiles.


cdef Rows rows_range(const Rows *rows, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Rows start:stop of `rows`, without copying."""
    cdef Rows r = rows[0]
    r.n_rows = stop - start
    if rows.kind == ROWS_DENSE:
        r.values = <const char *> rows.values + start * rows.ld * rows.itemsize
    else:
        r.indptr = rows.indptr + start
    return r


cdef class BlockTransform:
    """Base class of the native feature maps: sizes, seed and block layout.

    Subclasses implement `param_size`, `work_size`, `make_params_*` and `apply_*` (see
    `_transform.pxd` for their contract).  Block j covers output columns
    offsets[j]:offsets[j + 1].  The base itself, `BlockTransform(d, offsets, seed=0)`, has
    no parameters and its blocks are all NaN; it exists to be subclassed.
    """

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed=0):
        self._set_blocks(d, offsets, seed)

    cdef void _set_blocks(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed):
        self.n_features_in = d
        self.offsets = offsets.copy()
        self.n_blocks = offsets.shape[0] - 1
        self.n_features = offsets[self.n_blocks]
        self.seed = seed

    cdef Py_ssize_t block_size(self, Py_ssize_t j) noexcept nogil:
        return self.offsets[j + 1] - self.offsets[j]

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        return 0

    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil:
        return 0

    cdef void make_params_f64(self, Py_ssize_t j, double *params) noexcept nogil:
        pass

    cdef void make_params_f32(self, Py_ssize_t j, float *params) noexcept nogil:
        pass

    cdef void apply_f64(self, Py_ssize_t j, const double *params, const Rows *rows,
                        double *out, Py_ssize_t ldo, double *work) noexcept nogil:
        # not overridden: make the block non-finite rather than leave garbage in it
        self.base_apply_ran = True
        _fill_nan(rows.n_rows, self.block_size(j), out, ldo)

    cdef void apply_f32(self, Py_ssize_t j, const float *params, const Rows *rows,
                        float *out, Py_ssize_t ldo, float *work) noexcept nogil:
        self.base_apply_ran = True
        _fill_nan(rows.n_rows, self.block_size(j), out, ldo)

    # ---- Python-level access (inputs already validated by skylite.sketch._base) ----

    @property
    def block_offsets(self):
        """Column offsets of the blocks, length n_blocks + 1."""
        return np.asarray(self.offsets).copy()

    def n_params(self, Py_ssize_t j):
        """The number of parameters (floats) of block j, as `block_params` returns them."""
        _check_block(self, j)
        return self.param_size(j)

    def block_params(self, Py_ssize_t j, dtype=np.float64):
        """The parameters of block j (a flat array, as the native code stores them)."""
        _check_block(self, j)
        cdef Py_ssize_t n = self.param_size(j)
        cdef cnp.ndarray p = np.empty(n, dtype=dtype)
        if p.dtype == np.float64:
            self.make_params_f64(j, <double *> cnp.PyArray_DATA(p))
        else:
            self.make_params_f32(j, <float *> cnp.PyArray_DATA(p))
        return p

    def check_apply(self):
        """Raise NotImplementedError unless this class overrides apply_f64 and apply_f32.

        Probes both on an empty range of rows (which any apply_* must accept)."""
        cdef double dummy64 = 0.0
        cdef float dummy32 = 0.0
        cdef Rows empty
        empty.kind = ROWS_DENSE
        empty.n_rows = 0
        empty.n_cols = self.n_features_in
        empty.ld = self.n_features_in
        empty.indptr = NULL
        empty.indices = NULL
        self.base_apply_ran = False
        for j in range(self.n_blocks):
            empty.itemsize = 8
            empty.values = &dummy64
            self.apply_f64(j, &dummy64, &empty, &dummy64, 0, &dummy64)
            empty.itemsize = 4
            empty.values = &dummy32
            self.apply_f32(j, &dummy32, &empty, &dummy32, 0, &dummy32)
        self._raise_if_base_apply_ran()

    def _raise_if_base_apply_ran(self):
        if self.base_apply_ran:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement apply_f64 and apply_f32: "
                f"BlockTransform's own write NaN")

    def fill(self, X, out, blocks, int n_threads):
        """Write Z_j of all rows of X for each j in `blocks`, side by side, into `out`.

        X: C-contiguous 2-D float32/float64 array, or a canonical scipy CSR matrix
        (int32 indices, int64 indptr) with data of the same dtype as `out`.
        out: C-contiguous (n, sum of the s_j) array of X's dtype.
        Raises MemoryError if the per-thread buffers cannot be allocated, and
        NotImplementedError (with `out` all NaN) for a class without its own apply_*.
        """
        cdef Py_ssize_t[::1] js = np.ascontiguousarray(blocks, dtype=np.intp)
        cdef Py_ssize_t len_p = 1, len_w = 1
        for j in js:
            _check_block(self, j)
            len_p = max(len_p, self.param_size(j) + 1)
            len_w = max(len_w, self.work_size(j, TILE_ROWS) + 1)
        keep = []  # references that keep the pointers in `rows` alive
        cdef Rows rows = rows_of(X, keep)
        cdef cnp.ndarray o = out
        if o.shape[0] != rows.n_rows or o.shape[1] != sum(self.block_size(j) for j in js):
            raise ValueError("output buffer has the wrong shape")
        # allocated here, under the GIL (numpy raises MemoryError); the sweep cannot fail
        cdef cnp.ndarray params = np.empty(len_p, dtype=o.dtype)
        cdef cnp.ndarray work = np.empty(n_threads * len_w, dtype=o.dtype)
        cdef Py_ssize_t ldo = o.shape[1]
        self.base_apply_ran = False
        if o.dtype == np.float64:
            with nogil:
                _fill_blocks(self, &rows, js, <double *> cnp.PyArray_DATA(o), ldo,
                             <double *> cnp.PyArray_DATA(params),
                             <double *> cnp.PyArray_DATA(work), len_w, n_threads)
        else:
            with nogil:
                _fill_blocks(self, &rows, js, <float *> cnp.PyArray_DATA(o), ldo,
                             <float *> cnp.PyArray_DATA(params),
                             <float *> cnp.PyArray_DATA(work), len_w, n_threads)
        self._raise_if_base_apply_ran()
        return out


def _check_block(BlockTransform T, Py_ssize_t j):
    if not 0 <= j < T.n_blocks:
        raise IndexError(f"block index {j} out of range for {T.n_blocks} blocks")


cdef Rows rows_of(X, list keep) except *:
    cdef Rows rows
    cdef cnp.ndarray values, indices, indptr
    if isinstance(X, np.ndarray):
        values = X
        rows.kind = ROWS_DENSE
        rows.itemsize = values.itemsize
        rows.n_rows = values.shape[0]
        rows.n_cols = values.shape[1]
        rows.values = cnp.PyArray_DATA(values)
        rows.ld = values.shape[1]
        rows.indptr = NULL
        rows.indices = NULL
        keep.append(values)
    else:
        values, indices, indptr = X.data, X.indices, X.indptr
        assert indices.dtype == np.int32 and indptr.dtype == np.int64
        rows.kind = ROWS_CSR
        rows.itemsize = values.itemsize
        rows.n_rows = X.shape[0]
        rows.n_cols = X.shape[1]
        rows.values = cnp.PyArray_DATA(values)
        rows.ld = 0
        rows.indptr = <const int64_t *> cnp.PyArray_DATA(indptr)
        rows.indices = <const int32_t *> cnp.PyArray_DATA(indices)
        keep.extend((values, indices, indptr))
    return rows


ctypedef fused floating_t:
    float
    double


cdef void _fill_nan(Py_ssize_t n_rows, Py_ssize_t width, floating_t *out,
                    Py_ssize_t ldo) noexcept nogil:
    cdef Py_ssize_t i, c
    for i in range(n_rows):
        for c in range(width):
            out[i * ldo + c] = <floating_t> NAN


cdef void _fill_blocks(BlockTransform T, const Rows *rows, Py_ssize_t[::1] blocks,
                       floating_t *out, Py_ssize_t ldo, floating_t *params, floating_t *work,
                       Py_ssize_t work_len, int n_threads) noexcept nogil:
    """Fill out[:, col:col + s_j] = T[rows, j] for the listed blocks.  params holds
    param_size(j) and work n_threads * work_len >= work_size(j, TILE_ROWS) values, for
    every listed j."""
    cdef Py_ssize_t n = rows.n_rows, n_tiles = (rows.n_rows + TILE_ROWS - 1) // TILE_ROWS
    cdef Py_ssize_t b, j, t, start, stop, col = 0
    cdef Rows tile
    for b in range(blocks.shape[0]):
        j = blocks[b]
        if floating_t is double:
            T.make_params_f64(j, params)
        else:
            T.make_params_f32(j, params)
        for t in prange(n_tiles, schedule='static', num_threads=n_threads):
            start = t * TILE_ROWS
            stop = min(n, start + TILE_ROWS)
            tile = rows_range(rows, start, stop)
            if floating_t is double:
                T.apply_f64(j, params, &tile, out + start * ldo + col, ldo,
                            work + threadid() * work_len)
            else:
                T.apply_f32(j, params, &tile, out + start * ldo + col, ldo,
                            work + threadid() * work_len)
        col += T.block_size(j)
