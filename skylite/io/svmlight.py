"""Reading and writing svmlight / LIBSVM text files, whole or by byte range.

A file holds one sample per line::

    label [qid:N] idx:value idx:value ... [# comment]

`read_svmlight_part` parses the lines of a byte range (or the whole file) into raw arrays with
the indices exactly as written; `assemble` turns those into a canonical CSR matrix once the
index base and the number of features are agreed on.  `load_svmlight` does both for one
process.  For distributed reading, each rank reads the range `svmlight_byte_ranges` gives it,
the ranks agree on the index range (allreduce of `min_index` / `max_index`, then
`resolve_features`), and each assembles its rows with the same `zero_based` and `n_features`.
"""
import codecs
import contextlib
import gzip
import numbers
import os
import zlib
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._validation import as_real_array, with_native_index_dtypes
from . import _svmlight

__all__ = ["SvmlightPart", "read_svmlight_part", "svmlight_byte_ranges", "resolve_features",
           "assemble", "load_svmlight", "dump_svmlight", "iter_svmlight_rows"]

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16
_MAX_FEATURES = 2**31 - 1   # columns are int32


class SvmlightPart(NamedTuple):
    """The rows of one byte range of an svmlight file, as parsed (before `assemble`).

    Parameters
    ----------
    labels : float64 ndarray, shape (n_rows,)
        One label per non-blank line.
    indptr : int64 ndarray, shape (n_rows + 1,)
        Row i's entries are ``indices[indptr[i]:indptr[i + 1]]``; ``indptr[0] == 0``.
    indices : int64 ndarray, shape (nnz,)
        Feature indices as written in the file (no zero- / one-based shift applied), strictly
        increasing within each row (rows written out of order are sorted on reading).
    values : float64 ndarray, shape (nnz,)
        The values, aligned with `indices` (explicit zeros in the file are kept).
    min_index, max_index : int
        The smallest and largest index in this part, or -1 (both) when it holds no feature
        at all (no rows, or label-only rows).
    n_rows : int
        The number of samples (non-blank, non-comment lines) in this part.
    """
    labels: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    min_index: int
    max_index: int
    n_rows: int

    @property
    def nnz(self):
        """The number of stored entries, ``indptr[-1]``."""
        return int(self.indptr[-1])


def read_svmlight_part(path, byte_range=None):
    """Parse the lines of an svmlight / LIBSVM file whose first byte lies in `byte_range`.

    Parameters
    ----------
    path : str or os.PathLike
        A text file, or a gzip-compressed one (recognised by its magic bytes, whatever its
        name).
    byte_range : (int, int) or None
        ``(start, stop)``: read exactly the lines whose first byte is at an offset in
        ``[start, stop)``; the last of them is read to its end even past `stop`.  Ranges that
        partition ``[0, size)`` therefore read every line exactly once, wherever they split.
        `stop` beyond the end of the file is allowed.  For a plain file only those lines (and
        the byte before `start`) are read from disk.  For a gzip file the offsets refer to
        the decompressed text, and the whole stream is decompressed on every call.
        None reads the whole file.

    Returns
    -------
    SvmlightPart
        labels (n_rows,), indptr (n_rows + 1,), indices and values (nnz,), min_index,
        max_index, n_rows.

    Raises
    ------
    ValueError
        ``"{path}: line {lineno}: ..."`` quoting the offending token, for: a label that is not
        a number or not finite; a multilabel label (``1,2``: not supported); a feature without
        ':'; an index that is not an integer, negative, or absurdly large; a value that is not
        a number, or NaN / infinite; a repeated index within a row; a malformed or misplaced
        ``qid:``.  With a byte range, line numbers count from the range's first line and the
        message also gives the absolute byte offset.
    OSError
        The file is missing or unreadable (Python's own error, which names the path), or its
        gzip data is corrupt.
    """
    path = os.fspath(path)
    start, stop = _check_byte_range(byte_range)
    with open(path, "rb") as f:
        if f.read(2) == _GZIP_MAGIC:
            f.seek(0)
            text = _gunzip(path, f)
            base, buf = _lines_in_memory(text, start, stop)
            compressed = True
        else:
            f.seek(0)
            base, buf = _lines_from_file(f, start, stop)
            compressed = False
    labels, indptr, indices, values, lo, hi, err = _svmlight.parse(buf)
    if err is not None:
        if _looks_binary(buf):
            what = "its decompressed data is" if compressed else "it is"
            raise ValueError(f"{path}: not a LIBSVM text file ({what} binary; expected "
                             f"lines 'label index:value ...')")
        raise ValueError(_error_message(path, byte_range, buf, base, compressed, err))
    return SvmlightPart(labels, indptr, indices, values, int(lo), int(hi), int(labels.shape[0]))


