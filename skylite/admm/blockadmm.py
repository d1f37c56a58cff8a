"""BlockADMM: block-splitting ADMM for kernel machines on implicit random features.

Solves  minimize_W  F(W) = (1/n) sum_i V(y_i, W^T z(x_i)) + alpha r(W)   (W: s x m)

over an R x C grid of blocks Z_ij = T[X_i, j] of the feature matrix, which is never formed
(DESIGN.md section 3; Parikh & Boyd 2014, reorganized as in Sindhwani & Avron).  Scaled form;
with C column blocks and R row blocks, per iteration:

    O_i   <- prox_{(1/rho) l_i}(Obar_i - nu_i)          l_i(O) = (1/n) sum_{rows of i} V
    W     <- prox_{(alpha/rho) r}(Wbar - mu)
    for each row block i:
        Delta <- O_i ; Obar_i <- C/(C+1) O_i
        column sweep over j (parallel, native):                    B = Dbar_i/(C+1) + nu_i
            W'_ij <- (Z^T Z + I)^-1 [Wbar_j - mu'_ij + U_ij + Z^T B],  O' <- Z W'_ij,
            U_ij <- Z^T O',  Delta <- Delta - O',  Obar_i <- Obar_i + O'/(C+1)
        Dbar_i <- Delta ;  nu_i <- nu_i + O_i - Obar_i
    Wbar  <- (sum_i W'_i + W) / (R + 1)
    mu'_i <- mu'_i + W'_i - Wbar ;  mu <- mu + W - Wbar     (against the *new* Wbar)

Preconditioning.  ADMM is not invariant to the relative scale of the outputs O and the
weights W.  The engine runs on Z~ = c Z and W~ = W / c with c^2 = 1 / (alpha n), which gives
the loss term (1/n) V and the regularizer alpha r(c W~) the same curvature (1/n for squared
loss and l2), so the graph projection (Z~^T Z~ + I) is the ridge normal matrix scaled by
1/(alpha n).  The regularizer's prox stays exact for any r through
prox_{t r(c .)}(v) = prox_{t c^2 r}(c v) / c.  `rho` is relative to the loss scale 1/n: the loss
prox step is t = 1/rho (absolute ADMM parameter rho / n).

The graph-projection factors do not depend on rho, so rho adapts by residual balancing
(Boyd et al. 2011, 3.4.1; on residuals relative to their tolerances, as OSQP does) with only
the scaled duals mu, mu', nu rescaled.

Residuals (Boyd et al. 3.3): the primal residual is the consensus violation
    r = sqrt( sum_i ||W'_i - Wbar||^2 + ||W - Wbar||^2 + sum_i ||O_i - Obar_i||^2 ),
the dual residual the change of the consensus variables,
    d = rho sqrt( (R + 1) ||Wbar - Wbar_prev||^2 + sum_i ||Obar_i - Obar_i,prev||^2 );
the run stops when r <= tol * max(primal norms) and d <= tol * rho * ||duals|| (plus a tiny
absolute floor), or after max_iter iterations.

MPI (`comm=`, docs/mpi.md).  Each rank holds its own row blocks; R counts every rank's blocks
and n every rank's rows (c and the loss scale 1/n are global).  Per iteration a rank sends
one Reduce of its sum of W'_i (s x m) to the root, which forms Wbar and broadcasts it (Bcast:
bitwise the same Wbar everywhere); W and mu are then computed redundantly, and identically,
on every rank.  Everything else (residual norms, objective, validation, the failure flag) is
one Allreduce of a short vector of partial sums, from which every rank takes the same
stopping and rho decisions.  The serial path runs the same code on a null communicator.
"""
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp

from .._distributed import Distributed, Guard
from .._threads import blas_single_threaded, resolve_threads
from .._validation import check_positive, check_rows, with_native_index_dtypes
from ._graph_projection import PHASES, ColumnBlocks
from .checkpoint import (checkpoint_file, data_checksum, load_checkpoint, remove_checkpoint,
                         save_checkpoint)
