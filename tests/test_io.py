"""skylite.io: the svmlight / LIBSVM reader (whole files, byte ranges, gzip) and writer."""
import builtins
import gzip
import io
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skylite.io import (SvmlightPart, assemble, dump_svmlight, iter_svmlight_rows, load_svmlight,
                        read_svmlight_part, resolve_features, svmlight_byte_ranges)
from skylite.io import svmlight as svmlight_module

from conftest import DATA

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="skylite-io-") as d:
        yield Path(d)


def write(path, text):
    data = text.encode() if isinstance(text, str) else text
    if str(path).endswith(".gz"):
        data = gzip.compress(data, compresslevel=1)
    Path(path).write_bytes(data)
    return path


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def assert_same_csr(X, Y):
    assert X.shape == Y.shape
    assert np.array_equal(X.indptr, Y.indptr)
    assert np.array_equal(X.indices, Y.indices)
    assert same_bits(X.data, Y.data)


def assert_canonical(X, dtype=np.float64):
    assert sp.isspmatrix_csr(X)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int64
    assert X.data.dtype == dtype
    assert X.has_canonical_format
    for i in range(X.shape[0]):
        row = X.indices[X.indptr[i]:X.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)


def concat_parts(parts):
    """One SvmlightPart made of several, as if read in one go."""
    offsets = np.cumsum([0] + [p.nnz for p in parts])
    indptr = np.concatenate([[0]] + [p.indptr[1:] + o for p, o in zip(parts, offsets)])
    nonempty = [p for p in parts if p.max_index >= 0]
    return SvmlightPart(np.concatenate([p.labels for p in parts]), indptr,
                        np.concatenate([p.indices for p in parts]),
                        np.concatenate([p.values for p in parts]),
                        min(p.min_index for p in nonempty) if nonempty else -1,
                        max(p.max_index for p in nonempty) if nonempty else -1,
                        sum(p.n_rows for p in parts))


def assert_same_part(a, b):
    assert a.n_rows == b.n_rows
    assert same_bits(a.labels, b.labels)
    assert np.array_equal(a.indptr, b.indptr) and a.indptr.dtype == np.int64
    assert np.array_equal(a.indices, b.indices) and a.indices.dtype == np.int64
    assert same_bits(a.values, b.values)
    assert (a.min_index, a.max_index) == (b.min_index, b.max_index)


# ---------------------------------------------------------------------------------------------
# The real dataset, against scikit-learn

@pytest.mark.parametrize("name", ["reuters_sample.svm.gz", "reuters_sample.t.svm.gz"])
def test_reuters_equals_sklearn(name):
    sk = pytest.importorskip("sklearn.datasets")
    path = DATA / name
    X, y = load_svmlight(path, n_features=8315)
    Xs, ys = sk.load_svmlight_file(str(path), n_features=8315)
    assert_canonical(X)
    assert_same_csr(X, Xs)
    assert same_bits(y, ys)
    # Read in three byte ranges of the decompressed text: the same rows.
    parts = [read_svmlight_part(path, r) for r in svmlight_byte_ranges(path, 3)]
    assert all(p.n_rows > 0 for p in parts)
    Xp, yp = assemble(concat_parts(parts), n_features=8315)
    assert_same_csr(Xp, Xs)
    assert same_bits(yp, ys)
    # float32, as scikit-learn rounds it.
    X32, _ = load_svmlight(path, n_features=8315, dtype=np.float32)
    Xs32, _ = sk.load_svmlight_file(str(path), n_features=8315, dtype=np.float32)
    assert_canonical(X32, np.float32)
    assert_same_csr(X32, Xs32)


# ---------------------------------------------------------------------------------------------
# Round trips and the number parser

@st.composite
def sparse_problems(draw):
    n = draw(st.integers(0, 12))
    d = draw(st.integers(1, 15))
    finite = st.floats(allow_nan=False, allow_infinity=False, width=draw(st.sampled_from([32, 64])))
    dense = np.array(draw(st.lists(st.lists(st.one_of(st.just(0.0), finite), min_size=d,
                                             max_size=d), min_size=n, max_size=n)),
                     dtype=np.float64).reshape(n, d)
    y = np.array(draw(st.lists(finite, min_size=n, max_size=n)), dtype=np.float64)
    return dense, y


