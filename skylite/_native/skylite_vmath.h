/*
 * Elementwise nonlinearities of the feature maps, on row-major blocks.
 * Compiled alone with -ffast-math so that GCC vectorizes cos/exp through glibc's
 * libmvec (6-12x faster than scalar libm); nothing else is built with fast-math.
 */
#ifndef SKYLITE_VMATH_H
#define SKYLITE_VMATH_H
#include <stddef.h>

/* a[i, k] = scale * cos(a[i, k] + phase[k]) for i < n_rows, k < n_cols (row stride lda). */
void sky_cos_shift_f64(ptrdiff_t n_rows, ptrdiff_t n_cols, double *a, ptrdiff_t lda,
                       const double *phase, double scale);
void sky_cos_shift_f32(ptrdiff_t n_rows, ptrdiff_t n_cols, float *a, ptrdiff_t lda,
                       const float *phase, float scale);
/* a[i, k] = scale * exp(-a[i, k]). */
void sky_exp_neg_f64(ptrdiff_t n_rows, ptrdiff_t n_cols, double *a, ptrdiff_t lda, double scale);
void sky_exp_neg_f32(ptrdiff_t n_rows, ptrdiff_t n_cols, float *a, ptrdiff_t lda, float scale);
#endif