def iter_svmlight_rows(stream, *, n_features, zero_based, dtype=np.float64, name="<stdin>"):
    """Yield (X, y) for each sample line of a binary stream, as soon as the line arrives.

    For pipes (`skylite predict MODEL -`, libSkylark's streaming predict): one line is read,
    parsed and yielded before the next is waited for; blank and comment lines are skipped.
    Raises ValueError "{name}: line N: ..." for a malformed line, as `read_svmlight_part`
    does.

    Parameters
    ----------
    stream : binary file object
        The lines to read.
    n_features : int
        The number of columns (a stream cannot be scanned ahead: it comes from the model).
    zero_based : bool
        Whether indices start at 0.
    dtype : float64 or float32, default=np.float64
        The dtype of X's data.
    name : str, default="<stdin>"
        The stream's name in error messages.

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (1, n_features)
        One row.
    y : ndarray of shape (1,), float64
        Its label.
    """
    if isinstance(zero_based, str):
        raise ValueError("zero_based must be True or False for a stream (it cannot be "
                         "guessed from lines not yet read)")
    for lineno, line in enumerate(iter(stream.readline, b""), start=1):
        labels, indptr, indices, values, lo, hi, err = _svmlight.parse(line)
        if err is not None:
            raise ValueError(f"{name}: line {lineno}: {_error_what(line, err)}")
        if labels.shape[0] == 0:
            continue
        part = SvmlightPart(labels, indptr, indices, values, int(lo), int(hi), 1)
        try:
            rows = assemble(part, n_features=n_features, zero_based=zero_based, dtype=dtype)
        except ValueError as error:
            raise ValueError(f"{name}: line {lineno}: {error}") from None
        yield rows


