"""Block ADMM on whitened Nystroem features: the RKHS norm as l2, when every row's features fit.

With a Nystroem map of several column blocks, l2 on the features is the RKHS norm
r(W) = 1/2 tr(W^T G W) of the functions the map spans (skylite.prox.RKHSNorm).  Its prox
solves with an s x s matrix every iteration (s^2 m flops reading an s x s factor: at
s = 4096 and 10 classes about as long as the iteration's products with Z) and refactors
I + t G whenever rho changes.  With G = L L^T (Cholesky), the features z~ = L^-1 z and the
weights w~ = L^T w make it the same problem with the l2 regularizer:

    z~ . w~ = z . w,        ||w~||^2 = w^T G w,

whose prox is elementwise.  `WhitenedADMM` forms Z~ = Z L^-T once per setup (about n s^2
flops of products with U = L^-T, in fixed chunks of rows, so the same bits on any number of
threads), runs block ADMM on the columns of Z~ (skylite.sketch.Identity over the map's column
blocks) with l2, and reads the model as W = L^-T W~ (`coef`): the validation scores, the
callback, early stopping and the fitted coef_ see the Nystroem model W, as without
whitening.  Reading W is a product with the s x s matrix U (at s = 4096 about 9 ms, a tenth
of an iteration on 13,000 rows), so an early-stopped fit may instead be given W~ itself
(`whitened_readout`): its validation rows are then whitened once too (`WhitenedOutputs`,
z~(X_val) W~ = z(X_val) W), and early stopping keeps the best W~ and reads W from it at the
end (skylite._early_stopping.EarlyStopping's `model`).  A warm start W0 starts at
W~0 = L^T W0.  A solve on the same setup at another alpha (a regularization path, a search)
keeps Z~.

The estimators use it (`whitening_factor`) for block ADMM runs long enough to pay for the
whitening (a run to tol, or a path over several C: not a single early-stopped fit) when
every rank has at most WHITEN_MAX_ROWS rows, Z~ takes at most a quarter of the memory budget
(memory_budget, or half the available memory) and G is positive definite; otherwise the
RKHS norm's prox runs as before.  Each rank whitens its own rows with the same L (G is the
same on every rank), so a run under MPI solves the serial problem, and a size-one
communicator repeats the serial run bitwise.  Z~ is held in the fit's precision beside the
engine's caches of its blocks (scaled by c, in the cache precision: bfloat16 with
cache_precision="bfloat16"): up to twice the memory of a cached run with the RKHS norm.
What it gains on MNIST is in docs/engine.md ("Whitened Nystroem features").
"""
import time
from dataclasses import replace
from functools import partial

import numpy as np

from .._linalg import cholesky
from .._threads import blas_single_threaded
from ..prox import get_regularizer
from ..prox._fixed_chunks import chunked_product, map_chunks
from ..prox._tiled_cholesky import inverse_transpose
from ..sketch import Identity
from ..sketch._base import even_block_sizes
from .blockadmm import ADMM, BlockADMM

__all__ = ["WhitenedADMM", "WhitenedBlockADMM", "WhitenedOutputs", "early_stopping_readout",
           "whitening_factor", "whitened_features", "whiten", "unwhiten", "inverse_transpose",
           "WHITEN_ROWS", "WHITEN_COLUMNS", "WHITEN_MAX_ROWS"]

# rows of Z per chunk of the whitening (the unit of parallel work, fixed so that Z~ does
# not depend on the number of threads; 1024 x 4096 float64 is 32 MiB), and the columns per
# product within a chunk
WHITEN_ROWS = 1024
WHITEN_COLUMNS = 512
# the most rows a process whitens: whitening n rows costs about the RKHS norm's prox of
# n / 170 iterations (both scale with s^2: at s = 4096, 10 classes, float64, 2 cores, 4.5 s
# per 20,000 rows against 38 ms per prox), so 40,000 rows pay for themselves within about
# 235 iterations (a fit to tol at C = 10 on 20,000 MNIST rows runs 248, a path over four C
# values about 300); beyond that the prox is the cheaper way
WHITEN_MAX_ROWS = 40000
# products W = L^-T W~ in chunks of this many rows of L^-T
UNWHITEN_ROWS = 512


