/* Products of a feature tile with a narrow matrix, the two that every ADMM iteration makes:
 *
 *     out = Z W      (rows x m)    Z: rows x s (leading dimension ld), W: s x m given as W^T
 *     P   = Z^T B    (s x k)       B: rows x k, P returned as P^T (k x s)
 *
 * with m and k the number of outputs (classes) or twice it: 1 to a few dozen.  BLAS is built
 * for square-ish products and runs these at a third to a quarter of the core's peak; here Z
 * is read once per product with the narrow operand held in registers (AVX-512).  Arithmetic
 * is float32 or float64, Z's own; float32 Z may also come as bfloat16 (the top 16 bits of a
 * float32, decoded in registers by a shift, so a bfloat16 cache is never decoded to
 * memory).  Both float32 variants do the same operations in the same order, so a bfloat16
 * tile and the float32 tile holding the same (rounded) values give bitwise equal results;
 * so do any number of calls and threads, since each result depends only on its own inputs.
 *
 * The kernels exist only where the CPU has AVX-512 (F, BW and VL); `sky_narrow_available` says
 * so at run time, and callers use BLAS otherwise.  No fast-math: the sums are in a fixed
 * order (16 or 8 lanes over s, then the lanes added in a fixed tree).
 */
#include "skylite_narrow.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SKY_NARROW_X86 1
#include <immintrin.h>

#define SKY_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma")))
#define SKY_INLINE __attribute__((always_inline)) static inline

/* The kernels are written once for both arithmetics, named by the intrinsics' suffix S:
 * ps (float32, 16 lanes) or pd (float64, 8 lanes).  SKY_OP(op, S) is _mm512_<op>_<S>. */
#define SKY_VEC_ps __m512
#define SKY_VEC_pd __m512d
#define SKY_MASK_ps __mmask16
#define SKY_MASK_pd __mmask8
#define SKY_LANES_ps 16
#define SKY_LANES_pd 8
#define SKY_REAL_ps float
#define SKY_REAL_pd double
#define SKY_OP(op, S) _mm512_##op##_##S

/* The first `left` of n lanes (all when left >= n, none when left <= 0). */
static inline unsigned lanes(ptrdiff_t left, int n)
{
    return left >= n ? (1u << n) - 1u : (left <= 0 ? 0u : (1u << left) - 1u);
}

SKY_AVX512 SKY_INLINE __m512 load_f32(const float *p, __mmask16 k)
{
    return k == 0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(k, p);
}

