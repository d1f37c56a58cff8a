"""Dense linear algebra shared by the kernel ridge solvers (skylite.krr), the PCG method
(skylite.admm.pcg) and whitened Nystroem features (skylite.admm.whitening): products with
the Gram matrix one row block at a time, the symmetric rank-k update of Z^T Z, and a
Cholesky factorization on several threads that names what failed.
"""
import numpy as np
from scipy.linalg import LinAlgError
from scipy.linalg.blas import dsyrk

from .prox._tiled_cholesky import tiled_cholesky

__all__ = ["kernel_matvec", "gram_lower", "cholesky", "row_chunks"]

# float64 elements of one row block of K (or of Z) held at a time (64 MB).
BLOCK_ELEMENTS = 8 * 1024 * 1024


def row_chunks(n, row_elements):
    """Row ranges whose blocks of `row_elements` float64 each stay within BLOCK_ELEMENTS."""
    rows = max(1, BLOCK_ELEMENTS // max(1, row_elements))
    return [(a, min(n, a + rows)) for a in range(0, n, rows)]


def cholesky(A, what, n_threads=None):
    """(L, True): the lower Cholesky factor of the symmetric positive definite A (float64),
    in place by tiles on n_threads threads (skylite.prox._tiled_cholesky), as scipy's
    cho_factor returns it for cho_solve.  Raises ValueError naming `what` if A is not
    numerically positive definite."""
    try:
        return tiled_cholesky(A, n_threads), True
    except LinAlgError:
        raise ValueError(f"{what} is not positive definite; increase alpha") from None


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
    for a, b in row_chunks(Xq.shape[0], X.shape[0]):
        out[a:b] = kernel.gram(Xq[a:b], X) @ V
    return out


def gram_lower(Z, G=None):
    """G += Z^T Z (lower triangle only, float64) by a symmetric rank-k update."""
    G = np.zeros((Z.shape[1], Z.shape[1]), order="F") if G is None else G
    return dsyrk(1.0, Z, beta=1.0, c=G, trans=1, lower=1, overwrite_c=1)
