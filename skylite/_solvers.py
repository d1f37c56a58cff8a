"""The solvers behind the estimators' `solver` option, each leaving one `RunResult`.

- "admm": block ADMM (`skylite.admm.BlockADMM`), any loss and regularizer;
- "pcg": the exact kernel ridge problem (K + n alpha I) A = Y by conjugate gradients
  preconditioned with the feature map (`skylite.admm.pcg.PCG`);
- "direct": the closed form of the random-feature ridge problem,
  coef_ = (Z^T Z + n alpha I)^-1 Z^T Y (`skylite.krr.feature_ridge_coef`);
- "exact": the exact kernel ridge problem by one Cholesky factorization
  (`skylite.krr.exact_dual_coef`);
- "dcd": the hinge loss with l2 (or the RKHS norm of a Nystroem map) by dual coordinate
  descent on every row's features held in memory, in one process
  (`skylite.admm.dual_cd.DualCD`);
- "auto": "direct" for ridge problems that nothing asks to iterate (no validation rows,
  early stopping, checkpoint, callback, warm start or communicator) up to
  DIRECT_MAX_FEATURES features, else "admm".

"admm", "pcg" and "dcd" are methods of the driver (`skylite.admm.driver`): they write
checkpoints, call the callback, score validation rows and stop early; "admm" and "pcg" also
run under MPI.  "direct" and "exact" are one solve in one process.
"""
import time

import numpy as np

from ._machine import available_memory_bytes, format_bytes
from .admm.driver import RunResult
from .krr import (dual_coef_from_gram, feature_normal_equations, memory_bytes,
                  ridge_from_normal_equations)
from .prox import RKHSNorm, get_loss, get_regularizer

__all__ = ["SOLVERS", "DIRECT_MAX_FEATURES", "AUTO_RULE", "applies_dual_cd", "is_ridge",
           "is_ridge_by_name", "regularizer_for_map", "resolve_solver", "ClosedForm"]

SOLVERS = ("auto", "admm", "direct", "exact", "pcg", "dcd")
# solver="auto" solves squared loss + l2 in closed form up to this many features (s^2 float64:
# 512 MB, n s^2 flops)
DIRECT_MAX_FEATURES = 8192
#: what solver="auto" does, in words (the estimators' docstring and `skylite train --help`)
AUTO_RULE = (f'"direct" for ridge problems with s <= {DIRECT_MAX_FEATURES} when nothing asks '
             f'for iterations (validation rows, early stopping, a checkpoint, a callback, a '
             f'warm start) and no communicator is given; else "admm"')


def is_ridge(loss, regularizer):
    """Whether (loss, regularizer) is ridge regression, the squared loss with l2: the problem
    the solvers "direct", "exact" and "pcg" solve (with alpha > 0)."""
    return loss.name == "squared" and regularizer.name == "l2"


def is_ridge_by_name(loss, regularizer, classification=None):
    """`is_ridge` for the names the command line holds (a loss name, a regularizer name and
    the --classification flag, which makes the squared loss a classifier)."""
    loss = get_loss(loss)
    if classification:
        loss = loss.with_classification(True)
    return is_ridge(loss, get_regularizer(regularizer)) and not loss.classification


def applies_dual_cd(loss, regularizer):
    """Whether solver="dcd" solves (loss, regularizer): the hinge loss with l2 or the RKHS
    norm of a Nystroem map."""
    return loss.name == "hinge" and regularizer.name in ("l2", "rkhs")


def regularizer_for_map(regularizer, fmap, precision):
    """l2 on a Nystroem map of several column blocks becomes the RKHS norm of the functions
    it spans (skylite.prox.RKHSNorm, kept in the fit's precision): the full-Nystroem problem
    whatever the blocks."""
    if (regularizer.name == "l2" and hasattr(fmap, "rkhs_gram")
            and fmap.transform_op_.n_blocks > 1):
        return RKHSNorm(fmap, np.float32 if precision == "float32" else np.float64)
    return regularizer


