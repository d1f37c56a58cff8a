# Cython declarations of skylite_random.h: counter-based random numbers, nogil.
# Every value is a pure function of (seed, block, tag, index).
from libc.stdint cimport uint32_t, uint64_t, int64_t

cdef extern from "skylite_random.h" nogil:
    double sky_uniform(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
    uint64_t sky_uint64(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
    uint64_t sky_below(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i, uint64_t n)
    double sky_normal(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
    void sky_fill_normal(uint64_t seed, uint32_t block, uint32_t tag, uint64_t first,
                         double *out, int64_t n)
    double sky_cauchy(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
    double sky_levy(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i, double c)
    double sky_gamma(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i, double shape)
