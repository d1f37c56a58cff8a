"""Model outputs O = z(X) W, computed block by block (never all of z(X) at once).

`outputs` serves predict (the feature blocks of each chunk of rows are made, used and
dropped); `CachedOutputs` serves a fixed set of rows scored at every iteration (the
validation rows of early stopping): their feature blocks are made once and kept when they
fit the given budget, so an iteration's score costs the products only.  Inside a
`kept_features(budget)` block, `outputs` keeps the blocks of the rows it is given, for the
next model of the same map on the same rows: a search scores every model of a
regularization path (one map) on the same test rows, and transforms them once.

Float32 blocks are multiplied in float32 (W rounded to float32 per block, the products added
up in float64), as the engine does: numpy would otherwise copy every float32 block to float64
before a float64 product, which costs 20x the float32 product.
"""
import contextlib

import numpy as np

__all__ = ["outputs", "CachedOutputs", "SCORING_ROWS", "kept_features"]

# Rows per chunk when outputs are scored or predicted block by block (memory: rows x max s_j;
# skylite.admm.memory counts it)
SCORING_ROWS = 8192

# inside kept_features(): {"budget": bytes left, "blocks": {key: (map, rows, blocks)}}
_kept = None


@contextlib.contextmanager
def kept_features(budget_bytes):
    """Inside the block, `outputs` keeps the feature blocks of the rows it transforms (up to
    `budget_bytes` in all), and serves the same map on the same rows array from them.

    The outputs are bitwise those `outputs` computes without it: the same chunks of rows,
    the same blocks, the same products.  Rows are recognized by identity (the same array
    object, which the block holds until it ends), so rows changed in place inside the block
    are not seen: keep them fixed.  Nested blocks share the outer one.
    """
    global _kept
    if _kept is not None:
        yield
        return
    _kept = {"budget": int(budget_bytes), "blocks": {}}
    try:
        yield
    finally:
        _kept = None


def _chunk_blocks(feature_map, X, start, rows, dtype, n_threads):
    """Yield the feature blocks z_j(X[start:start + rows]), j = 0, 1, ..., one at a time, in
    the precision `dtype` (None: X's)."""
    chunk = X[start:start + rows]
    if dtype is not None:
        chunk = chunk.astype(dtype, copy=False)
    for j in range(len(feature_map.block_sizes)):
        yield feature_map.block(chunk, j, n_threads=n_threads)


def _kept_blocks(feature_map, X, dtype, rows, n_threads):
    """Every chunk's blocks of X, made once inside kept_features() if they fit its budget;
    None outside it or beyond the budget."""
    if _kept is None:
        return None
    key = (id(feature_map), id(X), np.dtype(dtype).str if dtype is not None else None, rows)
    if key not in _kept["blocks"]:
        itemsize = np.dtype(dtype if dtype is not None else X.dtype).itemsize
        size = X.shape[0] * int(feature_map.n_features) * itemsize
        if size > _kept["budget"]:
            return None
        _kept["budget"] -= size
        blocks = [list(_chunk_blocks(feature_map, X, start, rows, dtype, n_threads))
                  for start in range(0, X.shape[0], rows)]
        _kept["blocks"][key] = (feature_map, X, blocks)    # holding both keeps the ids valid
    return _kept["blocks"][key][2]


def _block_product(Zj, Wj):
    """Zj @ Wj in Zj's precision, as float64."""
    if Zj.dtype == np.float32:
        return (Zj @ Wj.astype(np.float32)).astype(np.float64)
    return Zj @ Wj


def _offsets(feature_map):
    return np.concatenate([[0], np.cumsum(feature_map.block_sizes)]).astype(np.intp)


def outputs(feature_map, W, X, *, n_threads=None, dtype=None, rows=SCORING_ROWS):
    """O = z(X) W (n x m float64), over chunks of `rows` rows and the map's column blocks.

    feature_map: a fitted skylite.sketch map; W: (s, m); X: (n, d) dense or CSR rows already
    validated; dtype: the precision of the feature blocks (float32: each chunk of rows is
    rounded to float32, and the blocks and their products are float32); None: X's.
    """
    offsets = _offsets(feature_map)
    O = np.zeros((X.shape[0], W.shape[1]))
    kept = _kept_blocks(feature_map, X, dtype, rows, n_threads)
    for c, start in enumerate(range(0, X.shape[0], rows)):
        blocks = (kept[c] if kept is not None
                  else _chunk_blocks(feature_map, X, start, rows, dtype, n_threads))
        for j, Zj in enumerate(blocks):
            O[start:start + Zj.shape[0]] += _block_product(Zj, W[offsets[j]:offsets[j + 1]])
    return O


class CachedOutputs:
    """W -> z(X) W for fixed rows X, with the feature blocks of X kept in memory when they fit.

    feature_map: fitted map; X: validated rows; dtype: as for `outputs`; budget_bytes: the
    most the kept blocks may take (n s itemsize, `nbytes`); beyond it every call regenerates
    them (`outputs`).  A call takes the engine's validation protocol, outputs(W, X_rows):
    the rows are its own, X_rows is not read.
    """

    def __init__(self, feature_map, X, *, budget_bytes, n_threads=None, dtype=None):
        if dtype is not None:
            X = X.astype(dtype, copy=False)
        self.feature_map, self.X, self.n_threads = feature_map, X, n_threads
        itemsize = 4 if X.dtype == np.float32 else 8
        size = X.shape[0] * int(feature_map.n_features) * itemsize
        self.blocks, self.nbytes = None, 0
        if size <= budget_bytes:
            self.nbytes = size
            offsets = _offsets(feature_map)
            self.blocks = [feature_map.block(X, j, n_threads=n_threads)
                           for j in range(len(offsets) - 1)]
            self.offsets = offsets

    @property
    def cached(self):
        """Whether the feature blocks are kept."""
        return self.blocks is not None

    def __call__(self, W, X_rows=None):
        if self.blocks is None:
            return outputs(self.feature_map, W, self.X, n_threads=self.n_threads)
        O = np.zeros((self.X.shape[0], W.shape[1]))
        for j, Zj in enumerate(self.blocks):
            O += _block_product(Zj, W[self.offsets[j]:self.offsets[j + 1]])
        return O