@FAST
@given(sparse_problems(), st.booleans(), st.booleans(), st.booleans())
def test_dump_load_round_trip_is_exact(problem, zero_based, as_csr, compressed):
    dense, y = problem
    X = sp.csr_matrix(dense) if as_csr else dense
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / ("f.svm.gz" if compressed else "f.svm")
        dump_svmlight(X, y, path, zero_based=zero_based)
        X2, y2 = load_svmlight(path, n_features=dense.shape[1], zero_based=zero_based)
    assert_canonical(X2)
    expect = sp.csr_matrix(dense)
    expect.eliminate_zeros()
    assert_same_csr(X2, expect)
    assert same_bits(y2, y)
    assert np.array_equal(X2.toarray(), dense)


@FAST
@given(st.lists(st.tuples(st.sampled_from(["", "+", "-"]), st.text("0123456789", max_size=22),
                          st.one_of(st.none(), st.text("0123456789", max_size=22)),
                          st.one_of(st.none(), st.tuples(st.sampled_from(["e", "E"]),
                                                         st.sampled_from(["", "+", "-"]),
                                                         st.integers(0, 400)))),
                min_size=1, max_size=30))
def test_numbers_parse_exactly_as_python_float(parts):
    tokens = []
    for sign, whole, frac, exp in parts:
        s = sign + whole + ("" if frac is None else "." + frac)
        if not (whole or frac):
            s += "0"
        if exp is not None:
            s += f"{exp[0]}{exp[1]}{exp[2]}"
        try:
            if not np.isfinite(float(s)):
                continue
        except ValueError:
            continue
        tokens.append(s)
    if not tokens:
        return
    text = "".join(f"{t} 1:{t}\n" for t in tokens)
    with tempfile.TemporaryDirectory() as d:
        part = read_svmlight_part(write(Path(d) / "n.svm", text))
    expect = np.array([float(t) for t in tokens])
    assert same_bits(part.labels, expect)
    assert same_bits(part.values, expect)


@FAST
@given(st.lists(st.floats(min_value=1e-30, max_value=1e30), min_size=1, max_size=50),
       st.sampled_from(["%.15g", "%.16g", "%.17g", "%.18g", "%.19g", "%.20g", "%.17e", "%r"]))
def test_many_digit_numbers_parse_exactly(xs, fmt):
    """16-19 significant digits and exponents within +-27: the 128-bit integer path."""
    tokens = [repr(x) if fmt == "%r" else fmt % x for x in xs]
    text = "".join(f"{t} 1:{t} 2:-{t}\n" for t in tokens)
    with tempfile.TemporaryDirectory() as d:
        part = read_svmlight_part(write(Path(d) / "m.svm", text))
    expect = np.array([float(t) for t in tokens])
    assert same_bits(part.labels, expect)
    assert same_bits(part.values[0::2], expect) and same_bits(part.values[1::2], -expect)


def test_exactness_on_many_random_doubles(workdir):
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.random(20000), np.exp(rng.uniform(-70, 70, 20000)),
                        rng.integers(1, 256, 5000) / 255.0])
    tokens = [f"{v:.17g}" for v in x] + [repr(float(v)) for v in x] + [f"{v:.19e}" for v in x]
    text = "".join(f"1 1:{t}\n" for t in tokens)
    part = read_svmlight_part(write(workdir / "random_doubles.svm", text))
    assert same_bits(part.values, np.array([float(t) for t in tokens]))


def test_hard_numbers(workdir):
    tokens = ["0.1", "1e23", "9007199254740993", "2.2250738585072011e-308", "4.9e-324",
              "1.7976931348623157e308", "0.30000000000000004", "123456789012345678901234567890",
              "1e-400", "-0", "-0.0", "5e-324", "2.4703282292062327e-324", ".5", "5.", "+.5e1",
              "0.000000000000000000000000000001234", "1" + "0" * 400 + "e-400"]
    text = "".join(f"{t} 1:{t}\n" for t in tokens)
    part = read_svmlight_part(write(workdir / "hard.svm", text))
    expect = np.array([float(t) for t in tokens])
    assert same_bits(part.values, expect) and same_bits(part.labels, expect)


# ---------------------------------------------------------------------------------------------
# Format variants

