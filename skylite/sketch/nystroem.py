"""Nystroem features (Williams & Seeger 2001): a data-dependent map built from landmarks.

With landmarks L (rows of the training data, or k-means centres of them) and any kernel k,

    z(x) = k(x, L) K_LL^{-1/2},     z(x) . z(x') = k(x, L) K_LL^+ k(L, x')  ~  k(x, x'),

exact when x or x' is a landmark.  In skylite's column blocks the map is block-diagonal:
block j has its own s_j landmarks L_j and its own whitening, so that it is computed from the
rows, L_j and j alone, like every other map's block (docs/feature_maps.md, "Nystroem"):

    z_j(x) = sqrt(s_j / s) k(x, L_j) K_jj^{-1/2},     K_jj = k(L_j, L_j)   (s_j x s_j)

so z(x) . z(x') is the average of the blocks' Nystroem approximations.  A linear model on
these features spans the same functions as full Nystroem, f(x) = sum_l k(x, l) beta_l; what
differs is the norm.  `rkhs_gram()` gives the s x s matrix G with ||f||_H^2 = w^T G w for
f = z(.) w, and `skylite.prox.RKHSNorm` regularizes with it: a kernel machine trained with
the l2 regularizer on a Nystroem map with several blocks uses 1/2 tr(W^T G W), which makes it
exactly the full-Nystroem problem (one landmark set, one whitening) whatever the blocks.

Landmark rules (`landmarks=`): "uniform", s rows drawn without replacement; "kmeans", the
centres of a few Lloyd iterations (KMEANS_ITERATIONS) started from a uniform draw, on a pool of
KMEANS_POOL * s rows (Zhang & Kwok 2008).  With s = n (as many landmarks as rows) both rules
take every row: the map is then exact on the training rows.  Under MPI the rows are drawn by
global row id from the seed and gathered once; the root computes the landmarks and
broadcasts them, so every rank holds the same map.  The landmarks are part of the model (`fitted_arrays`, saved with it).
"""

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from .._machine import available_memory_bytes, format_bytes
from .._threads import blas_single_threaded, resolve_threads
from .._validation import (FLOAT_DTYPES, check_nonnegative, check_positive, resolve_seed,
                           sparse_structure_checked)
from ._base import FeatureMap, register
from ._docs import parameters
from ._kernel_block import KernelCode
from ._landmarks import kept_precursor, kmeans_centres
from ._nystroem import NystroemTransform

LANDMARK_RULES = ("uniform", "kmeans")
# the precursor of each kernel's block (skylite.sketch._nystroem): kernels of one family
# share it across their parameters
PRECURSOR_FAMILY = {KernelCode.GAUSSIAN: "dot products", KernelCode.POLYNOMIAL: "dot products",
                    KernelCode.LINEAR: "dot products", KernelCode.LAPLACIAN: "l1 distances",
                    KernelCode.MATERN: "squared distances",
                    KernelCode.EXP_SEMIGROUP: "square-root sums"}

# the default rule: more accuracy per second of fit on MNIST (docs/feature_maps.md)
DEFAULT_RULE = "kmeans"
# k-means landmarks: the pool is this many times s rows (all rows if fewer), and the Lloyd
# iterations run on it (on selection rows 2 iterations scored as well as 5 on MNIST, letter
# and pendigits: docs/feature_maps.md, "How many Lloyd iterations")
KMEANS_POOL = 4
KMEANS_ITERATIONS = 2
# eigenvalues of K_jj below RCOND times the largest are dropped from the whitening
RCOND = 1e-10


#: kernel type name -> class, filled by skylite.kernels as it defines its kernels
#: (`register_kernel`): this package does not import the kernels package, which imports it.
KERNEL_TYPES = {}


def register_kernel(cls):
    """Class decorator of skylite.kernels: make a kernel class rebuildable from its
    `to_dict()` here (`kernel_from_dict`), by its class name."""
    KERNEL_TYPES[cls.__name__] = cls
    return cls


