"""Exact kernels and the feature maps that approximate them.

Each kernel object evaluates its exact Gram matrix K[a, b] = k(x_a, y_b) with `gram(X, Y)`
for dense or CSR rows by the native kernel-block evaluator that Nystroem features also use
(skylite.sketch._kernel_block: each kernel declares its `native_code` and
`native_params()`, so its formula is written once), one block of rows at a time, so memory
is the n x m result plus a workspace of at most 32 MB (or a few rows, for rows longer than
that).  It builds its feature maps with `feature_map(n_features, ...)` (libSkylark's habit:
the kernel knows its own feature maps), and describes itself as a small dict (`to_dict`,
`Kernel.from_dict`), the form model files and Nystroem map descriptions store.
"""
import functools

import numpy as np
import scipy.sparse as sp

from .._threads import blas_single_threaded, resolve_threads
from .._validation import check_positive, check_rows, check_scale, native_rows
from ..sketch import (JLT, SRHT, CountSketch, Fastfood, GaussianRFF, Identity, LaplacianRFF,
                      MaternFastfood, MaternRFF, Nystroem, RandomLaplace, TensorSketch)
from ..sketch._kernel_block import KernelCode, fill_kernel_matrix, fill_sparse_kernel_matrix
from ..sketch.nystroem import kernel_from_dict, register_kernel

# float64 elements of workspace for one block pair of `gram` (32 MB).
_WORKSPACE = 4 * 1024 * 1024
# Rows of Y per call of the sparse evaluator when X and Y are both CSR: a row of K's block
# (8 KB per 1,000 of them), which every stored entry of x updates at random, stays in cache.
_SPARSE_ROWS = 4096

# The quasi-Monte-Carlo methods of a random Fourier feature factory, and the sequence of
# method="qmc" (docs/feature_maps.md: the Gram-error measurements behind the choice).
QMC_DEFAULT_SEQUENCE = "sobol"


def _qmc_methods(rff_factory):
    """{'qmc', 'qmc_halton', 'qmc_sobol'}: rff_factory with a low-discrepancy sequence."""
    return {name: functools.partial(rff_factory, sequence=sequence) for name, sequence in
            (("qmc", QMC_DEFAULT_SEQUENCE), ("qmc_halton", "halton"), ("qmc_sobol", "sobol"))}


class Kernel:
    """Base of the exact kernels.

    A subclass declares `native_code` (a skylite.sketch._kernel_block.KernelCode) and
    `native_params()`, the (p0, p1, p2) of that code, which define k for `gram` and for
    Nystroem features; `_methods`, its feature-map factories; and `nonnegative_input` if k
    is defined for x >= 0 only.
    """

    native_code = None
    nonnegative_input = False
    _methods = {}               # feature-map method name -> factory; first is the default

    def native_params(self):
        """(p0, p1, p2): the parameters of `native_code` (skylite/sketch/_kernel_block.pxd)."""
        return 0.0, 0.0, 0.0

    def gram(self, X, Y=None):
        """The exact Gram matrix K (n_X x n_Y, float64) of the rows of X and Y (Y = X if None).

        Computed in float64 by the native evaluator, on all cores (the values do not depend
        on their number).  Memory: the result plus a workspace of at most 32 MB (a few rows,
        if longer).  When X and Y are both sparse no row is densified: the work is the
        stored entries the rows share plus O(nnz) per block of 4,096 rows of Y, whatever
        the width d (hashed text of d = 2^20 columns costs what its stored entries do), and
        the workspace is one block of Y's rows by column.

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
        X = check_rows(X, name="X", nonnegative=self.nonnegative_input, who=repr(self))
        Y = X if Y is None else check_rows(Y, name="Y", n_features=X.shape[1],
                                           nonnegative=self.nonnegative_input, who=repr(self))
        K = np.empty((X.shape[0], Y.shape[0]))
        code, params, threads = int(self.native_code), self.native_params(), resolve_threads(None)
        if sp.issparse(X) and sp.issparse(Y):
            # no row densified: O(nnz) work per block of Y rows, whatever the width
            X = _float64_rows(X)
            for b in range(0, Y.shape[0], _SPARSE_ROWS):
                fill_sparse_kernel_matrix(code, *params, X, _float64_rows(Y[b:b + _SPARSE_ROWS]),
                                          K[:, b:b + _SPARSE_ROWS], threads)
            return K
        d = X.shape[1]
        rows_x, rows_y = self._block_rows(d, X.shape[0], Y.shape[0])
        with blas_single_threaded():
            for b in range(0, Y.shape[0], rows_y):
                Yb = _dense(Y[b:b + rows_y])
                for a in range(0, X.shape[0], rows_x):
                    fill_kernel_matrix(code, *params, _float64_rows(X[a:a + rows_x]), Yb,
                                       K[a:a + rows_x, b:b + rows_y], threads)
        return K

    def _block_rows(self, d, n_x, n_y):
        """Rows of X and Y per block pair, so that the pair's workspace (`_workspace`) stays
        within _WORKSPACE elements: at most half of it for the X rows, the rest for the Y
        rows (more of them when X has few rows).  Only rows of more than _WORKSPACE / 3
        elements exceed it (one row each)."""
        rows_x = max(1, min(n_x, _WORKSPACE // (2 * d)))
        rows_y = max(1, min(n_y, (_WORKSPACE - rows_x * d) // (2 * d + 1)))
        return rows_x, rows_y

    def _workspace(self, d, rows_x, rows_y):
        """Float64 elements a block pair needs: a float64 copy of the X rows (when they are
        float32 or CSR), the dense Y rows and their transposed copy and per-row constants
        for the evaluator (rows_y (2 d + 1)); the kernel values go straight into K."""
        return rows_x * d + rows_y * (2 * d + 1)

    def feature_map(self, n_features, *, n_blocks=1, random_state=0, method=None,
                    landmarks=None):
        """A feature map z with z(x) . z(x') ~ k(x, x') (unfitted).

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
            "fastfood", "tensorsketch", "random_laplace", "nystroem" (landmarks from the
            data, chosen by fit(X)), or for `Linear` "identity" and the sketches "jlt",
            "srht", "countsketch".
        landmarks : {"kmeans", "uniform"} or None, default=None
            The landmark rule of method="nystroem": k-means centres or uniformly drawn
            rows; None is the Nystroem default, "kmeans".  Only with method="nystroem".

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
        if method == "nystroem":
            return self._nystroem(n_features, n_blocks, random_state, landmarks)
        if landmarks is not None:
            raise ValueError(f"landmarks={landmarks!r} applies only to method='nystroem', "
                             f"not {method!r}")
        return self._methods[method](self, n_features, n_blocks, random_state)

    def _nystroem(self, n_features, n_blocks, random_state, landmarks=None):
        fmap = Nystroem(kernel=self, n_features=n_features, n_blocks=n_blocks,
                        random_state=random_state)
        return fmap if landmarks is None else fmap.set_params(landmarks=landmarks)

    @property
    def methods(self):
        """Names of the feature maps available for this kernel."""
        return list(self._methods)

    def to_dict(self):
        """The kernel as a small JSON-able dict, {'type': class name, 'params': constructor
        arguments}; `Kernel.from_dict` is its inverse."""
        return {"type": type(self).__name__, "params": dict(vars(self))}

    @classmethod
    def from_dict(cls, state):
        """The kernel described by `to_dict()`.

        Parameters
        ----------
        state : dict
            {'type', 'params'}, as `to_dict` writes it.

        Returns
        -------
        kernel : Kernel
            A new kernel of that class and those parameters; ValueError if the description
            is not of a `cls`.
        """
        kernel = kernel_from_dict(state)
        if not isinstance(kernel, cls):
            raise ValueError(f"description is of a {state['type']}, not a {cls.__name__}")
        return kernel

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))