@st.composite
def decorated_files(draw):
    """(text, expected part): svmlight text with comments, blank lines, CRLF, qid, tabs,
    unsorted rows, label-only rows and an optional missing final newline."""
    n = draw(st.integers(0, 15))
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    lines, labels, indptr, indices, values = [], [], [0], [], []
    for _ in range(n):
        while rnd.random() < 0.2:
            lines.append(rnd.choice(["", "   ", "# a comment: 1:2", "\t# x", " \r"]))
        label = rnd.choice([1.0, -1.0, 3.0, 2.5, -0.125, 1e-3])
        k = rnd.randint(0, 6)
        idx = sorted(rnd.sample(range(0, 40), k))
        val = [rnd.choice([0.0, 1.0, -2.5, rnd.uniform(-5, 5), 1e-300, 1e300]) for _ in idx]
        labels.append(label)
        indices += idx
        values += val
        indptr.append(len(indices))
        pairs = [f"{i}:{v!r}" for i, v in zip(idx, val)]
        if rnd.random() < 0.3:
            rnd.shuffle(pairs)
        toks = [rnd.choice([repr(label), "+" + repr(label)] if label > 0 else [repr(label)])]
        if rnd.random() < 0.3:
            toks.append(f"qid:{rnd.randint(0, 9)}")
        toks += pairs
        line = "".join(t + rnd.choice([" ", "\t", "  "]) for t in toks).rstrip()
        if rnd.random() < 0.2:
            line = rnd.choice(["", "  "]) + line + rnd.choice([" # trailing 3:4", "#c"])
        lines.append(line)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines)
    if lines and draw(st.booleans()):
        text += eol
    nonempty = len(indices) > 0
    part = SvmlightPart(np.array(labels, dtype=np.float64), np.array(indptr, dtype=np.int64),
                        np.array(indices, dtype=np.int64), np.array(values, dtype=np.float64),
                        min(indices) if nonempty else -1, max(indices) if nonempty else -1, n)
    return text, part


@FAST
@given(decorated_files(), st.booleans())
def test_format_variants(case, compressed):
    text, expect = case
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d) / ("v.svm.gz" if compressed else "v.svm"), text)
        part = read_svmlight_part(path)
    assert_same_part(part, expect)


@FAST
@given(decorated_files(), st.booleans(), st.integers(1, 8), st.data())
def test_byte_ranges_partition_the_rows(case, compressed, n_parts, data):
    text, expect = case
    size = len(text.encode())
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d) / ("r.svm.gz" if compressed else "r.svm"), text)
        whole = read_svmlight_part(path)
        even = svmlight_byte_ranges(path, n_parts)
        assert len(even) == n_parts and even[0][0] == 0 and even[-1][1] == size
        cuts = sorted(data.draw(st.lists(st.integers(0, size), min_size=n_parts - 1,
                                         max_size=n_parts - 1)))
        bounds = [0] + cuts + [size + data.draw(st.integers(0, 3))]
        random_ranges = list(zip(bounds[:-1], bounds[1:]))
        for ranges in (even, random_ranges):
            assert_same_part(concat_parts([read_svmlight_part(path, r) for r in ranges]), whole)
    assert_same_part(whole, expect)


def test_byte_range_reads_lines_by_first_byte(workdir):
    text = "1 1:1\n2 2:2\n3 3:3\n"          # lines start at 0, 6, 12
    path = write(workdir / "three.svm", text)
    rows = lambda r: list(read_svmlight_part(path, r).labels)
    assert rows((0, 1)) == [1.0]
    assert rows((1, 6)) == []
    assert rows((1, 7)) == [2.0]
    assert rows((6, 7)) == [2.0]
    assert rows((5, 13)) == [2.0, 3.0]
    assert rows((12, 10**9)) == [3.0]
    assert rows((18, 18)) == [] and rows((40, 50)) == []
    empty = read_svmlight_part(path, (1, 2))
    assert empty.n_rows == 0 and empty.indptr.tolist() == [0]
    assert (empty.min_index, empty.max_index) == (-1, -1)


