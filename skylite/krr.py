"""Kernel ridge regression solvers beside the ADMM (libSkylark's `skylark_krr`).

All three solve the squared-loss, l2 problem of skylite's estimators,

    minimize  (1/n) sum_i 1/2 ||y_i - f(x_i)||^2 + alpha/2 ||f||^2,        lam = n alpha,

for m targets at once (Y: n x m):

* `exact_dual_coef`: the exact kernel problem.  f(x) = sum_i k(x, x_i) a_i with
  (K + lam I) A = Y, by one Cholesky factorization of K + lam I (K: n x n, formed in row
  blocks by `Kernel.gram`).  Memory n^2 float64; time n^3 / 3.  For moderate n.
* `pcg_dual_coef`: the same system, matrix-free, by conjugate gradients preconditioned with
  random features (Avron, Clarkson & Woodruff, "Faster Kernel Ridge Regression Using Sketching
  and Preconditioning", 2017): P = Z Z^T + lam I with Z = z(X) (n x s), applied through the
  Woodbury identity

      P^-1 v = (v - Z (Z^T Z + lam I)^-1 Z^T v) / lam.

  K is applied in row blocks and never stored (`kernel_matvec`); memory n s for Z plus s^2 for
  the factor.  When s is large beside the statistical dimension of K, P^-1 (K + lam I) has
  its eigenvalues in a small interval and the number of iterations does not grow with n.
* `feature_ridge_coef`: the random-feature problem f(x) = z(x)^T W in closed form,
  (Z^T Z + lam I) W = Z^T Y, with Z^T Z and Z^T Y accumulated over row chunks (Z is never
  stored): memory s^2 float64, time n s^2 (a symmetric rank-k update per chunk) + s^3 / 3.
  This is the optimum the ADMM reaches for the squared loss with l2, without iterations.
"""
import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.blas import dsyrk

from ._threads import blas_single_threaded
from ._validation import check_positive

__all__ = ["exact_dual_coef", "pcg_dual_coef", "feature_ridge_coef", "kernel_matvec",
           "PCGResult", "memory_bytes"]

# float64 elements of one row block of K (or of Z) held at a time (64 MB).
_BLOCK_ELEMENTS = 8 * 1024 * 1024