def resolve_solver(solver, loss, regularizer, alpha, n_features, *, iterative, distributed):
    """The solver a fit uses: `solver`, with "auto" resolved to "direct" or "admm".

    Parameters
    ----------
    solver : str
        One of SOLVERS.
    loss, regularizer : skylite.prox objects
        The problem (the regularizer after `regularizer_for_map`).
    alpha : float
        The regularization weight.
    n_features : int
        The feature map's s.
    iterative : bool
        Whether the fit asks for what only an iterative run gives (validation rows, early
        stopping, checkpoints, a callback, a warm start).
    distributed : bool
        Whether the fit runs over an MPI communicator.

    Returns
    -------
    str
        "admm", "pcg", "dcd", "direct" or "exact".  Raises ValueError for an unknown solver, a
        ridge solver where the problem is not ridge regression, or a one-process solver
        under a communicator.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if solver == "admm":
        return "admm"
    if solver == "dcd":
        if not applies_dual_cd(loss, regularizer):
            raise ValueError(f"solver='dcd' needs the hinge loss with the l2 regularizer, got "
                             f"loss={loss.name!r}, regularizer={regularizer.name!r}")
        if distributed:
            raise ValueError("solver='dcd' runs in one process; use solver='admm' with comm=")
        return "dcd"
    applies = is_ridge(loss, regularizer) and alpha > 0
    if solver != "auto":
        # the RKHS norm of a Nystroem map is l2 on the functions: the same problem for "exact"
        user_name = "l2" if regularizer.name == "rkhs" else regularizer.name
        if not (loss.name == "squared" and regularizer.name in ("l2", "rkhs") and alpha > 0):
            raise ValueError(f"solver={solver!r} needs the squared loss with the l2 "
                             f"regularizer and alpha > 0 (KernelRidge, or KernelMachine("
                             f"loss='squared', classification=True) for classes), got "
                             f"loss={loss.name!r}, regularizer={user_name!r}, alpha={alpha!r}")
        # "exact" never uses the map; "direct" and "pcg" use its features as they are
        if regularizer.name == "rkhs" and solver != "exact":
            raise ValueError(f"solver={solver!r} does not apply to a Nystroem map of several "
                             f"column blocks (l2 on it is the RKHS norm of the functions it "
                             f"spans); use solver='admm', or n_blocks=1")
        if distributed and solver in ("direct", "exact"):
            raise ValueError(f"solver={solver!r} runs in one process; use solver='admm' "
                             f"or 'pcg' with comm=")
        return solver
    direct = (applies and not iterative and not distributed
              and n_features <= DIRECT_MAX_FEATURES)
    return "direct" if direct else "admm"


class ClosedForm:
    """The "direct" or "exact" solve of a fit, and of the further alphas of its
    regularization path, each as a RunResult of one iteration.

    "direct": coef = W (s x m) on the features of `feature_map` (rows in `precision`), from
    the normal equations (Z^T Z, Z^T Y), made by the first solve; with keep=True (a path of
    several alphas) they are kept, so that each further alpha costs one s^3 / 3
    factorization instead of a pass over the rows, at s^2 more floats held (a copy of
    Z^T Z to factor), and each alpha's W is bitwise the W of a separate fit.
    "exact": coef = the dual coefficients A (n x m) of `kernel`, with details["X_fit"] = X;
    with keep=True the n x n kernel matrix K is kept when twice its size fits in the
    available memory (a copy is factored for each alpha: n^3 / 3 flops per further alpha
    instead of the n^2 d of K as well, each A bitwise that of a separate fit), else it is
    made again for each alpha and factored in place.  verbose: a line when K is made and
    when each alpha is factored.
    """

    def __init__(self, solver, X, Y, *, feature_map, kernel, precision, keep=False,
                 verbose=0):
        self.solver, self.X, self.Y = solver, X, Y
        self.feature_map, self.kernel, self.precision = feature_map, kernel, precision
        self.keep, self.verbose = keep, verbose
        self._normal = None
        self._gram = None

    def solve(self, alpha):
        """The RunResult at alpha (> 0, checked by the caller).  Raises MemoryError, before
        any work, where the solve's arrays cannot fit in the available memory."""
        start = time.perf_counter()
        details = {}
        n, s, m = self.X.shape[0], self.feature_map.n_features, self.Y.shape[1]
        self._check_memory(n, s, m)
        if self.solver == "direct":
            normal = self._normal
            if normal is None:
                rows = (self.X.astype(np.float32, copy=False) if self.precision == "float32"
                        else self.X)
                normal = feature_normal_equations(self.feature_map, rows, self.Y)
                if self.keep:
                    self._normal = normal
            coef = ridge_from_normal_equations(*normal, n * alpha, alpha,
                                               overwrite=not self.keep)
        else:
            coef = self._exact(alpha)
            details["X_fit"] = self.X
        seconds = time.perf_counter() - start
        if self.solver == "direct":
            kept = 8 * s * s if self.keep else 0
        else:
            kept = 0 if self._gram is None else self._gram.nbytes      # beside the copy
        memory = memory_bytes(self.solver, n, s, m) + kept
        return RunResult(coef, 1, [], True, memory, {self.solver: seconds}, details)

    def _check_memory(self, n, s, m):
        """Refuse a solve whose largest array (n x n kernel matrix, s x s normal
        equations) cannot fit, instead of failing while it is filled."""
        if self._normal is not None or self._gram is not None:
            return                                   # made by an earlier solve
        need, available = memory_bytes(self.solver, n, s, m), available_memory_bytes()
        if need <= available:
            return
        if self.solver == "exact":
            raise MemoryError(f"solver='exact' needs {format_bytes(need)} for the {n} x {n} "
                              f"kernel matrix of the training rows, more than the "
                              f"{format_bytes(available)} available; use solver='pcg' "
                              f"(memory linear in the rows) or fewer rows")
        raise MemoryError(f"solver='direct' needs {format_bytes(need)} for the {s} x {s} "
                          f"normal equations of the features, more than the "
                          f"{format_bytes(available)} available; use solver='admm' or fewer "
                          f"features (n_features)")

    def _exact(self, alpha):
        """The dual coefficients at alpha, from the kept K or a new one."""
        K, n = self._gram, self.X.shape[0]
        if K is None:
            start = time.perf_counter()
            K = self.kernel.gram(self.X)
            if self.verbose:
                print(f"skylite: exact kernel matrix of {n} rows ({format_bytes(K.nbytes)}): "
                      f"{time.perf_counter() - start:.2f}s", flush=True)
            if self.keep and 2 * K.nbytes <= available_memory_bytes():
                self._gram = K
        start = time.perf_counter()
        coef = dual_coef_from_gram(K, self.Y, alpha, overwrite=K is not self._gram)
        if self.verbose:
            print(f"skylite: exact solve at alpha={alpha:g} (factorization of K + n alpha I): "
                  f"{time.perf_counter() - start:.2f}s", flush=True)
        return coef
