/* Complex FFT of any length: radix-2 for powers of two, Bluestein otherwise.
 * See skylite_fft.h.  Compiled without -ffast-math. */
#include "skylite_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The radix-2 passes carry all the arithmetic: let the compiler build an AVX2 variant too,
 * picked at run time (glibc ifunc).  No fast-math, no contraction in ISO C mode: the results
 * of the variants differ at most by the order of independent operations (none here). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SKY_FFT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SKY_FFT_CLONES
#endif

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

static int64_t next_pow2(int64_t n)
{
    int64_t m = 1;
    while (m < n) m <<= 1;
    return m;
}

/* One radix-2 stage of span h (decimation in frequency). */
static inline void dif_stage(int64_t m, int64_t h, const double *restrict twr,
                             const double *restrict twi, double *restrict re,
                             double *restrict im)
{
    const double *restrict wr = twr + h - 1, *restrict wi = twi + h - 1;
    for (int64_t g = 0; g < m; g += 2 * h) {
        double *restrict ar = re + g, *restrict ai = im + g;
        double *restrict br = re + g + h, *restrict bi = im + g + h;
        for (int64_t k = 0; k < h; ++k) {
            double xr = ar[k], xi = ai[k], yr = br[k], yi = bi[k];
            ar[k] = xr + yr;
            ai[k] = xi + yi;
            double dr = xr - yr, di = xi - yi;
            br[k] = dr * wr[k] - di * wi[k];
            bi[k] = dr * wi[k] + di * wr[k];
        }
    }
}

/* The butterflies of two radix-2 stages (spans h = 2q and q, decimation in frequency) on
 * the four quarters of one group of 4q points. */
static inline void dif_kernel2(int64_t q, double *restrict r0, double *restrict i0,
                               double *restrict r1, double *restrict i1,
                               double *restrict r2, double *restrict i2,
                               double *restrict r3, double *restrict i3,
                               const double *restrict wr, const double *restrict wi,
                               const double *restrict ur, const double *restrict ui,
                               const double *restrict vr, const double *restrict vi)
{
    /* w = w_h[k], u = w_h[k + q], v = w_q[k] */
    for (int64_t k = 0; k < q; ++k) {
        double x0r = r0[k], x0i = i0[k], x1r = r1[k], x1i = i1[k];
        double x2r = r2[k], x2i = i2[k], x3r = r3[k], x3i = i3[k];
        /* span h: (0, 2) with w, (1, 3) with u */
        double a0r = x0r + x2r, a0i = x0i + x2i;
        double a1r = x1r + x3r, a1i = x1i + x3i;
        double dr = x0r - x2r, di = x0i - x2i;
        double a2r = dr * wr[k] - di * wi[k], a2i = dr * wi[k] + di * wr[k];
        dr = x1r - x3r; di = x1i - x3i;
        double a3r = dr * ur[k] - di * ui[k], a3i = dr * ui[k] + di * ur[k];
        /* span q: (0, 1) and (2, 3) with v */
        r0[k] = a0r + a1r; i0[k] = a0i + a1i;
        dr = a0r - a1r; di = a0i - a1i;
        r1[k] = dr * vr[k] - di * vi[k]; i1[k] = dr * vi[k] + di * vr[k];
        r2[k] = a2r + a3r; i2[k] = a2i + a3i;
        dr = a2r - a3r; di = a2i - a3i;
        r3[k] = dr * vr[k] - di * vi[k]; i3[k] = dr * vi[k] + di * vr[k];
    }
}

/* Two radix-2 stages, spans h and h/2, in one pass over the data (decimation in frequency). */
static inline void dif_stage2(int64_t m, int64_t h, const double *twr, const double *twi,
                              double *re, double *im)
{
    int64_t q = h >> 1;
    const double *wr = twr + h - 1, *wi = twi + h - 1, *vr = twr + q - 1, *vi = twi + q - 1;
    for (int64_t g = 0; g < m; g += 2 * h)
        dif_kernel2(q, re + g, im + g, re + g + q, im + g + q, re + g + h, im + g + h,
                    re + g + h + q, im + g + h + q, wr, wi, wr + q, wi + q, vr, vi);
}

/* Decimation in frequency, natural order in, bit-reversed order out (unnormalized
 * forward DFT; pass (im, re) for the unnormalized inverse). */
