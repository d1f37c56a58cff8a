"""Model outputs O = z(X) W, computed block by block (never all of z(X) at once).

`outputs` serves predict (the feature blocks of each chunk of rows are made, used and
dropped); `CachedOutputs` serves a fixed set of rows scored at every iteration (the
validation rows of early stopping): their feature blocks are made once and kept when they
fit the given budget, so an iteration's score costs the products only.

Float32 blocks are multiplied in float32 (W rounded to float32 per block, the products added
up in float64), as the engine does: numpy would otherwise copy every float32 block to float64
before a float64 product, which costs 20x the float32 product.
"""
import numpy as np

__all__ = ["outputs", "CachedOutputs", "SCORING_ROWS"]

# Rows per chunk when outputs are scored or predicted block by block (memory: rows x max s_j;
# skylite.admm.memory counts it)
SCORING_ROWS = 8192


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
    for start in range(0, X.shape[0], rows):
        chunk = X[start:start + rows]
        if dtype is not None:
            chunk = chunk.astype(dtype, copy=False)
        for j in range(len(offsets) - 1):
            Zj = feature_map.block(chunk, j, n_threads=n_threads)
            O[start:start + chunk.shape[0]] += _block_product(Zj, W[offsets[j]:offsets[j + 1]])
    return O


class CachedOutputs:
    """W -> z(X) W for fixed rows X, with the feature blocks of X kept in memory when they fit.

    feature_map: fitted map; X: validated rows; dtype: as for `outputs`; budget_bytes: the
    most the kept blocks may take (n s itemsize, `nbytes`); beyond it every call regenerates
    them (`outputs`).
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

    def __call__(self, W):
        if self.blocks is None:
            return outputs(self.feature_map, W, self.X, n_threads=self.n_threads)
        O = np.zeros((self.X.shape[0], W.shape[1]))
        for j, Zj in enumerate(self.blocks):
            O += _block_product(Zj, W[self.offsets[j]:self.offsets[j + 1]])
        return O
