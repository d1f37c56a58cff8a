"""skylite.prox._fixed_chunks: work over fixed chunks of a range, independent of the thread
count (the loss and regularizer sums, RKHSNorm's products)."""
import threading

import numpy as np
import pytest

from skylite.prox import AbsoluteLoss, L1
from skylite.prox._fixed_chunks import chunked_product, map_chunks

LOSS_CHUNK = 1024          # rows per partial sum of Loss.value_rows
REGULARIZER_CHUNK = 4096   # entries per partial sum of Regularizer.value_rows


def wide_range(shape, seed):
    """Normal entries scaled by 10^u, u uniform in [-8, 8]: their sums depend on the order of
    the additions."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) * 10.0 ** rng.uniform(-8, 8, shape)


def chunk_ordered_sum(terms, chunk):
    """sum of `terms` as chunked_sum forms it: each chunk's terms added in order from 0.0,
    then the chunks' sums added in order."""
    total = 0.0
    for start in range(0, len(terms), chunk):
        partial = 0.0
        for term in terms[start:start + chunk]:
            partial += term
        total += partial
    return total


@pytest.mark.parametrize("n", [1, 1023, 1024, 1025, 6000])
def test_loss_value_is_the_chunk_ordered_sum(n):
    """The loss value is the rows' values summed per chunk of rows, then over the chunks in
    order: bitwise, on one thread or two."""
    O, Y = wide_range((n, 3), n), wide_range((n, 3), n + 1)
    rows = []
    for o, y in zip(O.tolist(), Y.tolist()):
        s = 0.0
        for a, b in zip(o, y):
            s += abs(a - b)
        rows.append(s)
    expected = chunk_ordered_sum(rows, LOSS_CHUNK)
    for n_threads in (1, 2):
        assert AbsoluteLoss().value(O, Y, n_threads=n_threads) == expected


@pytest.mark.parametrize("size", [1, 4095, 4096, 4097, 30000])
def test_regularizer_value_is_the_chunk_ordered_sum(size):
    """The regularizer value is the entries' values summed per chunk of entries (row-major),
    then over the chunks in order: bitwise, on one thread or two."""
    W = wide_range((size, 1), size)
    expected = chunk_ordered_sum(np.abs(W).ravel().tolist(), REGULARIZER_CHUNK)
    for n_threads in (1, 2):
        assert L1().value(W, n_threads=n_threads) == expected


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_map_chunks_covers_the_range_with_fixed_chunks(n_threads):
    """Every chunk [c * chunk, min(n, (c + 1) * chunk)) is visited once, whatever the thread
    count; several threads take part when there are several chunks."""
    seen, threads, lock = [], set(), threading.Lock()

    def record(start, stop):
        with lock:
            seen.append((start, stop))
            threads.add(threading.get_ident())
    map_chunks(record, 1030, 512, n_threads)
    assert sorted(seen) == [(0, 512), (512, 1024), (1024, 1030)]
    if n_threads == 1:
        assert seen == [(0, 512), (512, 1024), (1024, 1030)]
        assert threads == {threading.get_ident()}
    seen.clear()
    map_chunks(record, 0, 512, n_threads)
    assert seen == []


def test_map_chunks_reports_errors():
    """A bad chunk length or range is named; an exception in a chunk reaches the caller."""
    with pytest.raises(ValueError, match="chunk must be a positive length"):
        map_chunks(lambda a, b: None, 10, 0, 1)
    with pytest.raises(ValueError, match="n must be >= 0"):
        map_chunks(lambda a, b: None, -1, 4, 1)

    def fail(start, stop):
        if start == 8:
            raise RuntimeError(f"chunk {start}")
    with pytest.raises(RuntimeError, match="chunk 8"):
        map_chunks(fail, 20, 4, 2)


@pytest.mark.parametrize("upper", [False, True])
def test_chunked_product_is_the_product_on_any_number_of_threads(upper):
    rng = np.random.default_rng(0)
    A, B = wide_range((700, 700), 1), rng.standard_normal((700, 5))
    if upper:
        A = np.triu(A)
        rows, columns = np.indices(A.shape)
        A[columns < rows // 128 * 128] = np.nan       # left of each chunk: never read
    products = [chunked_product(A, B, 128, t, upper=upper) for t in (1, 2, 3)]
    expected = np.triu(np.nan_to_num(A)) @ B if upper else A @ B
    assert np.allclose(products[0], expected, rtol=1e-12, atol=1e-9 * np.abs(expected).max())
    assert all(np.array_equal(p, products[0]) for p in products[1:])
