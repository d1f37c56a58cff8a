"""k-means landmarks for Nystroem features, and their reuse across kernel settings.

Lloyd's algorithm runs in the input space, so its centres do not depend on the kernel's
bandwidth: a search over sigma on the same rows (skylite.model_selection.KernelGridSearchCV)
draws the same pool from the same seed for every sigma, and inside `shared_landmarks()` the
centres are computed once and served to the other sigmas, bit for bit the same.
"""
import contextlib
import hashlib

import numpy as np

# pool rows per chunk of the k-means distance products (bounds their scratch memory)
CHUNK_ROWS = 2048

# {key of (rows, init, n_iter): centres} inside a shared_landmarks() block, else None
_shared = None


@contextlib.contextmanager
def shared_landmarks():
    """Inside the block, k-means centres of the same rows and start are computed once.

    The memo holds the centres (s x d float64 per distinct pool) until the block ends; it
    is keyed by a digest of the rows' and the start's bytes, so different rows never share.
    Nested blocks share the outer memo.
    """
    global _shared
    if _shared is not None:
        yield
        return
    _shared = {}
    try:
        yield
    finally:
        _shared = None


def _key(rows, init, n_iter):
    digest = hashlib.blake2b(digest_size=32)
    for array in (rows, init):
        array = np.ascontiguousarray(array)
        digest.update(repr((array.shape, array.dtype.str)).encode())
        digest.update(memoryview(array).cast("B"))
    return digest.hexdigest(), int(n_iter)


def kmeans_centres(rows, init, n_iter):
    """Lloyd's algorithm: n_iter iterations on `rows` (P x d, dense) from the centres `init`
    (s x d); a centre that loses every row stays where it was.  Distances are computed in
    float32 chunks of CHUNK_ROWS rows (the assignment only needs their order).  Inside a
    `shared_landmarks()` block, a second call with the same rows, init and n_iter returns
    the first call's centres.

    Returns
    -------
    centres : ndarray of shape (s, d), float64
    """
    if _shared is not None:
        key = _key(rows, init, n_iter)
        if key not in _shared:
            _shared[key] = _lloyd(rows, init, n_iter)
        return _shared[key].copy()
    return _lloyd(rows, init, n_iter)


def _lloyd(rows, init, n_iter):
    centres = np.array(init, dtype=np.float64)
    X32 = rows.astype(np.float32)
    row_sq = np.einsum("ij,ij->i", X32, X32)
    for _ in range(n_iter):
        C32 = centres.astype(np.float32)
        c_sq = np.einsum("ij,ij->i", C32, C32)
        label = np.empty(len(rows), dtype=np.intp)
        for a in range(0, len(rows), CHUNK_ROWS):
            D = X32[a:a + CHUNK_ROWS] @ C32.T
            D *= -2.0
            D += c_sq
            D += row_sq[a:a + CHUNK_ROWS, None]
            label[a:a + CHUNK_ROWS] = np.argmin(D, axis=1)
        counts = np.bincount(label, minlength=len(centres))
        sums = np.zeros_like(centres)
        _scatter_add(sums, label, rows)
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
    return centres


def _scatter_add(sums, label, rows):
    """sums[label[i]] += rows[i], by sorting the rows by label (faster than np.add.at)."""
    order = np.argsort(label, kind="stable")
    sorted_labels = label[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    sums[sorted_labels[starts]] = np.add.reduceat(rows[order], starts, axis=0)