def kernel_from_dict(state):
    """The kernel object described by its `to_dict()`, {'type': class name, 'params': the
    constructor's arguments}.

    The classes are those skylite.kernels registers as it loads; a program that imported
    skylite.sketch alone has them loaded here through the package's lazy attribute
    ``skylite.kernels`` (skylite/__init__.py), so that a model's map can always be rebuilt.
    """
    if not KERNEL_TYPES:
        import skylite
        skylite.kernels                                  # noqa: B018  (registers them)
    try:
        cls, params = KERNEL_TYPES[state["type"]], dict(state["params"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"not a skylite kernel description: {state!r}") from None
    return cls(**params)


def native_kernel(kernel):
    """(KernelCode, p0, p1, p2) of a kernel for the native evaluator (_kernel_block.pxd): the
    kernel's own `native_code` and `native_params()`; None is Gaussian(sigma=1)."""
    if kernel is None:
        return KernelCode.GAUSSIAN, 0.5, 0.0, 0.0
    code = getattr(kernel, "native_code", None)
    if code is None:
        raise ValueError(f"Nystroem supports the kernels of skylite.kernels (objects with a "
                         f"native_code), got {kernel!r}")
    return (int(code), *(float(p) for p in kernel.native_params()))


@register
@parameters(
    ("kernel", "skylite.kernels object, default=None",
     "The kernel k (Gaussian, Laplacian, Matern, Polynomial or ExpSemigroup); None is "
     "Gaussian(sigma=1)."),
    "n_features", "n_blocks",
    ("landmarks", '{"kmeans", "uniform"}, default="kmeans"',
     "How the s landmarks are chosen from the training rows: k-means centres of a pool of "
     "rows, or rows drawn uniformly without replacement."),
    ("random_state", "int, numpy Generator, RandomState or None, default=0",
     "The seed of the landmark draw; None draws a fresh seed, recorded in ``seed_``."))
class Nystroem(FeatureMap):
    """Nystroem features of any skylite kernel: z_j(x) = sqrt(s_j / s) k(x, L_j) K_jj^{-1/2}.

    fit(X) chooses the landmarks (s = n_features rows of X, or k-means centres) and computes
    each block's whitening; transform(X) maps n x d to n x s with Z Z^T ~ K.  Unlike the
    random maps, the fitted map holds data: ``landmarks_`` (s x d) and ``whitening_`` (the
    blocks' s_j x s_j matrices), which `save` keeps with a model.  See the module docstring.
    """

    _fitted_array_names = ("landmarks", "whitening")

    def __init__(self, kernel=None, n_features=1024, n_blocks=1, landmarks=DEFAULT_RULE,
                 random_state=0):
        self.kernel = kernel
        self.n_features = n_features
        self.n_blocks = n_blocks
        self.landmarks = landmarks
        self.random_state = random_state

    @property
    def _nonnegative_input(self):
        return bool(getattr(self.kernel, "nonnegative_input", False))

    def _check_params(self):
        self._check_common_params()
        native_kernel(self.kernel)
        if self.landmarks not in LANDMARK_RULES:
            raise ValueError(f"landmarks must be one of {LANDMARK_RULES}, got "
                             f"{self.landmarks!r}")

    # ---- fitting ----

    def fit(self, X, y=None):
        """Choose the landmarks from the rows of X and compute the whitening.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n, d)
            Training rows; n >= n_features.
        y : None
            Ignored.

        Returns
        -------
        self : Nystroem
            The fitted map.
        """
        X = validate_data(self, sparse_structure_checked(X), accept_sparse="csr",
                          dtype=FLOAT_DTYPES)
        return self._fit_rows(X, None)

    def fit_distributed(self, X, dist, *, checked=False):
        """`fit` over the rows of every rank (collective).

        The pool of rows is drawn by global row id from the seed and gathered once; rank 0
        computes the landmarks and the whitening and broadcasts them, so every rank ends
        with the same map, the one `fit` draws from all the rows in one process.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_rank, d)
            This rank's training rows.
        dist : skylite._distributed.Distributed
            The ranks (`Distributed(comm)`; `Distributed(None)` for one process).
        checked : bool, default=False
            X was checked by the caller (finite, real, native layout): not scanned again.

        Returns
        -------
        self : Nystroem
            The fitted map.
        """
        if checked:
            self.n_features_in_ = X.shape[1]
        else:
            X = dist.agree(lambda: validate_data(self, sparse_structure_checked(X),
                                                 accept_sparse="csr", dtype=FLOAT_DTYPES))
        dist.same_everywhere("number of input features (columns of X)", X.shape[1])
        return self._fit_rows(X, dist)

    def _fit_rows(self, X, dist):
        from .._distributed import Distributed
        dist = Distributed(None) if dist is None else dist
        dist.agree(self._check_params)
        if self._nonnegative_input:
            dist.agree(check_nonnegative, X, who=type(self).__name__)
        seed = resolve_seed(self.random_state)
        counts = dist.allgather(int(X.shape[0]))
        n, s, d = sum(counts), self.n_features, X.shape[1]
        if n < s:
            raise ValueError(f"Nystroem with n_features={s} needs at least {s} training rows "
                             f"(one per landmark), got {n}: lower n_features")
        pool = s if self.landmarks == "uniform" else min(n, KMEANS_POOL * s)
        dist.agree(_check_memory, s, d, pool, self.block_sizes, _pool_row_bytes(X))
        rng = np.random.default_rng(seed)
        ids = rng.choice(n, size=pool, replace=False)
        rows = _gather_rows(X, ids, counts, dist)
        sizes = self.block_sizes
        # the root computes the landmarks and whitening, every rank receives its bits
        L, whitening = np.empty((s, d)), np.empty(sum(b * b for b in sizes))
        kmeans = self.landmarks == "kmeans" and s < n   # s = n: every row is a landmark
        dense = (lambda A: A.toarray()) if sp.issparse(rows) else (lambda A: A)
        if not kmeans:
            L[...] = dense(rows)

        def on_root():
            if dist.is_root:
                if kmeans:
                    L[...] = kmeans_centres(rows, dense(rows[:s]), KMEANS_ITERATIONS)
                whitening[...] = block_whitening(self.kernel, L, sizes)
        dist.agree(on_root)
        if kmeans:
            dist.broadcast(L)
        dist.broadcast(whitening)
        return self._set_landmarks(L, seed, whitening)

    def _set_landmarks(self, L, seed, whitening=None):
        """Record landmarks (s x d), compute (or take) the whitening and build the operator."""
        self._check_params()
        L = np.ascontiguousarray(L, dtype=np.float64)
        sizes = self.block_sizes
        if whitening is None:
            whitening = block_whitening(self.kernel, L, sizes)
        self.landmarks_ = L
        self.whitening_ = np.ascontiguousarray(whitening, dtype=np.float64)
        return self._set_transform_op(L.shape[1], seed, sizes)

    def _make_transform_op(self, d, offsets, seed):
        code, p0, p1, p2 = native_kernel(self.kernel)
        return NystroemTransform(d, offsets, code, p0, p1, p2, self.landmarks_,
                                 self.whitening_)

    def _fill(self, X, out, blocks, n_threads):
        """The blocks of X, from the precursor kept for X's rows and these landmarks inside a
        `skylite.sketch._landmarks.shared_across_bandwidths()` block (the same bits)."""
        op = self.transform_op_
        family = PRECURSOR_FAMILY[native_kernel(self.kernel)[0]]
        precursor = kept_precursor(family, self.landmarks_, op.block_offsets, X, out.dtype,
                                   lambda P: op.fill_precursor(X, P, n_threads))
        if precursor is None:
            op.fill(X, out, blocks, n_threads)
        else:
            op.fill_from_precursor(X, precursor, out, blocks, n_threads)

    def _fit_dimension(self, d, seed):
        raise ValueError("a Nystroem map is fitted from data (fit(X)), not from its "
                         "dimension alone")

    # ---- the norm of the functions it spans ----

    def rkhs_gram(self, n_threads=None):
        """G (s x s) with ||f||_H^2 = w^T G w for f(x) = z(x) . w.

        G = P K_LL P with P = blockdiag(sqrt(s_j / s) K_jj^{-1/2}); its diagonal blocks are
        (s_j / s) I (set exactly: on the dropped eigenvectors of K_jj the features are 0).
        With one block G = I, and the l2 regularizer is the RKHS norm already.  The blocks
        below the diagonal are computed (the kernel between each landmark block and the
        blocks before it) and mirrored above it, so G is exactly symmetric.

        Parameters
        ----------
        n_threads : int or None, default=None
            Threads of the transform of the landmarks (None: the default of skylite._threads.resolve_threads).

        Returns
        -------
        G : ndarray of shape (n_features, n_features)
            The Gram matrix of the features' functions in the RKHS (float64, symmetric,
            positive semi-definite, eigenvalues at most 1).
        """
        self._check_fitted()
        offsets = self.transform_op_.block_offsets
        s = int(offsets[-1])
        starts = np.concatenate([[0], np.cumsum(np.diff(offsets) ** 2)])
        G = np.empty((s, s))
        for j in range(len(offsets) - 1):
            a, b = int(offsets[j]), int(offsets[j + 1])
            G[a:b, a:b] = np.eye(b - a) * ((b - a) / s)
            if j == 0:
                continue
            # the blocks left of the diagonal, P_j K(L_j, L_<j) P_<j; their mirror above it
            left = self._blocks(self.landmarks_[a:b], range(j), n_threads)
            M = self.whitening_[starts[j]:starts[j + 1]].reshape(b - a, b - a)
            G[a:b, :a] = M @ left
            G[:a, a:b] = G[a:b, :a].T
        return G

    # ---- serialization: the landmarks and whitening travel as arrays ----

    def _restore(self, d, seed, arrays):
        """Rebuild from `to_dict` fields and `fitted_arrays()` (the whitening is recomputed
        if it does not match the block sizes, e.g. after a change of n_blocks)."""
        if "landmarks" not in arrays:
            raise ValueError("a Nystroem map description needs its landmarks array")
        L = np.asarray(arrays["landmarks"], dtype=np.float64)
        if L.ndim != 2 or L.shape != (self.n_features, d):
            raise ValueError(f"Nystroem landmarks must be {self.n_features} x {d}, got "
                             f"shape {L.shape}")
        W = arrays.get("whitening")
        sizes = self.block_sizes
        if W is not None and np.size(W) != sum(b * b for b in sizes):
            W = None
        return self._set_landmarks(L, seed, W)

    def _json_params(self):
        params = super()._json_params()
        if self.kernel is not None:
            params["kernel"] = self.kernel.to_dict()
        return params

    @classmethod
    def _params_from_json(cls, params):
        params = dict(params)
        if params.get("kernel") is not None:
            params["kernel"] = kernel_from_dict(params["kernel"])
        return params


def block_whitening(kernel, L, sizes):
    """The blocks' whitening sqrt(s_j / s) (K_jj^+)^{1/2}, flattened and concatenated.

    (K_jj^+)^{1/2} = U diag(lambda^{-1/2}) U^T over the eigenvalues lambda > RCOND * max lambda
    (the others, e.g. of duplicate landmarks, are dropped): the square root of the
    pseudo-inverse, which is K_jj^{-1/2} when K_jj is well conditioned.
    K_jj comes from the native kernel code that the features use (`raw_kernel_blocks`).
    """
    s = sum(sizes)
    parts = []
    for j, K in enumerate(raw_kernel_blocks(kernel, L, sizes)):
        s_j = sizes[j]
        lam, U = scipy.linalg.eigh(K, driver="evd", check_finite=False)
        keep = lam > RCOND * max(lam[-1], 0.0)
        if not keep.any():
            raise ValueError(f"the kernel matrix of landmark block {j} is zero: the "
                             f"kernel's parameters or the data are degenerate")
        U = U[:, keep]
        M = (U / np.sqrt(lam[keep])) @ U.T                   # U diag(lambda^-1/2) U^T
        parts.append((np.sqrt(s_j / s) * M).ravel())
    return np.concatenate(parts)


def raw_kernel_blocks(kernel, L, sizes):
    """Yield K_jj = k(L_j, L_j) (s_j x s_j, float64) for each landmark block, by the native
    transform with identity whitening (so exactly the kernel values the features use)."""
    code, p0, p1, p2 = native_kernel(kernel)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    identity = np.concatenate([np.eye(s_j).ravel() for s_j in sizes])
    op = NystroemTransform(L.shape[1], offsets, code, p0, p1, p2, L, identity)
    with blas_single_threaded():
        for j in range(len(sizes)):
            rows = np.ascontiguousarray(L[offsets[j]:offsets[j + 1]])
            K = np.empty((len(rows), sizes[j]))
            op.fill(rows, K, np.array([j], dtype=np.intp), resolve_threads(None))
            yield 0.5 * (K + K.T)


def _gather_rows(X, ids, counts, dist):
    """Rows `ids` (global row ids, in that order) of the rows spread over the ranks, float64,
    on every rank: each rank sends the ones it holds (one allgather).  Dense rows come back
    dense, CSR rows as a canonical CSR matrix (sparse rows are never densified here)."""
    start = sum(counts[:dist.rank])
    mine = np.flatnonzero((ids >= start) & (ids < start + X.shape[0]))
    local = X[ids[mine] - start].astype(np.float64, copy=False)
    parts = dist.allgather((mine, local))
    if sp.issparse(X):
        where = np.concatenate([w for w, _ in parts])
        stacked = sp.vstack([sp.csr_matrix(values) for _, values in parts], format="csr")
        rows = stacked[np.argsort(where, kind="stable")]
        rows.sort_indices()
        return rows
    rows = np.empty((len(ids), X.shape[1]))
    for where, values in parts:
        rows[where] = values
    return rows


def _pool_row_bytes(X):
    """Bytes a row of the landmark pool takes: d float64 for dense rows, and for CSR rows
    their mean stored values (8 bytes each and a 4-byte column) plus an indptr entry."""
    if not sp.issparse(X):
        return 8 * X.shape[1]
    return int(np.ceil(12 * X.nnz / max(X.shape[0], 1))) + 8


def _check_memory(s, d, pool, sizes, pool_row_bytes):
    """Refuse, before anything is allocated, a landmark set whose arrays cannot fit in the
    available memory: the pool of rows (`pool_row_bytes` each, `_pool_row_bytes`), the
    landmarks (float64), the whitening and the largest block's kernel matrix and
    eigenvectors."""
    check_positive(s, "n_features", integer=True)
    pool_bytes = pool * pool_row_bytes
    need = pool_bytes + 8 * (s * d + sum(b * b for b in sizes) + 3 * max(sizes) ** 2)
    available = available_memory_bytes()
    if need > available:
        advice = "lower n_features"
        if pool_bytes + 8 * s * d > need // 2:      # the width, not s, makes it too large
            advice += ("; the landmarks are dense rows of all d columns: for rows this wide "
                       "use random Fourier features (method='rff': for sparse rows they draw "
                       "their frequencies for the columns in use), the linear kernel, a "
                       "linear sketch to a few thousand dimensions before the kernel map "
                       "(skylite.sketch.ComposedMap), or the exact kernel "
                       "(KernelRidge(solver='exact')) (docs/choosing_parameters.md, wide "
                       "sparse rows)")
        raise MemoryError(f"Nystroem with {s} landmarks of {d} columns needs "
                          f"{format_bytes(need)} for its landmarks and whitening, more than "
                          f"the {format_bytes(available)} available: {advice}")
