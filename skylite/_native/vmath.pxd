# Cython declarations of skylite_vmath.h: vectorized elementwise nonlinearities, nogil.
cdef extern from "skylite_vmath.h" nogil:
    void sky_cos_shift_f64(Py_ssize_t n_rows, Py_ssize_t n_cols, double *a, Py_ssize_t lda,
                           const double *phase, double scale)
    void sky_cos_shift_f32(Py_ssize_t n_rows, Py_ssize_t n_cols, float *a, Py_ssize_t lda,
                           const float *phase, float scale)
    void sky_exp_neg_f64(Py_ssize_t n_rows, Py_ssize_t n_cols, double *a, Py_ssize_t lda, double scale)
    void sky_exp_neg_f32(Py_ssize_t n_rows, Py_ssize_t n_cols, float *a, Py_ssize_t lda, float scale)
