#include <math.h>
#include "skylite_vmath.h"

#define SKY_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

SKY_CLONES
static void cos_shift_row_f64(ptrdiff_t n, double *restrict a, const double *restrict phase, double scale)
{
    for (ptrdiff_t k = 0; k < n; ++k) a[k] = scale * cos(a[k] + phase[k]);
}

SKY_CLONES
static void cos_shift_row_f32(ptrdiff_t n, float *restrict a, const float *restrict phase, float scale)
{
    for (ptrdiff_t k = 0; k < n; ++k) a[k] = scale * cosf(a[k] + phase[k]);
}

SKY_CLONES
static void exp_neg_row_f64(ptrdiff_t n, double *restrict a, double scale)
{
    for (ptrdiff_t k = 0; k < n; ++k) a[k] = scale * exp(-a[k]);
}

SKY_CLONES
static void exp_neg_row_f32(ptrdiff_t n, float *restrict a, float scale)
{
    for (ptrdiff_t k = 0; k < n; ++k) a[k] = scale * expf(-a[k]);
}

void sky_cos_shift_f64(ptrdiff_t n_rows, ptrdiff_t n_cols, double *a, ptrdiff_t lda,
                       const double *phase, double scale)
{
    for (ptrdiff_t i = 0; i < n_rows; ++i) cos_shift_row_f64(n_cols, a + i * lda, phase, scale);
}

void sky_cos_shift_f32(ptrdiff_t n_rows, ptrdiff_t n_cols, float *a, ptrdiff_t lda,
                       const float *phase, float scale)
{
    for (ptrdiff_t i = 0; i < n_rows; ++i) cos_shift_row_f32(n_cols, a + i * lda, phase, scale);
}

void sky_exp_neg_f64(ptrdiff_t n_rows, ptrdiff_t n_cols, double *a, ptrdiff_t lda, double scale)
{
    for (ptrdiff_t i = 0; i < n_rows; ++i) exp_neg_row_f64(n_cols, a + i * lda, scale);
}

void sky_exp_neg_f32(ptrdiff_t n_rows, ptrdiff_t n_cols, float *a, ptrdiff_t lda, float scale)
{
    for (ptrdiff_t i = 0; i < n_rows; ++i) exp_neg_row_f32(n_cols, a + i * lda, scale);
}
