/* bfloat16 storage of float32 feature blocks: the top 16 bits of a float32 (sign,
 * 8-bit exponent, 7-bit mantissa).  A value is rounded to the nearest bfloat16, ties to
 * even; NaN stays NaN.  Decoding is a 16-bit shift, so every loop here vectorizes with
 * plain SSE2/NEON (no F16C).  Arrays are row-major with leading dimensions. */
#ifndef SKYLITE_BF16_H
#define SKYLITE_BF16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bit casts through memcpy (no aliasing of float and uint32 pointers); compilers turn them
 * into plain moves and still vectorize the loops. */
static inline uint32_t sky_f32_bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float sky_bits_f32(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

/* Round rows x cols float32 values (leading dimension ld) to bfloat16 in place: the low 16
 * bits of each become 0, so that the array holds exactly what the bfloat16 store keeps. */
static inline void sky_bf16_round(ptrdiff_t rows, ptrdiff_t cols, float *a, ptrdiff_t ld)
{
    for (ptrdiff_t r = 0; r < rows; ++r) {
        float *row = a + r * ld;
        for (ptrdiff_t c = 0; c < cols; ++c) {
            uint32_t x = sky_f32_bits(row[c]);
            uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
            uint32_t nan = (x | 0x00400000u) & 0xffff0000u;
            row[c] = sky_bits_f32(((x & 0x7fffffffu) > 0x7f800000u) ? nan : rounded);
        }
    }
}

/* dst (rows x cols, contiguous) <- the top halves of src (rows x cols, leading dimension
 * ld), which `sky_bf16_round` has rounded. */
static inline void sky_bf16_store(ptrdiff_t rows, ptrdiff_t cols, const float *src,
                                  ptrdiff_t ld, uint16_t *dst)
{
    for (ptrdiff_t r = 0; r < rows; ++r) {
        const float *row = src + r * ld;
        uint16_t *d = dst + r * cols;
        for (ptrdiff_t c = 0; c < cols; ++c)
            d[c] = (uint16_t)(sky_f32_bits(row[c]) >> 16);
    }
}

/* dst (rows x cols, leading dimension ld) <- the float32 values of src (rows x cols,
 * contiguous bfloat16). */
static inline void sky_bf16_load(ptrdiff_t rows, ptrdiff_t cols, const uint16_t *src,
                                 float *dst, ptrdiff_t ld)
{
    for (ptrdiff_t r = 0; r < rows; ++r) {
        const uint16_t *s = src + r * cols;
        float *row = dst + r * ld;
        for (ptrdiff_t c = 0; c < cols; ++c)
            row[c] = sky_bits_f32((uint32_t)s[c] << 16);
    }
}

#endif