def svmlight_byte_ranges(path, n_parts):
    """Split a file into `n_parts` contiguous byte ranges of (nearly) equal size.

    Parameters
    ----------
    path : str or os.PathLike
        A plain or gzip-compressed svmlight file (for gzip the decompressed size is split,
        which costs one streaming decompression).
    n_parts : int >= 1
        The number of ranges, e.g. the number of MPI ranks.

    Returns
    -------
    list of (start, stop) int tuples, length n_parts
        ``[(0, s_1), (s_1, s_2), ..., (s_{n-1}, size)]``.  With the first-byte rule of
        `read_svmlight_part`, reading every range reads each line of the file exactly once;
        a range in which no line starts (possible when n_parts is large or lines are long)
        reads zero rows.
    """
    if isinstance(n_parts, bool) or not isinstance(n_parts, numbers.Integral) or n_parts < 1:
        raise ValueError(f"n_parts must be an integer >= 1, got {n_parts!r}")
    n_parts = int(n_parts)
    path = os.fspath(path)
    with open(path, "rb") as f:
        if f.read(2) == _GZIP_MAGIC:
            f.seek(0)
            size = 0
            try:
                with gzip.GzipFile(fileobj=f, mode="rb") as g:
                    while chunk := g.read(1 << 20):
                        size += len(chunk)
            except (OSError, EOFError, zlib.error) as e:
                raise OSError(f"{path}: corrupt or truncated gzip data ({e})") from e
        else:
            size = f.seek(0, os.SEEK_END)
    bounds = [size * i // n_parts for i in range(n_parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(n_parts)]


def resolve_features(min_index, max_index, *, zero_based="auto", n_features=None):
    """The index base and column count implied by an index range.

    Parameters
    ----------
    min_index, max_index : int
        The smallest and largest index written in the file (or across all ranks' parts), -1
        when there is none.  For an allreduce, map a part's -1 `min_index` to a large value
        before taking the minimum.
    zero_based : bool or "auto"
        "auto" (scikit-learn's rule): zero-based if `min_index` is 0 (or there is no index),
        one-based otherwise.
    n_features : int or None
        None: the largest (shifted) index + 1 (0 when there is none).  Otherwise it must
        hold every index.

    Returns
    -------
    zero_based : bool
        Whether the indices start at 0.
    n_features : int
        The number of columns.
    """
    if isinstance(zero_based, str):
        if zero_based != "auto":
            raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        zero_based = min_index <= 0
    elif isinstance(zero_based, (bool, np.bool_)):
        zero_based = bool(zero_based)
    else:
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if not zero_based and min_index == 0:
        raise ValueError("feature index 0 found, but zero_based=False (one-based indices "
                         "start at 1)")
    shift = 0 if zero_based else 1
    if n_features is None:
        n_features = max_index + 1 - shift if max_index >= 0 else 0
        if n_features > _MAX_FEATURES:
            raise ValueError(f"feature index {max_index} gives {n_features} features; at most "
                             f"2**31 - 1 are supported")
    else:
        if (isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral)
                or not 1 <= n_features <= _MAX_FEATURES):
            raise ValueError(f"n_features must be an integer in [1, 2**31 - 1], got "
                             f"{n_features!r}")
        n_features = int(n_features)
        if max_index - shift >= n_features:
            raise ValueError(f"feature index {max_index} does not fit n_features={n_features} "
                             f"({'zero' if zero_based else 'one'}-based indices)")
    return zero_based, int(n_features)


