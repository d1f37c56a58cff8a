"""Low-discrepancy sequences for quasi-Monte-Carlo random features (Yang, Sindhwani, Avron &
Mahoney, "Quasi-Monte Carlo Feature Maps for Shift-Invariant Kernels", ICML 2014).

A QMC feature map takes its frequencies from the points of a low-discrepancy sequence in
[0, 1)^D instead of i.i.d. uniforms, mapped through the inverse CDF of the kernel's spectral
measure (skylite.sketch._projection).  The points themselves are computed by native code
(skylite/_native/skylite_qmc.h) from a small table made here once per map from its seed:

    sequence   table (D coordinates)                           point f, coordinate i
    "halton"   bases p_0..p_{D-1} (the first D primes),        frac(phi_{p_i}(f L + 1) + shift_i)
               leap L (the next prime), shifts in [0, 1)
    "sobol"    direction numbers v_i[0..31] (Joe & Kuo, as     ((e_i XOR_{l in g(f)} v_i[l]) + 1/2)
               scipy.stats.qmc.Sobol), scrambled, shifts e_i    / 2^32,  g(f) = f XOR (f >> 1)

The leaped Halton sequence is libSkylark's (`skylark_ml -q 1`): radical inverses phi_p of
f L + 1, the leap L decorrelating coordinates of large neighbouring bases; skylite adds a random
rotation modulo 1 per coordinate (Cranley-Patterson), which keeps the low discrepancy, makes
every point uniform on [0, 1)^D (so the features are unbiased) and makes the seed matter.

The Sobol' points are scipy's (unscrambled, in Gray-code order, 32 bits) under a random linear
matrix scramble and digital shift (Matousek 1998; the scramble scipy's `scramble=True` uses),
drawn here from skylite's own counter-based generator so that a seed gives the same map with any
numpy or scipy version: for coordinate i, output digit k (k = 0 is the most significant bit)
of a point is the parity of (row_{i,k} AND x), row_{i,k} = 2^(31-k) plus random bits above
it (a random lower-triangular GF(2) matrix with unit diagonal), then XOR e_i.  Applied to the
direction numbers, that scrambles every point.

The random bits are elements of the streams (seed, MAP_BLOCK, tag) of skylite's generator
(MAP_BLOCK = 2^32 - 1, a block index no column block uses): TAG_HALTON_SHIFT (uniforms, one
per coordinate), TAG_SOBOL_MATRIX (32-bit integers, element 32 i + k is row_{i,k}'s random
bits) and TAG_SOBOL_SHIFT (32-bit integers, one per coordinate).
"""
import numpy as np

from .._native._random import stream

SEQUENCES = ("monte_carlo", "halton", "sobol")

# Stream (block, tags) of the per-map tables (see the module docstring).
MAP_BLOCK = 2**32 - 1
TAG_HALTON_SHIFT, TAG_SOBOL_MATRIX, TAG_SOBOL_SHIFT = 16, 17, 18

# Points per map: Sobol' points are 32-bit (f < 2^32); Halton's f L + 1 must stay below 2^64.
MAX_POINTS = 2**32


def check_sequence(sequence):
    """`sequence` if it is one of SEQUENCES, else a ValueError naming them."""
    if sequence not in SEQUENCES:
        raise ValueError(f"unknown sequence {sequence!r}; choose from {list(SEQUENCES)}")
    return sequence


