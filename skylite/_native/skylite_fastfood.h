/*
 * In-place fast Walsh-Hadamard transform (unnormalized: a <- H a, H entries +/-1,
 * H[i, k] = (-1)^popcount(i & k)), float64 and float32, for the Fastfood feature map.
 *
 * Length n must be a power of two.  Layout of the work, for n >= W (W = 8 doubles or
 * 16 floats, one 64-byte vector):
 *   - the first log2(W) stages (butterfly strides 1, 2, 4[, 8]) act inside each aligned
 *     group of W elements; they are done on one W-wide vector per group with GCC vector
 *     extensions: stride h is y = swap_h(x), x = y + sign_h * x (exact: sign is +/-1),
 *   - the remaining stages (strides >= W) go two at a time (radix 4: 4 loads, 8 add/sub,
 *     4 stores per 4 elements) with contiguous inner loops of length >= W that the
 *     compiler vectorizes, plus one radix-2 stage if their number is odd.
 * Every output is the same sum of the same terms in the same order as the textbook
 * radix-2 butterflies (u + v, u - v), so the result does not depend on the target.
 *
 * Functions are cloned for AVX-512, AVX2 and baseline x86-64 and picked at load time.
 * Plain C, no global state, no fast-math: callable from nogil Cython.
 */
#ifndef SKYLITE_FASTFOOD_H
#define SKYLITE_FASTFOOD_H

#include <stddef.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define SKY_FWHT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SKY_FWHT_CLONES
#endif

#if defined(__GNUC__)
#define SKY_FF_INLINE static inline __attribute__((always_inline))
/* W-wide vectors (64 bytes) and a lane permutation of one vector (GCC or clang) */
#ifndef SKY_FWHT_VECTOR_BASE
#define SKY_FWHT_VECTOR_BASE 1
#endif
typedef double sky_v8d __attribute__((vector_size(64)));
typedef float sky_v16f __attribute__((vector_size(64)));
typedef long long sky_v8l __attribute__((vector_size(64)));
typedef int sky_v16i __attribute__((vector_size(64)));
#if defined(__clang__)
#define SKY_PERM8(x, ...) __builtin_shufflevector((x), (x), __VA_ARGS__)
#define SKY_PERM16(x, ...) __builtin_shufflevector((x), (x), __VA_ARGS__)
#else
#define SKY_PERM8(x, ...) __builtin_shuffle((x), (sky_v8l){__VA_ARGS__})
#define SKY_PERM16(x, ...) __builtin_shuffle((x), (sky_v16i){__VA_ARGS__})
#endif
#else
#define SKY_FF_INLINE static inline
#define SKY_FWHT_VECTOR_BASE 0
#endif

/* One radix-2 stage of stride h (h < n), generic. */
#define SKY_FWHT_RADIX2(T, a, n, h)                                            \
    for (ptrdiff_t i_ = 0; i_ < (n); i_ += 2 * (h)) {                          \
        T *restrict p_ = (a) + i_;                                             \
        T *restrict q_ = (a) + i_ + (h);                                       \
        for (ptrdiff_t k_ = 0; k_ < (h); ++k_) {                               \
            T u_ = p_[k_], v_ = q_[k_];                                        \
            p_[k_] = u_ + v_;                                                  \
            q_[k_] = u_ - v_;                                                  \
        }                                                                      \
    }

/* Two stages, strides h and 2h (4h <= n), as one radix-4 pass. */
#define SKY_FWHT_RADIX4(T, a, n, h)                                            \
    for (ptrdiff_t i_ = 0; i_ < (n); i_ += 4 * (h)) {                          \
        T *restrict p0_ = (a) + i_;                                            \
        T *restrict p1_ = p0_ + (h);                                           \
        T *restrict p2_ = p1_ + (h);                                           \
        T *restrict p3_ = p2_ + (h);                                           \
        for (ptrdiff_t k_ = 0; k_ < (h); ++k_) {                               \
            T a0_ = p0_[k_], a1_ = p1_[k_], a2_ = p2_[k_], a3_ = p3_[k_];      \
            T s0_ = a0_ + a1_, d0_ = a0_ - a1_, s1_ = a2_ + a3_, d1_ = a2_ - a3_; \
            p0_[k_] = s0_ + s1_;                                               \
            p1_[k_] = d0_ + d1_;                                               \
            p2_[k_] = s0_ - s1_;                                               \
            p3_[k_] = d0_ - d1_;                                               \
        }                                                                      \
    }

SKY_FF_INLINE void sky_fwht_f64_inl(double *a, ptrdiff_t n)
{
    ptrdiff_t h;
    if (n < 8 || !SKY_FWHT_VECTOR_BASE) {
        for (h = 1; h < n && h < 8; h *= 2) { SKY_FWHT_RADIX2(double, a, n, h) }
        if (n <= 8) return;
    }
#if SKY_FWHT_VECTOR_BASE
    else {
        const sky_v8d s1 = {1, -1, 1, -1, 1, -1, 1, -1};
        const sky_v8d s2 = {1, 1, -1, -1, 1, 1, -1, -1};
        const sky_v8d s4 = {1, 1, 1, 1, -1, -1, -1, -1};
        for (ptrdiff_t i = 0; i < n; i += 8) {
            sky_v8d x, y;
            memcpy(&x, a + i, sizeof x);
            y = SKY_PERM8(x, 1, 0, 3, 2, 5, 4, 7, 6); x = y + s1 * x;
            y = SKY_PERM8(x, 2, 3, 0, 1, 6, 7, 4, 5); x = y + s2 * x;
            y = SKY_PERM8(x, 4, 5, 6, 7, 0, 1, 2, 3); x = y + s4 * x;
            memcpy(a + i, &x, sizeof x);
        }
    }
#endif
    for (h = 8; 4 * h <= n; h *= 4) { SKY_FWHT_RADIX4(double, a, n, h) }
    if (h < n) { SKY_FWHT_RADIX2(double, a, n, h) }
}