def assemble(part, n_features=None, zero_based="auto", dtype=np.float64):
    """Turn an `SvmlightPart` into a canonical CSR matrix and a label vector.

    Parameters
    ----------
    part : SvmlightPart
        From `read_svmlight_part`.
    n_features : int or None
        Number of columns; None: the largest index (after the shift) + 1.  An index that
        does not fit raises ValueError naming it.
    zero_based : bool or "auto"
        Whether the file's indices start at 0.  "auto": zero-based if ``part.min_index`` is
        0, else one-based (scikit-learn's rule).  False with an index 0 raises ValueError.
    dtype : float64 or float32
        The dtype of X's data (values are parsed as float64, then rounded once).

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
        Canonical CSR (sorted indices, no duplicates) with int32 indices and int64 indptr; its
        data may share memory with ``part.values`` (float64).
    y : float64 ndarray, shape (n_rows,)
        ``part.labels``.

    Notes
    -----
    For a file read in parts by several processes, "auto" and None would be decided from each
    part alone and could differ between ranks: agree first (allreduce the parts' `min_index`
    and `max_index`, then `resolve_features`) and pass the same explicit `zero_based` and
    `n_features` on every rank.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    if isinstance(zero_based, (bool, np.bool_)) and not zero_based and part.min_index == 0:
        row = _row_of(part, int(np.flatnonzero(part.indices == 0)[0]))
        raise ValueError(f"feature index 0 in row {row} (0-based row of this part), but "
                         f"zero_based=False (one-based indices start at 1)")
    zero_based, n_features = resolve_features(part.min_index, part.max_index,
                                              zero_based=zero_based, n_features=n_features)
    shift = 0 if zero_based else 1
    indices = part.indices
    cols = np.empty(indices.shape[0], dtype=np.int32)
    np.subtract(indices, shift, out=cols, casting="unsafe")   # fits: max_index - shift < 2**31
    data = part.values.astype(dtype, copy=False)
    X = sp.csr_matrix((data, cols, part.indptr), shape=(part.n_rows, n_features), copy=False)
    X = with_native_index_dtypes(X)
    X.has_sorted_indices = True
    X.has_canonical_format = True
    return X, part.labels


def load_svmlight(path, *, n_features=None, zero_based="auto", dtype=np.float64,
                  byte_range=None):
    """Read an svmlight / LIBSVM file (plain or gzip) into (X, y).

    ``assemble(read_svmlight_part(path, byte_range), n_features, zero_based, dtype)``; see
    those for the parameters and errors.  The result equals scikit-learn's
    ``load_svmlight_file`` bitwise on files both accept.

    Parameters
    ----------
    path : str or os.PathLike
        A plain or gzip-compressed file.
    n_features : int or None, default=None
        Number of columns (`assemble`).
    zero_based : bool or "auto", default="auto"
        Whether the file's indices start at 0 (`assemble`).
    dtype : float64 or float32, default=np.float64
        The dtype of X's data.
    byte_range : (int, int) or None, default=None
        The lines to read (`read_svmlight_part`); None reads the whole file.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
        Canonical, int32 indices, int64 indptr, `dtype` data.
    y : float64 ndarray, shape (n_rows,)
        The labels.
    """
    part = read_svmlight_part(path, byte_range)
    try:
        return assemble(part, n_features=n_features, zero_based=zero_based, dtype=dtype)
    except ValueError as e:
        raise ValueError(f"{os.fspath(path)}: {e}") from None


def dump_svmlight(X, y, path, *, zero_based=False):
    """Write (X, y) as an svmlight / LIBSVM text file.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples, n_features)
        Dense or sparse; zeros (explicit ones too) are not written.  Must be finite.
    y : array-like, shape (n_samples,)
        Real, finite labels (written as e.g. ``1``, ``-1``, ``2.5``).
    path : str, os.PathLike or a binary file object
        Written gzip-compressed if it ends with ``.gz``, as plain text otherwise; a file
        object (anything with ``write``) receives the rows at its current position and is
        left open, so that files can be written in parts.
    zero_based : bool, default=False
        Write column j as index j (True) or j + 1 (False, the LIBSVM convention).

    Notes
    -----
    Every number is written as the shortest decimal string that reads back to the same
    float64 (Python's ``repr``; at most 17 significant digits, as ``%.17g``), so
    ``load_svmlight(path, n_features=X.shape[1], zero_based=zero_based)`` returns X and y
    exactly (float32 X is written as its exact float64 value).
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim}-D")
        X = sp.csr_matrix((as_real_array(X.data, "X").astype(np.float64), X.indices.copy(),
                           X.indptr.copy()), shape=X.shape)
        X.sum_duplicates()
        X.eliminate_zeros()
    else:
        X = as_real_array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array of rows, got {X.ndim}-D")
        X = sp.csr_matrix(np.asarray(X, dtype=np.float64))
    y = as_real_array(y, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (multilabel output is not supported), got "
                         f"{y.ndim}-D")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if not np.isfinite(X.data).all():
        raise ValueError("X contains NaN or infinity")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity")
    indptr = X.indptr.astype(np.int64)
    indices = X.indices.astype(np.int64)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    offset = 0 if zero_based else 1
    if hasattr(path, "write"):
        opened = contextlib.nullcontext(path)
    else:
        path = os.fspath(path)
        opened = (gzip.open(path, "wb", compresslevel=6) if path.endswith(".gz")
                  else open(path, "wb"))
    with opened as f:
        for r0 in range(0, X.shape[0], 4096):
            r1 = min(r0 + 4096, X.shape[0])
            f.write(_svmlight.format_rows(y, indptr, indices, data, r0, r1, offset))


# ---------------------------------------------------------------------------------------------

def _check_byte_range(byte_range):
    if byte_range is None:
        return 0, None
    try:
        start, stop = byte_range
    except (TypeError, ValueError):
        raise ValueError(f"byte_range must be a (start, stop) pair, got {byte_range!r}") \
            from None
    for v in (start, stop):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"byte_range must hold integers, got {byte_range!r}")
    if not 0 <= start <= stop:
        raise ValueError(f"byte_range must satisfy 0 <= start <= stop, got {byte_range!r}")
    return int(start), int(stop)


