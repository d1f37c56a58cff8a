"""Kernel ridge regression by preconditioned conjugate gradients, as a method of the driver.

Solves the exact kernel problem (K + lam I) A = Y, lam = n alpha, for m targets at once
(Y: n x m), matrix-free, by conjugate gradients preconditioned with random features (Avron,
Clarkson & Woodruff, "Faster Kernel Ridge Regression Using Sketching and Preconditioning",
2017): P = Z Z^T + lam I with Z = z(X) (n x s), applied through the Woodbury identity

    P^-1 v = (v - Z (Z^T Z + lam I)^-1 Z^T v) / lam.

Each target column runs its own CG recurrence; the columns share the products with K, which
is applied one row block at a time and never stored (`skylite._linalg.kernel_matvec`).  The
model is f(x) = sum_i k(x, x_i) a_i.

As a `skylite.admm.driver.Method`, one step is one CG iteration, the partial sums are the
squared norms of the residual columns, the record is the relative residual
max_j ||r_j|| / ||y_j|| and the run has converged when it is at most `tol`; so the driver gives
the solver what it gives the ADMM: MPI, checkpoints, a callback, validation and early
stopping.

MPI.  Each rank holds its rows X_r, its rows of the residual R and of the search direction P,
and its Z_r = z(X_r).  At setup the ranks gather every rank's rows (K(X_r, X) needs them: n d
values per rank) and add up Z^T Z (s x s).  Per iteration: one allgather of the direction
(n x m), then sums over the ranks of P_r^T (K P)_r, of Z_r^T R_r (s x m) and of R_r^T P^-1 R_r
(m values each).  The dual coefficients A (n x m) are updated alike on every rank from the
gathered direction and the summed step, so every rank holds the same model.
"""
import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve

from .._linalg import BLOCK_ELEMENTS, cholesky, gram_lower, kernel_matvec
from .._machine import format_bytes
from .._validation import check_positive
from .driver import Method

__all__ = ["PCG", "pcg_memory_bytes"]


def pcg_memory_bytes(n, s, m, *, n_local=None, d=0):
    """The float64 bytes the PCG method holds at its peak on a rank of `n_local` of the n
    rows (None: all of them, one process): the other ranks' rows it gathers ((n - n_local)
    d), its features Z_r (n_local s), the factor (s^2), the dual coefficients and the
    gathered direction (2 n m), its CG vectors (4 n_local m) and one row block of K."""
    n_local = n if n_local is None else n_local
    return 8 * ((n - n_local) * d + n_local * s + s * s + 2 * n * m + 4 * n_local * m
                + min(n_local * n, BLOCK_ELEMENTS))


