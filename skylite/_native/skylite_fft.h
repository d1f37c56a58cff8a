/*
 * A small complex FFT of any length, callable without the GIL (TensorSketch needs it
 * inside the feature-map driver's threads).
 *
 * Data are in split format: separate arrays of real and imaginary parts, double precision.
 *
 *   - length n a power of two: iterative radix-2 (decimation in frequency for the forward
 *     transform, in time for the inverse), two stages per pass over the data, the last two
 *     stages (twiddles 1 and -i) as one radix-4 pass; twiddles precomputed per stage;
 *   - any other n: Bluestein's chirp-z algorithm, a circular convolution of length
 *     m = next power of two >= 2n - 1 computed with the radix-2 transforms above; the chirp
 *     exp(-i pi k^2 / n) and the transform of the convolution kernel are precomputed.
 *
 * A plan holds these tables (read-only after sky_fft_plan_init, so one plan can be shared by
 * any number of threads); each call gets its own scratch buffer of sky_fft_work_size(plan)
 * doubles.  The inverse transform is normalized by 1/n (numpy.fft.ifft's convention).
 *
 * "Plan order": the fast entry points sky_fft_forward_po / sky_fft_inverse_po skip the
 * bit-reversal permutation of power-of-two lengths.  The forward one returns the spectrum in
 * plan order (bit-reversed for a power of two, natural for Bluestein), which is enough for
 * pointwise products; plan->neg[i] is the plan-order position of the frequency opposite to
 * the one at position i (k -> -k mod n), for unpacking the spectra of two real sequences
 * transformed together.  The inverse one takes plan order and returns natural order.
 *
 * Compiled without -ffast-math: the accuracy of the transform is tested against numpy.fft.
 */
#ifndef SKYLITE_FFT_H
#define SKYLITE_FFT_H

#include <stdint.h>

typedef struct {
    int64_t n;            /* transform length */
    int64_t m;            /* power-of-two length of the radix-2 transforms (n or Bluestein's) */
    int bluestein;        /* n is not a power of two */
    double *twr, *twi;    /* m - 1 twiddles: stage h (1, 2, 4, .., m/2) at [h - 1, 2h - 1):
                             exp(-2 pi i k / (2h)), k < h */
    int64_t *rev;         /* bit reversal of [0, n) (power-of-two n only) */
    int64_t *neg;         /* plan-order position of -k for the frequency at position i */
    double *chr, *chi;    /* Bluestein chirp exp(-i pi k^2 / n), k < n */
    double *kr, *ki;      /* radix-2 transform (bit-reversed) of the conjugate chirp kernel, / m */
} sky_fft_plan;

/* Build the plan of length n >= 1; 0 on success, -1 if memory ran out (then nothing to free,
 * though sky_fft_plan_free is still safe to call). */
int sky_fft_plan_init(sky_fft_plan *plan, int64_t n);
void sky_fft_plan_free(sky_fft_plan *plan);

/* Doubles of scratch space that one call with this plan needs. */
int64_t sky_fft_work_size(const sky_fft_plan *plan);

/* In-place transform of (re, im), natural order in and out: the DFT
 * X_k = sum_j x_j exp(-2 pi i jk / n), or with `inverse` (1/n) sum_j x_j exp(+2 pi i jk / n). */
void sky_fft(const sky_fft_plan *plan, double *re, double *im, int inverse, double *work);

/* Forward DFT, natural order in, plan order out (see above). */
void sky_fft_forward_po(const sky_fft_plan *plan, double *re, double *im, double *work);

/* Inverse DFT (normalized by 1/n), plan order in, natural order out. */
void sky_fft_inverse_po(const sky_fft_plan *plan, double *re, double *im, double *work);

#endif