def _gunzip(path, f):
    try:
        return gzip.decompress(f.read())
    except (OSError, EOFError, zlib.error) as e:
        raise OSError(f"{path}: corrupt or truncated gzip data ({e})") from e


def _line_span(data, start, stop):
    """(lo, hi): the lines of `data` whose first byte is in [start, stop) are data[lo:hi]."""
    n = len(data)
    stop = n if stop is None else min(stop, n)
    if start >= stop:
        return 0, 0
    if start > 0:
        k = data.find(b"\n", start - 1, stop - 1)
        if k < 0:
            return 0, 0
        lo = k + 1
    else:
        lo = 0
    end = data.find(b"\n", stop - 1)
    return lo, (n if end < 0 else end + 1)


def _lines_in_memory(text, start, stop):
    """(offset of the first line, buffer of the lines) for an in-memory text."""
    lo, hi = _line_span(text, start, stop)
    return lo, memoryview(text)[lo:hi]


def _lines_from_file(f, start, stop):
    """Read only the lines starting in [start, stop) (plus the byte before start) from f."""
    if stop is None:
        return 0, f.read()
    size = f.seek(0, os.SEEK_END)
    stop = min(stop, size)
    if start >= stop:
        return 0, b""
    a = start - 1 if start > 0 else 0
    f.seek(a)
    chunks = [f.read(stop - a)]
    if not chunks[0].endswith(b"\n"):        # finish the line that straddles stop
        while True:
            c = f.read(_CHUNK)
            if not c:
                break
            j = c.find(b"\n")
            if j >= 0:
                chunks.append(c[:j + 1])
                break
            chunks.append(c)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    lo, hi = _line_span(data, start - a, stop - a)
    return a + lo, memoryview(data)[lo:hi]


def _looks_binary(buf):
    """Whether the start of `buf` is binary data rather than text: a NUL byte, or bytes that
    are not UTF-8, in its first 8 KiB."""
    head = bytes(buf[:8192])
    if b"\x00" in head:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _row_of(part, k):
    """The row (0-based, within the part) holding entry k."""
    return int(np.searchsorted(part.indptr, k, side="right") - 1)


def _error_message(path, byte_range, buf, base, compressed, err):
    """The reader's error: where (file, line, byte range, byte offset) and `_error_what`."""
    _, lineno, offset, _, _ = err
    what = _error_what(buf, err)
    where = "decompressed text" if compressed else "file"
    if byte_range is None:
        return f"{path}: line {lineno}: {what} (byte {base + offset} of the {where})"
    return (f"{path}: line {lineno} of byte range [{byte_range[0]}, {byte_range[1]}): {what} "
            f"(byte {base + offset} of the {where})")


def _error_what(buf, err):
    """What is wrong with the token the parser's `err` points at in `buf`."""
    code, _, offset, length, extra = err
    token = bytes(buf[offset:offset + min(length, 80)]).decode("utf-8", "replace").rstrip()
    if length > 80:
        token += "..."
    t = repr(token)
    return {
        "bad_label": f"bad label {t}: not a number",
        "nonfinite_label": f"label {t} is NaN or infinite (or overflows)",
        "multilabel": f"label {t} looks multilabel; multilabel files are not supported "
                      f"(one numeric label per line)",
        "no_colon": f"feature {t} has no ':' (expected index:value)",
        "bad_index": f"bad feature index in {t}: not an integer",
        "negative_index": f"negative feature index in {t}",
        "index_overflow": f"feature index in {t} is too large",
        "bad_value": f"bad feature value in {t}: not a number",
        "nonfinite_value": f"feature value in {t} is NaN or infinite (or overflows)",
        "duplicate": f"feature index {extra} appears twice in the row {t}",
        "bad_qid": f"bad qid token {t}: expected qid:<integer>",
        "qid_position": f"qid token {t} must come right after the label",
    }[code]
