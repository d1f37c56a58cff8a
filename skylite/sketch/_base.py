"""The scikit-learn style front shared by every feature map.

A map z: R^d -> R^s is split into n_blocks column blocks of near-equal sizes s_1..s_C:

    z(x) = [ sqrt(s_1/s) z_1(x), ..., sqrt(s_C/s) z_C(x) ],   z(x) . z(x') ~ k(x, x').

For the random maps (random Fourier features, Fastfood, TensorSketch, the linear sketches)
block j is an independent random map z_j whose parameters come from (seed, j) alone, with
E[z(x) . z(x')] = k(x, x'), and `fit(X)` only fixes the input dimension d.  A map learned
from data (Nystroem) is not random given its fit: `fit(X)` also chooses its landmarks from
the rows (drawn from the seed) and block j is a function of the landmarks, the whitening and
j (`fitted_arrays`).  Either way `fit` builds the native operator `transform_op_`
(a `skylite.sketch._transform.BlockTransform`), which the ADMM engine drives without the GIL;
`transform(X)` returns Z (n x s) and `block(X, j)` returns Z_j (n x s_j).  The maps are
scikit-learn transformers (`fit_transform`, `get_feature_names_out`, `set_output`, usable in
a `Pipeline`).
"""
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._threads import blas_single_threaded, resolve_threads
from .._validation import (FLOAT_DTYPES, check_nonnegative, check_positive, check_scale,
                           native_rows, resolve_seed, sparse_structure_checked)


# the most features of one map: column indices are 32-bit in native code
MAX_FEATURES = 2**31 - 1


# The most floats one column block's rows and factor may take in the default block layout
# (`default_n_blocks`): 2^28, 2 GiB of float64 (full MNIST at s_j = 4096 fits).
BLOCK_FLOATS = 2**28
# The most features per column block in the default layout (`default_n_blocks`).
MAX_BLOCK = 4096
# ... and for Nystroem features: the whitening costs s * s_j per row and a block's setup
# s_j^3; 8 blocks of 512 took 26 s to 98.16% on MNIST 60k with early stopping where 2 blocks
# of 2048 took 32 s to 98.26% (docs/feature_maps.md)
NYSTROEM_MAX_BLOCK = 512
#: the default layout in words (the estimators' docstring and the command line's help)
DEFAULT_BLOCKS_RULE = (f"ceil(s / {MAX_BLOCK}) ({NYSTROEM_MAX_BLOCK} for Nystroem features), "
                       f"at least 2, and more when a block's rows and factor would exceed "
                       f"2 GiB; the identity map of the linear kernel (s = d) has no column "
                       f"limit.  It depends on s and the rows only, so the default model is "
                       f"the same on every machine and thread count")


def operator_for_rows(op, X):
    """(operator, rows) that compute the blocks of `op` for the validated rows X, bit for
    bit: `op` and X, or, for CSR rows that store values in u < d of the input columns and
    an operator with a parameter row per input column (the random projections:
    `restricted_to`), op restricted to those u columns and X with its columns renumbered
    0..u-1 in the same order (shares X's data and indptr).  The parameters then take
    u x s_j values per block instead of d x s_j: for hashed or bag-of-words rows (d up to
    2^20 and more, a few thousand columns in use) the difference between drawing and
    holding a few megabytes and a few gigabytes per block.

    Parameters
    ----------
    op : skylite.sketch._transform.BlockTransform
        A fitted map's operator (`transform_op_`).
    X : ndarray or CSR matrix of shape (n, d)
        Rows in the layout native code reads (skylite._validation.native_rows).

    Returns
    -------
    op_rows : BlockTransform
        `op` or its restriction to X's columns.
    X_rows : ndarray or CSR matrix of shape (n, d) or (n, u)
        X, or X on the u columns in use.
    """
    if not sp.issparse(X) or not hasattr(op, "restricted_to"):
        return op, X
    d = X.shape[1]
    if len(X.indices) < d // 16:        # few values: sort them rather than scan d columns
        used = np.unique(X.indices)
        renumbered = lambda: np.searchsorted(used, X.indices).astype(np.int32)  # noqa: E731
    else:
        in_use = np.zeros(d, dtype=bool)
        in_use[X.indices] = True
        used = np.flatnonzero(in_use)
        renumbered = lambda: (np.cumsum(in_use, dtype=np.int32) - 1)[X.indices]  # noqa: E731
    if len(used) == d:
        return op, X
    X_used = sp.csr_matrix((X.data, renumbered(), X.indptr), shape=(X.shape[0], len(used)),
                           copy=False)
    X_used.indptr = X.indptr                                 # int64, as native code reads
    X_used.has_sorted_indices = X.has_sorted_indices
    X_used.has_canonical_format = X.has_canonical_format
    return op.restricted_to(used), X_used


