/* strtod in the "C" locale, whatever LC_NUMERIC the process has set (skylite.io reads '.' as
 * the decimal point always).  Used only as the exact fallback of the Cython fast path. */
#ifndef SKYLITE_STRTOD_C_H
#define SKYLITE_STRTOD_C_H

#include <stdlib.h>
#include <locale.h>

#if defined(_WIN32)
static _locale_t skylite_c_locale = NULL;
static int skylite_strtod_c_init(void) {
    if (skylite_c_locale == NULL) skylite_c_locale = _create_locale(LC_NUMERIC, "C");
    return skylite_c_locale != NULL;
}
static double skylite_strtod_c(const char *s, char **end) {
    return _strtod_l(s, end, skylite_c_locale);
}
#else
#if defined(__APPLE__)
#include <xlocale.h>
#endif
static locale_t skylite_c_locale = (locale_t)0;
static int skylite_strtod_c_init(void) {
    if (skylite_c_locale == (locale_t)0)
        skylite_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return skylite_c_locale != (locale_t)0;
}
static double skylite_strtod_c(const char *s, char **end) {
    return strtod_l(s, end, skylite_c_locale);
}
#endif

/* Exact decimal-to-double for w * 10**e10 with w < 2**64 and |e10| <= 27, using 128-bit
 * integers: 10**k = 5**k * 2**k, 5**27 < 2**63, so w * 5**k and w * 2**s / 5**k fit in 128
 * bits, and rounding the 128-bit integer (plus a sticky bit for a nonzero remainder) to 53
 * bits is exact.  Returns 0 (caller falls back to strtod) when out of range or without
 * 128-bit integers. */
#include <stdint.h>
#include <math.h>

#if defined(__SIZEOF_INT128__)
static const uint64_t skylite_pow5[28] = {1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL, 390625ULL, 1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL, 1220703125ULL, 6103515625ULL, 30517578125ULL, 152587890625ULL, 762939453125ULL, 3814697265625ULL, 19073486328125ULL, 95367431640625ULL, 476837158203125ULL, 2384185791015625ULL, 11920928955078125ULL, 59604644775390625ULL, 298023223876953125ULL, 1490116119384765625ULL, 7450580596923828125ULL};

static int skylite_bitlen128(unsigned __int128 q) {
    uint64_t hi = (uint64_t)(q >> 64), lo = (uint64_t)q;
    return hi ? 128 - __builtin_clzll(hi) : (lo ? 64 - __builtin_clzll(lo) : 0);
}

/* The double nearest (ties to even) to (q + sticky * epsilon) * 2**e2, for q > 0 with more
 * than 53 bits whenever sticky is set. */
static double skylite_round128(unsigned __int128 q, int sticky, int e2) {
    int L = skylite_bitlen128(q), drop;
    unsigned __int128 m, rem, half;
    if (L <= 53)
        return ldexp((double)(uint64_t)q, e2);
    drop = L - 53;
    m = q >> drop;
    rem = q & ((((unsigned __int128)1) << drop) - 1);
    half = ((unsigned __int128)1) << (drop - 1);
    if (rem > half || (rem == half && (sticky || (m & 1))))
        m += 1;                       /* may reach 2**53: still exact as a double */
    return ldexp((double)(uint64_t)m, e2 + drop);
}

static int skylite_decimal_to_double(uint64_t w, int64_t e10, double *out) {
    if (w == 0 || e10 > 27 || e10 < -27)
        return 0;
    if (e10 >= 0) {
        *out = skylite_round128((unsigned __int128)w * skylite_pow5[e10], 0, (int)e10);
    } else {
        int k = (int)-e10;
        uint64_t d = skylite_pow5[k];
        int bw = 64 - __builtin_clzll(w), bd = 64 - __builtin_clzll(d);
        int s = 64 + bd - bw;         /* the quotient gets at least 64 bits */
        unsigned __int128 n = ((unsigned __int128)w) << s;
        unsigned __int128 q = n / d;
        int sticky = (n - q * d) != 0;
        *out = skylite_round128(q, sticky, -s - k);
    }
    return 1;
}
#else
static int skylite_decimal_to_double(uint64_t w, int64_t e10, double *out) {
    (void)w; (void)e10; (void)out;
    return 0;
}
#endif

#endif