def _dense(rows):
    """Validated rows as a C-contiguous float64 array (a view when they already are)."""
    rows = rows.toarray() if sp.issparse(rows) else rows
    return np.ascontiguousarray(rows, dtype=np.float64)


def _float64_rows(rows):
    """Validated rows, dense or CSR, in float64 in the layout native code reads."""
    if sp.issparse(rows):
        return native_rows(rows.astype(np.float64, copy=False))
    return np.ascontiguousarray(rows, dtype=np.float64)


@register_kernel
class Gaussian(Kernel):
    """The Gaussian kernel k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)).

    Maps: 'rff' (GaussianRFF), 'fastfood', 'qmc' / 'qmc_halton' / 'qmc_sobol' (GaussianRFF
    with a low-discrepancy sequence), 'nystroem' (Nystroem).

    Parameters
    ----------
    sigma : float > 0, default=1.0
        The bandwidth (scikit-learn's gamma = 1 / (2 sigma^2)).
    """

    native_code = KernelCode.GAUSSIAN

    def __init__(self, sigma=1.0):
        self.sigma = check_scale(sigma, "sigma")

    def native_params(self):
        """(1 / (2 sigma^2), 0, 0)."""
        return 0.5 / self.sigma**2, 0.0, 0.0

    def _rff(self, n_features, n_blocks, random_state, sequence="monte_carlo"):
        return GaussianRFF(n_features, sigma=self.sigma, n_blocks=n_blocks,
                           random_state=random_state, sequence=sequence)

    def _fastfood(self, n_features, n_blocks, random_state):
        return Fastfood(n_features, sigma=self.sigma, n_blocks=n_blocks,
                        random_state=random_state)

    _methods = {"rff": _rff, "fastfood": _fastfood, **_qmc_methods(_rff),
                "nystroem": Kernel._nystroem}