from .memory import available_memory_bytes, paper_estimate_bytes, plan_cache

# slots of the per-iteration Allreduce vector of partial sums (then validation partials)
_PRIMAL, _DUAL, _NORM_X, _NORM_Z, _NORM_DUAL, _LOSS, _REG, _FAILED = range(8)
_N_SUMS = 8


class ConvergenceError(FloatingPointError):
    """ADMM produced non-finite values: the model is not returned."""


class ConvergenceWarning(UserWarning):
    """max_iter ended the run before the residuals met tol."""


class RowBlock:
    """The rows X_i, coded targets Y_i (n_i x m) and per-row-block ADMM state."""

    def __init__(self, X, Y, columns, s, m):
        n = Y.shape[0]
        self.X = X
        self.Y = Y
        self.columns = columns            # ColumnBlocks: factors and caches of Z_i1..Z_iC
        self.O, self.Obar, self.nu, self.Dbar = (np.zeros((n, m)) for _ in range(4))
        self.Wp, self.mu_p, self.U = (np.zeros((s, m)) for _ in range(3))


class BlockADMM:
    """Block-splitting ADMM over a fitted feature map (see the module docstring).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.FeatureMap
    loss, regularizer : skylite.prox loss / regularizer objects
    alpha : float >= 0, the regularization weight (the paper's lambda)
    rho : float > 0, initial ADMM step parameter, relative to the loss scale (see above)
    max_iter : int, tol : float  (stopping, see the module docstring)
    n_row_blocks : int, row blocks of this process (simulated; under `comm` each rank
        holds its own, normally 1)
    n_threads : int or None (all cores)
    memory_budget : bytes for caching Z blocks / map parameters; 0 caches nothing, None
        takes half of the machine's available memory
    precision : "float64" or "float32", the precision of the transform (state is float64)
    adapt_rho : bool, residual balancing
    verbose : bool, one line per iteration
    callback : callable(iteration, record, W) -> bool or None; True stops the run.  Under
        a communicator it is called on every rank (with identical arguments); an exception
        or a stop request on any rank stops every rank.
    validation : callable(W) -> float or None, scored every iteration into history_; or an
        object with `partial(W)` -> float64 vector of `n_partial` partial sums over this
        rank's validation rows and `finish(summed vector)` -> float, which the engine
        reduces in its per-iteration Allreduce (global validation scores under MPI)
    comm : mpi4py communicator or None.  Each rank passes its own rows to `fit`; the
        ranks' row blocks together form the R = sum of their n_row_blocks blocks, in rank
        order (see skylite._distributed and docs/mpi.md).  W and mu are computed
        redundantly on every rank from the bitwise identical Wbar (broadcast by the root),
        so they are identical everywhere and no final broadcast of the model is needed.
    checkpoint : path or None.  Every `checkpoint_every` iterations the full ADMM state is
        written there (one file per rank, skylite.admm.checkpoint).  If the file(s) exist
        when `fit` starts, the run resumes from them (the metadata must match: data sizes,
        map, loss, alpha...); they are removed when `fit` returns normally.
    checkpoint_every : int, iterations between checkpoints
    """

    def __init__(self, feature_map, loss, regularizer, alpha, *, rho=1.0, max_iter=500,
                 tol=1e-3, n_row_blocks=1, n_threads=None, memory_budget=None,
                 precision="float64", adapt_rho=True, verbose=False, callback=None,
                 validation=None, comm=None, checkpoint=None, checkpoint_every=10):
        self.feature_map = feature_map
        self.loss = loss
        self.regularizer = regularizer
        self.alpha = check_positive(alpha, "alpha", allow_zero=True)
        self.rho = check_positive(rho, "rho")
        self.max_iter = check_positive(max_iter, "max_iter", integer=True)
        self.tol = check_positive(tol, "tol")
        self.n_row_blocks = check_positive(n_row_blocks, "n_row_blocks", integer=True)
        self.n_threads = resolve_threads(n_threads)
        if memory_budget is not None:
            check_positive(memory_budget, "memory_budget", allow_zero=True)
        self.memory_budget = memory_budget
        if precision not in ("float64", "float32"):
            raise ValueError(f"precision must be 'float64' or 'float32', got {precision!r}")
        self.precision = precision
        self.adapt_rho = bool(adapt_rho)
        self.verbose = bool(verbose)
        self.callback = callback
        self.validation = validation
        self.comm = comm
        self.checkpoint = None if checkpoint is None else os.fspath(checkpoint)
        self.checkpoint_every = check_positive(checkpoint_every, "checkpoint_every",
                                               integer=True)

    # ---- setup ----

    def _row_ranges(self, n):
        R = self.n_row_blocks
        if R > n:
            raise ValueError(f"n_row_blocks ({R}) cannot exceed the number of rows ({n})")
        bounds = np.linspace(0, n, R + 1).round().astype(int)
        return [(bounds[i], bounds[i + 1]) for i in range(R)]

    def memory_estimate(self, n, d, m, R=None):
        """The paper's per-process memory estimate (bytes) for n rows in R row blocks
        overall (default: this process's n_row_blocks)."""
        op = self.feature_map.transform_op_
        return paper_estimate_bytes(n, d, m, op.n_features, R or self.n_row_blocks,
                                    op.n_blocks, self.n_threads)

    def _setup(self, X, Y, n):
        """Allocate the state; n is the global number of rows (the scale c uses it)."""
        op = self.feature_map.transform_op_
        m, s = Y.shape[1], op.n_features
        single = self.precision == "float32"
        X = X.astype(np.float32 if single else np.float64, copy=False)
        # preconditioning (module docstring): Z~ = c Z
        self.scale_ = 1.0 / np.sqrt(self.alpha * n) if self.alpha > 0 else 1.0
        budget = self.memory_budget
        if budget is None:       # half the free memory, shared by the ranks of this node
            budget = available_memory_bytes() // (2 * getattr(self, "_ranks_on_node", 1))
        sizes = list(np.diff(op.block_offsets))
        self.row_blocks = []
        for start, stop in self._row_ranges(Y.shape[0]):
            plan = plan_cache(sizes, [op.n_params(j) for j in range(op.n_blocks)],
                              stop - start, budget // self.n_row_blocks, single)
            rows = X[start:stop]          # X is validated; a CSR slice needs its index dtypes
            if sp.issparse(rows):
                rows = with_native_index_dtypes(rows)
            columns = ColumnBlocks(op, rows, single, plan.cache_z, plan.cache_params,
                                   self.scale_)
            self.row_blocks.append(RowBlock(rows, Y[start:stop], columns, s, m))
        self.cache_plan = plan      # every row block gets the same share of the budget
        self.W = np.zeros((s, m))
        self.mu = np.zeros((s, m))
        self.Wbar = np.zeros((s, m))

    # ---- the iteration ----

    def fit(self, X, Y, W0=None):
        """Run ADMM on validated rows X (n_i x d) and coded targets Y (n_i x m).

        Under a communicator every rank calls fit with its own rows (the global problem has
        n = sum of the ranks' rows); every rank ends with the same coef_ and history_.
        W0: optional warm start (s x m, the same on every rank): every iterate starts where a
        fixed point at W0 would put it (see `_warm_start`), so starting at the optimum stops
        at once.  With `checkpoint` set and its file(s) present, the run resumes from them
        instead (W0 is then ignored).
        Returns self; the solution is `self.coef_` (s x m), the run is in `self.history_`.
        """
        dist = self._dist = Distributed(self.comm)
        op = self.feature_map.transform_op_
        X, Y = dist.agree(self._check_data, X, Y)
        n_local, m = Y.shape
        ckpt_file = (checkpoint_file(self.checkpoint, dist.rank, dist.size)
                     if self.checkpoint is not None else None)
        local = (n_local, X.shape[1], m, self.n_row_blocks,
                 ckpt_file is not None and os.path.exists(ckpt_file), self._settings(W0),
                 dist.ranks_on_node())
        ranks = dist.allgather(local)
        if len({r[2] for r in ranks}) > 1:
            raise ValueError(f"the ranks' targets have different numbers of columns "
                             f"{[r[2] for r in ranks]}; code labels with the global classes")
        differ = sorted(k for k, v in ranks[0][5].items() if any(r[5][k] != v for r in ranks))
        if differ:
            raise ValueError(f"the ranks were given different {', '.join(differ)}; every "
                             f"rank must pass the same settings (control flow is collective)")
        self._ranks_on_node = ranks[dist.rank][6]
        n = int(sum(r[0] for r in ranks))
        R = int(sum(r[3] for r in ranks))
        self.n_rows_, self.n_row_blocks_total_ = n, R
        self._row_start = int(sum(r[0] for r in ranks[:dist.rank]))
        self.memory_estimate_ = self.memory_estimate(n, X.shape[1], m, R=R)
        dist.agree(self._setup, X, Y, n)
        resume = [r[4] for r in ranks]
        if any(resume) and not all(resume):
            raise ValueError(f"checkpoint {self.checkpoint!r}: files exist for ranks "
                             f"{[i for i, e in enumerate(resume) if e]} only; the run was "
                             f"started with another number of ranks or files were removed")
        self._ckpt_file = ckpt_file
        self._ckpt_meta = (self._checkpoint_meta(X, Y) if ckpt_file is not None else None)
        if self.verbose and dist.is_root:
            print(f"BlockADMM: n={n} d={X.shape[1]} s={op.n_features} m={m} "
                  f"R={R} ranks={dist.size} C={op.n_blocks} threads={self.n_threads}; "
                  f"paper memory estimate {self.memory_estimate_ / 2**20:.1f} MiB; "
                  f"cached Z blocks {self.cache_plan.n_z_cached}/{op.n_blocks}, "
                  f"parameters {self.cache_plan.n_params_cached}/{op.n_blocks}")
        self.history_ = []
        self.converged_ = False
        rho, first = self.rho, 1
        if all(resume) and resume:
            rho, done = dist.agree(self._resume)
            iterations = dist.allgather(done)
            if len(set(iterations)) > 1:
                raise ValueError(f"checkpoint {self.checkpoint!r}: the ranks' files are from "
                                 f"different iterations {iterations} (a run was killed while "
                                 f"writing); delete them to start afresh")
            first = done + 1
            if self.verbose and dist.is_root:
                print(f"BlockADMM: resuming from checkpoint {self.checkpoint} after "
                      f"iteration {done} (rho={rho:g})")
        elif W0 is not None:
            dist.agree(self._check_warm_start, W0)
            self._warm_start(np.asarray(W0, dtype=np.float64))
        with blas_single_threaded():
            rho = self._iterate(n, rho, first)
        self.rho_ = rho
        self.n_iter_ = len(self.history_)
        if ckpt_file is not None:
            remove_checkpoint(ckpt_file)
        if not self.converged_ and self.n_iter_ == self.max_iter:
            last = self.history_[-1]
            warnings.warn(f"BlockADMM stopped at max_iter={self.max_iter} before reaching "
                          f"tol={self.tol:g} (primal residual {last['primal']:.2e}, dual "
                          f"{last['dual']:.2e}); raise max_iter or tol",
                          ConvergenceWarning, stacklevel=3)
        self.phase_seconds_ = dict(zip(PHASES, np.sum(
            [np.asarray(rb.columns.seconds) for rb in self.row_blocks], axis=0)))
        self.phase_seconds_["prox"] = sum(r["prox_seconds"] for r in self.history_)
        self.phase_seconds_["comm"] = sum(r["comm_seconds"] for r in self.history_)
        return self

    def _settings(self, W0):
        """What decides the collective control flow: identical on every rank."""
        return {"max_iter": self.max_iter, "tol": self.tol, "rho": self.rho,
                "alpha": self.alpha, "adapt_rho": self.adapt_rho,
                "checkpoint_every": self.checkpoint_every,
                "checkpoint": self.checkpoint is not None, "warm start": W0 is not None,
                "callback": self.callback is not None,
                "validation": (None if self.validation is None else
                               getattr(self.validation, "n_partial", "local")),
                "map": self.feature_map.to_dict()}

    def _check_data(self, X, Y):
        op = self.feature_map.transform_op_
        X = check_rows(X, min_rows=1, n_features=op.n_features_in, who="the feature map")
        Y = np.ascontiguousarray(Y, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y must be an n x m array with n = {X.shape[0]} rows, "
                             f"got shape {Y.shape}")
        if not np.isfinite(Y).all():
            raise ValueError("Y contains NaN or infinity")
        return X, Y

    def _iterate(self, n, rho, first):
        """Iterations first..max_iter; returns the final rho.  One Reduce + one Bcast of
        s x m and one Allreduce of a short vector per iteration (see skylite._distributed);
        every stopping and rho decision is taken from reduced numbers, so it is the same on
        every rank."""
        dist = self._dist
        C, R = self.feature_map.transform_op_.n_blocks, self.n_row_blocks_total_
        validation = self.validation
        collective_validation = hasattr(validation, "partial")
        start = time.perf_counter() - (self.history_[-1]["elapsed"] if self.history_ else 0.0)
        for it in range(first, self.max_iter + 1):
            tick = time.perf_counter()
            comm_start = dist.seconds
            guard = Guard()
            with guard:
                prox_seconds, Obar_prev = self._local_step(it, n, rho, C)
                local_Wp = self._sum_blocks("Wp")
            if guard.error is not None:
                if dist.serial:
                    raise guard.error
                local_Wp, prox_seconds, Obar_prev = np.zeros_like(self.W), 0.0, None
            # consensus: Wbar <- (sum over all row blocks of W' + W) / (R + 1)
            Wbar_prev = self.Wbar
            Wp_sum = np.empty_like(self.W) if dist.is_root else None
            dist.reduce_sum(local_Wp, Wp_sum)
            self.Wbar = np.empty_like(self.W)
            reg_value = 0.0
            if dist.is_root:
                with guard:
                    self.Wbar[...] = (Wp_sum + self.W) / (R + 1.0)
                    if self.alpha > 0:
                        reg_value = self.regularizer.value(Wp_sum * (self.scale_ / R))
            if guard.error is not None and dist.serial:
                raise guard.error
            dist.broadcast(self.Wbar)
            sums = np.zeros(_N_SUMS)
            if guard.error is None:
                with guard:
                    sums = self._local_sums(Wbar_prev, Obar_prev, n)
                    sums[_REG] = reg_value
                    if collective_validation:
                        sums = np.concatenate([sums, validation.partial(self.coef_)])
            if guard.error is not None:
                if dist.serial:
                    raise guard.error
                sums = np.zeros(_N_SUMS + (validation.n_partial if collective_validation
                                           else 0))
                sums[_FAILED] = 1.0
            total = dist.allreduce_sum(sums)
            if total[_FAILED] > 0:
                dist.raise_failures(guard.error)
            primal, dual, eps_primal, eps_dual = self._residuals(rho, Wbar_prev, total)
            objective = total[_LOSS] / n
            if self.alpha > 0:
                objective = objective + self.alpha * total[_REG]
            record = {"iteration": it, "objective": objective, "primal": primal,
                      "dual": dual, "rho": rho, "prox_seconds": prox_seconds,
                      "comm_seconds": dist.seconds - comm_start,
                      "seconds": time.perf_counter() - tick,
                      "elapsed": time.perf_counter() - start}
            if not all(np.isfinite([record["objective"], primal, dual])):
                raise ConvergenceError(
                    f"ADMM diverged at iteration {it} (non-finite objective or residuals);"
                    f" the data or rho={rho:g} may be badly scaled")
            if collective_validation:
                record["validation"] = validation.finish(total[_N_SUMS:])
            elif validation is not None:
                record["validation"] = validation(self.coef_)
            self.history_.append(record)
            if self.verbose and dist.is_root:
                print(_format_record(record))
            stop = self._call_back(it, record) if self.callback else False
            if primal <= eps_primal and dual <= eps_dual:
                self.converged_ = True
                break
            if stop:
                break
            if self.adapt_rho and it % 10 == 0:
                rho = self._balance_rho(rho, primal / eps_primal, dual / eps_dual)
            if self._ckpt_file is not None and it % self.checkpoint_every == 0:
                dist.agree(self._write_checkpoint, it, rho)
        return rho

    def _local_step(self, it, n, rho, C):
        """This rank's share of an iteration: the loss prox of its row blocks, the
        regularizer prox (every rank computes W redundantly from the same Wbar and mu, so W
        is identical everywhere), and the column sweep of each row block."""
        prox_seconds = 0.0
        for rb in self.row_blocks:
            t0 = time.perf_counter()
            self.loss.prox(rb.Obar - rb.nu, rb.Y, 1.0 / rho, out=rb.O,
                           n_threads=self.n_threads)
            prox_seconds += time.perf_counter() - t0
        t0 = time.perf_counter()
        if self.alpha > 0:
            c = self.scale_
            self.regularizer.prox(c * (self.Wbar - self.mu), self.alpha * n * c * c / rho,
                                  out=self.W, n_threads=self.n_threads)
            self.W /= c
        else:
            np.subtract(self.Wbar, self.mu, out=self.W)
        prox_seconds += time.perf_counter() - t0
        Obar_prev = [rb.Obar for rb in self.row_blocks]
        for rb in self.row_blocks:
            Delta = rb.O.copy()
            rb.Obar = rb.O * (C / (C + 1.0))
            B = rb.Dbar / (C + 1.0) + rb.nu
            if rb.columns.sweep(self.Wbar, rb.mu_p, rb.U, rb.Wp, B, Delta, rb.Obar,
                                self.n_threads):
                raise ConvergenceError("graph-projection factorization failed: "
                                       "the feature block has non-finite values")
            if not (np.isfinite(rb.Wp).all() and np.isfinite(Delta).all()):
                raise ConvergenceError(
                    f"ADMM produced non-finite values at iteration {it}; the features "
                    f"or rho={rho:g} may be badly scaled")
            rb.Dbar = Delta
            rb.nu += rb.O - rb.Obar
        return prox_seconds, Obar_prev

    def _sum_blocks(self, name):
        """Sum over this rank's row blocks of an s x m state array (C-contiguous)."""
        return np.ascontiguousarray(sum(getattr(rb, name) for rb in self.row_blocks))

    def _call_back(self, it, record):
        """The user's callback, on every rank; under P > 1 ranks one extra 2-float
        Allreduce makes a failure or a stop request on any rank stop every rank."""
        dist = self._dist
        if dist.serial:
            return self.callback(it, record, self.coef_)
        guard = Guard()
        stop = False
        with guard:
            stop = bool(self.callback(it, record, self.coef_))
        flags = dist.allreduce_sum([guard.error is not None, stop])
        if flags[0] > 0:
            dist.raise_failures(guard.error)
        return flags[1] > 0

    def _check_warm_start(self, W0):
        W0 = np.asarray(W0, dtype=np.float64)
        if W0.shape != self.W.shape:
            raise ValueError(f"warm start W0 must have shape {self.W.shape}, got {W0.shape}")
        if not np.isfinite(W0).all():
            raise ValueError("warm start W0 contains NaN or infinity")

    def _warm_start(self, W0):
        """Start at W0 as at a fixed point of the iteration (preconditioned variables):
        W = Wbar = W'_i = W0, O_i = Obar_i = Z_i W0, U_ij = Z_ij^T Z_ij W0_j, and the duals
        a fixed point implies: nu_i = -(1/rho) g_i with g_i a (sub)gradient of V at O_i,
        mu'_ij = Z_ij^T nu_i, mu = -sum_i mu'_i (a sum over every rank's row blocks: one
        Reduce + Bcast).  Starting at the optimum, the run then stops within a few
        iterations."""
        c = self.scale_
        self.W[:] = W0 / c
        self.Wbar[:] = W0 / c
        offsets = self.feature_map.transform_op_.block_offsets
        blocks = [slice(offsets[j], offsets[j + 1]) for j in range(len(offsets) - 1)]
        block = lambda rb, j: c * self.feature_map.block(rb.X, j, n_threads=self.n_threads)
        guard = Guard()
        with guard:
            for rb in self.row_blocks:
                rb.Wp[:] = W0 / c
                partial = [block(rb, j) @ self.W[cols] for j, cols in enumerate(blocks)]
                rb.O[:] = sum(partial)
                rb.Obar[:] = rb.O
                gradient = loss_subgradient(self.loss, rb.O, rb.Y)
                if gradient is not None:
                    rb.nu[:] = -gradient / self.rho
                for j, cols in enumerate(blocks):
                    Zj = block(rb, j)
                    rb.U[cols] = Zj.T @ partial[j]
                    rb.mu_p[cols] = Zj.T @ rb.nu
        self._dist.check(guard.error)
        self.mu -= self._dist.sum_to_all(self._sum_blocks("mu_p"))

    @property
    def coef_(self):
        """The model W (s x m): the regularizer's iterate (exactly sparse for l1); it equals
        the consensus Wbar at convergence."""
        return self.scale_ * (self.W if self.alpha > 0 else self.Wbar)

    def _local_sums(self, Wbar_prev, Obar_prev, n):
        """After the consensus: the consensus duals (against the *new* Wbar), then this
        rank's partial sums for the residuals and the objective (module docstring), in the
        order of the _PRIMAL.._FAILED slots; terms in W, Wbar and mu alone (identical on
        every rank) are added after the Allreduce."""
        for rb in self.row_blocks:
            rb.mu_p += rb.Wp - self.Wbar
        self.mu += self.W - self.Wbar
        sq = lambda a: float(np.vdot(a, a))
        blocks = self.row_blocks
        sums = np.zeros(_N_SUMS)
        sums[_PRIMAL] = sum(sq(rb.Wp - self.Wbar) + sq(rb.O - rb.Obar) for rb in blocks)
        sums[_DUAL] = sum(sq(rb.Obar - prev) for rb, prev in zip(blocks, Obar_prev))
        sums[_NORM_X] = sum(sq(rb.Wp) + sq(rb.O) for rb in blocks)
        sums[_NORM_Z] = sum(sq(rb.Obar) for rb in blocks)
        sums[_NORM_DUAL] = sum(sq(rb.mu_p) + sq(rb.nu) for rb in blocks)
        # F at the local models: the sweep leaves Z_i W'_i = O_i - Dbar_i
        sums[_LOSS] = sum(self.loss.value(rb.O - rb.Dbar, rb.Y, n_threads=self.n_threads)
                          for rb in blocks)
        return sums

    def _residuals(self, rho, Wbar_prev, total):
        """Primal and dual residuals and their tolerances (module docstring) from the
        reduced partial sums `total`."""
        R = self.n_row_blocks_total_
        sq = lambda a: float(np.vdot(a, a))
        primal = total[_PRIMAL] + sq(self.W - self.Wbar)
        dual = rho**2 * ((R + 1) * sq(self.Wbar - Wbar_prev) + total[_DUAL])
        size = (R + 1) * self.Wbar.size + self.n_rows_ * self.Wbar.shape[1]
        floor = 1e-12 * np.sqrt(size)
        scale_primal = max(np.sqrt(total[_NORM_X] + sq(self.W)),
                           np.sqrt((R + 1) * sq(self.Wbar) + total[_NORM_Z]))
        scale_dual = rho * np.sqrt(sq(self.mu) + total[_NORM_DUAL])
        return (np.sqrt(primal), np.sqrt(dual), self.tol * scale_primal + floor,
                self.tol * scale_dual + floor)

    # ---- checkpoints (skylite.admm.checkpoint) ----

    def _checkpoint_meta(self, X, Y):
        """What a resume must match (plus progress fields filled in when writing)."""
        op = self.feature_map.transform_op_
        dist = self._dist
        return {"n": self.n_rows_, "d": int(X.shape[1]), "s": int(op.n_features),
                "m": int(Y.shape[1]), "R": self.n_row_blocks_total_, "P": dist.size,
                "rank": dist.rank, "row_start": self._row_start, "n_local": int(Y.shape[0]),
                "R_local": self.n_row_blocks, "map": self.feature_map.to_dict(),
                "alpha": float(self.alpha), "loss": {"name": self.loss.name,
                                                     "params": self.loss.get_params()},
                "regularizer": self.regularizer.name, "precision": self.precision,
                "data": data_checksum(X, Y)}

    def _write_checkpoint(self, it, rho):
        meta = dict(self._ckpt_meta, iteration=it, rho=rho, history=self.history_)
        blocks = [{name: getattr(rb, name) for name in ("O", "Obar", "nu", "Dbar", "Wp",
                                                         "mu_p", "U")}
                  for rb in self.row_blocks]
        save_checkpoint(self._ckpt_file, meta, {"W": self.W, "mu": self.mu,
                                                "Wbar": self.Wbar}, blocks)

    def _resume(self):
        """Restore the state of this rank's checkpoint file; returns (rho, iteration)."""
        meta, shared, blocks = load_checkpoint(self._ckpt_file, self._ckpt_meta)
        for name, value in shared.items():
            getattr(self, name)[...] = value
        for rb, arrays in zip(self.row_blocks, blocks):
            for name, value in arrays.items():
                setattr(rb, name, np.ascontiguousarray(value, dtype=np.float64))
        self.history_ = list(meta["history"])
        return float(meta["rho"]), int(meta["iteration"])

    def _balance_rho(self, rho, primal, dual, mu=5.0):
        """Residual balancing on residuals relative to their tolerances (as OSQP does):
        rho <- rho sqrt(primal / dual) when one dominates the other by more than mu; the
        scaled duals are rescaled by rho_old / rho_new."""
        if not (primal > mu * dual or dual > mu * primal) or dual == 0 or primal == 0:
            return rho
        scale = float(np.clip(np.sqrt(primal / dual), 1 / 100.0, 100.0))
        self.mu /= scale
        for rb in self.row_blocks:
            rb.mu_p /= scale
            rb.nu /= scale
        return rho * scale


def loss_subgradient(loss, O, Y):
    """A (sub)gradient of sum_i V(y_i, o_i) at O for skylite's losses (None if unknown)."""
    name = getattr(loss, "name", None)
    if name == "squared":
        return O - Y
    if name == "lad":
        return np.sign(O - Y)
    if name == "hinge":
        return -Y * (Y * O < 1)
    if name == "logistic":
        from ..prox.coding import softmax
        return softmax(O) - Y
    return None


def _format_record(r):
    line = (f"iter {r['iteration']:4d}  objective {r['objective']:.6e}  primal {r['primal']:.2e}"
            f"  dual {r['dual']:.2e}  rho {r['rho']:.2g}")
    if "validation" in r:
        line += f"  validation {r['validation']:.4f}"
    return line + f"  {r['seconds']:.2f}s ({r['elapsed']:.1f}s)"