SKY_FF_INLINE void sky_fwht_f32_inl(float *a, ptrdiff_t n)
{
    ptrdiff_t h;
    if (n < 16 || !SKY_FWHT_VECTOR_BASE) {
        for (h = 1; h < n && h < 16; h *= 2) { SKY_FWHT_RADIX2(float, a, n, h) }
        if (n <= 16) return;
    }
#if SKY_FWHT_VECTOR_BASE
    else {
        const sky_v16f s1 = {1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1};
        const sky_v16f s2 = {1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1};
        const sky_v16f s4 = {1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1};
        const sky_v16f s8 = {1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1};
        for (ptrdiff_t i = 0; i < n; i += 16) {
            sky_v16f x, y;
            memcpy(&x, a + i, sizeof x);
            y = SKY_PERM16(x, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
            x = y + s1 * x;
            y = SKY_PERM16(x, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
            x = y + s2 * x;
            y = SKY_PERM16(x, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
            x = y + s4 * x;
            y = SKY_PERM16(x, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
            x = y + s8 * x;
            memcpy(a + i, &x, sizeof x);
        }
    }
#endif
    for (h = 16; 4 * h <= n; h *= 4) { SKY_FWHT_RADIX4(float, a, n, h) }
    if (h < n) { SKY_FWHT_RADIX2(float, a, n, h) }
}

/* a <- H a, in place; n a power of two. */
SKY_FWHT_CLONES
static void sky_fwht_f64(double *a, ptrdiff_t n) { sky_fwht_f64_inl(a, n); }

SKY_FWHT_CLONES
static void sky_fwht_f32(float *a, ptrdiff_t n) { sky_fwht_f32_inl(a, n); }

/*
 * The Fastfood pre-activations of one input row for the n_chunks chunks of a block:
 * for chunk c (parameters P = params + 4 D c: B, Pi, G, S' of D values each),
 *     u = B x (x has d <= D values, zero-padded),  u <- H u,
 *     w_k = G_k u_{Pi_k},  w <- H w,
 *     out[c D + k] = S'_k w_k   for k < min(D, s_j - c D).
 * u and w are work arrays of D values.  Pi holds integers < 2^24 as floating values.
 */
#define SKY_FASTFOOD_ROW(T, suffix)                                                       \
SKY_FWHT_CLONES                                                                           \
static void sky_fastfood_row_##suffix(ptrdiff_t d, ptrdiff_t D, ptrdiff_t n_chunks,       \
                                      ptrdiff_t s_j, const T *restrict x,                 \
                                      const T *restrict params, T *restrict out,          \
                                      T *restrict u, T *restrict w)                       \
{                                                                                         \
    for (ptrdiff_t c = 0; c < n_chunks; ++c) {                                            \
        const T *restrict B = params + 4 * D * c;                                         \
        const T *restrict Pi = B + D;                                                     \
        const T *restrict G = B + 2 * D;                                                  \
        const T *restrict S = B + 3 * D;                                                  \
        for (ptrdiff_t k = 0; k < d; ++k) u[k] = B[k] * x[k];                             \
        for (ptrdiff_t k = d; k < D; ++k) u[k] = 0;                                       \
        sky_fwht_##suffix##_inl(u, D);                                                    \
        for (ptrdiff_t k = 0; k < D; ++k) w[k] = G[k] * u[(int)Pi[k]];                    \
        sky_fwht_##suffix##_inl(w, D);                                                    \
        ptrdiff_t m = s_j - c * D < D ? s_j - c * D : D;                                  \
        T *restrict o = out + c * D;                                                      \
        for (ptrdiff_t k = 0; k < m; ++k) o[k] = S[k] * w[k];                             \
    }                                                                                     \
}

SKY_FASTFOOD_ROW(double, f64)
SKY_FASTFOOD_ROW(float, f32)

/*
 * The subsampled randomized Hadamard transform of one input row for the n_chunks chunks of a
 * block: for chunk c (parameters P = params + 2 D c: B, R of D values each),
 *     u = B x (x has d <= D values, zero-padded),  u <- H u,
 *     out[c D + k] = scale * u_{R_k}   for k < min(D, s_j - c D).
 * u is a work array of D values.  R holds distinct integers < 2^24 as floating values.
 */
#define SKY_SRHT_ROW(T, suffix)                                                           \
SKY_FWHT_CLONES                                                                           \
static void sky_srht_row_##suffix(ptrdiff_t d, ptrdiff_t D, ptrdiff_t n_chunks,           \
                                  ptrdiff_t s_j, const T *restrict x,                     \
                                  const T *restrict params, T *restrict out,              \
                                  T *restrict u, T scale)                                 \
{                                                                                         \
    for (ptrdiff_t c = 0; c < n_chunks; ++c) {                                            \
        const T *restrict B = params + 2 * D * c;                                         \
        const T *restrict R = B + D;                                                      \
        for (ptrdiff_t k = 0; k < d; ++k) u[k] = B[k] * x[k];                             \
        for (ptrdiff_t k = d; k < D; ++k) u[k] = 0;                                       \
        sky_fwht_##suffix##_inl(u, D);                                                    \
        ptrdiff_t m = s_j - c * D < D ? s_j - c * D : D;                                  \
        T *restrict o = out + c * D;                                                      \
        for (ptrdiff_t k = 0; k < m; ++k) o[k] = scale * u[(int)R[k]];                    \
    }                                                                                     \
}

SKY_SRHT_ROW(double, f64)
SKY_SRHT_ROW(float, f32)

#endif
