# Cython declarations of skylite_qmc.h: low-discrepancy sequences, nogil.
from libc.stdint cimport uint32_t, uint64_t

cdef extern from "skylite_qmc.h" nogil:
    double sky_radical_inverse(uint64_t base, uint64_t n)
    double sky_halton(uint64_t base, uint64_t leap, double shift, uint64_t f)
    double sky_sobol(const uint32_t *v, uint32_t e, uint64_t f)
