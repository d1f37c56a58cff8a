/* Products of a feature tile with a narrow matrix (skylite_narrow.c): Z W and Z^T B for
 * m, k of 1 to a few dozen columns, in float32 (Z in float32 or bfloat16) or float64,
 * AVX-512 only (`sky_narrow_available`).  Row-major arrays with leading dimensions. */
#ifndef SKYLITE_NARROW_H
#define SKYLITE_NARROW_H

#include <stddef.h>
#include <stdint.h>

/* 1 if the kernels run on this CPU, else 0. */
int sky_narrow_available(void);

/* out (rows x m, contiguous) = Z W, with Z rows x s (leading dimension ld) and W given as
 * wt = W^T (m x s, leading dimension ldw >= s; a multiple of 1024 floats makes its rows
 * share cache sets and the product slower). */
void sky_narrow_times_f32(ptrdiff_t rows, ptrdiff_t s, const float *z, ptrdiff_t ld,
                          const float *wt, ptrdiff_t ldw, ptrdiff_t m, float *out);
void sky_narrow_times_bf16(ptrdiff_t rows, ptrdiff_t s, const uint16_t *z, ptrdiff_t ld,
                           const float *wt, ptrdiff_t ldw, ptrdiff_t m, float *out);

/* pt (k x s, contiguous) = (Z^T B)^T, with Z rows x s (leading dimension ld) and B rows x k
 * (contiguous). */
void sky_narrow_t_times_f32(ptrdiff_t rows, ptrdiff_t s, const float *z, ptrdiff_t ld,
                            const float *b, ptrdiff_t k, float *pt);
void sky_narrow_t_times_bf16(ptrdiff_t rows, ptrdiff_t s, const uint16_t *z, ptrdiff_t ld,
                             const float *b, ptrdiff_t k, float *pt);

void sky_narrow_times_f64(ptrdiff_t rows, ptrdiff_t s, const double *z, ptrdiff_t ld,
                          const double *wt, ptrdiff_t ldw, ptrdiff_t m, double *out);
void sky_narrow_t_times_f64(ptrdiff_t rows, ptrdiff_t s, const double *z, ptrdiff_t ld,
                            const double *b, ptrdiff_t k, double *pt);

#endif
