"""The RKHS norm of the functions a data-dependent feature map spans (skylite.sketch.Nystroem).

For a map z with z(x) . w = f(x) in the span of the kernel's sections, the squared RKHS norm
of f is a quadratic form w^T G w with an s x s matrix G of the map (`rkhs_gram()`).  This
regularizer is

    r(W) = 1/2 tr(W^T G W),        prox_{t r}(V) = (I + t G)^{-1} V.

For a new step size t (t = 1/rho changes only when rho adapts, and with alpha along a
regularization path) the prox factors I + t G by Cholesky (by tiles on `n_threads` threads,
`_tiled_cholesky`: the same bits whatever the thread count), and each prox is two
triangular solves with the factor (`_cholesky_solve`, by blocks with the narrow product
kernels: 5.0 ms at s = 4096, m = 10 in float32, where LAPACK's potrs took 10.1 ms;
benchmarks/bench_cholesky_solve.py).  An
eigendecomposition G = Q diag(lambda) Q^T serves every t, at two s x s by s x m products per
prox, but costs as much as
EIGEN_AFTER factorizations (measured at s = 4096, float64, one thread: 11.9 s against
0.65 s): after EIGEN_AFTER factorizations the regularizer switches to it, so that a run with
many steps (frequent rho changes) pays at most about twice what the cheaper of the two would
have cost.  The products run in fixed chunks of CHUNK_ROWS rows on `n_threads` threads
(`_fixed_chunks.chunked_product`): each chunk is the same BLAS call whichever thread takes it, so
the result does not depend on the number of threads.
For a Nystroem map with C column blocks, training with this norm is the full Nystroem problem
(docs/feature_maps.md); with G = I it is `L2`.  Unlike the elementwise regularizers it
couples the rows of W: O(s^2 m) per prox and per value, O(s^3) per new t.
"""
import numpy as np
import scipy.linalg

from .._threads import blas_single_threaded
from ._cholesky_solve import cholesky_solve
from ._fixed_chunks import chunked_product, map_chunks
from ._tiled_cholesky import tiled_cholesky

# rows of G per product of a chunk (the unit of parallel work, fixed so that the result
# does not depend on the number of threads)
CHUNK_ROWS = 512
# Cholesky factorizations (one per new step size) before the prox switches to an
# eigendecomposition of G, which costs about as much as this many of them (module docstring)
EIGEN_AFTER = 18


