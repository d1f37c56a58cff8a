# cython: language_level=3
"""Python access to the narrow products of skylite_narrow.c (Z W and Z^T B with few columns,
Z in float32, float64 or bfloat16), which BlockADMM's sweeps call from nogil code: whether
they run on this CPU, and the products themselves for tests.  bfloat16 arrays are uint16
arrays of the top 16 bits of float32s."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint16_t

from skylite._native.narrow cimport (
    sky_narrow_available, sky_narrow_times_f32, sky_narrow_times_bf16, sky_narrow_times_f64,
    sky_narrow_t_times_f32, sky_narrow_t_times_bf16, sky_narrow_t_times_f64)

cnp.import_array()


def available():
    """True if the narrow kernels run on this CPU (AVX-512); BlockADMM uses BLAS (sgemm)
    for its float32 products otherwise."""
    return bool(sky_narrow_available())


def _features(Z):
    Z = np.asarray(Z)
    if Z.ndim != 2 or Z.dtype not in (np.float32, np.float64, np.uint16):
        raise ValueError(f"Z must be a 2-d float32 or float64 array or uint16 bfloat16 bits, "
                         f"got {Z.ndim}-d {Z.dtype}")
    return np.ascontiguousarray(Z)


def _narrow(A, rows, what, dtype):
    A = np.ascontiguousarray(A, dtype=dtype)
    if A.ndim != 2 or A.shape[0] != rows or A.shape[1] < 1:
        raise ValueError(f"{what} must be a 2-d array with {rows} rows and at least one "
                         f"column, got shape {A.shape}")
    return A


def _arithmetic(Z):
    """The kernels' arithmetic for Z: float64 for float64 Z, else float32."""
    return np.float64 if Z.dtype == np.float64 else np.float32


def times(Z, W):
    """Z W (rows x m, in Z's arithmetic) for Z (rows x s: float32, float64 or bfloat16 bits)
    and W (s x m)."""
    Z = _features(Z)
    W = _narrow(W, Z.shape[1], "W", _arithmetic(Z))
    _require()
    out = np.zeros((Z.shape[0], W.shape[1]), W.dtype)
    if Z.shape[0] and Z.shape[1]:
        times_into(Z, np.ascontiguousarray(W.T), out)
    return out


def t_times(Z, B):
    """Z^T B (s x k, in Z's arithmetic) for Z (rows x s: float32, float64 or bfloat16 bits)
    and B (rows x k)."""
    Z = _features(Z)
    B = _narrow(B, Z.shape[0], "B", _arithmetic(Z))
    _require()
    pt = np.zeros((B.shape[1], Z.shape[1]), B.dtype)
    if Z.shape[0] and Z.shape[1]:
        t_times_into(Z, B, pt)
    return pt.T


def times_into(Z, wt, out):
    """out <- Z W for W given transposed (wt: m x s), without `times`'s conversions and
    copies (for benchmarks, whose time per tile should be the kernel's): Z, wt and out
    C-contiguous and non-empty, wt and out in Z's arithmetic (`times`)."""
    if (Z.ndim != 2 or wt.ndim != 2 or out.ndim != 2 or not Z.size or not wt.size
            or wt.shape[1] != Z.shape[1] or out.shape[0] != Z.shape[0]
            or out.shape[1] != wt.shape[0]):
        raise ValueError("times_into needs Z (rows x s), wt (m x s) and out (rows x m)")
    _require()
    cdef Py_ssize_t rows = Z.shape[0], s = Z.shape[1], m = wt.shape[0]
    cdef float[:, ::1] z32, w32, o32
    cdef double[:, ::1] z64, w64, o64
    cdef uint16_t[:, ::1] z16
    if Z.dtype == np.float64:
        z64, w64, o64 = Z, wt, out
        with nogil:
            sky_narrow_times_f64(rows, s, &z64[0, 0], s, &w64[0, 0], s, m, &o64[0, 0])
    elif Z.dtype == np.float32:
        z32, w32, o32 = Z, wt, out
        with nogil:
            sky_narrow_times_f32(rows, s, &z32[0, 0], s, &w32[0, 0], s, m, &o32[0, 0])
    else:
        z16, w32, o32 = Z, wt, out
        with nogil:
            sky_narrow_times_bf16(rows, s, &z16[0, 0], s, &w32[0, 0], s, m, &o32[0, 0])


def t_times_into(Z, B, pt):
    """pt <- (Z^T B)^T (k x s), without `t_times`'s conversions and copies (for benchmarks):
    Z, B and pt C-contiguous and non-empty, B and pt in Z's arithmetic (`t_times`)."""
    if (Z.ndim != 2 or B.ndim != 2 or pt.ndim != 2 or not Z.size or not B.size
            or B.shape[0] != Z.shape[0] or pt.shape[0] != B.shape[1]
            or pt.shape[1] != Z.shape[1]):
        raise ValueError("t_times_into needs Z (rows x s), B (rows x k) and pt (k x s)")
    _require()
    cdef Py_ssize_t rows = Z.shape[0], s = Z.shape[1], k = B.shape[1]
    cdef float[:, ::1] z32, b32, p32
    cdef double[:, ::1] z64, b64, p64
    cdef uint16_t[:, ::1] z16
    if Z.dtype == np.float64:
        z64, b64, p64 = Z, B, pt
        with nogil:
            sky_narrow_t_times_f64(rows, s, &z64[0, 0], s, &b64[0, 0], k, &p64[0, 0])
    elif Z.dtype == np.float32:
        z32, b32, p32 = Z, B, pt
        with nogil:
            sky_narrow_t_times_f32(rows, s, &z32[0, 0], s, &b32[0, 0], k, &p32[0, 0])
    else:
        z16, b32, p32 = Z, B, pt
        with nogil:
            sky_narrow_t_times_bf16(rows, s, &z16[0, 0], s, &b32[0, 0], k, &p32[0, 0])


def _require():
    if not sky_narrow_available():
        raise RuntimeError("the narrow kernels do not run on this CPU (no AVX-512)")