def default_layout_blocks(n_features, n_rows, *, method=None, identity=False):
    """The default number of column blocks of a kernel's feature map (`DEFAULT_BLOCKS_RULE`):
    `default_n_blocks` with the column limit of the map `method` builds.

    Parameters
    ----------
    n_features : int
        s, the features of the map.
    n_rows : int
        The rows per process (the largest over the ranks).
    method : str or None, default=None
        The map's method: "nystroem" limits blocks to NYSTROEM_MAX_BLOCK columns, any other
        to MAX_BLOCK.
    identity : bool, default=False
        An identity map (s = d, not chosen): no column limit.

    Returns
    -------
    n_blocks : int
        C: at least 2, at most s.
    """
    if identity:
        return default_n_blocks(n_features, n_rows, max_block=None)
    return default_n_blocks(n_features, n_rows, max_block=NYSTROEM_MAX_BLOCK
                            if method == "nystroem" else MAX_BLOCK)


def default_n_blocks(n_features, n_rows, max_block=MAX_BLOCK):
    """The default number of column blocks C for s = n_features features and n_rows rows per
    process (the largest over the ranks), whatever the machine or the thread count.

    C is the smallest number of near-equal blocks, at least 2 (at most s), with at most
    `max_block` columns each (None: no limit; the linear kernel, whose s = d is not chosen)
    and whose feature block and factor, n s_j + min(n, s_j)^2 floats, stay within
    BLOCK_FLOATS.  Few blocks converge in fewer iterations (docs/engine.md: on MNIST 20k,
    s = 16384, 4 blocks took 128 iterations and 16 blocks 328); 4096 features per block keep
    the factorization (n s s_j flops) and the per-thread buffers (n x s_j) moderate.

    Parameters
    ----------
    n_features : int
        s, the features.
    n_rows : int
        The rows per process (the largest over the ranks).
    max_block : int or None, default=MAX_BLOCK
        The most columns a block may have (None: no limit).

    Returns
    -------
    n_blocks : int
        C: at least 2, at most s.
    """
    s, n = int(n_features), max(int(n_rows), 1)
    widest = int((math.sqrt(n * n + 4 * BLOCK_FLOATS) - n) / 2)     # with s_j <= n
    if widest >= n:                                               # or s_j > n
        widest = max(widest, (BLOCK_FLOATS - n * n) // n)
    if max_block is not None:
        widest = min(widest, max_block)
    return int(min(s, max(2, -(-s // max(widest, 1)))))


def even_block_sizes(n_features, n_blocks):
    """Split n_features into n_blocks near-equal sizes (the first n_features % n_blocks get
    one more)."""
    base, extra = divmod(n_features, n_blocks)
    return [base + (1 if j < extra else 0) for j in range(n_blocks)]


class FeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of skylite's feature maps (not used directly).

    Subclasses define `__init__` with their hyper-parameters (stored unchanged, as in
    scikit-learn), `_check_params()` and `_make_transform_op(d, offsets, seed)`.
    Set `_nonnegative_input = True` for maps defined only on x >= 0.
    The output features are named after the class: `gaussianrff0`, `gaussianrff1`, ...
    """

    _nonnegative_input = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = self._nonnegative_input
        tags.requires_fit = True
        return tags

    @property
    def _n_features_out(self):
        """s, the number of output features (for `get_feature_names_out`)."""
        return self.n_features

    def _check_common_params(self):
        check_positive(self.n_features, "n_features", integer=True)
        check_positive(self.n_blocks, "n_blocks", integer=True)
        if self.n_features > MAX_FEATURES:      # before any per-block list is built
            raise ValueError(f"n_features={self.n_features} is more than the {MAX_FEATURES} "
                             f"features a map can index")
        if self.n_blocks > self.n_features:
            raise ValueError(f"n_blocks ({self.n_blocks}) cannot exceed n_features "
                             f"({self.n_features}): every block needs at least one feature")

    def _check_params(self):
        self._check_common_params()

    @property
    def block_sizes(self):
        """The sizes s_j of the column blocks (they sum to n_features)."""
        self._check_params()
        return even_block_sizes(self.n_features, self.n_blocks)

    # ---- fitting ----

    def fit(self, X, y=None):
        """Fix the input dimension d (and, for a DataFrame, the column names) from X.

        No data-dependent parameter is learned.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n, d)
            Training rows (only their number of columns is used).
        y : None
            Ignored.

        Returns
        -------
        self : FeatureMap
            The fitted map.
        """
        X = validate_data(self, sparse_structure_checked(X), accept_sparse="csr",
                          dtype=FLOAT_DTYPES)
        return self._fit_checked(X)

    def _fit_checked(self, X):
        """`fit` on rows already checked (`validate_data` or `check_rows`: the estimators
        check X once per fit), without scanning them again."""
        self.n_features_in_ = X.shape[1]
        if self._nonnegative_input:
            check_nonnegative(X, who=type(self).__name__)
        # maps without randomness (Identity) have no random_state
        self._fit_dimension(X.shape[1], resolve_seed(getattr(self, "random_state", 0)))
        return self

    def fit_distributed(self, X, dist, *, checked=False):
        """`fit` on this rank's rows, collectively (`dist`: skylite._distributed.Distributed):
        if it raises on any rank it raises on every rank.  A random map needs only the
        dimension; a map learned from data (Nystroem) draws from every rank's rows.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_rank, d)
            This rank's training rows.
        dist : skylite._distributed.Distributed
            The ranks (`Distributed(None)` for one process).
        checked : bool, default=False
            X was checked by the caller (finite, real, native layout): not scanned again.

        Returns
        -------
        self : FeatureMap
            The fitted map.
        """
        return dist.agree(self._fit_checked if checked else self.fit, X)

    def _fit_dimension(self, d, seed):
        self._check_params()
        return self._set_transform_op(d, seed, self.block_sizes)

    def _set_transform_op(self, d, seed, block_sizes):
        """Build the native operator for input dimension d and record the fitted state."""
        offsets = np.concatenate([[0], np.cumsum(block_sizes)]).astype(np.intp)
        op = self._make_transform_op(int(d), offsets, int(seed))
        op.check_apply()   # a native map without its own apply_* fails here, not in training
        self.n_features_in_ = int(d)
        self.seed_ = int(seed)
        self.transform_op_ = op
        return self

    def _check_fitted(self):
        check_is_fitted(self, "transform_op_")

    def _check_input(self, X):
        self._check_fitted()
        X = native_rows(validate_data(self, sparse_structure_checked(X), reset=False,
                                      accept_sparse="csr",
                                      dtype=FLOAT_DTYPES, ensure_min_samples=0))
        if self._nonnegative_input:
            check_nonnegative(X, who=type(self).__name__)
        return X

    # ---- evaluation ----

    def transform(self, X, *, n_threads=None):
        """Z = z(X), every block side by side; float32 input gives float32 output.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n, d)
            The rows (CSR for sparse rows).
        n_threads : int or None, default=None
            Threads of the native code (None: the default of skylite._threads.resolve_threads); the result does not depend on it.

        Returns
        -------
        Z : ndarray of shape (n, n_features)
            The features.
        """
        self._check_fitted()
        return self._blocks(X, range(self.transform_op_.n_blocks), n_threads)

    def block(self, X, j, *, n_threads=None):
        """Z_j = T[X, j]: the features of column block j alone, scaled by sqrt(s_j / s).

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n, d)
            The rows.
        j : int
            The block, 0 <= j < n_blocks.
        n_threads : int or None, default=None
            Threads of the native code (None: the default of skylite._threads.resolve_threads).

        Returns
        -------
        Z_j : ndarray of shape (n, s_j)
            Columns offsets[j]:offsets[j + 1] of `transform(X)`.
        """
        self._check_fitted()
        return self._blocks(X, [j], n_threads)

    def _blocks(self, X, blocks, n_threads):
        X = self._check_input(X)
        op = self.transform_op_
        blocks = list(blocks)
        offsets = op.block_offsets
        width = sum(int(offsets[j + 1] - offsets[j]) for j in blocks
                    if 0 <= j < op.n_blocks)
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        out = np.empty((X.shape[0], width), dtype=dtype)
        with blas_single_threaded():
            self._fill(X, out, np.asarray(blocks, dtype=np.intp), resolve_threads(n_threads))
        return out

    def _fill(self, X, out, blocks, n_threads):
        """out <- the listed blocks of the validated rows X (`transform_op_.fill`, or its
        restriction to the columns sparse rows use: `operator_for_rows`)."""
        op, X = operator_for_rows(self.transform_op_, X)
        op.fill(X, out, blocks, n_threads)

    # ---- serialization: a small dict, no random numbers ----

    def __getstate__(self):
        # the native operator is rebuilt from (type, sizes, parameters, seed) on unpickling
        state = dict(super().__getstate__())
        state.pop("transform_op_", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "seed_" in state:
            arrays = {name: state[name + "_"] for name in self._fitted_array_names
                      if name + "_" in state}
            self._restore(state["n_features_in_"], state["seed_"], arrays)

    # arrays learned from data at fit (e.g. Nystroem's landmarks): saved with a model
    _fitted_array_names = ()

    def fitted_arrays(self):
        """The arrays a fitted map learned from its training rows, by name (none for the
        random maps, which are described by their seed alone).

        Returns
        -------
        arrays : dict of str to ndarray
            What `map_from_dict(state, arrays=...)` needs besides `to_dict()`.
        """
        self._check_fitted()
        return {name: getattr(self, name + "_") for name in self._fitted_array_names}

    def _restore(self, d, seed, arrays):
        """Rebuild the fitted state from `to_dict`'s d and seed and `fitted_arrays()`."""
        return self._fit_dimension(d, seed)

    def to_dict(self):
        """The fitted map as a small JSON-able dict; `from_dict` rebuilds it exactly.

        Returns
        -------
        state : dict
            {'type', 'params', 'seed', 'n_features_in'}: the random parameters are not
            stored, they are regenerated from the seed.
        """
        self._check_fitted()
        params = self._json_params()
        params.pop("random_state", None)
        return {"type": type(self).__name__, "params": params, "seed": self.seed_,
                "n_features_in": self.n_features_in_}

    def _json_params(self):
        """The constructor arguments as plain JSON values (maps given as parameters become
        their `map_spec`)."""
        return {name: map_spec(value) if isinstance(value, FeatureMap) else value
                for name, value in self.get_params(deep=False).items()}

    @classmethod
    def _params_from_json(cls, params):
        """The inverse of `_json_params`: constructor arguments from their JSON form."""
        return dict(params)

    @classmethod
    def from_dict(cls, state):
        """Rebuild a fitted map from `to_dict()`'s output.

        Parameters
        ----------
        state : dict
            The output of `to_dict()` of a map of this class.

        Returns
        -------
        feature_map : FeatureMap
            The fitted map, equal to the one saved.
        """
        return map_from_dict(state, expected=cls)


class BandwidthFeatureMap(FeatureMap):
    """Base of the maps of a kernel with one bandwidth sigma (GaussianRFF, LaplacianRFF,
    Fastfood); subclasses only build their native operator.

    Parameters
    ----------
    n_features : int
        s, the number of random features (columns of Z).
    sigma : float > 0
        Bandwidth.
    n_blocks : int
        C, the number of column blocks (1 <= C <= s).
    random_state : int, numpy generator or None
        The seed; block j's parameters depend on (seed, j) only.

    After fit: ``n_features_in_`` (d), ``seed_`` and ``transform_op_`` (the native
    BlockTransform).
    """

    def __init__(self, n_features=1024, sigma=1.0, n_blocks=1, random_state=0):
        self.n_features = n_features
        self.sigma = sigma
        self.n_blocks = n_blocks
        self.random_state = random_state

    def _check_params(self):
        self._check_common_params()
        check_scale(self.sigma, "sigma")


class MaternFeatureMap(FeatureMap):
    """Base of the maps of the Matern kernel (MaternRFF, MaternFastfood); subclasses only build
    their native operator.

    Parameters
    ----------
    n_features : int
        s, the number of random features.
    nu : float > 0
        Smoothness.
    length_scale : float > 0
        l.
    n_blocks, random_state : as for BandwidthFeatureMap.
    """

    def __init__(self, n_features=1024, nu=1.5, length_scale=1.0, n_blocks=1, random_state=0):
        self.n_features = n_features
        self.nu = nu
        self.length_scale = length_scale
        self.n_blocks = n_blocks
        self.random_state = random_state

    def _check_params(self):
        self._check_common_params()
        check_positive(self.nu, "nu")
        check_scale(self.length_scale, "length_scale")


_REGISTRY = {}


def register(cls):
    """Class decorator: make a map rebuildable by `map_from_dict`."""
    _REGISTRY[cls.__name__] = cls
    return cls


def map_spec(fmap):
    """The class and constructor arguments of a map, in JSON form.

    Parameters
    ----------
    fmap : FeatureMap
        A fitted or unfitted map.

    Returns
    -------
    spec : dict
        {'type', 'params'}; `map_from_spec` rebuilds the unfitted map from it.
    """
    return {"type": type(fmap).__name__, "params": fmap._json_params()}


def map_from_spec(spec):
    """The unfitted map described by `map_spec(fmap)`.

    Parameters
    ----------
    spec : dict
        The output of `map_spec`.

    Returns
    -------
    feature_map : FeatureMap
        A new unfitted map of that class and those parameters.
    """
    try:
        cls = _REGISTRY[spec["type"]]
        params = cls._params_from_json(spec["params"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a skylite feature-map description: {exc!r}") from None
    return cls(**params)


def map_from_dict(state, expected=None, arrays=None):
    """Rebuild the fitted feature map described by `FeatureMap.to_dict()`.

    Parameters
    ----------
    state : dict
        The output of `FeatureMap.to_dict()`.
    expected : type or None, default=None
        A FeatureMap class the description must be of (ValueError otherwise).
    arrays : dict or None, default=None
        The map's `fitted_arrays()`, for a map learned from data (Nystroem).

    Returns
    -------
    feature_map : FeatureMap
        The fitted map, equal to the one described.
    """
    try:
        cls = _REGISTRY[state["type"]]
        params, seed, d = state["params"], state["seed"], state["n_features_in"]
        params = cls._params_from_json(params)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a skylite feature-map description: {exc!r}") from None
    if expected is not None and not issubclass(cls, expected):
        raise ValueError(f"description is of a {state['type']}, not a {expected.__name__}")
    if "random_state" in cls._get_param_names():
        params["random_state"] = seed
    fmap = cls(**params)
    fmap._restore(check_positive(d, "n_features_in", integer=True), resolve_seed(seed),
                  {} if arrays is None else arrays)
    return fmap
