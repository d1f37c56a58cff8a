# cython: language_level=3
"""The svmlight / LIBSVM text parser and writer behind `skylite.io.svmlight`.

`parse(buf)` turns a buffer of whole lines into label / CSR arrays in one pass that runs
without the GIL.  It never raises from inside the loop: the first problem stops the parse and
is returned as an error record (code, line number, byte offset, token length, extra) that the
Python layer words into a ValueError naming the file and quoting the token.

Numbers are parsed exactly as `float()` (and so scikit-learn's reader) parses them: decimal
strings with at most 19 significant digits w and a power of ten 10**e are converted exactly,
by one correctly rounded IEEE multiplication or division when w <= 2**53 and |e| <= 22
(Clinger's fast path), else with 128-bit integer arithmetic when |e| <= 27
(`_strtod_c.h`); every other number goes through the C library's strtod in the "C" locale,
which is correctly rounded too.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t, INT64_MAX
from libc.string cimport memchr, memcpy, strlen
from libc.stdlib cimport malloc, realloc, free
from libc.math cimport isfinite
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.conversion cimport PyOS_double_to_string
from cpython.mem cimport PyMem_Free

import numpy as np

cdef extern from "_strtod_c.h":
    int skylite_strtod_c_init() noexcept nogil
    double skylite_strtod_c(const char *s, char **end) noexcept nogil
    int skylite_decimal_to_double(uint64_t w, int64_t e10, double *out) noexcept nogil

if not skylite_strtod_c_init():
    raise ImportError("skylite.io: could not create a C locale for strtod")

# Error codes (mirrored by name in svmlight.py's message table).
cdef enum:
    E_OK = 0
    E_BAD_LABEL = 1
    E_NONFINITE_LABEL = 2
    E_MULTILABEL = 3
    E_NO_COLON = 4
    E_BAD_INDEX = 5
    E_NEGATIVE_INDEX = 6
    E_INDEX_OVERFLOW = 7
    E_BAD_VALUE = 8
    E_NONFINITE_VALUE = 9
    E_DUPLICATE = 10
    E_BAD_QID = 11
    E_QID_POSITION = 12

ERROR_NAMES = {
    E_BAD_LABEL: "bad_label", E_NONFINITE_LABEL: "nonfinite_label", E_MULTILABEL: "multilabel",
    E_NO_COLON: "no_colon", E_BAD_INDEX: "bad_index", E_NEGATIVE_INDEX: "negative_index",
    E_INDEX_OVERFLOW: "index_overflow", E_BAD_VALUE: "bad_value",
    E_NONFINITE_VALUE: "nonfinite_value", E_DUPLICATE: "duplicate", E_BAD_QID: "bad_qid",
    E_QID_POSITION: "qid_position",
}

# Results of parse_double / parse_int.
cdef enum:
    NUM_OK = 0
    NUM_BAD = 1
    NUM_NONFINITE = 2
    NUM_OVERFLOW = 3

cdef struct ParseError:
    int code
    Py_ssize_t lineno
    Py_ssize_t offset
    Py_ssize_t length
    int64_t extra

cdef double[23] POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                         1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]
cdef uint64_t TWO53 = 9007199254740992ULL
# Largest accepted index magnitude: far above any int32 column index, far below overflow.
cdef int64_t INDEX_LIMIT = 1LL << 62
cdef const char *EMPTY = ""


cdef inline bint is_space(char c) noexcept nogil:
    return c == c' ' or c == c'\t' or c == c'\r' or c == c'\v' or c == c'\f'


cdef inline bint is_digit(char c) noexcept nogil:
    return c'0' <= c <= c'9'


cdef inline char lower(char c) noexcept nogil:
    if c'A' <= c <= c'Z':
        return c + 32
    return c


cdef bint equals_nocase(const char *s, Py_ssize_t n, const char *word) noexcept nogil:
    cdef Py_ssize_t i
    if <size_t>n != strlen(word):
        return False
    for i in range(n):
        if lower(s[i]) != word[i]:
            return False
    return True


cdef int strtod_exact(const char *s, Py_ssize_t n, double *out) noexcept nogil:
    """strtod on the (already validated) token s[0:n], in the C locale."""
    cdef char local[64]
    cdef char *tmp = local
    cdef char *end
    if n >= 64:
        tmp = <char *>malloc(n + 1)
        if tmp == NULL:
            return NUM_OVERFLOW   # out of memory: reported as an unreadable number
    memcpy(tmp, s, n)
    tmp[n] = 0
    out[0] = skylite_strtod_c(tmp, &end)
    cdef bint whole = (end - tmp) == n
    if tmp != local:
        free(tmp)
    if not whole:
        return NUM_BAD
    if not isfinite(out[0]):
        return NUM_NONFINITE   # decimal overflow ("1e999")
    return NUM_OK


cdef Py_ssize_t parse_double_prefix(const char *s, Py_ssize_t n, double *out) noexcept nogil:
    """Parse the longest decimal float at the start of s[0:n], correctly rounded.

    Grammar: [+-]? (D+ ('.' D*)? | '.' D+) ([eE] [+-]? D+)?.  Returns the number of bytes
    consumed (>= 1), 0 when s does not start with a number, or -1 when the number overflows
    to infinity ("1e999").  An 'e' not followed by an exponent is left unconsumed.
    """
    cdef Py_ssize_t i = 0, j, n_digits, start
    cdef bint neg = False, truncated = False, eneg = False
    cdef uint64_t w = 0
    cdef int ndig = 0, d, rc
    cdef int64_t exp10 = 0, e = 0
    cdef double v
    if n > 0 and (s[0] == c'+' or s[0] == c'-'):
        neg = s[0] == c'-'
        i = 1
    start = i
    while i < n and is_digit(s[i]):
        d = s[i] - c'0'
        if ndig < 19:
            w = w * 10 + <uint64_t>d
            ndig += w != 0            # leading zeros are not significant
        else:
            exp10 += 1                # dropped digit: only strtod is exact now
            truncated = True
        i += 1
    n_digits = i - start
    if i < n and s[i] == c'.':
        i += 1
        start = i
        while i < n and is_digit(s[i]):
            d = s[i] - c'0'
            if ndig < 19:
                w = w * 10 + <uint64_t>d
                ndig += w != 0
                exp10 -= 1
            else:
                truncated = True
            i += 1
        n_digits += i - start
    if n_digits == 0:
        return 0
    if i < n and (s[i] == c'e' or s[i] == c'E'):
        j = i + 1
        if j < n and (s[j] == c'+' or s[j] == c'-'):
            eneg = s[j] == c'-'
            j += 1
        if j < n and is_digit(s[j]):
            while j < n and is_digit(s[j]):
                if e < 100000000:
                    e = e * 10 + (s[j] - c'0')
                j += 1
            exp10 += -e if eneg else e
            i = j
    if w == 0:
        out[0] = -0.0 if neg else 0.0
        return i
    if truncated or w > TWO53 or exp10 < -22 or exp10 > 22:
        if not truncated and skylite_decimal_to_double(w, exp10, &v):
            out[0] = -v if neg else v
            return i
        rc = strtod_exact(s, i, out)
        if rc == NUM_OK:
            return i
        return -1 if rc == NUM_NONFINITE else 0
    # Clinger's fast path: w and 10**|exp10| are exact doubles, one IEEE operation rounds.
    v = <double>w
    if exp10 < 0:
        v = v / POW10[-exp10]
    else:
        v = v * POW10[exp10]
    out[0] = -v if neg else v
    return i


cdef int parse_double(const char *s, Py_ssize_t n, double *out) noexcept nogil:
    """Parse the whole token s[0:n] as a decimal float (see parse_double_prefix).

    Returns NUM_OK, NUM_BAD (not a number, including hexadecimal), or NUM_NONFINITE (nan /
    inf / infinity in any case, or overflow).
    """
    cdef Py_ssize_t c = parse_double_prefix(s, n, out), i = 0
    if c == n and n > 0:
        return NUM_OK
    if c < 0:
        return NUM_NONFINITE
    if n > 0 and (s[0] == c'+' or s[0] == c'-'):
        i = 1
    if equals_nocase(s + i, n - i, b"nan") or equals_nocase(s + i, n - i, b"inf") \
            or equals_nocase(s + i, n - i, b"infinity"):
        return NUM_NONFINITE
    return NUM_BAD


cdef int parse_int(const char *s, Py_ssize_t n, int64_t *out) noexcept nogil:
    """Parse the whole token s[0:n] as a decimal integer [+-]?D+ of magnitude below 2**62."""
    cdef Py_ssize_t i = 0
    cdef bint neg = False
    cdef int64_t v = 0
    cdef bint overflow = False
    if n > 0 and (s[0] == c'+' or s[0] == c'-'):
        neg = s[0] == c'-'
        i = 1
    if i == n:
        return NUM_BAD
    while i < n:
        if not is_digit(s[i]):
            return NUM_BAD
        if v < INDEX_LIMIT:
            v = v * 10 + (s[i] - c'0')
        else:
            overflow = True
        i += 1
    if overflow or v >= INDEX_LIMIT:
        return NUM_OVERFLOW
    out[0] = -v if neg else v
    return NUM_OK


cdef void sort_pairs(int64_t *k, double *v, Py_ssize_t n) noexcept nogil:
    """Sort k[0:n] ascending, carrying v along (insertion sort when short, else heapsort)."""
    cdef Py_ssize_t i, j, start, end
    cdef int64_t kt
    cdef double vt
    if n < 24:
        for i in range(1, n):
            kt = k[i]
            vt = v[i]
            j = i
            while j > 0 and k[j - 1] > kt:
                k[j] = k[j - 1]
                v[j] = v[j - 1]
                j -= 1
            k[j] = kt
            v[j] = vt
        return
    start = n // 2
    while start > 0:
        start -= 1
        sift_down(k, v, start, n)
    end = n
    while end > 1:
        end -= 1
        kt = k[0]; k[0] = k[end]; k[end] = kt
        vt = v[0]; v[0] = v[end]; v[end] = vt
        sift_down(k, v, 0, end)


cdef inline void sift_down(int64_t *k, double *v, Py_ssize_t root, Py_ssize_t end) noexcept nogil:
    cdef Py_ssize_t child
    cdef int64_t kt
    cdef double vt
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and k[child] < k[child + 1]:
            child += 1
        if k[root] >= k[child]:
            return
        kt = k[root]; k[root] = k[child]; k[child] = kt
        vt = v[root]; v[root] = v[child]; v[child] = vt
        root = child


cdef inline void fail(ParseError *err, int code, Py_ssize_t lineno, Py_ssize_t offset,
                      Py_ssize_t length, int64_t extra) noexcept nogil:
    err.code = code
    err.lineno = lineno
    err.offset = offset
    err.length = length
    err.extra = extra


cdef inline Py_ssize_t append_feature(int64_t *indices, double *values, Py_ssize_t nnz,
                                      int64_t idx, double v, int64_t *prev,
                                      bint *in_order) noexcept nogil:
    """Store the pair idx:v at position nnz (returns nnz + 1); a row whose indices stop
    increasing is marked for sorting."""
    if idx <= prev[0]:
        in_order[0] = False
    prev[0] = idx
    indices[nnz] = idx
    values[nnz] = v
    return nnz + 1


cdef int parse_buffer(const char *buf, Py_ssize_t n, double *labels, int64_t *indptr,
                      int64_t *indices, double *values, Py_ssize_t *n_rows_out,
                      int64_t *min_out, int64_t *max_out, ParseError *err) noexcept nogil:
    """Parse every line of buf[0:n]; 0 on success, -1 with *err filled on the first problem.

    Capacities are the caller's: len(labels) > number of lines, len(indices) >= number of ':'.
    """
    cdef Py_ssize_t pos = 0, lineno = 0, row = 0, nnz = 0, row_start
    cdef Py_ssize_t eol, end, p, q, c, tok, colon, line_start, j
    cdef const char *hit
    cdef int64_t idx, prev, mn = INT64_MAX, mx = -1, qid
    cdef double v
    cdef bint in_order, first_feature
    cdef int rc
    indptr[0] = 0
    while pos < n:
        lineno += 1
        line_start = pos
        hit = <const char *>memchr(buf + pos, c'\n', n - pos)
        eol = (hit - buf) if hit != NULL else n
        hit = <const char *>memchr(buf + pos, c'#', eol - pos)
        end = (hit - buf) if hit != NULL else eol
        p = pos
        pos = eol + 1
        while p < end and is_space(buf[p]):
            p += 1
        if p == end:
            continue                   # blank or comment-only line
        # The label.
        tok = p
        while p < end and not is_space(buf[p]):
            p += 1
        rc = parse_double(buf + tok, p - tok, &v)
        if rc != NUM_OK:
            if memchr(buf + tok, c',', p - tok) != NULL:
                fail(err, E_MULTILABEL, lineno, tok, p - tok, 0)
            elif rc == NUM_NONFINITE:
                fail(err, E_NONFINITE_LABEL, lineno, tok, p - tok, 0)
            else:
                fail(err, E_BAD_LABEL, lineno, tok, p - tok, 0)
            return -1
        labels[row] = v
        row_start = nnz
        prev = -1
        in_order = True
        first_feature = True
        # The idx:val pairs (and an optional qid:N right after the label).
        while True:
            while p < end and is_space(buf[p]):
                p += 1
            if p == end:
                break
            tok = p
            # Fast path: digits ':' number separator.  Anything else (a sign, a long index,
            # qid, an error) is left to the checked path below, which decides.
            idx = 0
            q = p
            while q < end and is_digit(buf[q]) and q - p < 18:
                idx = idx * 10 + (buf[q] - c'0')
                q += 1
            if q > p and q < end and buf[q] == c':':
                q += 1
                c = parse_double_prefix(buf + q, end - q, &v)
                if c > 0 and (q + c == end or is_space(buf[q + c])):
                    nnz = append_feature(indices, values, nnz, idx, v, &prev, &in_order)
                    p = q + c
                    first_feature = False
                    continue
            colon = -1
            while p < end and not is_space(buf[p]):
                if colon < 0 and buf[p] == c':':
                    colon = p
                p += 1
            if colon < 0:
                fail(err, E_NO_COLON, lineno, tok, p - tok, 0)
                return -1
            if colon - tok == 3 and buf[tok] == c'q' and buf[tok + 1] == c'i' \
                    and buf[tok + 2] == c'd':
                if not first_feature:
                    fail(err, E_QID_POSITION, lineno, tok, p - tok, 0)
                    return -1
                if parse_int(buf + colon + 1, p - colon - 1, &qid) != NUM_OK:
                    fail(err, E_BAD_QID, lineno, tok, p - tok, 0)
                    return -1
                first_feature = False
                continue
            first_feature = False
            rc = parse_int(buf + tok, colon - tok, &idx)
            if rc == NUM_OVERFLOW:
                fail(err, E_INDEX_OVERFLOW, lineno, tok, p - tok, 0)
                return -1
            if rc != NUM_OK:
                fail(err, E_BAD_INDEX, lineno, tok, p - tok, 0)
                return -1
            if idx < 0:
                fail(err, E_NEGATIVE_INDEX, lineno, tok, p - tok, idx)
                return -1
            rc = parse_double(buf + colon + 1, p - colon - 1, &v)
            if rc != NUM_OK:
                fail(err, E_NONFINITE_VALUE if rc == NUM_NONFINITE else E_BAD_VALUE,
                     lineno, tok, p - tok, 0)
                return -1
            nnz = append_feature(indices, values, nnz, idx, v, &prev, &in_order)
        if not in_order:
            sort_pairs(indices + row_start, values + row_start, nnz - row_start)
            for j in range(row_start + 1, nnz):
                if indices[j] == indices[j - 1]:
                    fail(err, E_DUPLICATE, lineno, line_start, eol - line_start, indices[j])
                    return -1
        if nnz > row_start:
            if indices[row_start] < mn:
                mn = indices[row_start]
            if indices[nnz - 1] > mx:
                mx = indices[nnz - 1]
        row += 1
        indptr[row] = nnz
    n_rows_out[0] = row
    min_out[0] = mn if mx >= 0 else -1
    max_out[0] = mx
    return 0


cdef void count_bytes(const char *buf, Py_ssize_t n, Py_ssize_t *newlines,
                      Py_ssize_t *colons) noexcept nogil:
    cdef Py_ssize_t i, a = 0, b = 0
    for i in range(n):
        a += buf[i] == c'\n'
        b += buf[i] == c':'
    newlines[0] = a
    colons[0] = b


def _trim(arr, Py_ssize_t used):
    """arr[:used], copied when the view would keep much unused memory alive."""
    if used == arr.shape[0]:
        return arr
    if used < arr.shape[0] - arr.shape[0] // 8:
        return arr[:used].copy()
    return arr[:used]


def parse(const unsigned char[::1] buf):
    """Parse a buffer of whole svmlight lines.

    Returns (labels, indptr, indices, values, min_index, max_index, error):
    labels float64 (n_rows,), indptr int64 (n_rows + 1,), indices int64 (nnz,) as written
    (sorted within each row), values float64 (nnz,), min_index / max_index over all indices
    (-1 both when there are none), and error None or a tuple
    (code_name, lineno, offset, length, extra) with offset/length locating the bad token (or
    the line, for a duplicate index) in buf and lineno counted from 1 at buf's first line.
    """
    cdef Py_ssize_t n = buf.shape[0], n_newlines = 0, n_colons = 0, n_rows = 0
    cdef const char *data = EMPTY
    cdef int64_t mn = -1, mx = -1
    cdef ParseError err
    cdef int rc
    if n > 0:
        data = <const char *>&buf[0]
    with nogil:
        count_bytes(data, n, &n_newlines, &n_colons)
    labels = np.empty(n_newlines + 1, dtype=np.float64)
    indptr = np.empty(n_newlines + 2, dtype=np.int64)
    indices = np.empty(max(n_colons, 1), dtype=np.int64)
    values = np.empty(max(n_colons, 1), dtype=np.float64)
    cdef double[::1] lv = labels, vv = values
    cdef int64_t[::1] pv = indptr, iv = indices
    err.code = E_OK
    with nogil:
        rc = parse_buffer(data, n, &lv[0], &pv[0], &iv[0], &vv[0], &n_rows, &mn, &mx, &err)
    if rc != 0:
        return (None, None, None, None, -1, -1,
                (ERROR_NAMES[err.code], err.lineno, err.offset, err.length, err.extra))
    nnz = indptr[n_rows]
    return (_trim(labels, n_rows), _trim(indptr, n_rows + 1), _trim(indices, nnz),
            _trim(values, nnz), mn, mx, None)


cdef char *write_int(char *out, int64_t v) noexcept nogil:
    cdef char tmp[24]
    cdef int k = 0
    if v < 0:
        out[0] = c'-'
        out += 1
        v = -v
    while True:
        tmp[k] = <char>(c'0' + v % 10)
        k += 1
        v //= 10
        if v == 0:
            break
    while k > 0:
        k -= 1
        out[0] = tmp[k]
        out += 1
    return out


cdef char *write_double(char *out, double x) except NULL:
    """The shortest decimal string that reads back as x (Python's repr digits)."""
    cdef char *s = PyOS_double_to_string(x, c'r', 0, 0, NULL)
    cdef size_t m = strlen(s)
    memcpy(out, s, m)
    PyMem_Free(s)
    return out + m


def format_rows(const double[::1] labels, const int64_t[::1] indptr,
                const int64_t[::1] indices, const double[::1] data,
                Py_ssize_t r0, Py_ssize_t r1, int64_t index_offset):
    """Rows r0..r1-1 as svmlight text (bytes): 'label idx:val ...\\n' with idx + index_offset.

    Floats are written with the shortest repr that reads back bitwise (at most 17 digits)."""
    # Worst case per entry: 20-digit index, ':', 24-char float, ' '.
    cdef Py_ssize_t cap = (r1 - r0) * 26 + (indptr[r1] - indptr[r0]) * 48 + 16
    cdef char *buf = <char *>malloc(cap)
    cdef char *out = buf
    cdef Py_ssize_t r, k
    if buf == NULL:
        raise MemoryError()
    try:
        for r in range(r0, r1):
            out = write_double(out, labels[r])
            for k in range(indptr[r], indptr[r + 1]):
                out[0] = c' '
                out = write_int(out + 1, indices[k] + index_offset)
                out[0] = c':'
                out = write_double(out + 1, data[k])
            out[0] = c'\n'
            out += 1
        return PyBytes_FromStringAndSize(buf, out - buf)
    finally:
        free(buf)
