"""The hinge loss by dual coordinate descent on features held in memory, a method of the driver.

For the one-vs-rest hinge loss with the l2 regularizer, the estimators' problem

    min_W  (1/n) sum_i sum_k max(0, 1 - Y_ik z_i . w_k) + alpha/2 ||W||^2,   C = 1/(n alpha)

is, times n C, m independent linear SVMs without bias, C sum_i max(0, 1 - y_i z_i . w) +
1/2 ||w||^2, each solved in its dual by coordinate descent (Hsieh et al. 2008, LIBLINEAR's
default dual solver; `skylite.admm._dual_cd`).  An epoch costs 2 s flops per active row and
problem; shrinking drops the rows whose dual variable sits at a bound, so that late epochs
visit little more than the support vectors.  A path over C continues from the previous C's
dual variables.  What it costs against block ADMM on MNIST is in docs/tuning.md.

With a Nystroem map of several column blocks the l2 regularizer is the RKHS norm
1/2 tr(W^T G W) (`skylite.prox.RKHSNorm`); with G = R R^T (Cholesky) the features
z~ = R^-1 z and weights w~ = R^T w turn it into the l2 problem above (z~ . w~ = z . w,
||w~||^2 = w^T G w), solved on z~, and the model is W = R^-T W~.  Where G is only
semidefinite (landmarks close for the bandwidth: Cholesky fails), the features are whitened
on G's range instead (`range_whitening`, an eigendecomposition of G).

The method needs every row's features in memory (n s float64) in one process; `plan`
refuses a run that does not fit, naming solver="admm", which streams the features.  One
step is one epoch of every problem not yet solved.  The record holds the dual objective in
the estimators' scaling, the largest projected-gradient span and, every OBJECTIVE_EVERY-th
epoch and at the last (a pass over the features), the objective and the relative duality
gap.  The run has converged when every problem's span is at most `tol` on all of its rows;
the estimators pass tol = DUAL_CD_TOL_PER_TOL times theirs (0.1 at the default 1e-3,
LIBLINEAR's default for its dual solvers).  The span bounds the optimality conditions in
units of the margin, not the objective: at large C, where C multiplies every slack, a
solve stopped at 0.1 can leave a relative duality gap of tens of percent (docs/tuning.md);
a smaller tol closes it.
"""
import time

import numpy as np
import scipy.linalg

from .._linalg import cholesky
from .._machine import format_bytes
from .._threads import blas_single_threaded
from .._validation import check_positive
from ._dual_cd import dual_cd_epoch
from .driver import Method

__all__ = ["DualCD", "DualCDPath", "DUAL_CD_TOL_PER_TOL", "dual_cd_memory_bytes"]

#: the projected-gradient span at which a problem is solved, per unit of the estimators' tol
DUAL_CD_TOL_PER_TOL = 100.0
#: epochs between two records of the objective (besides the first and the last)
OBJECTIVE_EVERY = 10
# what a checkpoint holds: the whole state (the weights and dual variables, and each
# problem's visiting order, active set, shrinking thresholds, generator state and solved
# flag), so that a resumed run continues bit for bit
_STATE = ("AT", "WT", "order", "active", "bounds", "states", "solved")


def dual_cd_memory_bytes(n, s, m, whitened):
    """The bytes the method holds at its peak: the features (n s float64, and the map's
    output before conversion), the factor of G when `whitened` (s^2), the targets, dual
    variables and visiting orders (m n float64, float64 and int32) and the weights (2 m s)."""
    return 8 * (2 * n * s + (s * s if whitened else 0) + 2 * m * n + 2 * m * s) + 4 * m * n


# The fewest multiples of eps max(lambda) that range_whitening's threshold counts: eigh
# with eigenvectors leaves G's null eigenvalues at up to 15.5 eps max(lambda) (100,000
# random G of 2-12 rows and lower rank), above numpy's rank threshold s eps max(lambda)
# when s is small; a null direction kept is scaled by about 1/sqrt(eps).
RANGE_THRESHOLD_FLOOR = 64


def range_whitening(G):
    """V (s x r) with V^T G V = I_r on the range of a positive semidefinite G (G = Q diag(
    lambda) Q^T; V = Q_+ diag(lambda_+)^-1/2 over the r eigenvalues above
    max(s, 64) eps max(lambda): numpy's rank threshold, with a floor for small s, where
    eigh's rounding of a null eigenvalue can exceed it).  With z~ = V^T z and W = V W~ the
    RKHS norm is ||W~||^2 and the outputs are z . W = z~ . W~ for every W in G's range;
    W's part in G's null space is a function of RKHS norm zero, which is 0 (up to
    rounding) on every row."""
    values, Q = scipy.linalg.eigh(np.array(G, dtype=np.float64), check_finite=False)
    multiple = max(len(values), RANGE_THRESHOLD_FLOOR)
    keep = values > values.max(initial=0.0) * multiple * np.finfo(np.float64).eps
    return Q[:, keep] / np.sqrt(values[keep])