SKY_FFT_CLONES
void sky_fft_dif_pow2(int64_t m, const double *restrict twr, const double *restrict twi,
                      double *restrict re, double *restrict im)
{
    int64_t h = m >> 1;
    for (; h >= 8; h >>= 2)
        dif_stage2(m, h, twr, twi, re, im);
    if (h == 4)
        dif_stage(m, h, twr, twi, re, im);
    if (m >= 4) {
        /* the stages h = 2 (twiddles 1, -i) and h = 1 together */
        for (int64_t g = 0; g < m; g += 4) {
            double x0r = re[g], x1r = re[g + 1], x2r = re[g + 2], x3r = re[g + 3];
            double x0i = im[g], x1i = im[g + 1], x2i = im[g + 2], x3i = im[g + 3];
            double y0r = x0r + x2r, y0i = x0i + x2i, y2r = x0r - x2r, y2i = x0i - x2i;
            double y1r = x1r + x3r, y1i = x1i + x3i;
            double y3r = x1i - x3i, y3i = x3r - x1r;   /* (x1 - x3) * (-i) */
            re[g] = y0r + y1r;     im[g] = y0i + y1i;
            re[g + 1] = y0r - y1r; im[g + 1] = y0i - y1i;
            re[g + 2] = y2r + y3r; im[g + 2] = y2i + y3i;
            re[g + 3] = y2r - y3r; im[g + 3] = y2i - y3i;
        }
    } else if (m == 2) {
        double xr = re[0], xi = im[0];
        re[0] = xr + re[1]; im[0] = xi + im[1];
        re[1] = xr - re[1]; im[1] = xi - im[1];
    }
}

/* One radix-2 stage of span h (decimation in time). */
static inline void dit_stage(int64_t m, int64_t h, const double *restrict twr,
                             const double *restrict twi, double *restrict re,
                             double *restrict im)
{
    const double *restrict wr = twr + h - 1, *restrict wi = twi + h - 1;
    for (int64_t g = 0; g < m; g += 2 * h) {
        double *restrict ar = re + g, *restrict ai = im + g;
        double *restrict br = re + g + h, *restrict bi = im + g + h;
        for (int64_t k = 0; k < h; ++k) {
            double yr = br[k], yi = bi[k];
            double tr = yr * wr[k] - yi * wi[k], ti = yr * wi[k] + yi * wr[k];
            double xr = ar[k], xi = ai[k];
            ar[k] = xr + tr;
            ai[k] = xi + ti;
            br[k] = xr - tr;
            bi[k] = xi - ti;
        }
    }
}

/* The butterflies of two radix-2 stages (spans q and h = 2q, decimation in time) on the
 * four quarters of one group of 4q points. */
static inline void dit_kernel2(int64_t q, double *restrict r0, double *restrict i0,
                               double *restrict r1, double *restrict i1,
                               double *restrict r2, double *restrict i2,
                               double *restrict r3, double *restrict i3,
                               const double *restrict wr, const double *restrict wi,
                               const double *restrict ur, const double *restrict ui,
                               const double *restrict vr, const double *restrict vi)
{
    /* v = w_q[k], w = w_h[k], u = w_h[k + q] */
    for (int64_t k = 0; k < q; ++k) {
        double x0r = r0[k], x0i = i0[k], x1r = r1[k], x1i = i1[k];
        double x2r = r2[k], x2i = i2[k], x3r = r3[k], x3i = i3[k];
        /* span q: (0, 1) and (2, 3) with v */
        double tr = x1r * vr[k] - x1i * vi[k], ti = x1r * vi[k] + x1i * vr[k];
        double b0r = x0r + tr, b0i = x0i + ti, b1r = x0r - tr, b1i = x0i - ti;
        tr = x3r * vr[k] - x3i * vi[k]; ti = x3r * vi[k] + x3i * vr[k];
        double b2r = x2r + tr, b2i = x2i + ti, b3r = x2r - tr, b3i = x2i - ti;
        /* span h: (0, 2) with w, (1, 3) with u */
        tr = b2r * wr[k] - b2i * wi[k]; ti = b2r * wi[k] + b2i * wr[k];
        r0[k] = b0r + tr; i0[k] = b0i + ti; r2[k] = b0r - tr; i2[k] = b0i - ti;
        tr = b3r * ur[k] - b3i * ui[k]; ti = b3r * ui[k] + b3i * ur[k];
        r1[k] = b1r + tr; i1[k] = b1i + ti; r3[k] = b1r - tr; i3[k] = b1i - ti;
    }
}