class RKHSNorm:
    """r(W) = 1/2 tr(W^T G W), G = feature_map.rkhs_gram() (computed on first use).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.Nystroem
        The map whose functions are regularized.
    dtype : float64 or float32, default=float64
        The precision G and the factor of I + t G are kept and applied in (float32 halves their
        memory and the time of a prox, which reads them; results are returned in float64).
    """

    name = "rkhs"

    def __init__(self, feature_map, dtype=np.float64):
        self.feature_map = feature_map
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        self._gram = None
        self._factor_t, self._factor = None, None
        self._n_factors, self._eigen = 0, None

    def get_params(self):
        """No parameters of its own (G comes from the map).

        Returns
        -------
        params : dict
            Empty.
        """
        return {}

    @property
    def gram(self):
        """G (s x s)."""
        if self._gram is None:
            self._gram = self.feature_map.rkhs_gram().astype(self.dtype, copy=False)
        return self._gram

    def value(self, W, *, n_threads=1):
        """r(W) = 1/2 tr(W^T G W).

        Parameters
        ----------
        W : ndarray of shape (s, m) or (s,)
            The weights.
        n_threads : int, default=1
            Threads of the products with G (the result does not depend on it).

        Returns
        -------
        value : float
            r(W), from the lower triangle of G (`_quadratic_form`).
        """
        W = np.asarray(W, dtype=self.dtype).reshape(self.gram.shape[0], -1)
        return _quadratic_form(self.gram, W, n_threads)

    def prox(self, V, t, out=None, *, n_threads=1):
        """prox_{t r}(V) = (I + t G)^{-1} V.

        Parameters
        ----------
        V : ndarray of shape (s, m) or (s,)
            The point.
        t : float >= 0
            The step.
        out : ndarray of the shape of V, or None, default=None
            Where to write the result.
        n_threads : int, default=1
            Threads of the product (the result does not depend on it).

        Returns
        -------
        X : ndarray of the shape of V, float64 (`out` if given)
            argmin_X t r(X) + 1/2 ||X - V||^2.
        """
        if not t >= 0:
            raise ValueError(f"the prox step t must be >= 0, got {t!r}")
        V = np.asarray(V, dtype=self.dtype)
        shape = V.shape
        V = V.reshape(shape[0], -1)
        if self._eigen is None and t != self._factor_t and self._n_factors >= EIGEN_AFTER:
            self._factor, self._factor_t = None, None      # free it first
            self._eigen = _eigendecomposition(self.gram)
        if self._eigen is not None:
            values, Q = self._eigen
            QtV = chunked_product(Q.T, V, CHUNK_ROWS, n_threads)
            QtV /= (1 + t * values)[:, None]
            X = chunked_product(Q, QtV, CHUNK_ROWS, n_threads).reshape(shape)
        else:
            factor = self._factor_of(t, n_threads)
            with blas_single_threaded():
                X = cholesky_solve(factor, V).reshape(shape)
        if out is None:
            return X.astype(np.float64, copy=False)
        out[...] = X
        return out

    def _factor_of(self, t, n_threads=1):
        """The lower Cholesky factor of I + t G (Fortran order), formed for a new t."""
        if t != self._factor_t:
            self._factor = None                          # free the old one first
            A = np.multiply(self.gram, self.dtype.type(t))
            A.flat[::len(A) + 1] += 1                    # I + t G, positive definite
            factor = tiled_cholesky(A.T, n_threads)    # A.T: A in Fortran order, no copy
            self._factor, self._factor_t = factor, t
            self._n_factors += 1
        return self._factor

    def nbytes(self):
        """Memory of G and the factor of I + t G (or G's eigenvectors), and the old factor
        (or the eigensolver's copy of G) while a new one is formed.

        Returns
        -------
        nbytes : int
            3 s^2 times the size of the dtype.
        """
        s = self.feature_map.n_features
        return 3 * self.dtype.itemsize * s * s

    def __getstate__(self):
        return {"feature_map": self.feature_map, "dtype": self.dtype.str}   # G: a cache

    def __setstate__(self, state):
        self.__init__(state["feature_map"], state["dtype"])

    def __repr__(self):
        return f"RKHSNorm({type(self.feature_map).__name__})"


def _eigendecomposition(G):
    """(lambda, Q) with G = Q diag(lambda) Q^T (LAPACK syevr, in G's precision); eigenvalues
    that rounding left below zero are set to zero (G is positive semidefinite)."""
    values, Q = scipy.linalg.eigh(G, driver="evr", check_finite=False)
    return np.maximum(values, 0).astype(G.dtype), Q


def _quadratic_form(G, W, n_threads):
    """1/2 tr(W^T G W) for a symmetric G, reading only its lower triangle's chunks: over the
    fixed chunks [a, b) of CHUNK_ROWS rows, the sum in chunk order of
    tr(W_c^T G[a:b, :a] W[:a]) + 1/2 tr(W_c^T G[a:b, a:b] W_c), W_c = W[a:b] (half the reads
    of G W, the same bits for any n_threads)."""
    n = G.shape[0]
    parts = np.empty((n + CHUNK_ROWS - 1) // CHUNK_ROWS)

    def part(start, stop):
        rows = W[start:stop].astype(np.float64)
        below = np.vdot(rows, G[start:stop, :start] @ W[:start]) if start else 0.0
        parts[start // CHUNK_ROWS] = below + 0.5 * np.vdot(
            rows, G[start:stop, start:stop] @ W[start:stop])
    map_chunks(part, n, CHUNK_ROWS, n_threads)
    return float(sum(parts.tolist()))                  # in chunk order
