# cython: language_level=3
"""Native core of the identity map: block j is the column slice X[:, offsets[j]:offsets[j+1]].

It lets the same engine train plain linear models (the kernel `Linear()`), as libSkylark's
does.  The features are exact, so there is no sqrt(s_j / s) scaling and no random parameter.
"""
from libc.string cimport memcpy, memset

from skylite.sketch._transform cimport BlockTransform, Rows, ROWS_DENSE

ctypedef fused floating_t:
    float
    double


cdef class IdentityTransform(BlockTransform):
    """z(x) = x, split into column slices."""

    def __init__(self, Py_ssize_t d, Py_ssize_t[::1] offsets):
        self._set_blocks(d, offsets, 0)
        self.row_by_row = True

    cdef void apply_f64(self, Py_ssize_t j, const double *params, const Rows *rows,
                        double *out, Py_ssize_t ldo, double *work) noexcept nogil:
        _slice_columns(rows, self.offsets[j], self.offsets[j + 1], out, ldo)

    cdef void apply_f32(self, Py_ssize_t j, const float *params, const Rows *rows,
                        float *out, Py_ssize_t ldo, float *work) noexcept nogil:
        _slice_columns(rows, self.offsets[j], self.offsets[j + 1], out, ldo)


cdef void _slice_columns(const Rows *rows, Py_ssize_t first, Py_ssize_t stop,
                         floating_t *out, Py_ssize_t ldo) noexcept nogil:
    cdef Py_ssize_t i, p, c, width = stop - first
    cdef const floating_t *x = <const floating_t *> rows.values
    for i in range(rows.n_rows):
        if rows.kind == ROWS_DENSE:
            memcpy(out + i * ldo, x + i * rows.ld + first, width * sizeof(floating_t))
            continue
        memset(out + i * ldo, 0, width * sizeof(floating_t))
        for p in range(rows.indptr[i], rows.indptr[i + 1]):
            c = rows.indices[p]
            if first <= c < stop:
                out[i * ldo + c - first] = x[p]