/* Two radix-2 stages, spans q and 2q, in one pass over the data (decimation in time). */
static inline void dit_stage2(int64_t m, int64_t q, const double *twr, const double *twi,
                              double *re, double *im)
{
    int64_t h = q << 1;
    const double *wr = twr + h - 1, *wi = twi + h - 1, *vr = twr + q - 1, *vi = twi + q - 1;
    for (int64_t g = 0; g < m; g += 2 * h)
        dit_kernel2(q, re + g, im + g, re + g + q, im + g + q, re + g + h, im + g + h,
                    re + g + h + q, im + g + h + q, wr, wi, wr + q, wi + q, vr, vi);
}

/* Decimation in time, bit-reversed order in, natural order out (unnormalized forward DFT;
 * pass (im, re) for the unnormalized inverse). */
SKY_FFT_CLONES
void sky_fft_dit_pow2(int64_t m, const double *restrict twr, const double *restrict twi,
                      double *restrict re, double *restrict im)
{
    if (m >= 4) {
        for (int64_t g = 0; g < m; g += 4) {
            double x0r = re[g], x1r = re[g + 1], x2r = re[g + 2], x3r = re[g + 3];
            double x0i = im[g], x1i = im[g + 1], x2i = im[g + 2], x3i = im[g + 3];
            double y0r = x0r + x1r, y0i = x0i + x1i, y1r = x0r - x1r, y1i = x0i - x1i;
            double y2r = x2r + x3r, y2i = x2i + x3i;
            double tr = x2i - x3i, ti = x3r - x2r;     /* (x2 - x3) * (-i) */
            re[g] = y0r + y2r;     im[g] = y0i + y2i;
            re[g + 2] = y0r - y2r; im[g + 2] = y0i - y2i;
            re[g + 1] = y1r + tr;  im[g + 1] = y1i + ti;
            re[g + 3] = y1r - tr;  im[g + 3] = y1i - ti;
        }
    } else if (m == 2) {
        double xr = re[0], xi = im[0];
        re[0] = xr + re[1]; im[0] = xi + im[1];
        re[1] = xr - re[1]; im[1] = xi - im[1];
    }
    /* spans 4, 8, .., m/2 in pairs; with an odd number of them, span 4 alone first */
    int64_t h = 4;
    int64_t n_spans = 0;
    for (int64_t t = 4; t < m; t <<= 1) ++n_spans;
    if (n_spans & 1) {
        dit_stage(m, h, twr, twi, re, im);
        h <<= 1;
    }
    for (; h < m; h <<= 2)
        dit_stage2(m, h, twr, twi, re, im);
}

void sky_fft_plan_free(sky_fft_plan *plan)
{
    free(plan->twr); free(plan->twi); free(plan->rev); free(plan->neg);
    free(plan->chr); free(plan->chi); free(plan->kr); free(plan->ki);
    memset(plan, 0, sizeof(*plan));
}