@register_kernel
class Laplacian(Kernel):
    """The Laplacian kernel k(x, x') = exp(-||x - x'||_1 / sigma).

    Maps: 'rff' (LaplacianRFF), 'qmc' / 'qmc_halton' / 'qmc_sobol', 'nystroem'.

    Parameters
    ----------
    sigma : float > 0, default=1.0
        The bandwidth (scikit-learn's laplacian_kernel gamma = 1 / sigma).
    """

    native_code = KernelCode.LAPLACIAN

    def __init__(self, sigma=1.0):
        self.sigma = check_scale(sigma, "sigma")

    def native_params(self):
        """(1 / sigma, 0, 0)."""
        return 1.0 / self.sigma, 0.0, 0.0

    def _rff(self, n_features, n_blocks, random_state, sequence="monte_carlo"):
        return LaplacianRFF(n_features, sigma=self.sigma, n_blocks=n_blocks,
                            random_state=random_state, sequence=sequence)

    _methods = {"rff": _rff, **_qmc_methods(_rff), "nystroem": Kernel._nystroem}


@register_kernel
class Matern(Kernel):
    """Matern kernel of smoothness nu and length scale l (scikit-learn's definition):

        k(r) = 2^(1-nu) / Gamma(nu) (sqrt(2 nu) r / l)^nu K_nu(sqrt(2 nu) r / l),  k(0) = 1,

    with closed forms for nu = 0.5, 1.5, 2.5, evaluated in log space (and for large nu by
    an asymptotic expansion: skylite.sketch._kernel_block.matern) so that it stays in
    [0, 1] and tends to the Gaussian kernel exp(-r^2 / (2 l^2)) as nu grows.  Maps: 'rff'
    (MaternRFF), 'fastfood' (MaternFastfood), 'qmc' / 'qmc_halton' / 'qmc_sobol',
    'nystroem'.

    Parameters
    ----------
    nu : float > 0, default=1.5
        The smoothness.
    length_scale : float > 0, default=1.0
        The length scale l.
    """

    native_code = KernelCode.MATERN

    def __init__(self, nu=1.5, length_scale=1.0):
        self.nu = check_positive(nu, "nu")
        self.length_scale = check_scale(length_scale, "length_scale")

    def native_params(self):
        """(nu, 1 / l, 0)."""
        return float(self.nu), 1.0 / self.length_scale, 0.0

    def _rff(self, n_features, n_blocks, random_state, sequence="monte_carlo"):
        return MaternRFF(n_features, nu=self.nu, length_scale=self.length_scale,
                         n_blocks=n_blocks, random_state=random_state, sequence=sequence)

    def _fastfood(self, n_features, n_blocks, random_state):
        return MaternFastfood(n_features, nu=self.nu, length_scale=self.length_scale,
                              n_blocks=n_blocks, random_state=random_state)

    _methods = {"rff": _rff, "fastfood": _fastfood, **_qmc_methods(_rff),
                "nystroem": Kernel._nystroem}


@register_kernel
class Polynomial(Kernel):
    """The polynomial kernel k(x, x') = (gamma x . x' + coef0)^degree.

    Maps: 'tensorsketch' (TensorSketch), 'nystroem'.

    Parameters
    ----------
    degree : int >= 1, default=2
        The degree.
    gamma : float > 0, default=1.0
        The scale of x . x'.
    coef0 : float >= 0, default=1.0
        The offset.
    """

    native_code = KernelCode.POLYNOMIAL

    def __init__(self, degree=2, gamma=1.0, coef0=1.0):
        self.degree = check_positive(degree, "degree", integer=True)
        self.gamma = check_positive(gamma, "gamma")
        self.coef0 = check_positive(coef0, "coef0", allow_zero=True)

    def native_params(self):
        """(gamma, coef0, degree)."""
        return float(self.gamma), float(self.coef0), float(self.degree)

    def _tensorsketch(self, n_features, n_blocks, random_state):
        return TensorSketch(n_features, degree=self.degree, gamma=self.gamma,
                            coef0=self.coef0, n_blocks=n_blocks, random_state=random_state)

    _methods = {"tensorsketch": _tensorsketch, "nystroem": Kernel._nystroem}


@register_kernel
class ExpSemigroup(Kernel):
    """The exponential semigroup kernel k(x, x') = exp(-beta sum_k sqrt(x_k + x'_k)).

    For nonnegative data (histograms, counts).  Maps: 'random_laplace' (RandomLaplace),
    'nystroem'.

    Parameters
    ----------
    beta : float > 0, default=1.0
        The scale of the sum.
    """

    native_code = KernelCode.EXP_SEMIGROUP
    nonnegative_input = True

    def __init__(self, beta=1.0):
        self.beta = check_scale(beta, "beta")

    def native_params(self):
        """(beta, 0, 0)."""
        return float(self.beta), 0.0, 0.0

    def _random_laplace(self, n_features, n_blocks, random_state):
        return RandomLaplace(n_features, beta=self.beta, n_blocks=n_blocks,
                             random_state=random_state)

    _methods = {"random_laplace": _random_laplace, "nystroem": Kernel._nystroem}


@register_kernel
class Linear(Kernel):
    """The linear kernel k(x, x') = x . x'.

    Maps: 'identity' (exact; n_features is ignored, s = d), and the linear sketches
    z(x) = S x of n_features columns, E[z(x).z(x')] = x.x': 'jlt' (dense Gaussian), 'srht'
    (subsampled randomized Hadamard), 'countsketch' (O(nnz) for CSR rows).  No 'nystroem':
    the identity map is exact at s = d.
    """

    native_code = KernelCode.LINEAR

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