def test_byte_range_of_plain_file_reads_only_its_lines(workdir, monkeypatch):
    line = "1 " + " ".join(f"{j}:0.5" for j in range(1, 60)) + "\n"
    path = write(workdir / "big.svm", line * 4000)               # ~1.6 MB
    size = os.path.getsize(path)
    read_bytes = []

    class Counting:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            out = self.f.read(n)
            read_bytes.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(svmlight_module, "open", lambda p, m: Counting(builtins.open(p, m)),
                        raising=False)
    part = read_svmlight_part(path, (size // 2, size // 2 + 1000))
    assert part.n_rows in (2, 3)
    assert sum(read_bytes) < 70_000 < size


def test_label_only_and_empty_files(workdir):
    X, y = load_svmlight(write(workdir / "labels.svm", "1\n-1\n\n2 # c\n"))
    assert X.shape == (3, 0) and y.tolist() == [1.0, -1.0, 2.0]
    X, y = load_svmlight(write(workdir / "empty.svm", ""), n_features=5)
    assert X.shape == (0, 5) and y.shape == (0,)
    assert_canonical(X)


def test_gzip_detected_by_magic_not_name(workdir):
    path = workdir / "compressed_without_suffix.txt"
    path.write_bytes(gzip.compress(b"1 1:2\n-1 3:4\n"))
    X, y = load_svmlight(path)
    assert X.toarray().tolist() == [[2.0, 0.0, 0.0], [0.0, 0.0, 4.0]]
    plain_gz_name = write(workdir / "plain.gz.txt", "1 1:2\n")
    assert load_svmlight(plain_gz_name)[0].shape == (1, 1)


def test_zero_based_and_n_features(workdir):
    path = write(workdir / "zb.svm", "1 0:1 3:2\n-1 2:5\n")
    X, _ = load_svmlight(path)                       # auto: index 0 seen -> zero-based
    assert X.shape == (2, 4) and X[0, 0] == 1.0
    X, _ = load_svmlight(path, zero_based=True, n_features=10)
    assert X.shape == (2, 10)
    with pytest.raises(ValueError, match=r"zb\.svm: feature index 0 in row 0.*zero_based=False"):
        load_svmlight(path, zero_based=False)
    with pytest.raises(ValueError, match=r"feature index 3 does not fit n_features=3"):
        load_svmlight(path, n_features=3)
    path1 = write(workdir / "ob.svm", "1 1:1 3:2\n")
    X, _ = load_svmlight(path1)                      # auto: one-based
    assert X.shape == (1, 3) and X[0, 0] == 1.0 and X[0, 2] == 2.0
    X, _ = load_svmlight(path1, zero_based=True)
    assert X.shape == (1, 4) and X[0, 1] == 1.0
    assert resolve_features(-1, -1) == (True, 0)
    assert resolve_features(1, 8315) == (False, 8315)
    assert resolve_features(0, 7, n_features=9) == (True, 9)
    for bad in [dict(zero_based="yes"), dict(n_features=0), dict(n_features=2.5)]:
        with pytest.raises(ValueError):
            resolve_features(1, 4, **bad)
    with pytest.raises(ValueError, match="dtype"):
        assemble(read_svmlight_part(path1), dtype=np.int32)


# ---------------------------------------------------------------------------------------------
# Errors

ERRORS = [
    ("1 1:2\n2 x:1\n", 2, r"bad feature index in 'x:1'"),
    ("1 1:2\n\n1,2 3:4\n", 3, r"label '1,2'.*multilabel.*not supported"),
    ("abc 1:1\n", 1, r"bad label 'abc'"),
    ("nan 1:1\n", 1, r"label 'nan' is NaN or infinite"),
    ("1 1:1\n1 3\n", 2, r"feature '3' has no ':'"),
    ("1 -3:1\n", 1, r"negative feature index in '-3:1'"),
    ("1 3:abc\n", 1, r"bad feature value in '3:abc'"),
    ("1 3:\n", 1, r"bad feature value in '3:'"),
    ("1 :3\n", 1, r"bad feature index in ':3'"),
    ("1 1.5:3\n", 1, r"bad feature index in '1.5:3'"),
    ("# c\r\n1 3:NaN\r\n", 2, r"feature value in '3:NaN' is NaN or infinite"),
    ("1 3:-inf\n", 1, r"feature value in '3:-inf' is NaN or infinite"),
    ("1 3:1e999\n", 1, r"feature value in '3:1e999'"),
    ("1 3:0x1p3\n", 1, r"bad feature value in '3:0x1p3'"),
    ("1 3:1:2\n", 1, r"bad feature value in '3:1:2'"),
    ("1 1:1\n1 3:1 2:1 3:5\n", 2, r"feature index 3 appears twice"),
    ("1 3:1 3:5\n", 1, r"feature index 3 appears twice"),
    ("1 qid:x 3:1\n", 1, r"bad qid token 'qid:x'"),
    ("1 3:1 qid:2\n", 1, r"qid token 'qid:2' must come right after the label"),
    ("1 99999999999999999999999:1\n", 1, r"feature index in '9+:1' is too large"),
]


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("text,lineno,message", ERRORS)
def test_errors_name_file_line_and_token(workdir, text, lineno, message, compressed):
    path = write(workdir / ("err.svm.gz" if compressed else "err.svm"), text)
    with pytest.raises(ValueError, match=rf"err\.svm(\.gz)?: line {lineno}: {message}"):
        read_svmlight_part(path)
    with pytest.raises(ValueError, match=rf"line {lineno}: "):
        load_svmlight(path)


def test_error_in_byte_range_gives_range_and_offset(workdir):
    text = "1 1:1\n2 2:2\n3 3:bad\n"
    path = write(workdir / "rangeerr.svm", text)
    with pytest.raises(ValueError, match=r"line 2 of byte range \[6, 20\): bad feature value "
                                         r"in '3:bad': not a number \(byte 14 of the file\)"):
        read_svmlight_part(path, (6, 20))
    assert read_svmlight_part(path, (0, 12)).n_rows == 2


def test_missing_file_and_bad_arguments(workdir):
    missing = workdir / "no_such_file.svm"
    with pytest.raises(FileNotFoundError, match="no_such_file.svm"):
        read_svmlight_part(missing)
    with pytest.raises(FileNotFoundError, match="no_such_file.svm"):
        svmlight_byte_ranges(missing, 2)
    with pytest.raises(OSError, match="broken.svm.gz"):
        (workdir / "broken.svm.gz").write_bytes(gzip.compress(b"1 1:1\n" * 100)[:30])
        read_svmlight_part(workdir / "broken.svm.gz")
    path = write(workdir / "ok.svm", "1 1:1\n")
    for bad in [0, -1, 2.0, True]:
        with pytest.raises(ValueError, match="n_parts"):
            svmlight_byte_ranges(path, bad)
    for bad in [(5, 2), (-1, 3), (1,), "ab", (0.5, 2)]:
        with pytest.raises(ValueError, match="byte_range"):
            read_svmlight_part(path, bad)


def test_dump_rejects_bad_input(workdir):
    with pytest.raises(ValueError, match="NaN"):
        dump_svmlight(np.array([[np.nan]]), [1.0], workdir / "x.svm")
    with pytest.raises(ValueError, match="rows"):
        dump_svmlight(np.ones((2, 2)), [1.0], workdir / "x.svm")
    with pytest.raises(ValueError, match="multilabel"):
        dump_svmlight(np.ones((2, 2)), np.ones((2, 2)), workdir / "x.svm")
    dump_svmlight(np.array([[0.0, 1.0], [0.0, 0.0]]), [1, -1], workdir / "x.svm")
    assert (workdir / "x.svm").read_text() == "1 2:1\n-1\n"


def test_iter_svmlight_rows_yields_each_line_as_it_arrives():
    """A stream's rows equal the file reader's, and a row is yielded before the next line
    exists (the reader never reads ahead)."""

    class OneLineAtATime(io.RawIOBase):
        def __init__(self, lines):
            self.lines, self.served = list(lines), 0

        def readline(self, size=-1):
            if self.served == len(self.lines):
                return b""
            self.served += 1
            return self.lines[self.served - 1]

    text = b"1 1:0.5 3:2\n# comment\n\n-1 2:1\n0 4:1e3\n"
    stream = OneLineAtATime(text.splitlines(keepends=True))
    rows = iter_svmlight_rows(stream, n_features=4, zero_based=False)
    X0, y0 = next(rows)
    assert stream.served == 1
    assert X0.toarray().tolist() == [[0.5, 0, 2, 0]] and y0.tolist() == [1.0]
    rest = list(rows)
    assert [y.tolist() for _, y in rest] == [[-1.0], [0.0]]
    assert rest[1][0].toarray().tolist() == [[0, 0, 0, 1000.0]]


@pytest.mark.parametrize("text, message", [
    (b"1 1:2\n1 2:x\n", "<stdin>: line 2: bad feature value"),
    (b"1 7:2\n", "<stdin>: line 1: feature index 7 does not fit n_features=4"),
])
def test_iter_svmlight_rows_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        list(iter_svmlight_rows(io.BytesIO(text), n_features=4, zero_based=False))


def test_dump_svmlight_to_an_open_file_in_parts(tmp_path):
    """Parts written one after another into an open file read back as the whole."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 5)) * (rng.uniform(size=(30, 5)) < 0.5)
    y = rng.integers(0, 3, 30).astype(float)
    with open(tmp_path / "parts.svm", "wb") as f:
        for a in range(0, 30, 7):
            dump_svmlight(X[a:a + 7], y[a:a + 7], f)
        assert not f.closed
    Xr, yr = load_svmlight(tmp_path / "parts.svm", n_features=5)
    np.testing.assert_array_equal(Xr.toarray(), X)
    np.testing.assert_array_equal(yr, y)