def whitening_factor(feature_map, regularizer, settings, n_rows, available, long_run=True,
                     n_threads=1):
    """The lower Cholesky factor L of the map's RKHS Gram matrix G when the estimators'
    block ADMM should run on whitened features (module docstring), else None.

    Parameters
    ----------
    feature_map : fitted skylite.sketch map
        The fit's map.
    regularizer : skylite.prox regularizer
        After `skylite._solvers.regularizer_for_map`: whitening applies to the RKHS norm.
    settings : skylite.admm.settings.EngineSettings
        The fit's settings (memory_budget, precision).
    n_rows : int
        This process's training rows.
    available : int
        Bytes of memory available to this process.  Under MPI the ranks whiten only if
        every rank's call returns a factor (the estimators check it with one allgather).
    long_run : bool, default=True
        Whether the run is long enough to pay for the whitening: a run to tol (about 250
        iterations on MNIST) or a path over several values of C.  A single early-stopped
        fit (60-120 iterations) is not: on 20,000 MNIST rows with `KernelSVC`'s defaults it
        took 8.0-8.4 s whitened against 6.7-6.8 s with the RKHS norm's prox.
    n_threads : int, default=1
        Threads of the Cholesky factorization (the same L on any number).

    Returns
    -------
    ndarray of shape (s, s) or None
        L in float64 (G = L L^T).
    """
    if (regularizer.name != "rkhs" or settings.memory_budget == 0 or n_rows > WHITEN_MAX_ROWS
            or not long_run):
        return None
    s = feature_map.n_features
    sizes = list(feature_map.block_sizes)
    if sizes != list(even_block_sizes(s, len(sizes))):
        return None
    itemsize = 4 if settings.precision == "float32" else 8
    budget = settings.memory_budget or available // 2
    if n_rows * s * itemsize > budget // 4:
        return None
    try:
        L = cholesky(np.array(regularizer.gram, dtype=np.float64), "G", n_threads)[0]
    except ValueError:                       # G only semidefinite: the RKHS norm's prox
        return None
    return _zero_above_diagonal(L)


def _zero_above_diagonal(A, rows=WHITEN_COLUMNS):
    """A with its strict upper triangle set to zero, in place (np.tril without its s x s
    copy), by bands of `rows` rows."""
    for a in range(0, A.shape[0], rows):
        b = min(a + rows, A.shape[0])
        A[a:b, b:] = 0.0
        A[a:b, a:b] = np.tril(A[a:b, a:b])
    return A


def unwhiten(U, W_whitened, n_threads):
    """W = U W~ (s x m) for U = L^-T, in fixed chunks of UNWHITEN_ROWS rows of U (the same
    bits on any number of threads)."""
    return chunked_product(U, W_whitened, UNWHITEN_ROWS, n_threads, upper=True)


def early_stopping_readout(dist, factor, validation, n_threads, dtype=None):
    """What early stopping on whitened features needs to be given W~ (`whitened_readout`)
    instead of W = U W~: (U, `WhitenedOutputs` of the validation rows, W~ -> W), or None
    unless every rank keeps its validation rows' feature blocks.

    Parameters
    ----------
    dist : skylite._distributed.Distributed
        The fit's communicator (every rank decides the same).
    factor : ndarray of shape (s, s)
        L (`whitening_factor`).
    validation : skylite._outputs.CachedOutputs
        The validation rows' outputs, with their blocks kept (`cached`) or not.
    n_threads : int
        Threads of the whitening and the products.
    dtype : numpy dtype or None, default=None
        The fit's precision (None: float64).
    """
    if not all(dist.allgather(validation.cached)):
        return None
    U = dist.agree(inverse_transpose, factor, n_threads)
    outputs = WhitenedOutputs(validation.blocks, U, dtype or np.float64, n_threads)
    return U, outputs, partial(unwhiten, U, n_threads=n_threads)


