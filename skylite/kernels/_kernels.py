"""Exact kernels and the feature maps that approximate them.

Each kernel object evaluates its exact Gram matrix K[a, b] = k(x_a, y_b) with `gram(X, Y)`
for dense or CSR rows, one block of rows at a time, so memory is the n x m result plus a
workspace of at most 32 MB (or two rows, for rows longer than that), and builds its random
feature map with `feature_map(n_features, ...)` (libSkylark's habit: the kernel knows its
own feature maps).
"""
import functools
import math

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from scipy.special import gamma as gamma_fn, kv

from .._validation import check_positive, check_rows
from ..sketch import (JLT, SRHT, CountSketch, Fastfood, GaussianRFF, Identity, LaplacianRFF,
                      MaternFastfood, MaternRFF, Nystroem, RandomLaplace, TensorSketch)

# float64 elements of workspace for one block pair of `gram` (32 MB).
_WORKSPACE = 4 * 1024 * 1024

# The quasi-Monte-Carlo methods of a random Fourier feature factory, and the sequence of
# method="qmc" (docs/feature_maps.md: the Gram-error measurements behind the choice).
QMC_DEFAULT_SEQUENCE = "sobol"


def _nystroem_methods():
    """{'nystroem', 'nystroem_kmeans', 'nystroem_uniform'}: Nystroem features with the
    default landmark rule or a named one."""
    return {"nystroem": Kernel._nystroem,
            "nystroem_kmeans": functools.partial(Kernel._nystroem, landmarks="kmeans"),
            "nystroem_uniform": functools.partial(Kernel._nystroem, landmarks="uniform")}


def _qmc_methods(rff_factory):
    """{'qmc', 'qmc_halton', 'qmc_sobol'}: rff_factory with a low-discrepancy sequence."""
    return {name: functools.partial(rff_factory, sequence=sequence) for name, sequence in
            (("qmc", QMC_DEFAULT_SEQUENCE), ("qmc_halton", "halton"), ("qmc_sobol", "sobol"))}


class Kernel:
    """Base of the exact kernels; subclasses define `_block(Xb, Yb)` on dense blocks and
    may override `_pair_elements(d)`, the float64 elements `_block` holds at once per
    (x, y) pair (its result and the temporaries of the same shape)."""

    _methods = {}               # feature-map method name -> factory; first is the default
    _nonnegative_input = False

    def gram(self, X, Y=None):
        """The exact Gram matrix K (n_X x n_Y, float64) of the rows of X and Y (Y = X if None).

        Memory: the result plus a workspace of at most 32 MB (two rows, if longer).

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_X, d)
            The rows x_a.
        Y : array-like, scipy sparse matrix of shape (n_Y, d), or None, default=None
            The rows y_b; None uses X.

        Returns
        -------
        K : ndarray of shape (n_X, n_Y)
            K[a, b] = k(x_a, y_b).
        """
        X = check_rows(X, name="X", nonnegative=self._nonnegative_input, who=repr(self))
        Y = X if Y is None else check_rows(Y, name="Y", n_features=X.shape[1],
                                           nonnegative=self._nonnegative_input, who=repr(self))
        K = np.empty((X.shape[0], Y.shape[0]))
        d = X.shape[1]
        rows_x, rows_y = self._block_rows(d, X.shape[0], Y.shape[0])
        for a in range(0, X.shape[0], rows_x):
            Xb = _dense(X[a:a + rows_x])
            for b in range(0, Y.shape[0], rows_y):
                K[a:a + rows_x, b:b + rows_y] = self._block(Xb, _dense(Y[b:b + rows_y]))
        return K

    def _pair_elements(self, d):
        """Float64 elements that `_block` holds at once per (x, y) pair: its result and
        temporaries of the same shape."""
        return 2

    def _block_rows(self, d, n_x, n_y):
        """Rows of X and Y per block pair, so that the pair's workspace (`_workspace`) stays
        within _WORKSPACE elements; square blocks, the Y block longer when X has few rows.
        Only rows of more than _WORKSPACE / 2 elements exceed it (one row each)."""
        c = self._pair_elements(d)
        # the largest r with c r^2 + 2 r d <= _WORKSPACE
        r = int((math.sqrt(d * d + c * _WORKSPACE) - d) / c)
        rows_x = max(1, min(n_x, r))
        rows_y = max(1, min(n_y, (_WORKSPACE - rows_x * d) // (d + c * rows_x)))
        return rows_x, rows_y

    def _workspace(self, d, rows_x, rows_y):
        """Float64 elements a block pair needs: both dense row blocks and `_block`'s arrays."""
        return (rows_x + rows_y) * d + self._pair_elements(d) * rows_x * rows_y

    def feature_map(self, n_features, *, n_blocks=1, random_state=0, method=None):
        """A random feature map z with E[z(x) . z(x')] = k(x, x') (unfitted).

        Parameters
        ----------
        n_features : int
            s, the number of features (ignored by the identity map of `Linear`).
        n_blocks : int, default=1
            C, the number of column blocks.
        random_state : int, numpy Generator or None, default=0
            The seed of the map.
        method : str or None, default=None
            One of the kernel's `methods` (None: the first): "rff" (Monte Carlo random
            Fourier features), "qmc" / "qmc_halton" / "qmc_sobol" (quasi-Monte Carlo),
            "fastfood", "nystroem" / "nystroem_kmeans" / "nystroem_uniform" (landmarks
            from the data, chosen by fit(X): k-means centres, the default, or uniformly
            drawn rows), or for `Linear` the sketches "jlt", "srht", "countsketch".

        Returns
        -------
        feature_map : skylite.sketch.FeatureMap
            Unfitted: fit(X) then transform(X) gives Z (n x n_features).
        """
        names = list(self._methods)
        method = names[0] if method is None else method
        if method not in self._methods:
            raise ValueError(f"unknown feature-map method {method!r} for {type(self).__name__}; "
                             f"choose from {names}")
        return self._methods[method](self, n_features, n_blocks, random_state)

    def _nystroem(self, n_features, n_blocks, random_state, landmarks=None):
        fmap = Nystroem(kernel=self, n_features=n_features, n_blocks=n_blocks,
                        random_state=random_state)
        return fmap if landmarks is None else fmap.set_params(landmarks=landmarks)

    @property
    def methods(self):
        """Names of the feature maps available for this kernel."""
        return list(self._methods)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))


