# cython: language_level=3
"""Parallel work over fixed chunks of a range: results independent of the thread count.

The range [0, n) is cut into chunks [c * chunk, min(n, (c + 1) * chunk)) that do not depend on
the number of threads; each chunk is computed the same way whichever thread takes it, and sums
are formed per chunk, then added in chunk order.  So a floating-point sum
(c_0 + c_1) + c_2 + ... is bitwise the same on one thread or many.

* `chunked_sum` (nogil, cimported from `_fixed_chunks.pxd`): the sums of the loss and
  regularizer values;
* `map_chunks` (Python): runs a Python function on every chunk on a thread pool, for work in
  numpy calls that release the GIL;
* `chunked_product` (Python): A @ B by fixed chunks of A's rows, through `map_chunks` (the
  products of `RKHSNorm`, and the model of block ADMM on whitened features).
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cython.parallel cimport prange
from libc.math cimport NAN
from libc.stdlib cimport malloc, free


cdef double chunked_sum(ChunkSum chunk_sum, const void *data, Py_ssize_t n, Py_ssize_t chunk,
                        int n_threads) noexcept nogil:
    cdef Py_ssize_t n_chunks = (n + chunk - 1) // chunk, c
    cdef double total = 0.0
    cdef double *partial
    if n <= 0:
        return 0.0
    partial = <double *> malloc(n_chunks * sizeof(double))
    if partial == NULL:
        return NAN
    for c in prange(n_chunks, schedule='static', num_threads=n_threads):
        partial[c] = chunk_sum(data, c * chunk, min(n, (c + 1) * chunk))
    for c in range(n_chunks):
        total += partial[c]
    free(partial)
    return total


_POOLS = {}  # n_threads -> ThreadPoolExecutor, kept for the process's lifetime


def map_chunks(function, Py_ssize_t n, Py_ssize_t chunk, int n_threads):
    """Call function(start, stop) for every fixed chunk [start, stop) of range(n).

    The chunks are [c * chunk, min(n, (c + 1) * chunk)) for c = 0, 1, ...: the same for any
    n_threads, so work that writes each chunk's own part of an output gives the same bits on
    any number of threads.  With n_threads > 1 and several chunks, the calls run on a pool of
    n_threads threads (they should release the GIL, as numpy's products do); otherwise in order
    on the calling thread.

    Parameters
    ----------
    function : callable (start, stop) -> None
        The work on one chunk.
    n : int >= 0
        The length of the range.
    chunk : int > 0
        The length of a chunk (the last one may be shorter).
    n_threads : int
        Threads of the pool.
    """
    if chunk <= 0:
        raise ValueError(f"chunk must be a positive length, got {chunk}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    bounds = [(a, min(n, a + chunk)) for a in range(0, n, chunk)]
    if n_threads <= 1 or len(bounds) <= 1:
        for start, stop in bounds:
            function(start, stop)
        return
    if n_threads not in _POOLS:
        _POOLS[n_threads] = ThreadPoolExecutor(n_threads, thread_name_prefix="skylite")
    # list() waits for every chunk and re-raises the first exception
    list(_POOLS[n_threads].map(lambda bound: function(*bound), bounds))


def chunked_product(A, B, Py_ssize_t chunk, int n_threads, bint upper=False):
    """A @ B by fixed chunks of `chunk` rows of A, on n_threads threads (numpy releases the GIL
    in the products); bitwise the same for any n_threads.

    Parameters
    ----------
    A : ndarray of shape (p, q)
        The left factor; with `upper`, upper triangular (p = q): chunk [a, b) then reads only
        A[a:b, a:] and B[a:], not the zeros left of the chunk's diagonal block.
    B : ndarray of shape (q, m)
        The right factor.
    chunk : int > 0
        Rows of A per product.
    n_threads : int
        Threads of the pool.
    upper : bool, default=False
        Whether A is upper triangular (its zeros below the diagonal are not read).

    Returns
    -------
    ndarray of shape (p, m)
        A @ B, in the result type of A and B.
    """
    out = np.empty((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))

    def product(start, stop):
        first = start if upper else 0
        np.matmul(A[start:stop, first:], B[first:], out=out[start:stop])
    map_chunks(product, A.shape[0], chunk, n_threads)
    return out
