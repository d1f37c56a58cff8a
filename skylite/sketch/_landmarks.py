"""What Nystroem maps of different bandwidths on the same rows share: k-means landmarks, and
the bandwidth-free part of their kernel blocks.

Lloyd's algorithm runs in the input space, so its centres do not depend on the kernel's
bandwidth: a search over sigma on the same rows (skylite.model_selection.KernelGridSearchCV)
draws the same pool from the same seed for every sigma, and inside
`shared_across_bandwidths()` the centres are computed once and served to the other sigmas,
bit for bit the same.  The kernel block k(X, L_j) of a Nystroem map is made from a precursor
that depends on the rows and the landmarks but not on the kernel's parameters (the dot
products x.l for the Gaussian kernel; skylite.sketch._nystroem): inside the same block it is
computed once per rows, landmarks and precision (`kept_precursor`), and the maps of the
other sigmas make their features from it, bit for bit the features they would compute.
"""
import collections
import contextlib
import hashlib
import weakref

import numpy as np
import scipy.sparse as sp

from .._machine import available_memory_bytes

# pool rows per chunk of the k-means distance products (bounds their scratch memory)
CHUNK_ROWS = 2048

# the most the kept precursors may take inside a shared_across_bandwidths() block (the
# oldest are dropped first): this, or an eighth of the available memory if less
PRECURSOR_BYTES = 2**31

# inside a shared_across_bandwidths() block: {"centres": {key: centres}, "precursors":
# {key: array} (oldest first), "budget": bytes, "digests": {id: (weak reference, digest)}};
# else None
_shared = None


@contextlib.contextmanager
def shared_across_bandwidths():
    """Inside the block, k-means centres of the same rows and start are computed once, and so
    is the precursor of the Nystroem features of the same rows and landmarks.

    The memo holds the centres (s x d float64 per distinct pool) and the precursors (n x s
    each, at most PRECURSOR_BYTES in all) until the block ends; it is keyed by digests of
    the arrays' bytes, so different rows never share.  Nested blocks share the outer memo.
    """
    global _shared
    if _shared is not None:
        yield
        return
    _shared = {"centres": {}, "precursors": collections.OrderedDict(), "digests": {},
               "budget": min(PRECURSOR_BYTES, available_memory_bytes() // 8)}
    try:
        yield
    finally:
        _shared = None


def _digest(array):
    """A digest of a dense array's or CSR matrix's shape, dtype and bytes, computed once per
    array object inside the block (remembered by a weak reference: an id reused by a new
    array is not mistaken for the old one; an array changed in place keeps its first
    digest, so the rows given inside the block must stay fixed)."""
    found = _shared["digests"].get(id(array))
    if found is not None and found[0]() is array:
        return found[1]
    digest = hashlib.sha256()                  # the fastest of hashlib's here (SHA-NI)
    parts = (array.data, array.indices, array.indptr) if sp.issparse(array) else (array,)
    digest.update(repr((array.shape, type(array).__name__)).encode())
    for part in parts:
        part = np.ascontiguousarray(part)
        digest.update(repr((part.shape, part.dtype.str)).encode())
        digest.update(memoryview(part).cast("B"))
    hexdigest = digest.hexdigest()
    _shared["digests"][id(array)] = (weakref.ref(array), hexdigest)
    return hexdigest


def kept_precursor(family, landmarks, offsets, X, dtype, compute):
    """The precursor (n x s, `dtype`) of the rows X against `landmarks` in the column blocks
    `offsets`, made once inside a `shared_across_bandwidths()` block: the kept one if the
    same family, landmarks, blocks, rows and precision were seen, else compute(P) fills a new
    one, which is kept if it fits the budget.  None outside the block or beyond the budget
    (the caller makes the features directly).

    family: which precursor the kernel uses (skylite.sketch.nystroem.PRECURSOR_FAMILY).
    """
    if _shared is None:
        return None
    dtype = np.dtype(dtype)
    key = (family, _digest(landmarks), tuple(int(o) for o in offsets), _digest(X), dtype.str)
    kept = _shared["precursors"]
    if key in kept:
        kept.move_to_end(key)
        return kept[key]
    size = X.shape[0] * int(offsets[-1]) * dtype.itemsize
    if size > _shared["budget"]:
        return None
    while kept and sum(P.nbytes for P in kept.values()) + size > _shared["budget"]:
        kept.popitem(last=False)
    P = np.empty((X.shape[0], int(offsets[-1])), dtype=dtype)
    compute(P)
    kept[key] = P
    return P


def kmeans_centres(rows, init, n_iter):
    """Lloyd's algorithm: n_iter iterations on `rows` (P x d, dense or CSR) from the centres
    `init` (s x d, dense); a centre that loses every row stays where it was.  Distances are
    computed in float32 chunks of CHUNK_ROWS rows (the assignment only needs their order);
    CSR rows stay sparse, so an iteration costs nnz s instead of P d s.  Inside a
    `shared_across_bandwidths()` block, a second call with the same rows, init and n_iter
    returns the first call's centres.

    Returns
    -------
    centres : ndarray of shape (s, d), float64
    """
    if _shared is not None:
        key = (_digest(rows), _digest(init), int(n_iter))
        if key not in _shared["centres"]:
            _shared["centres"][key] = _lloyd(rows, init, n_iter)
        return _shared["centres"][key].copy()
    return _lloyd(rows, init, n_iter)


def _lloyd(rows, init, n_iter):
    centres = np.array(init, dtype=np.float64)
    X32 = rows.astype(np.float32)
    row_sq = (np.asarray(X32.multiply(X32).sum(axis=1)).ravel() if sp.issparse(X32)
              else np.einsum("ij,ij->i", X32, X32))
    for _ in range(n_iter):
        C32 = centres.astype(np.float32)
        c_sq = np.einsum("ij,ij->i", C32, C32)
        label = np.empty(rows.shape[0], dtype=np.intp)
        for a in range(0, rows.shape[0], CHUNK_ROWS):
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
    """sums[label[i]] += rows[i]: one sparse product with the s x P indicator of the labels,
    which adds each centre's rows in row order, as a sorted np.add.reduceat would (the
    same sums, five times faster than it on 13,334 x 784 rows)."""
    P = len(label)
    indicator = sp.csr_matrix((np.ones(P), (label, np.arange(P))), shape=(len(sums), P))
    added = indicator @ rows
    sums += added.toarray() if sp.issparse(added) else added