def _chunks(n, row_elements):
    """Row ranges whose blocks of `row_elements` float64 each stay within _BLOCK_ELEMENTS."""
    rows = max(1, _BLOCK_ELEMENTS // max(1, row_elements))
    return [(a, min(n, a + rows)) for a in range(0, n, rows)]


def _cholesky(A, what):
    """The lower Cholesky factor of the symmetric positive definite A, in place.

    Single-threaded BLAS: the multithreaded OpenBLAS potrf of scipy's wheels crashed
    (segmentation fault) on a 16,000 x 16,000 kernel matrix on this 2-core machine, and
    factored it correctly with one thread (33 s).  Raises ValueError naming `what` if A is
    not numerically positive definite."""
    try:
        with blas_single_threaded():
            return cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except LinAlgError:
        raise ValueError(f"{what} is not positive definite; increase alpha") from None


def memory_bytes(solver, n, s, m):
    """The float64 bytes a solver holds at its peak.

    "direct": the factor s^2, Z^T Y and one chunk of Z; "exact": K (n^2) and the solution;
    "pcg": Z (n s), the factor s^2, the CG vectors (6 n m) and one row block of K.

    Parameters
    ----------
    solver : {"direct", "exact", "pcg"}
        The solver.
    n : int
        Training rows.
    s : int
        Random features.
    m : int
        Targets.

    Returns
    -------
    bytes : int
        8 times the float64 elements held.
    """
    floats = {"direct": s * s + s * m + min(n * s, _BLOCK_ELEMENTS),
              "exact": n * n + n * m,
              "pcg": n * s + s * s + 6 * n * m + min(n * n, _BLOCK_ELEMENTS)}[solver]
    return 8 * floats


def _lam(alpha, n):
    alpha = check_positive(alpha, "alpha")
    return n * alpha


def _targets(Y, n):
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim not in (1, 2) or Y.shape[0] != n:
        raise ValueError(f"Y must have {n} rows (one per row of X), got shape {Y.shape}")
    if not np.isfinite(Y).all():
        raise ValueError("Y contains NaN or infinity")
    return Y


def kernel_matvec(kernel, X, V, Xq=None):
    """K(Xq, X) @ V, one row block of the Gram matrix at a time (never all of K).

    Memory: one block of at most 64 MB of K.

    Parameters
    ----------
    kernel : skylite.kernels.Kernel
        The kernel k.
    X : array-like or CSR matrix of shape (n, d)
        The rows of the columns of K.
    V : array-like of shape (n, m) or (n,)
        The vectors to multiply.
    Xq : array-like, CSR matrix of shape (q, d), or None, default=None
        The query rows (None: X).

    Returns
    -------
    KV : ndarray of shape (q, m) or (q,)
        K(Xq, X) @ V.
    """
    Xq = X if Xq is None else Xq
    V = np.asarray(V, dtype=np.float64)
    out = np.empty((Xq.shape[0],) + V.shape[1:])
    for a, b in _chunks(Xq.shape[0], X.shape[0]):
        out[a:b] = kernel.gram(Xq[a:b], X) @ V
    return out


def exact_dual_coef(kernel, X, Y, alpha):
    """The exact kernel ridge solution A of (K + n alpha I) A = Y, K = kernel.gram(X).

    Predictions are kernel.gram(X_new, X) @ A (`kernel_matvec(kernel, X, A, X_new)`).
    Raises ValueError if K + n alpha I is not numerically positive definite.

    Parameters
    ----------
    kernel : skylite.kernels.Kernel
        The kernel k.
    X : array-like or CSR matrix of shape (n, d)
        Training rows.
    Y : array-like of shape (n, m) or (n,)
        Targets.
    alpha : float > 0
        The regularization weight (lam = n alpha).

    Returns
    -------
    A : ndarray of Y's shape
        The dual coefficients.
    """
    Y = _targets(Y, X.shape[0])
    lam = _lam(alpha, X.shape[0])
    K = kernel.gram(X)
    K[np.diag_indices_from(K)] += lam
    factor = _cholesky(K, f"K + n alpha I at alpha={alpha:g}")
    return cho_solve(factor, Y, check_finite=False)


class PCGResult:
    """What `pcg_dual_coef` returns.

    Parameters
    ----------
    dual_coef : ndarray of shape (n, m) or (n,)
        The solution A of (K + lam I) A = Y.
    n_iter : int
        CG iterations taken.
    residuals : list of float
        Max over targets of ||r_k|| / ||y|| after each iteration.
    converged : bool
        Whether the last residual is at most tol.
    """

    def __init__(self, dual_coef, n_iter, residuals, converged):
        self.dual_coef = dual_coef
        self.n_iter = n_iter
        self.residuals = residuals
        self.converged = converged


def pcg_dual_coef(kernel, X, Y, alpha, feature_map, *, tol=1e-6, max_iter=500,
                  preconditioner=True):
    """Solve (K + n alpha I) A = Y by CG preconditioned with random features.

    The preconditioner is Z Z^T + lam I with Z the features of `feature_map` (module
    docstring); K is applied in row blocks.  Each target column runs its own CG recurrence
    (the columns share the products with K).

    Parameters
    ----------
    kernel, X, Y, alpha
        As for `exact_dual_coef`.
    feature_map : skylite.sketch.FeatureMap
        The preconditioner's map (fitted or not; fitted on X here if not).
    tol : float > 0, default=1e-6
        Stop when ||Y - (K + lam I) A|| <= tol ||Y|| for every target column.
    max_iter : int, default=500
        The most CG iterations.
    preconditioner : bool, default=True
        False runs plain CG (for comparison).

    Returns
    -------
    result : PCGResult
        The solution, iterations and residuals.
    """
    Y = _targets(Y, X.shape[0])
    vector = Y.ndim == 1
    Y2 = Y.reshape(len(Y), -1)
    lam = _lam(alpha, X.shape[0])
    tol = check_positive(tol, "tol")
    max_iter = check_positive(max_iter, "max_iter", integer=True)
    apply_P_inv = (_woodbury_inverse(feature_map, X, lam) if preconditioner
                   else (lambda R: R / lam))

    def apply_A(V):
        return kernel_matvec(kernel, X, V) + lam * V

    A = np.zeros_like(Y2)
    R = Y2.copy()
    y_norm = np.linalg.norm(Y2, axis=0)
    y_norm[y_norm == 0] = 1.0
    Zr = apply_P_inv(R)
    P = Zr.copy()
    rz = np.einsum("ij,ij->j", R, Zr)
    residuals, n_iter = [], 0
    for n_iter in range(1, max_iter + 1):
        AP = apply_A(P)
        pAp = np.einsum("ij,ij->j", P, AP)
        step = np.divide(rz, pAp, out=np.zeros_like(rz), where=pAp > 0)
        A += step * P
        R -= step * AP
        residuals.append(float(np.max(np.linalg.norm(R, axis=0) / y_norm)))
        if residuals[-1] <= tol:
            break
        Zr = apply_P_inv(R)
        rz_new = np.einsum("ij,ij->j", R, Zr)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        P = Zr + beta * P
        rz = rz_new
    A = A[:, 0] if vector else A
    return PCGResult(A, n_iter, residuals, bool(residuals and residuals[-1] <= tol))


def _woodbury_inverse(feature_map, X, lam):
    """v -> (Z Z^T + lam I)^-1 v with Z = feature_map(X) (n x s, float64, kept)."""
    if not hasattr(feature_map, "transform_op_"):
        feature_map.fit(X)
    Z = np.asarray(feature_map.transform(X), dtype=np.float64)
    G = _gram_lower(Z)
    G[np.diag_indices_from(G)] += lam
    factor = _cholesky(G, "Z^T Z + n alpha I")

    def apply(R):
        return (R - Z @ cho_solve(factor, Z.T @ R, check_finite=False)) / lam
    return apply


def _gram_lower(Z, G=None):
    """G += Z^T Z (lower triangle only, float64) by a symmetric rank-k update."""
    G = np.zeros((Z.shape[1], Z.shape[1]), order="F") if G is None else G
    return dsyrk(1.0, Z, beta=1.0, c=G, trans=1, lower=1, overwrite_c=1)


def feature_ridge_coef(feature_map, X, Y, alpha):
    """The random-feature ridge solution W of (Z^T Z + n alpha I) W = Z^T Y, Z = feature_map(X).

    Z^T Z and Z^T Y are accumulated over row chunks; Z is never stored (module docstring).

    Parameters
    ----------
    feature_map : skylite.sketch.FeatureMap
        A fitted map z.
    X, Y, alpha
        As for `exact_dual_coef`.

    Returns
    -------
    W : ndarray of shape (s, m) or (s,)
        The weights; predictions are feature_map.transform(X_new) @ W.
    """
    Y = _targets(Y, X.shape[0])
    lam = _lam(alpha, X.shape[0])
    s = int(feature_map.n_features)
    G = np.zeros((s, s), order="F")
    ZtY = np.zeros((s,) + Y.shape[1:])
    for a, b in _chunks(X.shape[0], s):
        Z = np.asarray(feature_map.transform(X[a:b]), dtype=np.float64)
        G = _gram_lower(Z, G)
        ZtY += Z.T @ Y[a:b]
    G[np.diag_indices_from(G)] += lam
    factor = _cholesky(G, f"Z^T Z + n alpha I at alpha={alpha:g}")
    return cho_solve(factor, ZtY, check_finite=False)
