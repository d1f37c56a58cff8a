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
import warnings

import numpy as np
from scipy.linalg import cho_solve

from ._linalg import BLOCK_ELEMENTS, cholesky, gram_lower, kernel_matvec, row_chunks
from ._validation import check_positive
from .admm.driver import ConvergenceWarning, Driver, DriverSettings
from .admm.pcg import PCG, pcg_memory_bytes

__all__ = ["exact_dual_coef", "dual_coef_from_gram", "pcg_dual_coef", "feature_ridge_coef",
           "feature_normal_equations", "ridge_from_normal_equations", "kernel_matvec",
           "PCGResult", "memory_bytes"]

def memory_bytes(solver, n, s, m):
    """The float64 bytes a solver holds at its peak.

    "direct": the factor s^2, Z^T Y and one chunk of Z; "exact": K (n^2) and the solution;
    "pcg": Z (n s), the factor s^2, the CG vectors (6 n m) and one row block of K, in one
    process (`skylite.admm.pcg.pcg_memory_bytes`, which also counts an MPI rank's share).

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
    if solver == "pcg":
        return pcg_memory_bytes(n, s, m)
    floats = {"direct": s * s + s * m + min(n * s, BLOCK_ELEMENTS),
              "exact": n * n + n * m}[solver]
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
    _lam(alpha, X.shape[0])
    return dual_coef_from_gram(kernel.gram(X), Y, alpha, overwrite=True)


def dual_coef_from_gram(K, Y, alpha, *, overwrite=False):
    """The solution A of (K + n alpha I) A = Y for a kernel matrix K already made.

    A path over alpha keeps K and calls this for each alpha: one factorization (n^3 / 3
    flops) per alpha instead of the n^2 d of K as well, and the same A, bit for bit, as
    `exact_dual_coef`.

    Parameters
    ----------
    K : ndarray of shape (n, n), float64
        The kernel matrix of the training rows.
    Y : array-like of shape (n, m) or (n,)
        Targets.
    alpha : float > 0
        The regularization weight (lam = n alpha).
    overwrite : bool, default=False
        Factor K in place (K is then lost); False factors a copy (n^2 more floats).

    Returns
    -------
    A : ndarray of Y's shape
        The dual coefficients.
    """
    n = K.shape[0]
    Y = _targets(Y, n)
    lam = _lam(alpha, n)
    return _shifted_solve(K, Y, lam, f"K + n alpha I at alpha={alpha:g}", overwrite)


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
    _lam(alpha, X.shape[0])
    max_iter = check_positive(max_iter, "max_iter", integer=True)
    if preconditioner and not hasattr(feature_map, "transform_op_"):
        feature_map.fit(X)
    method = PCG(kernel, feature_map, alpha, tol, preconditioner)
    with warnings.catch_warnings():      # the result says whether it converged
        warnings.simplefilter("ignore", ConvergenceWarning)
        run = Driver(method, DriverSettings(max_iter)).run(X, Y.reshape(len(Y), -1))
    A = run.coef[:, 0] if vector else run.coef
    return PCGResult(A, run.n_iter, [r["residual"] for r in run.history], run.converged)


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
    lam = _lam(alpha, X.shape[0])
    G, ZtY = feature_normal_equations(feature_map, X, Y)
    return ridge_from_normal_equations(G, ZtY, lam, alpha, overwrite=True)


def feature_normal_equations(feature_map, X, Y):
    """(Z^T Z, Z^T Y) of `feature_ridge_coef`, Z = feature_map(X), accumulated over row
    chunks: what every alpha's solve needs (a regularization path makes them once).

    Parameters
    ----------
    feature_map : skylite.sketch.FeatureMap
        A fitted map z with s = feature_map.n_features features.
    X : array-like or CSR matrix of shape (n, d)
        Training rows.
    Y : array-like of shape (n, m) or (n,)
        Targets.

    Returns
    -------
    G : ndarray of shape (s, s), Fortran order
        Z^T Z, its lower triangle (the upper one is not set).
    ZtY : ndarray of shape (s, m) or (s,)
        Z^T Y.
    """
    Y = _targets(Y, X.shape[0])
    s = int(feature_map.n_features)
    G = np.zeros((s, s), order="F")
    ZtY = np.zeros((s,) + Y.shape[1:])
    for a, b in row_chunks(X.shape[0], s):
        Z = np.asarray(feature_map.transform(X[a:b]), dtype=np.float64)
        G = gram_lower(Z, G)
        ZtY += Z.T @ Y[a:b]
    return G, ZtY


def ridge_from_normal_equations(G, ZtY, lam, alpha, overwrite=False):
    """W with (G + lam I) W = Z^T Y, from `feature_normal_equations`' G (lower triangle) by
    one Cholesky factorization (s^3 / 3 flops).

    Parameters
    ----------
    G : ndarray of shape (s, s), Fortran order
        Z^T Z, its lower triangle read.
    ZtY : ndarray of shape (s, m) or (s,)
        Z^T Y.
    lam : float > 0
        The ridge, n alpha.
    alpha : float
        The regularization weight, which names the system in the error of a factorization
        that fails.
    overwrite : bool, default=False
        Factor G in place (it then holds the factor); False factors a copy.

    Returns
    -------
    W : ndarray of ZtY's shape
        The feature weights.
    """
    return _shifted_solve(G, ZtY, lam, f"Z^T Z + n alpha I at alpha={alpha:g}", overwrite)


def _shifted_solve(A, B, lam, what, overwrite):
    """X with (A + lam I) X = B, by one Cholesky factorization of A's lower triangle (A
    symmetric, n x n): in place when `overwrite`, else on a copy in A's memory order.
    `what` names the system in the error of a factorization that fails."""
    if not overwrite:
        A = A.copy(order="K")
    A[np.diag_indices_from(A)] += lam
    return cho_solve(cholesky(A, what), B, check_finite=False)
