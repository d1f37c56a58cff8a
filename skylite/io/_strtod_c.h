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

#endif