def _dense(rows):
    return rows.toarray() if sp.issparse(rows) else rows.astype(np.float64, copy=False)


class Gaussian(Kernel):
    """The Gaussian kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).

    Maps: 'rff' (GaussianRFF), 'fastfood', 'qmc' / 'qmc_halton' / 'qmc_sobol' (GaussianRFF
    with a low-discrepancy sequence).

    Parameters
    ----------
    sigma : float > 0, default=1.0
        The bandwidth (scikit-learn's gamma = 1 / (2 sigma^2)).
    """

    def __init__(self, sigma=1.0):
        self.sigma = check_positive(sigma, "sigma")

    def _block(self, Xb, Yb):
        K = cdist(Xb, Yb, "sqeuclidean")
        K *= -0.5 / self.sigma**2
        return np.exp(K, out=K)

    def _rff(self, n_features, n_blocks, random_state, sequence="monte_carlo"):
        return GaussianRFF(n_features, sigma=self.sigma, n_blocks=n_blocks,
                           random_state=random_state, sequence=sequence)

    def _fastfood(self, n_features, n_blocks, random_state):
        return Fastfood(n_features, sigma=self.sigma, n_blocks=n_blocks,
                        random_state=random_state)

    _methods = {"rff": _rff, "fastfood": _fastfood, **_qmc_methods(_rff),
                **_nystroem_methods()}


class Laplacian(Kernel):
    """The Laplacian kernel k(x, x') = exp(-||x - x'||_1 / sigma).

    Maps: 'rff' (LaplacianRFF), 'qmc' / 'qmc_halton' / 'qmc_sobol'.

    Parameters
    ----------
    sigma : float > 0, default=1.0
        The bandwidth (scikit-learn's laplacian_kernel gamma = 1 / sigma).
    """

    def __init__(self, sigma=1.0):
        self.sigma = check_positive(sigma, "sigma")

    def _block(self, Xb, Yb):
        K = cdist(Xb, Yb, "cityblock")
        K *= -1.0 / self.sigma
        return np.exp(K, out=K)

    def _rff(self, n_features, n_blocks, random_state, sequence="monte_carlo"):
        return LaplacianRFF(n_features, sigma=self.sigma, n_blocks=n_blocks,
                            random_state=random_state, sequence=sequence)

    _methods = {"rff": _rff, **_qmc_methods(_rff), **_nystroem_methods()}


class Matern(Kernel):
    """Matern kernel of smoothness nu and length scale l (scikit-learn's definition):

        k(r) = 2^(1-nu) / Gamma(nu) (sqrt(2 nu) r / l)^nu K_nu(sqrt(2 nu) r / l),  k(0) = 1,

    with closed forms for nu = 0.5, 1.5, 2.5.  Maps: 'rff' (MaternRFF), 'fastfood'
    (MaternFastfood), 'qmc' / 'qmc_halton' / 'qmc_sobol'.

    Parameters
    ----------
    nu : float > 0, default=1.5
        The smoothness.
    length_scale : float > 0, default=1.0
        The length scale l.
    """

    def __init__(self, nu=1.5, length_scale=1.0):
        self.nu = check_positive(nu, "nu")
        self.length_scale = check_positive(length_scale, "length_scale")

    def _pair_elements(self, d):
        # r, t and the factors of the closed forms or of t^nu K_nu(t)
        return 6

    def _block(self, Xb, Yb):
        r = cdist(Xb, Yb, "euclidean") / self.length_scale
        nu = self.nu
        if nu == 0.5:
            return np.exp(-r)
        if nu == 1.5:
            t = math.sqrt(3.0) * r
            return (1.0 + t) * np.exp(-t)
        if nu == 2.5:
            t = math.sqrt(5.0) * r
            return (1.0 + t + t * t / 3.0) * np.exp(-t)
        t = math.sqrt(2.0 * nu) * r
        with np.errstate(invalid="ignore", over="ignore"):
            K = (2.0 ** (1.0 - nu) / gamma_fn(nu)) * t**nu * kv(nu, t)
        K[t == 0] = 1.0
        K[~np.isfinite(K)] = 0.0  # K_nu underflows to 0 for large t
        return K

    def _rff(self, n_features, n_blocks, random_state, sequence="monte_carlo"):
        return MaternRFF(n_features, nu=self.nu, length_scale=self.length_scale,
                         n_blocks=n_blocks, random_state=random_state, sequence=sequence)

    def _fastfood(self, n_features, n_blocks, random_state):
        return MaternFastfood(n_features, nu=self.nu, length_scale=self.length_scale,
                              n_blocks=n_blocks, random_state=random_state)

    _methods = {"rff": _rff, "fastfood": _fastfood, **_qmc_methods(_rff),
                **_nystroem_methods()}


