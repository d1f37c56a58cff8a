# Cython declarations of skylite_bf16.h: bfloat16 storage of float32 blocks, nogil.
from libc.stdint cimport uint16_t

cdef extern from "skylite_bf16.h" nogil:
    void sky_bf16_round(Py_ssize_t rows, Py_ssize_t cols, float *a, Py_ssize_t ld)
    void sky_bf16_store(Py_ssize_t rows, Py_ssize_t cols, const float *src, Py_ssize_t ld,
                        uint16_t *dst)
    void sky_bf16_load(Py_ssize_t rows, Py_ssize_t cols, const uint16_t *src, float *dst,
                       Py_ssize_t ld)
