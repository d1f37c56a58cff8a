"""The RKHS norm of the functions a data-dependent feature map spans (skylite.sketch.Nystroem).

For a map z with z(x) . w = f(x) in the span of the kernel's sections, the squared RKHS norm
of f is a quadratic form w^T G w with an s x s matrix G of the map (`rkhs_gram()`).  This
regularizer is

    r(W) = 1/2 tr(W^T G W),        prox_{t r}(V) = (I + t G)^{-1} V,

the second by one Cholesky factor of I + t G per step size t (the factor of the last t is
kept: t = 1/rho changes only when rho adapts).  For a Nystroem map with C column blocks,
training with it is the full Nystroem problem (docs/feature_maps.md); with G = I it is `L2`.
Unlike the elementwise regularizers it couples the rows of W, so it runs under the GIL, on
the whole s x m matrix (O(s^2 m) per prox, O(s^3 / 3) per new t).
"""
import numpy as np
import scipy.linalg


class RKHSNorm:
    """r(W) = 1/2 tr(W^T G W), G = feature_map.rkhs_gram() (computed on first use).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.Nystroem
        The map whose functions are regularized.
    dtype : float64 or float32, default=float64
        The precision G and its factor are kept and applied in (float32 halves their memory
        and the time of a prox, which reads them; results are returned in float64).
    """

    name = "rkhs"

    def __init__(self, feature_map, dtype=np.float64):
        self.feature_map = feature_map
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        self._gram = None
        self._factor_t, self._factor = None, None

    def get_params(self):
        """No parameters of its own (G comes from the map)."""
        return {}

    @property
    def gram(self):
        """G (s x s, float64)."""
        if self._gram is None:
            self._gram = self.feature_map.rkhs_gram().astype(self.dtype, copy=False)
        return self._gram

    def value(self, W, *, n_threads=None):
        """r(W) = 1/2 tr(W^T G W) for an s x m (or length-s) W."""
        W = np.asarray(W, dtype=self.dtype).reshape(self.gram.shape[0], -1)
        return 0.5 * float(np.vdot(W.astype(np.float64), self.gram @ W))

    def prox(self, V, t, out=None, *, n_threads=None):
        """(I + t G)^{-1} V for an s x m V and t >= 0 (into `out` if given)."""
        V = np.asarray(V, dtype=self.dtype)
        shape = V.shape
        V = V.reshape(self.gram.shape[0], -1)
        if not t >= 0:
            raise ValueError(f"the prox step t must be >= 0, got {t!r}")
        if t != self._factor_t:
            self._factor = None                          # free the old factor first
            A = np.multiply(self.gram, self.dtype.type(t))
            A.flat[::len(A) + 1] += 1                    # I + t G
            self._factor = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True,
                                                   check_finite=False)
            self._factor_t = t
        X = scipy.linalg.cho_solve(self._factor, V, check_finite=False).reshape(shape)
        if out is None:
            return X.astype(np.float64, copy=False)
        out[...] = X
        return out

    def nbytes(self):
        """Memory of G and one factor."""
        s = self.feature_map.n_features
        return 2 * self.dtype.itemsize * s * s

    def __getstate__(self):
        return {"feature_map": self.feature_map, "dtype": self.dtype.str}   # G: a cache

    def __setstate__(self, state):
        self.__init__(state["feature_map"], state["dtype"])

    def __repr__(self):
        return f"RKHSNorm({type(self.feature_map).__name__})"