int sky_fft_plan_init(sky_fft_plan *plan, int64_t n)
{
    memset(plan, 0, sizeof(*plan));
    if (n < 1) return -1;
    plan->n = n;
    plan->bluestein = !is_pow2(n);
    int64_t m = plan->bluestein ? next_pow2(2 * n - 1) : n;
    plan->m = m;
    plan->twr = malloc((size_t)m * sizeof(double));
    plan->twi = malloc((size_t)m * sizeof(double));
    plan->neg = malloc((size_t)n * sizeof(int64_t));
    if (!plan->twr || !plan->twi || !plan->neg) goto fail;
    for (int64_t h = 1; h < m; h <<= 1) {
        for (int64_t k = 0; k < h; ++k) {
            double a = M_PI * (double)k / (double)h;   /* exp(-2 pi i k / (2h)) */
            plan->twr[h - 1 + k] = cos(a);
            plan->twi[h - 1 + k] = -sin(a);
        }
    }
    if (!plan->bluestein) {
        int bits = 0;
        while (((int64_t)1 << bits) < n) ++bits;
        plan->rev = malloc((size_t)n * sizeof(int64_t));
        if (!plan->rev) goto fail;
        for (int64_t i = 0; i < n; ++i) {
            int64_t r = 0;
            for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
            plan->rev[i] = r;
        }
        for (int64_t i = 0; i < n; ++i)
            plan->neg[i] = plan->rev[(n - plan->rev[i]) & (n - 1)];
        return 0;
    }
    for (int64_t i = 0; i < n; ++i) plan->neg[i] = (n - i) % n;
    plan->chr = malloc((size_t)n * sizeof(double));
    plan->chi = malloc((size_t)n * sizeof(double));
    plan->kr = calloc((size_t)m, sizeof(double));
    plan->ki = calloc((size_t)m, sizeof(double));
    if (!plan->chr || !plan->chi || !plan->kr || !plan->ki) goto fail;
    for (int64_t k = 0; k < n; ++k) {
        /* exp(-i pi k^2 / n), with k^2 reduced mod 2n so that the angle stays in [0, 2 pi) */
        uint64_t r = ((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n);
        double a = M_PI * (double)r / (double)n;
        plan->chr[k] = cos(a);
        plan->chi[k] = -sin(a);
    }
    /* kernel b_l = conj(chirp_|l|) for |l| < n, wrapped mod m; transformed and scaled by 1/m
     * so that the inverse transform of the product needs no normalization */
    for (int64_t l = 0; l < n; ++l) {
        plan->kr[l] = plan->chr[l];
        plan->ki[l] = -plan->chi[l];
        if (l > 0) {
            plan->kr[m - l] = plan->chr[l];
            plan->ki[m - l] = -plan->chi[l];
        }
    }
    sky_fft_dif_pow2(m, plan->twr, plan->twi, plan->kr, plan->ki);
    for (int64_t i = 0; i < m; ++i) {
        plan->kr[i] /= (double)m;
        plan->ki[i] /= (double)m;
    }
    return 0;
fail:
    sky_fft_plan_free(plan);
    return -1;
}

int64_t sky_fft_work_size(const sky_fft_plan *plan)
{
    return plan->bluestein ? 2 * plan->m : 0;
}

/* Bluestein: unnormalized forward DFT of length n, natural order in and out. */
static void bluestein(const sky_fft_plan *p, double *restrict re, double *restrict im,
                      double *work)
{
    int64_t n = p->n, m = p->m;
    double *restrict wr = work, *restrict wi = work + m;
    for (int64_t j = 0; j < n; ++j) {
        double xr = re[j], xi = im[j];
        wr[j] = xr * p->chr[j] - xi * p->chi[j];
        wi[j] = xr * p->chi[j] + xi * p->chr[j];
    }
    memset(wr + n, 0, (size_t)(m - n) * sizeof(double));
    memset(wi + n, 0, (size_t)(m - n) * sizeof(double));
    sky_fft_dif_pow2(m, p->twr, p->twi, wr, wi);
    for (int64_t i = 0; i < m; ++i) {
        double xr = wr[i], xi = wi[i];
        wr[i] = xr * p->kr[i] - xi * p->ki[i];
        wi[i] = xr * p->ki[i] + xi * p->kr[i];
    }
    sky_fft_dit_pow2(m, p->twr, p->twi, wi, wr);   /* inverse (already scaled by 1/m) */
    for (int64_t k = 0; k < n; ++k) {
        double xr = wr[k], xi = wi[k];
        re[k] = xr * p->chr[k] - xi * p->chi[k];
        im[k] = xr * p->chi[k] + xi * p->chr[k];
    }
}

static void scale(int64_t n, double *re, double *im, double f)
{
    for (int64_t i = 0; i < n; ++i) {
        re[i] *= f;
        im[i] *= f;
    }
}

static void bit_reverse(const sky_fft_plan *p, double *re, double *im)
{
    for (int64_t i = 0; i < p->n; ++i) {
        int64_t r = p->rev[i];
        if (i < r) {
            double t = re[i]; re[i] = re[r]; re[r] = t;
            t = im[i]; im[i] = im[r]; im[r] = t;
        }
    }
}

void sky_fft_forward_po(const sky_fft_plan *plan, double *re, double *im, double *work)
{
    if (plan->bluestein)
        bluestein(plan, re, im, work);
    else
        sky_fft_dif_pow2(plan->n, plan->twr, plan->twi, re, im);
}

void sky_fft_inverse_po(const sky_fft_plan *plan, double *re, double *im, double *work)
{
    /* inverse DFT = swap(re, im) o forward DFT o swap(re, im), divided by n */
    if (plan->bluestein)
        bluestein(plan, im, re, work);
    else
        sky_fft_dit_pow2(plan->n, plan->twr, plan->twi, im, re);
    scale(plan->n, re, im, 1.0 / (double)plan->n);
}

void sky_fft(const sky_fft_plan *plan, double *re, double *im, int inverse, double *work)
{
    if (inverse) {
        double *t = re; re = im; im = t;
    }
    if (plan->bluestein) {
        bluestein(plan, re, im, work);
    } else {
        sky_fft_dif_pow2(plan->n, plan->twr, plan->twi, re, im);
        bit_reverse(plan, re, im);
    }
    if (inverse) scale(plan->n, re, im, 1.0 / (double)plan->n);
}