def whitened_features(feature_map, X, U, dtype, n_threads):
    """Z~ = z(X) U (n x s, `dtype`), U = L^-T: the map's features of X in `dtype` (as the
    engine makes them), whitened in place (`whiten`)."""
    Z = np.ascontiguousarray(feature_map.transform(X.astype(dtype, copy=False),
                                                   n_threads=n_threads), dtype=dtype)
    return whiten(Z, U, n_threads)


def whiten(Z, U, n_threads):
    """Z <- Z U in place for an upper triangular U (Z: n x s, C order), by fixed chunks of
    WHITEN_ROWS rows on n_threads threads (single-threaded BLAS each, so the same bits on
    any number of threads).  Within a chunk, column block [a, b) of WHITEN_COLUMNS columns,
    from the last to the first, is Z[:, :b] U[:b, a:b], which reads only columns not yet
    replaced: products, about twice as fast as the triangular solve with L on 2 cores
    (20,000 x 4096: 4.5 s against 8.5 s)."""
    s = Z.shape[1]
    edges = list(range(0, s, WHITEN_COLUMNS)) + [s]
    blocks = list(zip(edges[:-1], edges[1:]))[::-1]
    factor = U.astype(Z.dtype, copy=False)

    def product(start, stop):
        rows = Z[start:stop]
        for a, b in blocks:
            rows[:, a:b] = rows[:, :b] @ factor[:b, a:b]
    with blas_single_threaded():
        map_chunks(product, Z.shape[0], WHITEN_ROWS, n_threads)
    return Z


class WhitenedADMM(ADMM):
    """Block ADMM (`ADMM`) on whitened Nystroem features with l2 (module docstring).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.Nystroem
        The map; its column blocks are the engine's.
    loss : skylite.prox.Loss
        The loss V.
    regularizer : skylite.prox.RKHSNorm
        The RKHS norm of the map (the problem; the engine runs l2 on Z~).
    settings : EngineSettings
        As for `ADMM`.
    n_threads : int
        Threads of the native code and of the whitening.
    factor : ndarray of shape (s, s)
        L, the lower Cholesky factor of G (`whitening_factor`).
    unwhitening : ndarray of shape (s, s) or None, default=None
        U = L^-T (`inverse_transpose(factor)`, computed when None).
    whitened_readout : bool, default=False
        Give validation and the callback W~ (`readout`) instead of W = U W~ (`coef`).
    """

    def __init__(self, feature_map, loss, regularizer, settings, n_threads, factor,
                 unwhitening=None, whitened_readout=False):
        s, C = feature_map.n_features, len(feature_map.block_sizes)
        columns = Identity(n_blocks=C)._fit_dimension(s, 0)
        super().__init__(columns, loss, get_regularizer("l2"), settings, n_threads)
        self.nystroem, self.factor = feature_map, factor
        # U = L^-T: Z~ = Z U, W = U W~
        self._unwhitening = (inverse_transpose(factor, n_threads) if unwhitening is None
                             else unwhitening)
        self.whitened_readout = whitened_readout
        self._whitening_seconds = 0.0

    @property
    def n_features_in(self):
        return self.nystroem.transform_op_.n_features_in

    def _dtype(self):
        return np.float32 if self.settings.precision == "float32" else np.float64

    def plan(self, X, Y, available):
        """The plan of block ADMM on Z~ (n x s, the fit's precision), with Z~, L and L^-T
        taken out of `available` and of memory_budget (Z~ is allocated at setup); the engine
        caches the blocks of Z~, scaled by c, where they fit."""
        self.settings = self.settings.for_rows(X.dtype == np.float32)   # precision "auto"
        dtype = self._dtype()
        shape = (X.shape[0], self.nystroem.n_features)
        held = shape[0] * shape[1] * np.dtype(dtype).itemsize + 2 * self.factor.nbytes
        if self.settings.memory_budget:            # the budget bounds Z~ too
            self.settings = replace(self.settings,
                                    memory_budget=max(1, self.settings.memory_budget - held))
        standin = np.broadcast_to(np.zeros((), dtype=dtype), shape)
        super().plan(standin, Y, max(0, available - held))

    def setup(self, X, Y, n, n_row_blocks_total, dist):
        tick = time.perf_counter()
        Z = whitened_features(self.nystroem, X, self._unwhitening, self._dtype(),
                              self.n_threads)
        self._whitening_seconds = time.perf_counter() - tick
        super().setup(Z, Y, n, n_row_blocks_total, dist)
        self.memory_estimate += Z.nbytes + 2 * self.factor.nbytes   # and L, L^-T

    def header(self, dist):
        return ("whitened Nystroem features (the RKHS norm as l2), "
                f"{self._whitening_seconds:.2f}s; " + super().header(dist))

    def checkpoint_meta(self):
        return {**super().checkpoint_meta(), "regularizer": "rkhs", "whitened": True}

    @property
    def coef(self):
        """W = U W~ (s x m), U = L^-T (`unwhiten`)."""
        return unwhiten(self._unwhitening, super().coef, self.n_threads)

    @property
    def readout(self):
        """W~ with `whitened_readout`, else W (`coef`)."""
        return super().coef if self.whitened_readout else self.coef

    def warm_start(self, W0, dist):
        """Start at W~0 = L^T W0."""
        super().warm_start(self.factor.T @ np.asarray(W0, dtype=np.float64), dist)

    def phase_seconds(self, history):
        return {**super().phase_seconds(history), "whitening": self._whitening_seconds}

    def result_details(self):
        return {**super().result_details(), "whitened": True}


