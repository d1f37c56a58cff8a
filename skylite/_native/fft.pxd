# Cython declarations of skylite_fft.h: complex FFT of any length (radix-2 / Bluestein), nogil.
from libc.stdint cimport int64_t

cdef extern from "skylite_fft.h" nogil:
    ctypedef struct sky_fft_plan:
        int64_t n
        int64_t m
        int bluestein
        int64_t *neg
    int sky_fft_plan_init(sky_fft_plan *plan, int64_t n)
    void sky_fft_plan_free(sky_fft_plan *plan)
    int64_t sky_fft_work_size(const sky_fft_plan *plan)
    void sky_fft(const sky_fft_plan *plan, double *re, double *im, int inverse, double *work)
    void sky_fft_forward_po(const sky_fft_plan *plan, double *re, double *im, double *work)
    void sky_fft_inverse_po(const sky_fft_plan *plan, double *re, double *im, double *work)
