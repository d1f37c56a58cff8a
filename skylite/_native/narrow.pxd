# Cython declarations of skylite_narrow.h: Z W and Z^T B for narrow W and B, nogil.
from libc.stdint cimport uint16_t

cdef extern from "skylite_narrow.h" nogil:
    int sky_narrow_available()
    void sky_narrow_times_f32(Py_ssize_t rows, Py_ssize_t s, const float *z, Py_ssize_t ld,
                              const float *wt, Py_ssize_t ldw, Py_ssize_t m, float *out)
    void sky_narrow_times_bf16(Py_ssize_t rows, Py_ssize_t s, const uint16_t *z,
                               Py_ssize_t ld, const float *wt, Py_ssize_t ldw, Py_ssize_t m,
                               float *out)
    void sky_narrow_t_times_f32(Py_ssize_t rows, Py_ssize_t s, const float *z,
                                Py_ssize_t ld, const float *b, Py_ssize_t k, float *pt)
    void sky_narrow_t_times_bf16(Py_ssize_t rows, Py_ssize_t s, const uint16_t *z,
                                 Py_ssize_t ld, const float *b, Py_ssize_t k, float *pt)
    void sky_narrow_times_f64(Py_ssize_t rows, Py_ssize_t s, const double *z, Py_ssize_t ld,
                              const double *wt, Py_ssize_t ldw, Py_ssize_t m, double *out)
    void sky_narrow_t_times_f64(Py_ssize_t rows, Py_ssize_t s, const double *z,
                                Py_ssize_t ld, const double *b, Py_ssize_t k, double *pt)