class WhitenedBlockADMM(BlockADMM):
    """`BlockADMM` whose method is `WhitenedADMM`: the same arguments, and `factor` (L),
    `unwhitening` (U = L^-T, or None) and `whitened_readout` (validation and the callback
    are given W~ = L^T W instead of W)."""

    def __init__(self, feature_map, loss, regularizer, settings=None, /, *, factor,
                 unwhitening=None, whitened_readout=False, **options):
        super().__init__(feature_map, loss, regularizer, settings, **options)
        self.method_class = partial(WhitenedADMM, factor=factor, unwhitening=unwhitening,
                                    whitened_readout=whitened_readout)


class WhitenedOutputs:
    """W~ -> z(X) W = z~(X) W~ (n x m float64) for fixed rows X, from their feature blocks
    (those a `skylite._outputs.CachedOutputs` keeps) whitened once: Z~ = z(X) U (`whiten`,
    in the fit's precision, as the engine's Z~; predictions z(X) W of float32 rows are
    float32 products, within float32 rounding of these).  The products run in fixed chunks
    of rows, so the outputs do not depend on the number of threads.

    Parameters
    ----------
    blocks : list of ndarray of shape (n, s_j)
        The column blocks of z(X), in order.
    unwhitening : ndarray of shape (s, s)
        U = L^-T.
    dtype : numpy dtype
        The fit's precision (float32 or float64).
    n_threads : int
        Threads of the whitening and the products.
    """

    def __init__(self, blocks, unwhitening, dtype, n_threads):
        Z = np.concatenate(blocks, axis=1).astype(dtype, copy=False)
        self.Z, self.n_threads = whiten(Z, unwhitening, n_threads), n_threads

    def __call__(self, W_whitened, X_rows=None):
        return chunked_product(self.Z, W_whitened.astype(self.Z.dtype, copy=False),
                               WHITEN_ROWS, self.n_threads).astype(np.float64, copy=False)