class Polynomial(Kernel):
    """The polynomial kernel k(x, x') = (gamma x . x' + coef0)^degree.

    Map: 'tensorsketch' (TensorSketch).

    Parameters
    ----------
    degree : int >= 1, default=2
        The degree.
    gamma : float > 0, default=1.0
        The scale of x . x'.
    coef0 : float >= 0, default=1.0
        The offset.
    """

    def __init__(self, degree=2, gamma=1.0, coef0=1.0):
        self.degree = check_positive(degree, "degree", integer=True)
        self.gamma = check_positive(gamma, "gamma")
        self.coef0 = check_positive(coef0, "coef0", allow_zero=True)

    def _block(self, Xb, Yb):
        return (self.gamma * (Xb @ Yb.T) + self.coef0) ** self.degree

    def _tensorsketch(self, n_features, n_blocks, random_state):
        return TensorSketch(n_features, degree=self.degree, gamma=self.gamma,
                            coef0=self.coef0, n_blocks=n_blocks, random_state=random_state)

    _methods = {"tensorsketch": _tensorsketch, **_nystroem_methods()}


class ExpSemigroup(Kernel):
    """The exponential semigroup kernel k(x, x') = exp(-beta sum_k sqrt(x_k + x'_k)).

    For nonnegative data (histograms, counts).  Map: 'random_laplace' (RandomLaplace).

    Parameters
    ----------
    beta : float > 0, default=1.0
        The scale of the sum.
    """

    _nonnegative_input = True

    def __init__(self, beta=1.0):
        self.beta = check_positive(beta, "beta")

    def _pair_elements(self, d):
        # a rows_x x rows_y x d tensor and the sums over its last axis
        return d + 1

    def _block(self, Xb, Yb):
        T = Xb[:, None, :] + Yb[None, :, :]
        S = np.sqrt(T, out=T).sum(axis=2)
        S *= -self.beta
        return np.exp(S, out=S)

    def _random_laplace(self, n_features, n_blocks, random_state):
        return RandomLaplace(n_features, beta=self.beta, n_blocks=n_blocks,
                             random_state=random_state)

    _methods = {"random_laplace": _random_laplace, **_nystroem_methods()}


class Linear(Kernel):
    """The linear kernel k(x, x') = x . x'.

    Maps: 'identity' (exact; n_features is ignored, s = d), and the linear sketches
    z(x) = S x of n_features columns, E[z(x).z(x')] = x.x': 'jlt' (dense Gaussian), 'srht'
    (subsampled randomized Hadamard), 'countsketch' (O(nnz) for CSR rows).
    """

    def _block(self, Xb, Yb):
        return Xb @ Yb.T

    def _identity(self, n_features, n_blocks, random_state):
        return Identity(n_blocks=n_blocks)

    def _sketch(self, n_features, n_blocks, random_state, cls):
        return cls(n_features, n_blocks=n_blocks, random_state=random_state)

    _methods = {"identity": _identity,
                "jlt": functools.partial(_sketch, cls=JLT),
                "srht": functools.partial(_sketch, cls=SRHT),
                "countsketch": functools.partial(_sketch, cls=CountSketch)}


#: kernel name -> (class, the names of its parameters); "rbf" is scikit-learn's name of the
#: Gaussian kernel.  The estimators' `kernel=` names and parameters come from here.
KERNELS = {
    "gaussian": (Gaussian, ("sigma",)),
    "rbf": (Gaussian, ("sigma",)),
    "laplacian": (Laplacian, ("sigma",)),
    "matern": (Matern, ("nu", "length_scale")),
    "polynomial": (Polynomial, ("degree", "gamma", "coef0")),
    "exp_semigroup": (ExpSemigroup, ("beta",)),
    "linear": (Linear, ()),
}
#: every kernel parameter name, with gamma, scikit-learn's alternative to sigma
KERNEL_PARAMETERS = tuple(dict.fromkeys(
    [name for _, names in KERNELS.values() for name in names] + ["gamma"]))