class DualCD(Method):
    """Dual coordinate descent for the hinge loss with l2 or an RKHS norm (module
    docstring).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.FeatureMap
        The map z.
    regularizer : skylite.prox regularizer
        `L2`, or `RKHSNorm` of a Nystroem map (its `gram` is G).
    alpha : float > 0
        The regularization weight (C = 1/(n alpha)).
    tol : float > 0
        The projected-gradient span at which a problem is solved.
    seed : int
        Seeds each problem's order of visits.
    n_threads : int >= 1
        Problems solved at once (each by one thread: the result does not depend on it).
    max_iter : int
        The driver's epoch budget (the last epoch's record holds the objective).
    """

    name = "dual coordinate descent"

    def __init__(self, feature_map, regularizer, alpha, tol, seed, n_threads, max_iter):
        self.feature_map, self.regularizer = feature_map, regularizer
        self.max_iter = int(max_iter)
        self.alpha = check_positive(alpha, "alpha")
        self.tol = check_positive(tol, "tol")
        self.seed, self.n_threads = int(seed), max(1, int(n_threads))
        self.whitened = regularizer.name == "rkhs"
        self._seconds = {"transform": 0.0, "whitening": 0.0}

    # ---- setup ----

    def plan(self, X, Y, available):
        self.memory_estimate = dual_cd_memory_bytes(
            X.shape[0], int(self.feature_map.n_features), Y.shape[1], self.whitened)
        if self.memory_estimate > available:
            raise MemoryError(
                f"solver='dcd' holds every row's features in memory: "
                f"{format_bytes(self.memory_estimate)} for {X.shape[0]} rows x "
                f"{self.feature_map.n_features} features, where {format_bytes(available)} is "
                f"available; use solver='admm', which regenerates them")

    def collective_settings(self):
        return {"alpha": float(self.alpha), "tol": float(self.tol), "seed": self.seed,
                "map": self.feature_map.to_dict()}

    def setup(self, X, Y, n, n_units, dist):
        if not dist.serial:
            raise ValueError("solver='dcd' runs in one process; use solver='admm' under MPI")
        tick = time.perf_counter()
        Z = np.asarray(self.feature_map.transform(X), dtype=np.float64)
        self._seconds["transform"] = time.perf_counter() - tick
        tick = time.perf_counter()
        self.factor, self.basis = None, None
        if self.whitened:                    # Z~ = Z R^-T, one triangular solve
            try:
                self.factor = cholesky(np.array(self.regularizer.gram, dtype=np.float64),
                                       "G", self.n_threads)[0]
            except ValueError:               # G only semidefinite: Z~ = Z V on its range
                self.basis = range_whitening(self.regularizer.gram)
                if self.basis.shape[1] == 0:
                    raise ValueError("solver='dcd': the map's RKHS Gram matrix G is zero; "
                                     "use solver='admm'") from None
                Z = Z @ self.basis
            else:
                Z = scipy.linalg.solve_triangular(self.factor, Z.T, lower=True,
                                                  overwrite_b=True, check_finite=False).T
        self.Z = np.ascontiguousarray(Z)
        self._seconds["whitening"] = time.perf_counter() - tick
        self.YT = np.ascontiguousarray(Y.T)
        self.q = np.einsum("ij,ij->i", self.Z, self.Z)
        m = Y.shape[1]
        self.n_rows = n
        self.WT = np.zeros((m, self.Z.shape[1]))
        self.AT = np.zeros((m, n))
        self.order = np.empty((m, n), dtype=np.intc)
        self.states = np.random.default_rng(self.seed).integers(
            1, 2**63, size=m, dtype=np.uint64)
        self._restart()

    def _restart(self):
        """Every problem unsolved, every row active (a new C, a start, a resume)."""
        m, n = self.AT.shape
        self.order[:] = np.arange(n, dtype=np.intc)
        self.active = np.full(m, n, dtype=np.intc)
        self.bounds = np.tile([np.inf, -np.inf], (m, 1))
        self.solved = np.zeros(m, dtype=np.uint8)

    @property
    def C(self):
        return 1.0 / (self.n_rows * self.alpha)

    def set_problem(self, alpha, keep_state):
        """Solve at another alpha on this setup (then `Driver.rerun`).  keep_state: from
        the last solve's dual variables, clipped to the new box (for a larger C they stay
        feasible and the weights stand); else from zero."""
        self.alpha = check_positive(alpha, "alpha")
        if not keep_state:
            self.AT[:] = 0.0
            self.WT[:] = 0.0
        elif (self.AT > self.C).any():
            np.minimum(self.AT, self.C, out=self.AT)
            self.WT = (self.AT * self.YT) @ self.Z
        self._restart()

    def header(self, dist):
        return (f"dual coordinate descent: n={self.n_rows} s={self.Z.shape[1]} "
                f"m={self.AT.shape[0]} C={self.C:g} tol={self.tol:g} "
                f"threads={self.n_threads}; memory {format_bytes(self.memory_estimate)}")

    def checkpoint_meta(self):
        return {"solver": "dcd", **self.collective_settings()}

    # ---- one epoch ----

    def step(self, dist):
        with blas_single_threaded():
            spans = dual_cd_epoch(self.Z, self.YT, self.q, self.C, self.tol, self.WT,
                                  self.AT, self.order, self.active, self.bounds,
                                  self.states, self.solved, self.n_threads)
        if not np.isfinite(self.WT).all():
            raise FloatingPointError("dual coordinate descent produced non-finite weights")
        return spans

    def local_sums(self, info):
        return np.array([float(np.einsum("ij,ij->", self.WT, self.WT)),
                         float(self.AT.sum())])

    n_sums = 2

    def record(self, it, sums, info):
        """The epoch's record; the objective (a pass over every row's features, a third of
        an early epoch) on every OBJECTIVE_EVERY-th epoch, the last (at convergence or
        max_iter) and the first."""
        norm2, dual_sum = sums
        scale = 1.0 / (self.n_rows * self.C)            # n C P = the SVMs' objective
        dual = dual_sum - 0.5 * norm2
        converged = bool(self.solved.all())
        record = {"iteration": it, "dual_objective": scale * dual,
                  "violation": float(np.max(info)) if len(info) else 0.0,
                  "solved": int(self.solved.sum())}
        if converged or it % OBJECTIVE_EVERY == 0 or it == 1 or it >= self.max_iter:
            hinge = float(np.maximum(0.0, 1.0 - self.YT.T * (self.Z @ self.WT.T)).sum())
            primal = self.C * hinge + 0.5 * norm2
            record["objective"] = scale * primal
            record["gap"] = (primal - dual) / max(abs(primal), 1e-300)
        return record, converged

    def unconverged_message(self, last):
        return (f"tol={self.tol:g} (largest projected-gradient span {last['violation']:.2e}, "
                f"{last['solved']} of {self.AT.shape[0]} problems solved)")

    # ---- the model ----

    @property
    def coef(self):
        """W (s x m): W~^T, or R^-T W~^T for the RKHS norm (V W~^T on the range of a
        semidefinite G)."""
        if self.basis is not None:
            return self.basis @ self.WT.T
        if self.factor is None:
            return np.ascontiguousarray(self.WT.T)
        return scipy.linalg.solve_triangular(self.factor, self.WT.T, lower=True, trans="T",
                                             check_finite=False)

    def check_start(self, start):
        raise ValueError("solver='dcd' takes no warm start from a model (its state is the "
                         "dual variables of the rows); fit_path continues each C from the "
                         "previous one's, or use solver='admm'")

    # ---- checkpoints ----

    def arrays(self):
        return {name: getattr(self, name) for name in _STATE}

    def load(self, meta, arrays):
        for name, target in self.arrays().items():
            if name not in arrays or np.shape(arrays[name]) != target.shape:
                raise ValueError(f"state array {name} is missing or has the wrong shape")
        for name, target in self.arrays().items():
            setattr(self, name, np.array(arrays[name], dtype=target.dtype, order="C"))

    # ---- after the run ----

    def phase_seconds(self, history):
        return {**self._seconds, "epochs": sum(r["seconds"] for r in history)}


class DualCDPath:
    """`fit_path`'s engine for solver='dcd' (`skylite._path.RegularizationPath`): the first
    run's features serve every later value, each continuing from the previous dual
    variables."""

    def __init__(self, method, driver):
        self.method_, self.driver_ = method, driver

    def solve(self, *, alpha, keep_state):
        self.method_.set_problem(alpha, keep_state)
        self.result_ = self.driver_.rerun(None)
        return self
