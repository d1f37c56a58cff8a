/*
 * Low-discrepancy sequences for quasi-Monte-Carlo random features (docs/feature_maps.md).
 *
 * Point f of a sequence is a vector of uniforms u_0..u_{D-1} on (0, 1), each coordinate a pure
 * function of (f, coordinate, a small table made once from the seed), so any thread makes any
 * point in any order.
 *
 * Leaped Halton (libSkylark's sequence):
 *     u_i(f) = frac( phi_{p_i}(f L + 1) + shift_i ),
 *   phi_b(n) the radical inverse of n in base b (the digits of n mirrored about the point:
 *   n = sum_k a_k b^k -> sum_k a_k b^(-k-1)), p_i the i-th prime (p_0 = 2), L the leap (a prime
 *   that is not a base), shift_i a random rotation modulo 1 (Cranley-Patterson).
 *
 * Sobol' (Gray-code order, as scipy.stats.qmc.Sobol):
 *     x_i(f) = e_i XOR ( XOR_{l : bit l of g(f) is set} v_i[l] ),   g(f) = f XOR (f >> 1),
 *     u_i(f) = (x_i(f) + 1/2) / 2^32,
 *   v_i[0..31] the 32-bit direction numbers of coordinate i (after a random linear matrix
 *   scramble), e_i a random digital shift.  The + 1/2 centres u in its cell of width 2^-32, so
 *   u is never 0 or 1.
 *
 * Plain C, no global state, no allocation: callable from nogil Cython.
 */
#ifndef SKYLITE_QMC_H
#define SKYLITE_QMC_H

#include <stdint.h>

/* The radical inverse phi_base(n) (base >= 2). */
static inline double sky_radical_inverse(uint64_t base, uint64_t n)
{
    double r = 0.0, f = 1.0 / (double)base, w = f;
    while (n) {
        r += w * (double)(n % base);
        n /= base;
        w *= f;
    }
    return r;
}

/* Coordinate u_i(f) of the leaped Halton sequence: base p_i, leap L, rotation shift_i in [0, 1).
 * The result is clipped to [2^-54, 1 - 2^-53], inside (0, 1) (an exact 0 has probability
 * about 2^-53). */
static inline double sky_halton(uint64_t base, uint64_t leap, double shift, uint64_t f)
{
    double u = sky_radical_inverse(base, f * leap + 1) + shift;
    if (u >= 1.0) u -= 1.0;
    if (u < 0x1p-54) u = 0x1p-54;
    if (u > 1.0 - 0x1p-53) u = 1.0 - 0x1p-53;
    return u;
}

/* Coordinate u_i(f) of the Sobol' sequence in Gray-code order: v the 32 direction numbers of
 * coordinate i, e its digital shift; f < 2^32. */
static inline double sky_sobol(const uint32_t *v, uint32_t e, uint64_t f)
{
    uint64_t g = f ^ (f >> 1);
    uint32_t x = e;
    for (int l = 0; g != 0 && l < 32; ++l, g >>= 1)
        if (g & 1u) x ^= v[l];
    return ((double)x + 0.5) * 0x1p-32;
}

#endif
