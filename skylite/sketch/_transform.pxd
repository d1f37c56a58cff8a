# The transform operator T[X_i, j] -> Z_ij shared by every feature map (docs/design.md,
# docs/feature_maps.md).
#
# Native code (the ADMM engine) asks any map for block j of a range of rows, into a buffer
# it owns, without the GIL:
#
#     cdef BlockTransform T = feature_map.transform_op_
#     params = malloc(T.param_size(j) * sizeof(double))     # or keep it cached
#     work = malloc(T.work_size(j, n_rows) * sizeof(double))
#     T.make_params_f64(j, params)                           # from (seed, j) alone
#     T.apply_f64(j, params, &rows, out, ldo, work)          # out: n_rows x s_j, row-major
#
# The input is validated by the Python front before any of this runs (finite values, the
# dimension the map was fitted with, float32 or float64, canonical CSR), so these methods
# cannot fail.  A block's values come out already scaled by sqrt(s_j / s).
#
# Contract for subclasses: make_params_* and apply_* never allocate (apply_* takes all its
# scratch from `work`, at most work_size(j, rows.n_rows) elements of the compute type;
# make_params_* only fixed-size stack arrays), and apply_* accepts an empty range of rows,
# writing nothing.  The base class's apply_* writes NaN (which the engine reports as
# non-finite features) and records that it ran: `check_apply()` raises NotImplementedError
# for a subclass that does not override both, and the feature-map fronts call it at fit.
from libc.stdint cimport int32_t, int64_t, uint64_t

cdef enum RowsKind:
    ROWS_DENSE = 0
    ROWS_CSR = 1

ctypedef struct Rows:
    # A range of n_rows input rows with n_cols (= d) columns, float32 or float64 (the
    # *_f32 / *_f64 method that receives it says which).
    #   dense: row r is values[r * ld : r * ld + n_cols]
    #   CSR:   row r is values[indptr[r]:indptr[r + 1]] at columns indices[indptr[r]:...];
    #          indptr points at this range's first row, its entries index the whole arrays.
    int kind
    Py_ssize_t itemsize          # 4 (float32) or 8 (float64)
    Py_ssize_t n_rows
    Py_ssize_t n_cols
    const void *values
    Py_ssize_t ld
    const int64_t *indptr
    const int32_t *indices

cdef Rows rows_range(const Rows *rows, Py_ssize_t start, Py_ssize_t stop) noexcept nogil

# Rows per call of apply_* in skylite's drivers (`work` buffers hold work_size(j, TILE_ROWS)),
# from row 0 or a multiple of TILE_ROWS, so that every driver makes the same calls: a GEMM
# may round a row differently with the number of rows in the call.  512 rather than 256:
# the GEMM of a Gaussian map (rows x 784 by 784 x 512 on MNIST) packs its operands once per
# call, and regenerating every block of 20,000 rows took 2.37 s in calls of 512 rows against
# 2.46 s in calls of 256 (benchmarks/bench_transform_tiles.py, docs/engine.md).
cdef enum:
    TILE_ROWS = 512

cdef class BlockTransform:
    """A feature map z: R^d -> R^s split into column blocks; see the module comment."""
    cdef readonly Py_ssize_t n_features_in
    cdef readonly Py_ssize_t n_features
    cdef readonly Py_ssize_t n_blocks
    cdef readonly uint64_t seed
    # True when a row's features are computed from that row alone, the same bits whatever
    # rows share the call: callers may then split the rows into calls as they like
    cdef readonly bint row_by_row
    cdef Py_ssize_t[::1] offsets
    cdef bint base_apply_ran     # set by the base class's apply_* (a subclass forgot one)

    cdef void _set_blocks(self, Py_ssize_t d, Py_ssize_t[::1] offsets, uint64_t seed)
    cdef Py_ssize_t block_size(self, Py_ssize_t j) noexcept nogil
    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil
    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil
    cdef void make_params_f64(self, Py_ssize_t j, double *params) noexcept nogil
    cdef void make_params_f32(self, Py_ssize_t j, float *params) noexcept nogil
    cdef void apply_f64(self, Py_ssize_t j, const double *params, const Rows *rows,
                        double *out, Py_ssize_t ldo, double *work) noexcept nogil
    cdef void apply_f32(self, Py_ssize_t j, const float *params, const Rows *rows,
                        float *out, Py_ssize_t ldo, float *work) noexcept nogil


# The Rows view of a validated input (C-contiguous ndarray or canonical CSR); appends the
# arrays it points into to `keep`, which the caller must hold while the view is used.
cdef Rows rows_of(X, list keep) except *