SKY_AVX512 SKY_INLINE __m512 load_bf16(const uint16_t *p, __mmask16 k)
{
    __m256i h = k == 0xffff ? _mm256_loadu_si256((const __m256i *) p)
                            : _mm256_maskz_loadu_epi16(k, p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

SKY_AVX512 SKY_INLINE __m512d load_f64(const double *p, __mmask8 k)
{
    return k == 0xff ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(k, p);
}

/* Z W for R <= 4 rows and G <= 5 outputs (20 accumulators): out[r * ldo + c] =
 * sum_q z[r * ld + q] wt[c * ldw + q].  Called with literal R and G, so that the loops
 * unroll and the accumulators stay in registers.  Each W load serves R rows; the next R rows
 * are prefetched a cache line per row and line of Z, which made a product streaming Z from
 * memory as fast as one with Z in cache (bfloat16). */
#define SKY_TIMES(NAME, T, LOAD, S)                                                         \
SKY_AVX512 SKY_INLINE void NAME(const T *z, ptrdiff_t ld, ptrdiff_t s,                      \
                                const SKY_REAL_##S *wt, ptrdiff_t ldw, const int R,         \
                                const int G, SKY_REAL_##S *out, ptrdiff_t ldo)              \
{                                                                                           \
    const int L = SKY_LANES_##S;                                                            \
    const SKY_MASK_##S all = (SKY_MASK_##S) lanes(L, L);                                    \
    SKY_VEC_##S acc[4][5], zr[4];                                                           \
    ptrdiff_t q = 0;                                                                        \
    for (int r = 0; r < R; ++r)                                                             \
        for (int c = 0; c < G; ++c) acc[r][c] = SKY_OP(setzero, S)();                       \
    for (; q + L <= s; q += L) {                                                            \
        if ((q * (ptrdiff_t) sizeof(T)) % 64 == 0)                                          \
            for (int r = 0; r < R; ++r)                                                     \
                _mm_prefetch((const char *) (z + (r + R) * ld + q), _MM_HINT_T0);           \
        for (int r = 0; r < R; ++r) zr[r] = LOAD(z + r * ld + q, all);                      \
        for (int c = 0; c < G; ++c) {                                                       \
            SKY_VEC_##S w = SKY_OP(loadu, S)(wt + c * ldw + q);                             \
            for (int r = 0; r < R; ++r) acc[r][c] = SKY_OP(fmadd, S)(zr[r], w, acc[r][c]);  \
        }                                                                                   \
    }                                                                                       \
    if (q < s) {                                                                            \
        SKY_MASK_##S k = (SKY_MASK_##S) lanes(s - q, L);                                    \
        for (int r = 0; r < R; ++r) zr[r] = LOAD(z + r * ld + q, k);                        \
        for (int c = 0; c < G; ++c) {                                                       \
            SKY_VEC_##S w = SKY_OP(maskz_loadu, S)(k, wt + c * ldw + q);                    \
            for (int r = 0; r < R; ++r) acc[r][c] = SKY_OP(fmadd, S)(zr[r], w, acc[r][c]);  \
        }                                                                                   \
    }                                                                                       \
    for (int r = 0; r < R; ++r)                                                             \
        for (int c = 0; c < G; ++c) out[r * ldo + c] = SKY_OP(reduce_add, S)(acc[r][c]);    \
}

/* Z^T B for 2L columns of Z (lanes k0, k1) and G <= 12 columns of B (24 accumulators):
 * pt[c * s + l] = sum_r z[r * ld + l] b[r * ldb + c].  The next 2L columns are prefetched. */
#define SKY_T_TIMES(NAME, T, LOAD, S)                                                       \
SKY_AVX512 SKY_INLINE void NAME(const T *z, ptrdiff_t ld, ptrdiff_t rows,                   \
                                SKY_MASK_##S k0, SKY_MASK_##S k1, const SKY_REAL_##S *b,    \
                                ptrdiff_t ldb, const int G, SKY_REAL_##S *pt, ptrdiff_t s)  \
{                                                                                           \
    const int L = SKY_LANES_##S;                                                            \
    SKY_VEC_##S a0[12], a1[12];                                                             \
    for (int c = 0; c < G; ++c) {                                                           \
        a0[c] = SKY_OP(setzero, S)();                                                       \
        a1[c] = SKY_OP(setzero, S)();                                                       \
    }                                                                                       \
    for (ptrdiff_t r = 0; r < rows; ++r) {                                                  \
        _mm_prefetch((const char *) (z + r * ld + 2 * L), _MM_HINT_T0);                     \
        _mm_prefetch((const char *) (z + r * ld + 3 * L), _MM_HINT_T0);                     \
        SKY_VEC_##S z0 = LOAD(z + r * ld, k0), z1 = LOAD(z + r * ld + L, k1);               \
        const SKY_REAL_##S *br = b + r * ldb;                                               \
        for (int c = 0; c < G; ++c) {                                                       \
            SKY_VEC_##S bc = SKY_OP(set1, S)(br[c]);                                        \
            a0[c] = SKY_OP(fmadd, S)(z0, bc, a0[c]);                                        \
            a1[c] = SKY_OP(fmadd, S)(z1, bc, a1[c]);                                        \
        }                                                                                   \
    }                                                                                       \
    for (int c = 0; c < G; ++c) {                                                           \
        SKY_OP(mask_storeu, S)(pt + c * s, k0, a0[c]);                                      \
        SKY_OP(mask_storeu, S)(pt + c * s + L, k1, a1[c]);                                  \
    }                                                                                       \
}

SKY_TIMES(times_f32, float, load_f32, ps)
SKY_TIMES(times_bf16, uint16_t, load_bf16, ps)
SKY_TIMES(times_f64, double, load_f64, pd)
SKY_T_TIMES(t_times_f32, float, load_f32, ps)
SKY_T_TIMES(t_times_bf16, uint16_t, load_bf16, ps)
SKY_T_TIMES(t_times_f64, double, load_f64, pd)

/* The drivers: rows four at a time and outputs five at a time for Z W; 2L columns at a time
 * and B's columns twelve at a time for Z^T B.  KERNEL_NAME, defined around each use, names
 * the kernel that the cases call. */
#define SKY_TIMES_DRIVER(NAME, T, S)                                                        \
SKY_AVX512 static void NAME(ptrdiff_t rows, ptrdiff_t s, const T *z, ptrdiff_t ld,           \
                            const SKY_REAL_##S *wt, ptrdiff_t ldw, ptrdiff_t m,             \
                            SKY_REAL_##S *out)                                              \
{                                                                                           \
    for (ptrdiff_t r = 0; r < rows; r += 4) {                                               \
        int nr = rows - r >= 4 ? 4 : (int) (rows - r);                                      \
        for (ptrdiff_t c0 = 0; c0 < m; c0 += 5) {                                           \
            int g = m - c0 >= 5 ? 5 : (int) (m - c0);                                       \
            const T *zr = z + r * ld;                                                       \
            const SKY_REAL_##S *w = wt + c0 * ldw;                                          \
            SKY_REAL_##S *o = out + r * m + c0;                                             \
            switch (g * 8 + nr) { SKY_CASES_R(SKY_TIMES_CASE) }                             \
        }                                                                                   \
    }                                                                                       \
}
#define SKY_TIMES_CASE(g, nr)                                                               \
    case g * 8 + nr: KERNEL_NAME(zr, ld, s, w, ldw, nr, g, o, m); break;
#define SKY_CASES_G(CASE, nr) CASE(1, nr) CASE(2, nr) CASE(3, nr) CASE(4, nr) CASE(5, nr)
#define SKY_CASES_R(CASE) SKY_CASES_G(CASE, 1) SKY_CASES_G(CASE, 2) SKY_CASES_G(CASE, 3)   \
    SKY_CASES_G(CASE, 4)

#define KERNEL_NAME times_f32
SKY_TIMES_DRIVER(times_f32_all, float, ps)
#undef KERNEL_NAME
#define KERNEL_NAME times_bf16
SKY_TIMES_DRIVER(times_bf16_all, uint16_t, ps)
#undef KERNEL_NAME
#define KERNEL_NAME times_f64
SKY_TIMES_DRIVER(times_f64_all, double, pd)
#undef KERNEL_NAME

#define SKY_T_TIMES_DRIVER(NAME, T, S)                                                      \
SKY_AVX512 static void NAME(ptrdiff_t rows, ptrdiff_t s, const T *z, ptrdiff_t ld,           \
                            const SKY_REAL_##S *b, ptrdiff_t k, SKY_REAL_##S *pt)           \
{                                                                                           \
    const int L = SKY_LANES_##S;                                                            \
    for (ptrdiff_t q = 0; q < s; q += 2 * L) {                                              \
        SKY_MASK_##S k0 = (SKY_MASK_##S) lanes(s - q, L);                                   \
        SKY_MASK_##S k1 = (SKY_MASK_##S) lanes(s - q - L, L);                               \
        for (ptrdiff_t c0 = 0; c0 < k; c0 += 12) {                                          \
            int g = k - c0 >= 12 ? 12 : (int) (k - c0);                                     \
            const T *zq = z + q;                                                            \
            const SKY_REAL_##S *bc = b + c0;                                                \
            SKY_REAL_##S *p = pt + c0 * s + q;                                              \
            switch (g) { SKY_CASES_12(SKY_T_TIMES_CASE) }                                   \
        }                                                                                   \
    }                                                                                       \
}
#define SKY_T_TIMES_CASE(g) case g: KERNEL_NAME(zq, ld, rows, k0, k1, bc, k, g, p, s); break;
#define SKY_CASES_12(CASE) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) \
    CASE(9) CASE(10) CASE(11) CASE(12)

#define KERNEL_NAME t_times_f32
SKY_T_TIMES_DRIVER(t_times_f32_all, float, ps)
#undef KERNEL_NAME
#define KERNEL_NAME t_times_bf16
SKY_T_TIMES_DRIVER(t_times_bf16_all, uint16_t, ps)
#undef KERNEL_NAME
#define KERNEL_NAME t_times_f64
SKY_T_TIMES_DRIVER(t_times_f64_all, double, pd)
#undef KERNEL_NAME
#endif

/* -1: not yet asked; 0 / 1: the CPU's answer. */
static int narrow_state = -1;

int sky_narrow_available(void)
{
    if (narrow_state < 0) {
#ifdef SKY_NARROW_X86
        __builtin_cpu_init();
        narrow_state = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                       && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
#else
        narrow_state = 0;
#endif
    }
    return narrow_state;
}

void sky_narrow_times_f32(ptrdiff_t rows, ptrdiff_t s, const float *z, ptrdiff_t ld,
                          const float *wt, ptrdiff_t ldw, ptrdiff_t m, float *out)
{
#ifdef SKY_NARROW_X86
    times_f32_all(rows, s, z, ld, wt, ldw, m, out);
#endif
}

void sky_narrow_times_bf16(ptrdiff_t rows, ptrdiff_t s, const uint16_t *z, ptrdiff_t ld,
                           const float *wt, ptrdiff_t ldw, ptrdiff_t m, float *out)
{
#ifdef SKY_NARROW_X86
    times_bf16_all(rows, s, z, ld, wt, ldw, m, out);
#endif
}

void sky_narrow_t_times_f32(ptrdiff_t rows, ptrdiff_t s, const float *z, ptrdiff_t ld,
                            const float *b, ptrdiff_t k, float *pt)
{
#ifdef SKY_NARROW_X86
    t_times_f32_all(rows, s, z, ld, b, k, pt);
#endif
}

void sky_narrow_t_times_bf16(ptrdiff_t rows, ptrdiff_t s, const uint16_t *z, ptrdiff_t ld,
                             const float *b, ptrdiff_t k, float *pt)
{
#ifdef SKY_NARROW_X86
    t_times_bf16_all(rows, s, z, ld, b, k, pt);
#endif
}

void sky_narrow_times_f64(ptrdiff_t rows, ptrdiff_t s, const double *z, ptrdiff_t ld,
                          const double *wt, ptrdiff_t ldw, ptrdiff_t m, double *out)
{
#ifdef SKY_NARROW_X86
    times_f64_all(rows, s, z, ld, wt, ldw, m, out);
#endif
}

void sky_narrow_t_times_f64(ptrdiff_t rows, ptrdiff_t s, const double *z, ptrdiff_t ld,
                            const double *b, ptrdiff_t k, double *pt)
{
#ifdef SKY_NARROW_X86
    t_times_f64_all(rows, s, z, ld, b, k, pt);
#endif
}
