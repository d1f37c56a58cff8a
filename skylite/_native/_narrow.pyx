# cython: language_level=3
"""Python access to the narrow products of skylite_narrow.c (Z W and Z^T B with few columns,
float32 arithmetic, Z in float32 or bfloat16), which BlockADMM's sweeps call from nogil
code: whether they run on this CPU, and the products themselves for tests.  bfloat16 arrays are uint16 arrays of the top 16 bits of float32s."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint16_t

from skylite._native.narrow cimport (
    sky_narrow_available, sky_narrow_times_f32, sky_narrow_times_bf16,
    sky_narrow_t_times_f32, sky_narrow_t_times_bf16)

cnp.import_array()


def available():
    """True if the narrow kernels run on this CPU (AVX-512); BlockADMM uses BLAS (sgemm)
    for its float32 products otherwise."""
    return bool(sky_narrow_available())


def _features(Z):
    Z = np.asarray(Z)
    if Z.ndim != 2 or Z.dtype not in (np.float32, np.uint16):
        raise ValueError(f"Z must be a 2-d float32 array or uint16 bfloat16 bits, "
                         f"got {Z.ndim}-d {Z.dtype}")
    return np.ascontiguousarray(Z)


def _narrow(A, rows, what):
    A = np.ascontiguousarray(A, dtype=np.float32)
    if A.ndim != 2 or A.shape[0] != rows or A.shape[1] < 1:
        raise ValueError(f"{what} must be a 2-d array with {rows} rows and at least one "
                         f"column, got shape {A.shape}")
    return A


def times(Z, W):
    """Z W (rows x m, float32) for Z (rows x s, float32 or bfloat16 bits) and W (s x m)."""
    Z = _features(Z)
    W = _narrow(W, Z.shape[1], "W")
    cdef float[:, ::1] wt = np.ascontiguousarray(W.T)
    cdef float[:, ::1] out = np.zeros((Z.shape[0], W.shape[1]), np.float32)
    _require()
    cdef Py_ssize_t rows = Z.shape[0], s = Z.shape[1], m = W.shape[1]
    cdef float[:, ::1] z32
    cdef uint16_t[:, ::1] z16
    if rows == 0 or s == 0:
        return np.asarray(out)
    if Z.dtype == np.float32:
        z32 = Z
        with nogil:
            sky_narrow_times_f32(rows, s, &z32[0, 0], s, &wt[0, 0], s, m, &out[0, 0])
    else:
        z16 = Z
        with nogil:
            sky_narrow_times_bf16(rows, s, &z16[0, 0], s, &wt[0, 0], s, m, &out[0, 0])
    return np.asarray(out)


def t_times(Z, B):
    """Z^T B (s x k, float32) for Z (rows x s, float32 or bfloat16 bits) and B (rows x k)."""
    Z = _features(Z)
    B = _narrow(B, Z.shape[0], "B")
    cdef Py_ssize_t rows = Z.shape[0], s = Z.shape[1], k = B.shape[1]
    cdef float[:, ::1] b = B
    cdef float[:, ::1] pt = np.zeros((k, s), np.float32)
    _require()
    cdef float[:, ::1] z32
    cdef uint16_t[:, ::1] z16
    if rows == 0 or s == 0:
        return np.asarray(pt).T
    if Z.dtype == np.float32:
        z32 = Z
        with nogil:
            sky_narrow_t_times_f32(rows, s, &z32[0, 0], s, &b[0, 0], k, &pt[0, 0])
    else:
        z16 = Z
        with nogil:
            sky_narrow_t_times_bf16(rows, s, &z16[0, 0], s, &b[0, 0], k, &pt[0, 0])
    return np.asarray(pt).T


def _require():
    if not sky_narrow_available():
        raise RuntimeError("the narrow kernels do not run on this CPU (no AVX-512)")
