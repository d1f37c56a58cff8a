/*
 * Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
 *
 * A random value is a pure function of (seed, block, tag, index):
 *   key     = the 64-bit seed,
 *   counter = (index / 2 [64 bits], block, tag),
 * so any thread on any rank produces the same parameters of feature block `block`
 * in any order, with no shared generator state.  `tag` separates the independent
 * parameter arrays of one block (e.g. the projection matrix and the phases).
 *
 * Every function here is plain C without global state: callable from nogil Cython.
 */
#ifndef SKYLITE_RANDOM_H
#define SKYLITE_RANDOM_H

#include <stdint.h>
#include <math.h>

#define SKY_PHILOX_M0 0xD2511F53u
#define SKY_PHILOX_M1 0xCD9E8D57u
#define SKY_PHILOX_W0 0x9E3779B9u
#define SKY_PHILOX_W1 0xBB67AE85u
#define SKY_TWO_PI 6.283185307179586476925286766559

typedef struct { uint32_t v[4]; } sky_u32x4;

static inline uint32_t sky_mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* Philox4x32 with 10 rounds on counter `c` under key (k0, k1). */
static inline sky_u32x4 sky_philox4x32(sky_u32x4 c, uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; ++r) {
        uint32_t hi0, hi1;
        uint32_t lo0 = sky_mulhilo(SKY_PHILOX_M0, c.v[0], &hi0);
        uint32_t lo1 = sky_mulhilo(SKY_PHILOX_M1, c.v[2], &hi1);
        sky_u32x4 n;
        n.v[0] = hi1 ^ c.v[1] ^ k0;
        n.v[1] = lo1;
        n.v[2] = hi0 ^ c.v[3] ^ k1;
        n.v[3] = lo0;
        c = n;
        k0 += SKY_PHILOX_W0;
        k1 += SKY_PHILOX_W1;
    }
    return c;
}

/* 128 random bits for (seed, block, tag, pair). */
static inline sky_u32x4 sky_bits(uint64_t seed, uint32_t block, uint32_t tag, uint64_t pair)
{
    sky_u32x4 c;
    c.v[0] = (uint32_t)pair;
    c.v[1] = (uint32_t)(pair >> 32);
    c.v[2] = block;
    c.v[3] = tag;
    return sky_philox4x32(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* A double uniform on the open interval (0, 1) from 64 random bits (53 used). */
static inline double sky_u01(uint32_t hi, uint32_t lo)
{
    uint64_t m = (((uint64_t)hi << 32) | lo) >> 11;
    return ((double)m + 0.5) * (1.0 / 9007199254740992.0);
}

/* Two uniforms (0,1) for pair number `pair` of stream (seed, block, tag). */
static inline void sky_uniform2(uint64_t seed, uint32_t block, uint32_t tag, uint64_t pair,
                                double *u0, double *u1)
{
    sky_u32x4 r = sky_bits(seed, block, tag, pair);
    *u0 = sky_u01(r.v[0], r.v[1]);
    *u1 = sky_u01(r.v[2], r.v[3]);
}

/* Element `i` of stream (seed, block, tag) as a uniform on (0, 1). */
static inline double sky_uniform(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
{
    double u0, u1;
    sky_uniform2(seed, block, tag, i >> 1, &u0, &u1);
    return (i & 1) ? u1 : u0;
}

/* Element `i` as a 64-bit random integer. */
static inline uint64_t sky_uint64(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
{
    sky_u32x4 r = sky_bits(seed, block, tag, i >> 1);
    return (i & 1) ? (((uint64_t)r.v[2] << 32) | r.v[3]) : (((uint64_t)r.v[0] << 32) | r.v[1]);
}

/* Element `i` as a uniform integer in [0, n) (Lemire's multiply-shift; the bias is
 * below n / 2^64, negligible for the sizes used here). */
static inline uint64_t sky_below(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i, uint64_t n)
{
    return (uint64_t)(((__uint128_t)sky_uint64(seed, block, tag, i) * n) >> 64);
}

/* Element `i` as a standard normal (Box-Muller on the pair containing i). */
static inline double sky_normal(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
{
    double u0, u1;
    sky_uniform2(seed, block, tag, i >> 1, &u0, &u1);
    double r = sqrt(-2.0 * log(u0));
    return (i & 1) ? r * sin(SKY_TWO_PI * u1) : r * cos(SKY_TWO_PI * u1);
}

/* Fill out[0..n) with elements first..first+n of the stream, as standard normals. */
static inline void sky_fill_normal(uint64_t seed, uint32_t block, uint32_t tag, uint64_t first,
                                   double *out, int64_t n)
{
    int64_t k = 0;
    if (n > 0 && (first & 1)) { out[k++] = sky_normal(seed, block, tag, first); }
    for (; k + 1 < n; k += 2) {
        double u0, u1;
        sky_uniform2(seed, block, tag, (first + k) >> 1, &u0, &u1);
        double r = sqrt(-2.0 * log(u0));
        out[k] = r * cos(SKY_TWO_PI * u1);
        out[k + 1] = r * sin(SKY_TWO_PI * u1);
    }
    if (k < n) { out[k] = sky_normal(seed, block, tag, first + k); }
}

/* Element `i` as a standard Cauchy variate: tan(pi (u - 1/2)). */
static inline double sky_cauchy(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i)
{
    return tan(3.14159265358979323846 * (sky_uniform(seed, block, tag, i) - 0.5));
}

/* Element `i` as a Levy(0, c) variate: c / N^2 with N standard normal. */
static inline double sky_levy(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i, double c)
{
    double g = sky_normal(seed, block, tag, i);
    return c / (g * g);
}

/* Element `i` as a Gamma(shape, 1) variate (Marsaglia & Tsang 2000).  Rejection
 * sampling stays counter-based: attempt a of element i uses the sub-stream
 * (seed, block, tag + 1 + a mod 2^16 ... ) so the result is still a pure function of i. */
static inline double sky_gamma(uint64_t seed, uint32_t block, uint32_t tag, uint64_t i, double shape)
{
    double boost = 1.0;
    if (shape < 1.0) {
        /* Gamma(a) = Gamma(a + 1) * U^(1/a) */
        boost = pow(sky_uniform(seed, block, tag ^ 0x80000000u, i), 1.0 / shape);
        shape += 1.0;
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (uint32_t a = 0;; ++a) {
        /* two normals' worth of bits and one uniform per attempt */
        uint64_t j = (i << 8) | (a & 0xFFu);
        uint32_t t = tag + (a >> 8) * 0x10000u;
        double x = sky_normal(seed, block, t ^ 0x40000000u, j << 1);
        double u = sky_uniform(seed, block, t ^ 0x20000000u, j);
        double v = 1.0 + c * x;
        if (v <= 0.0) continue;
        v = v * v * v;
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return boost * d * v;
    }
}

#endif