def first_primes(n):
    """The first n primes as an int64 array (sieve of Eratosthenes)."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    limit = max(16, int(n * (np.log(n + 1) + np.log(np.log(n + 2)) + 2)))
    while True:
        sieve = np.ones(limit + 1, dtype=bool)
        sieve[:2] = False
        for p in range(2, int(limit**0.5) + 1):
            if sieve[p]:
                sieve[p * p::p] = False
        primes = np.flatnonzero(sieve)
        if len(primes) >= n:
            return primes[:n].astype(np.int64)
        limit *= 2


def halton_table(dims, seed):
    """(bases, leap, shifts) of the leaped Halton sequence in `dims` coordinates:
    bases int64 (dims,), leap an int, shifts float64 (dims,) in [0, 1)."""
    primes = first_primes(dims + 1)
    shifts = stream("uniform", seed, MAP_BLOCK, TAG_HALTON_SHIFT, np.arange(dims))
    return primes[:dims].copy(), int(primes[dims]), shifts


def sobol_direction_numbers(dims):
    """The unscrambled 32-bit direction numbers (dims x 32, uint32) of scipy's Sobol'
    sequence (Joe & Kuo's, dims <= 21201)."""
    from scipy.stats import qmc
    if dims > qmc.Sobol.MAXDIM:
        raise ValueError(f"the Sobol' sequence has at most {qmc.Sobol.MAXDIM} coordinates, "
                         f"this map needs {dims}: use sequence='halton' for inputs of more "
                         f"than {qmc.Sobol.MAXDIM - 2} features")
    engine = qmc.Sobol(dims, scramble=False, bits=32)
    v = getattr(engine, "_sv", None)
    if v is None or v.shape != (dims, 32):
        raise RuntimeError("this scipy's Sobol engine does not expose its direction numbers "
                           "(scipy.stats.qmc.Sobol._sv)")
    return np.ascontiguousarray(v, dtype=np.uint32)


def _parity(x):
    """Bitwise parity of each uint32 in x (0 or 1, as uint32)."""
    x = x ^ (x >> np.uint32(16))
    x ^= x >> np.uint32(8)
    x ^= x >> np.uint32(4)
    x ^= x >> np.uint32(2)
    x ^= x >> np.uint32(1)
    return x & np.uint32(1)


def sobol_table(dims, seed):
    """(v, e) of the scrambled Sobol' sequence: v uint32 (dims x 32) the scrambled direction
    numbers, e uint32 (dims,) the digital shifts (see the module docstring)."""
    v = sobol_direction_numbers(dims)
    bits = stream("below", seed, MAP_BLOCK, TAG_SOBOL_MATRIX, np.arange(32 * dims),
                  2.0**32).astype(np.uint64).astype(np.uint32).reshape(dims, 32)
    scrambled = np.zeros_like(v)
    for k in range(32):
        diagonal = np.uint32(1 << (31 - k))
        above = np.uint32((0xFFFFFFFF << (32 - k)) & 0xFFFFFFFF) if k else np.uint32(0)
        row = diagonal | (bits[:, k] & above)                 # row_{i,k}, one per coordinate
        scrambled |= _parity(v & row[:, None]) << np.uint32(31 - k)
    shifts = stream("below", seed, MAP_BLOCK, TAG_SOBOL_SHIFT, np.arange(dims),
                    2.0**32).astype(np.uint64).astype(np.uint32)
    return scrambled, shifts


def check_points(n_points, sequence):
    """Raise ValueError if a map needs more points than the sequence provides."""
    if sequence != "monte_carlo" and n_points > MAX_POINTS:
        raise ValueError(f"the {sequence} sequence provides at most {MAX_POINTS} points "
                         f"({2 * MAX_POINTS} features), {n_points} are needed")


def points(sequence, dims, seed, first, n):
    """Points first..first+n of a sequence as an n x dims float64 array: the uniforms that
    native code computes, here in numpy (for tests, benchmarks and inspection)."""
    f = np.arange(first, first + n, dtype=np.uint64)
    if sequence == "halton":
        bases, leap, shifts = halton_table(dims, seed)
        out = np.empty((n, dims))
        for i, base in enumerate(bases):
            m = f * np.uint64(leap) + np.uint64(1)
            r = np.zeros(n)
            w = inverse = 1.0 / base         # the native code's order of operations
            while np.any(m):
                r += w * (m % np.uint64(base)).astype(np.float64)
                m //= np.uint64(base)
                w *= inverse
            out[:, i] = r
        out += shifts
        out -= out >= 1.0
        return np.clip(out, 2.0**-54, 1.0 - 2.0**-53)
    if sequence == "sobol":
        v, e = sobol_table(dims, seed)
        g = f ^ (f >> np.uint64(1))
        x = np.broadcast_to(e, (n, dims)).copy()
        for bit in range(32):
            on = ((g >> np.uint64(bit)) & np.uint64(1)).astype(bool)
            x[on] ^= v[:, bit]
        return (x.astype(np.float64) + 0.5) * 2.0**-32
    raise ValueError(f"no points for sequence {sequence!r}; use 'halton' or 'sobol'")
