# cython: language_level=3
"""Native core of a composed map z(x) = then(first(x)): a linear sketch first: R^d -> R^m
(all of its blocks, side by side) followed by any map then: R^m -> R^s.

The blocks are `then`'s: block j of the composition is

    Z_j = T_then[ [T_first[X, 0], ..., T_first[X, C_first - 1]], j ],

the sketched rows Y = first(X) (n x m, dense) made in the work buffer, tile by tile, and
handed to `then` as dense rows.  Parameters of block j: the parameters of every block of
`first` (in block order) followed by `then`'s parameters of block j, so a block is still a
pure function of the two operators' seeds and j:

    [ first block 0 | first block 1 | ... | then block j ]       param_size(j) = P_first + P_then(j)

Work for n rows: n m values of Y, then max_b first.work_size(b, n), then
then.work_size(j, n).  The cost per block is one sketch of the rows plus `then`'s own; a
CountSketch first stage costs O(nnz) per row, so e.g. sparse rows of d = 10^5 columns go to a
Gaussian random Fourier map through m = 1024 sketched columns.
"""
from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE


cdef class ComposedTransform(BlockTransform):
    """z(x) = then(first(x)); see the module docstring.

    ComposedTransform(first, then): first.n_features must equal then.n_features_in.  The
    composition has first's input dimension and seed, and then's blocks."""
    cdef readonly BlockTransform first
    cdef readonly BlockTransform then
    cdef Py_ssize_t m               # the sketch dimension
    cdef Py_ssize_t first_params    # sum of first.param_size(b) over its blocks

    def __init__(self, BlockTransform first, BlockTransform then):
        if then.n_features_in != first.n_features:
            raise ValueError(f"the second map takes {then.n_features_in} input features, the "
                             f"sketch gives {first.n_features}")
        self._set_blocks(first.n_features_in, then.offsets, first.seed)
        self.first = first
        self.then = then
        self.m = first.n_features
        self.first_params = sum(first.param_size(b) for b in range(first.n_blocks))

    cdef Py_ssize_t _first_work(self, Py_ssize_t n_rows) noexcept nogil:
        cdef Py_ssize_t b, w = 0
        for b in range(self.first.n_blocks):
            w = max(w, self.first.work_size(b, n_rows))
        return w

    cdef Py_ssize_t param_size(self, Py_ssize_t j) noexcept nogil:
        return self.first_params + self.then.param_size(j)

    cdef Py_ssize_t work_size(self, Py_ssize_t j, Py_ssize_t n_rows) noexcept nogil:
        return n_rows * self.m + self._first_work(n_rows) + self.then.work_size(j, n_rows)

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


ctypedef fused floating_t:
    float
    double


cdef void _make_params(ComposedTransform T, Py_ssize_t j, floating_t *params) noexcept nogil:
    """Every block of the sketch, in block order, then the second map's block j."""
    cdef Py_ssize_t b
    for b in range(T.first.n_blocks):
        if floating_t is double:
            T.first.make_params_f64(b, params)
        else:
            T.first.make_params_f32(b, params)
        params += T.first.param_size(b)
    if floating_t is double:
        T.then.make_params_f64(j, params)
    else:
        T.then.make_params_f32(j, params)


cdef void _apply(ComposedTransform T, Py_ssize_t j, const floating_t *params,
                 const Rows *rows, floating_t *out, Py_ssize_t ldo,
                 floating_t *work) noexcept nogil:
    """Y = the sketch of the rows (n x m, at the start of work), then the second map's
    block j of Y."""
    cdef Py_ssize_t b, n = rows.n_rows
    cdef floating_t *Y = work
    cdef floating_t *first_work = work + n * T.m
    cdef floating_t *then_work = first_work + T._first_work(n)
    cdef Rows sketched = _dense_rows(Y, n, T.m, sizeof(floating_t))
    for b in range(T.first.n_blocks):
        if floating_t is double:
            T.first.apply_f64(b, params, rows, Y + T.first.offsets[b], T.m, first_work)
        else:
            T.first.apply_f32(b, params, rows, Y + T.first.offsets[b], T.m, first_work)
        params += T.first.param_size(b)
    if floating_t is double:
        T.then.apply_f64(j, params, &sketched, out, ldo, then_work)
    else:
        T.then.apply_f32(j, params, &sketched, out, ldo, then_work)


cdef Rows _dense_rows(const void *values, Py_ssize_t n, Py_ssize_t m,
                      Py_ssize_t itemsize) noexcept nogil:
    """The Rows view of a row-major n x m buffer."""
    cdef Rows r
    r.kind = ROWS_DENSE
    r.itemsize = itemsize
    r.n_rows = n
    r.n_cols = m
    r.values = values
    r.ld = m
    r.indptr = NULL
    r.indices = NULL
    return r