class PCG(Method):
    """Preconditioned conjugate gradients for (K + n alpha I) A = Y (module docstring).

    Parameters
    ----------
    kernel : skylite.kernels.Kernel
        The kernel k.
    feature_map : skylite.sketch.FeatureMap
        The preconditioner's map, fitted (on the same rows on every rank).
    alpha : float > 0
        The regularization weight (lam = n alpha, n over every rank).
    tol : float > 0
        Converged when ||y_j - (K + lam I) a_j|| <= tol ||y_j|| for every target column j.
    preconditioner : bool, default=True
        False runs plain conjugate gradients (for comparison).
    """

    name = "PCG"

    def __init__(self, kernel, feature_map, alpha, tol, preconditioner=True):
        self.kernel, self.feature_map = kernel, feature_map
        self.alpha = check_positive(alpha, "alpha")
        self.tol = check_positive(tol, "tol")
        self.preconditioner = bool(preconditioner)

    # ---- setup ----

    def plan(self, X, Y, available):
        """Keep `available`: the working memory depends on the global row count, so `setup`
        counts it (and refuses a run that cannot fit)."""
        self._available = available

    def collective_settings(self):
        return {"alpha": float(self.alpha), "tol": float(self.tol),
                "preconditioner": self.preconditioner, "kernel": repr(self.kernel),
                "map": self.feature_map.to_dict() if self.preconditioner else None}

    setup_is_collective = True

    def setup(self, X, Y, n, n_units, dist):
        """Gather every rank's rows, factor Z^T Z + lam I and make the first direction.
        Collective: every rank's local work runs inside `dist.gather_checked`, so a failure
        on one rank raises on every rank at the same collective."""
        self._dist = dist
        s = int(self.feature_map.n_features) if self.preconditioner else 0
        m = Y.shape[1]
        self.memory_estimate = pcg_memory_bytes(n, s, m, n_local=X.shape[0], d=X.shape[1])
        self.lam = n * self.alpha
        self.X, self.Y = X, Y
        parts = dist.gather_checked(self._fits_in_memory, X)
        self.X_all = (parts[0] if len(parts) == 1 else
                      sp.vstack(parts, format="csr") if sp.issparse(X) else np.vstack(parts))
        self.y_norm = np.sqrt(self._sum(lambda: np.add.reduce(Y * Y, axis=0)))
        self.y_norm[self.y_norm == 0] = 1.0
        self.Z, self.factor = None, None
        if self.preconditioner:
            G = self._sum(self._local_gram)
            G = G if dist.serial else np.asfortranarray(G)
            G[np.diag_indices_from(G)] += self.lam
            self.factor = cholesky(G, "Z^T Z + n alpha I")   # the same G on every rank
        self.A = np.zeros((n, m))
        self.R = Y.copy()
        Zr = self._apply_preconditioner(self.R)
        self.P = Zr.copy()
        self.rz = self._sum(lambda: np.einsum("ij,ij->j", self.R, Zr))
        self.started = False

    def _fits_in_memory(self, X):
        """X, after refusing (MemoryError) a run whose working memory does not fit."""
        if self.memory_estimate > self._available:
            raise MemoryError(f"PCG needs {format_bytes(self.memory_estimate)} (every rank's "
                              f"rows, this rank's features and kernel products) where "
                              f"{format_bytes(self._available)} is available; use "
                              f"solver='admm' or fewer rows per process")
        return X

    def _local_gram(self):
        """Z_r^T Z_r (lower triangle, s x s) of this rank's features, which it keeps."""
        self.Z = np.asarray(self.feature_map.transform(self.X), dtype=np.float64)
        return gram_lower(self.Z)

    def header(self, dist):
        return (f"PCG: n={self.A.shape[0]} d={self.X.shape[1]} s="
                f"{self.Z.shape[1] if self.preconditioner else 0} m={self.A.shape[1]} "
                f"ranks={dist.size} "
                f"lam={self.lam:g} preconditioner={self.preconditioner}; memory "
                f"{format_bytes(self.memory_estimate)}")

    def checkpoint_meta(self):
        return {"solver": "pcg", **self.collective_settings()}

    # ---- one iteration ----

    def _sum(self, local):
        """The sum over the ranks of local() (an array), added in rank order so that every
        rank holds the same bits; local() runs under `gather_checked`'s guard."""
        parts = self._dist.gather_checked(local)
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total

    def _gather(self, V):
        """Every rank's rows of V, stacked in rank order (n x m)."""
        parts = self._dist.gather_checked(lambda: V)
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def _apply_preconditioner(self, R):
        """P^-1 R by the Woodbury identity (module docstring); Z^T R is summed over ranks."""
        if not self.preconditioner:
            return R / self.lam
        ZtR = self._sum(lambda: self.Z.T @ R)
        return (R - self.Z @ cho_solve(self.factor, ZtR, check_finite=False)) / self.lam

    def step(self, dist):
        """One CG iteration: the next direction (from the second iteration on), then the
        step along it.  Every collective is a `gather_checked`, so a rank that fails in its
        local work still takes part in each."""
        if self.started:
            Zr = self._apply_preconditioner(self.R)
            rz_new = self._sum(lambda: np.einsum("ij,ij->j", self.R, Zr))
            beta = np.divide(rz_new, self.rz, out=np.zeros_like(rz_new), where=self.rz > 0)
            self.P = Zr + beta * self.P
            self.rz = rz_new
        self.started = True
        P_all = self._gather(self.P)
        AP = None

        def products():
            nonlocal AP
            AP = kernel_matvec(self.kernel, self.X_all, P_all, self.X) + self.lam * self.P
            return np.einsum("ij,ij->j", self.P, AP)
        pAp = self._sum(products)
        step = np.divide(self.rz, pAp, out=np.zeros_like(self.rz), where=pAp > 0)
        self.A += step * P_all
        self.R -= step * AP
        if not (np.isfinite(self.A).all() and np.isfinite(self.R).all()):
            raise FloatingPointError("PCG produced non-finite values; the kernel or alpha "
                                     "may be badly scaled")
        return None

    def local_sums(self, info):
        return np.add.reduce(self.R * self.R, axis=0)

    @property
    def n_sums(self):
        return self.Y.shape[1]

    def record(self, it, sums, info):
        residual = float(np.max(np.sqrt(sums) / self.y_norm))
        return ({"iteration": it, "residual": residual, "residual_ratio": residual / self.tol},
                residual <= self.tol)

    def unconverged_message(self, last):
        return f"tol={self.tol:g} (relative residual {last['residual']:.2e})"

    # ---- the model ----

    @property
    def coef(self):
        """The dual coefficients A (n x m, every rank's rows in rank order)."""
        return self.A

    # ---- checkpoints ----

    def arrays(self):
        return {"A": self.A, "R": self.R, "P": self.P, "rz": self.rz}

    def load(self, meta, arrays):
        for name, target in self.arrays().items():
            if name not in arrays or np.shape(arrays[name]) != target.shape:
                raise ValueError(f"state array {name} is missing or has the wrong shape")
        self.A, self.R, self.P, self.rz = (np.array(arrays[k], dtype=np.float64)
                                           for k in ("A", "R", "P", "rz"))
        self.started = True

    def check_start(self, A0):
        A0 = np.asarray(A0, dtype=np.float64)
        if A0.shape != self.A.shape:
            raise ValueError(f"warm start must have shape {self.A.shape}, got {A0.shape}")
        if not np.isfinite(A0).all():
            raise ValueError("warm start contains NaN or infinity")

    def warm_start(self, A0, dist):
        """Start from dual coefficients A0 (n x m, every rank's rows in rank order):
        R = Y - (K + lam I) A0 on this rank's rows."""
        A0 = np.asarray(A0, dtype=np.float64)
        start = int(np.sum(dist.allgather(self.X.shape[0])[:dist.rank]))
        mine = A0[start:start + self.X.shape[0]]

        def residual():
            self.R = (self.Y - kernel_matvec(self.kernel, self.X_all, A0, self.X)
                      - self.lam * mine)
            return np.zeros(1)
        self._sum(residual)               # a rank that failed raises on every rank
        self.A = A0.copy()
        Zr = self._apply_preconditioner(self.R)
        self.P = Zr.copy()
        self.rz = self._sum(lambda: np.einsum("ij,ij->j", self.R, Zr))

    # ---- after the run ----

    def phase_seconds(self, history):
        return {"pcg": sum(r["seconds"] for r in history)}

    def result_details(self):
        """The model is dual: its coefficients live on every rank's rows, X_fit."""
        return {"X_fit": self.X_all}
