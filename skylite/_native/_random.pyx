# cython: language_level=3
"""Python access to the counter-based generator of skylite_random.h (for tests, tools and the
per-map tables of skylite.sketch.qmc).

Element i of stream (seed, block, tag) is the same number whoever asks, in any order.
"""
import numpy as np
from libc.stdint cimport uint32_t, uint64_t

from skylite._native.random cimport (sky_uniform, sky_normal, sky_fill_normal, sky_cauchy,
                                     sky_levy, sky_gamma, sky_below)


def stream(str kind, uint64_t seed, uint32_t block, uint32_t tag, indices, double param=1.0):
    """Elements `indices` (int array) of one stream as float64.

    kind: 'uniform' (0,1), 'normal', 'cauchy', 'levy' (scale param), 'gamma' (shape param),
    'below' (integers in [0, param)).
    """
    cdef uint64_t[::1] idx = np.ascontiguousarray(indices, dtype=np.uint64)
    out = np.empty(idx.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t k
    cdef int code = ["uniform", "normal", "cauchy", "levy", "gamma", "below"].index(kind)
    if code == 4 and not param > 0:
        raise ValueError("gamma shape must be > 0")
    if code == 5 and not param >= 1:
        raise ValueError("'below' needs param >= 1")
    with nogil:
        for k in range(idx.shape[0]):
            if code == 0:
                o[k] = sky_uniform(seed, block, tag, idx[k])
            elif code == 1:
                o[k] = sky_normal(seed, block, tag, idx[k])
            elif code == 2:
                o[k] = sky_cauchy(seed, block, tag, idx[k])
            elif code == 3:
                o[k] = sky_levy(seed, block, tag, idx[k], param)
            elif code == 4:
                o[k] = sky_gamma(seed, block, tag, idx[k], param)
            else:
                o[k] = <double> sky_below(seed, block, tag, idx[k], <uint64_t> param)
    return out


def fill_normal(uint64_t seed, uint32_t block, uint32_t tag, uint64_t first, Py_ssize_t n):
    """Elements first..first+n of a normal stream through the bulk path (sky_fill_normal)."""
    out = np.empty(n)
    cdef double[::1] o = out
    if n:
        sky_fill_normal(seed, block, tag, first, &o[0], n)
    return out
