"""BlockADMM: block-splitting ADMM for kernel machines on implicit random features.

Solves  minimize_W  F(W) = (1/n) sum_i V(y_i, W^T z(x_i)) + alpha r(W)   (W: s x m)

over an R x C grid of blocks Z_ij = T[X_i, j] of the feature matrix, which is never formed
(docs/engine.md; Parikh & Boyd 2014, reorganized as in Sindhwani & Avron).  The iteration
itself, its state, residuals and rho balancing are in `skylite.admm.iteration`; Anderson
acceleration is in `skylite.admm.acceleration`; the options in `skylite.admm.settings`; the
memory plan in `skylite.admm.memory`; the native sweeps in `_column_sweep` and `_row_sweep`.
This module is the driver: it has the ranks agree on the settings, plans the memory, sets up
the state and the column blocks, runs the iterations under fault guards, reduces the
per-iteration statistics (`run.SumsLayout`), stops, adapts rho, calls back, records the
history and writes checkpoints.

MPI (`comm=`, docs/mpi.md).  Each rank holds its own row blocks; R counts every rank's blocks
and n every rank's rows (c and the loss scale 1/n are global).  Per iteration a rank sends
one Reduce of its sum of W'_i (s x m) to the root, which forms Wbar and broadcasts it (Bcast:
bitwise the same Wbar everywhere); W and mu are then computed redundantly, and identically,
on every rank.  Everything else (residual norms, objective, validation, Anderson's inner
products, the failure flag) is one Allreduce of a short vector of partial sums, from which
every rank takes the same decisions.  The serial path runs the same code on a null
communicator.
"""
import os
import time
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._distributed import Distributed, Guard
from .._machine import available_memory_bytes, format_bytes
from .._threads import blas_single_threaded, resolve_threads
from .._validation import check_rows, with_native_index_dtypes
from ._column_blocks import PHASES
from ._column_sweep import ColumnSweep
from ._row_sweep import RowSweep
from .acceleration import AndersonAcceleration
from .checkpoint import (checkpoint_file, data_checksum, load_checkpoint, remove_checkpoint,
                         save_checkpoint)
from .iteration import (ConvergenceError, Iteration, RowData, State, balanced_rho,
                        residuals)
from .memory import WideInputWarning, plan_run
from .run import SumsLayout, as_python_numbers, collective_callback, format_record
from .settings import EngineSettings

__all__ = ["BlockADMM", "ConvergenceError", "ConvergenceWarning"]

_OPTIONS = frozenset(EngineSettings.names())
_N_SUMS = len(Iteration.SUMS)


class ConvergenceWarning(UserWarning):
    """max_iter ended the run before the residuals met tol."""


class BlockADMM:
    """Block-splitting ADMM over a fitted feature map (see the module docstring).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.FeatureMap
        The map z whose column blocks Z_j = z(X)_j the engine regenerates (or caches).
    loss : skylite.prox.Loss
        The loss V.
    regularizer : skylite.prox.Regularizer
        The regularizer r.
    settings : skylite.admm.settings.EngineSettings or float
        Every option of the run (alpha, rho, max_iter, tol, relaxation, acceleration,
        anderson_memory, n_row_blocks, sweep, n_threads, memory_budget, precision,
        adapt_rho, verbose, checkpoint, checkpoint_every), each with its default and
        meaning in `EngineSettings`.  A number is alpha, with the other options given as
        keywords (``BlockADMM(fmap, loss, reg, 1e-3, max_iter=50)``).
    callback : callable or None, default=None
        callback(iteration, record, W) -> bool or None; True stops the run.  Under a
        communicator it is called on every rank (with identical arguments); an exception or
        a stop request on any rank stops every rank.
    validation : callable, object or None, default=None
        callable(W) -> float, scored every iteration into ``history_``; or an object with
        `partial(W)` -> float64 vector of `n_partial` partial sums over this rank's
        validation rows and `finish(summed vector)` -> float (the "validation" entry) or a
        dict of named values (entries of the record, e.g. "validation" and
        "validation_loss"), which the engine reduces in its per-iteration Allreduce (global
        validation scores under MPI).
    comm : mpi4py communicator or None, default=None
        Each rank passes its own rows to `fit`; the ranks' row blocks together form the
        R = sum of their n_row_blocks blocks, in rank order (see skylite._distributed and
        docs/mpi.md).
    **options
        With a number for `settings`: the other options of EngineSettings.

    Attributes
    ----------
    settings : EngineSettings
        The settings in use, with acceleration and relaxation resolved for the loss
        (`EngineSettings.resolved`); each option is also an attribute of the engine
        (``engine.relaxation``), n_threads resolved to the thread count.

    The memory plan (skylite.admm.memory): every process counts its working memory before it
    allocates anything, splits its rows into row blocks for the column sweep when one block
    does not fit, and refuses a run that cannot fit with skylite.admm.memory.MemoryRefused (a
    MemoryError) saying what to change.  With `checkpoint` set, the full state (and
    Anderson's memory) is written every `checkpoint_every` iterations (one file per rank,
    skylite.admm.checkpoint); a `fit` that finds the file(s) resumes from them and reaches
    the uninterrupted run's model bitwise; they are removed when `fit` returns normally.
    """

    def __init__(self, feature_map, loss, regularizer, settings=None, /, *, callback=None,
                 validation=None, comm=None, **options):
        if not isinstance(settings, EngineSettings):
            if settings is not None:
                options["alpha"] = settings
            settings = EngineSettings(**options)
        elif options:
            raise TypeError(f"options {sorted(options)} given beside an EngineSettings")
        self.feature_map = feature_map
        self.loss = loss
        self.regularizer = regularizer
        self.settings = settings.resolved(loss)
        self.n_threads = resolve_threads(settings.n_threads)
        self.callback = callback
        self.validation = validation
        self.comm = comm

    def __getattr__(self, name):
        """The options of `settings` read as attributes (``engine.relaxation``)."""
        if name in _OPTIONS and "settings" in self.__dict__:
            return getattr(self.__dict__["settings"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- setup ----

    def _plan_memory(self, X, Y, ranks_on_node):
        """This process's memory plan (skylite.admm.memory.plan_run), before anything is
        allocated: sets row_sweep_, n_row_blocks_ and memory_footprint_, or raises
        MemoryRefused."""
        plan, wide = plan_run(self.feature_map, self.regularizer, self.settings,
                              self.n_threads, X, Y.shape[1],
                              available_memory_bytes() // ranks_on_node)
        if wide:
            warnings.warn(wide, WideInputWarning, stacklevel=4)
        self._plan = plan
        self.row_sweep_, self.n_row_blocks_ = plan.row_sweep, len(plan.ranges)
        self.memory_footprint_ = plan.footprint

    def _setup(self, X, Y, n):
        """Validate the targets for the loss and allocate the state and the column blocks
        by the memory plan (`_plan_memory`); n is the global number of rows (the scale c
        uses it)."""
        self.loss.check_targets(Y)
        op = self.feature_map.transform_op_
        m, s = Y.shape[1], op.n_features
        single = self.settings.precision == "float32"
        ranges, block_rows = self._plan.ranges, self._plan.block_rows
        X = X.astype(np.float32 if single else np.float64, copy=False)
        self.scale_ = (1.0 / np.sqrt(self.settings.alpha * n) if self.settings.alpha > 0
                       else 1.0)
        caches = self._plan.caches(op, single)
        self.rows_ = []
        for (start, stop), plan in zip(ranges, caches):
            rows = X[start:stop]          # X is validated; a CSR slice needs its index dtypes
            if sp.issparse(rows):
                rows = with_native_index_dtypes(rows)
            sweep = RowSweep if self.row_sweep_ else ColumnSweep
            columns = sweep(op, rows, single, plan.cache_z, plan.cache_params, self.scale_)
            self.rows_.append(RowData(rows, Y[start:stop], columns))
        self.cache_plan = plan      # every row block gets the same share of the budget
        self.memory_estimate_ = self.memory_footprint_.total + plan.used * len(ranges)
        self.state_ = State(s, m, block_rows, m if self.settings.relaxation == 1.0 else 2 * m)
        self.iteration_ = Iteration(self.loss, self.regularizer, self.settings.alpha,
                                    self.scale_, n, op.n_blocks, self.settings.relaxation,
                                    self.n_threads,
                                    row_sweep=self.row_sweep_)
        self.accelerator_ = None
        if self.settings.acceleration == "anderson":
            state, rows, nt = self.state_, self.rows_, self.n_threads
            self.accelerator_ = AndersonAcceleration(
                self.settings.anderson_memory, whiten=lambda f: state.whiten(f, rows, nt))

    # ---- the run ----

    def fit(self, X, Y, W0=None):
        """Run ADMM on validated rows X and coded targets Y.

        Under a communicator every rank calls fit with its own rows (the global problem has
        n = sum of the ranks' rows); every rank ends with the same ``coef_`` and
        ``history_``.  With `checkpoint` set and its file(s) present, the run resumes from
        them (W0 is then ignored).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_i, d)
            This process's rows, validated.
        Y : ndarray of shape (n_i, m)
            Their targets, coded for the loss (skylite.prox.coding).
        W0 : ndarray of shape (s, m) or None, default=None
            A warm start, the same on every rank: every iterate starts where a fixed point
            at W0 would put it (see `_warm_start`), so starting at the optimum stops at once.

        Returns
        -------
        self : BlockADMM
            The solution is ``self.coef_`` (s x m), the run is in ``self.history_``.
        """
        dist = self._dist = Distributed(self.comm)
        op = self.feature_map.transform_op_
        X, Y = dist.agree(self._check_data, X, Y)
        n_local, m = Y.shape
        ckpt_file = (checkpoint_file(self.settings.checkpoint, dist.rank, dist.size)
                     if self.settings.checkpoint is not None else None)
        on_node = dist.ranks_on_node()
        dist.agree(self._plan_memory, X, Y, on_node)
        ranks = dist.allgather(_RankInfo(
            n_local, X.shape[1], m, self.n_row_blocks_,
            ckpt_file is not None and os.path.exists(ckpt_file), self._settings(W0)))
        if len({r.m for r in ranks}) > 1:
            raise ValueError(f"the ranks' targets have different numbers of columns "
                             f"{[r.m for r in ranks]}; code labels with the global classes")
        differ = sorted(k for k, v in ranks[0].settings.items()
                        if any(r.settings[k] != v for r in ranks))
        if differ:
            raise ValueError(f"the ranks were given different {', '.join(differ)}; every "
                             f"rank must pass the same settings (control flow is collective)")
        n = int(sum(r.n_rows for r in ranks))
        R = int(sum(r.n_row_blocks for r in ranks))
        self.n_rows_, self.n_row_blocks_total_ = n, R
        self._row_start = int(sum(r.n_rows for r in ranks[:dist.rank]))
        dist.agree(self._setup, X, Y, n)
        resume = [r.resuming for r in ranks]
        if any(resume) and not all(resume):
            raise ValueError(f"checkpoint {self.settings.checkpoint!r}: files exist for ranks "
                             f"{[i for i, e in enumerate(resume) if e]} only; the run was "
                             f"started with another number of ranks or files were removed")
        self._ckpt_file = ckpt_file
        self._ckpt_meta = (self._checkpoint_meta(X, Y) if ckpt_file is not None else None)
        if self.settings.verbose and dist.is_root:
            print(f"BlockADMM: n={n} d={X.shape[1]} s={op.n_features} m={m} "
                  f"R={R} ranks={dist.size} C={op.n_blocks} threads={self.n_threads} "
                  f"{self.settings.describe()}; "
                  f"{'row' if self.row_sweep_ else 'column'} sweep; "
                  f"rows per row block <= {max(b - a for a, b in self._plan.ranges):,}; "
                  f"memory {self.memory_footprint_.describe()} + caches "
                  f"{format_bytes(self.memory_estimate_ - self.memory_footprint_.total)}"
                  f" (Z blocks {self.cache_plan.n_z_cached}/{op.n_blocks}, parameters "
                  f"{self.cache_plan.n_params_cached}/{op.n_blocks})")
        self.history_ = []
        self.converged_ = False
        rho, first = self.settings.rho, 1
        if all(resume) and resume:
            rho, done = dist.agree(self._resume)
            iterations = dist.allgather(done)
            if len(set(iterations)) > 1:
                raise ValueError(f"checkpoint {self.settings.checkpoint!r}: the ranks' files "
                                 f"are from different iterations {iterations} (a run was killed "
                                 f"while writing); delete them to start afresh")
            first = done + 1
            if self.settings.verbose and dist.is_root:
                print(f"BlockADMM: resuming from checkpoint {self.settings.checkpoint} after "
                      f"iteration {done} (rho={rho:g})")
        elif W0 is not None:
            dist.agree(self._check_warm_start, W0)
            self._warm_start(np.asarray(W0, dtype=np.float64))
        with blas_single_threaded():
            rho = self._iterate(rho, first)
        self.rho_ = rho
        self.n_iter_ = len(self.history_)
        if ckpt_file is not None:
            remove_checkpoint(ckpt_file)
        if not self.converged_ and self.n_iter_ == self.settings.max_iter:
            last = self.history_[-1]
            warnings.warn(f"BlockADMM stopped at max_iter={self.settings.max_iter} before "
                          f"reaching tol={self.settings.tol:g} (primal residual "
                          f"{last['primal']:.2e}, dual {last['dual']:.2e}); raise max_iter "
                          f"or tol",
                          ConvergenceWarning, stacklevel=3)
        if self.iteration_.unconverged_rows:
            self.loss._unconverged(self.iteration_.unconverged_rows, n_local * self.n_iter_)
        self.phase_seconds_ = dict(zip(PHASES, np.sum(
            [np.asarray(data.columns.seconds) for data in self.rows_], axis=0)))
        for name in ("prox", "comm", "acceleration"):
            self.phase_seconds_[name] = sum(r[f"{name}_seconds"] for r in self.history_)
        return self

    def _settings(self, W0):
        """What decides the collective control flow: identical on every rank."""
        return {**self.settings.collective(), "warm start": W0 is not None,
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

    def _iterate(self, rho, first):
        """Iterations first..max_iter; returns the final rho.  Per iteration: the step (with
        its consensus Reduce + Bcast), one Allreduce of the partial sums, then the decisions
        every rank takes alike: stop, Anderson's next point, rho, checkpoint."""
        dist, state, accel = self._dist, self.state_, self.accelerator_
        R, n = self.n_row_blocks_total_, self.n_rows_
        validation = self.validation
        collective_validation = hasattr(validation, "partial")
        start = time.perf_counter() - (self.history_[-1]["elapsed"] if self.history_ else 0.0)
        for it in range(first, self.settings.max_iter + 1):
            tick = time.perf_counter()
            comm_start = dist.seconds
            x_prev = (state.local.copy(), state.shared.copy()) if accel else None
            guard, collective = Guard(), _Consensus(dist, R, state.Wbar.shape)
            info = None
            with guard:
                info = self.iteration_.step(state, self.rows_, rho, collective)
            if guard.error is not None and dist.serial:
                raise guard.error
            collective.complete(guard)        # a rank that failed early still takes part
            layout = SumsLayout(_N_SUMS, validation.n_partial if collective_validation else 0,
                                 accel.n_dots if accel else 0)
            parts = []
            if guard.error is None:
                with guard:
                    parts.append(self.iteration_.local_sums(state, self.rows_, info))
                    if collective_validation:
                        parts.append(validation.partial(self.coef_))
                    if accel:
                        parts.append(accel.residual_dots(x_prev, state))
            if guard.error is not None and dist.serial:
                raise guard.error
            total = dist.allreduce_sum(layout.pack(None if guard.error else parts))
            if total[layout.failed] > 0:
                dist.raise_failures(guard.error)
            primal, dual, eps_primal, eps_dual = residuals(state, info, total, rho,
                                                           self.settings.tol, R, n)
            record = {"iteration": it, "objective": self.iteration_.objective(total, state),
                      "primal": primal, "dual": dual, "rho": rho,
                      "prox_seconds": info.prox_seconds,
                      "comm_seconds": dist.seconds - comm_start}
            if not all(np.isfinite([record["objective"], primal, dual])):
                raise ConvergenceError(
                    f"ADMM diverged at iteration {it} (non-finite objective or residuals);"
                    f" the data or rho={rho:g} may be badly scaled")
            if collective_validation:
                scores = validation.finish(total[layout.validation])
                record.update(scores if isinstance(scores, dict) else {"validation": scores})
            elif validation is not None:
                record["validation"] = validation(self.coef_)
            converged = primal <= eps_primal and dual <= eps_dual
            as_python_numbers(record)   # what follows adds Python floats and strings only
            stop = (collective_callback(dist, self.callback, it, record, self.coef_)
                    if self.callback else False)
            accel_tick = time.perf_counter()
            if accel and not (converged or stop):
                record["acceleration"] = accel.next_point(state, total[layout.dots])
            if self.settings.adapt_rho and it % 10 == 0 and not (converged or stop):
                new_rho = balanced_rho(rho, primal / eps_primal, dual / eps_dual)
                if new_rho != rho:
                    state.rescale_duals(new_rho / rho)
                    rho = new_rho
                    if accel:
                        accel.reset()
            record["acceleration_seconds"] = time.perf_counter() - accel_tick
            record["seconds"] = time.perf_counter() - tick
            record["elapsed"] = time.perf_counter() - start
            self.history_.append(record)
            if self.settings.verbose and dist.is_root:
                print(format_record(record))
            if converged:
                self.converged_ = True
                break
            if stop:
                break
            if self._ckpt_file is not None and it % self.settings.checkpoint_every == 0:
                dist.agree(self._write_checkpoint, it, rho)
        return rho

    # ---- warm start ----

    def _check_warm_start(self, W0):
        W0 = np.asarray(W0, dtype=np.float64)
        if W0.shape != self.state_.W.shape:
            raise ValueError(f"warm start W0 must have shape {self.state_.W.shape}, "
                             f"got {W0.shape}")
        if not np.isfinite(W0).all():
            raise ValueError("warm start W0 contains NaN or infinity")

    def _warm_start(self, W0):
        """Start at W0 as at a fixed point of the iteration (preconditioned variables):
        W = Wbar = W'_i = W0, O_i = Obar_i = Z_i W0, U_ij = Z_ij^T Z_ij W0_j, Dbar_i = 0, and
        the duals a fixed point implies: nu_i = -(1/rho) g_i with g_i a (sub)gradient of V
        at O_i, mu'_ij = Z_ij^T nu_i, mu = -sum_i mu'_i (a sum over every rank's row blocks:
        one Reduce + Bcast).  Starting at the optimum, the run then stops within a few
        iterations."""
        c, state = self.scale_, self.state_
        state.W[:] = W0 / c
        state.Wbar[:] = W0 / c
        offsets = self.feature_map.transform_op_.block_offsets
        blocks = [slice(offsets[j], offsets[j + 1]) for j in range(len(offsets) - 1)]
        block = lambda X, j: c * self.feature_map.block(X, j, n_threads=self.n_threads)
        guard = Guard()
        with guard:
            for rb, data in zip(state.blocks, self.rows_):
                rb.Wp[:] = W0 / c
                partial = [block(data.X, j) @ state.W[cols] for j, cols in enumerate(blocks)]
                rb.O[:] = sum(partial)
                rb.Obar[:] = rb.O
                rb.nu[:] = -self.loss.subgradient(rb.O, data.Y) / self.settings.rho
                for j, cols in enumerate(blocks):
                    Zj = block(data.X, j)
                    rb.U[cols] = Zj.T @ partial[j]
                    rb.mu_p[cols] = Zj.T @ rb.nu
        self._dist.check(guard.error)
        state.mu -= self._dist.sum_to_all(np.ascontiguousarray(
            sum(rb.mu_p for rb in state.blocks)))

    @property
    def coef_(self):
        """The model W (s x m): the regularizer's iterate (exactly sparse for l1); it equals
        the consensus Wbar at convergence."""
        state = self.state_
        return self.scale_ * (state.W if self.settings.alpha > 0 else state.Wbar)

    # ---- checkpoints (skylite.admm.checkpoint) ----

    def _checkpoint_meta(self, X, Y):
        """What a resume must match (plus progress fields filled in when writing)."""
        op = self.feature_map.transform_op_
        dist = self._dist
        return {"n": self.n_rows_, "d": int(X.shape[1]), "s": int(op.n_features),
                "m": int(Y.shape[1]), "R": self.n_row_blocks_total_, "P": dist.size,
                "rank": dist.rank, "row_start": self._row_start, "n_local": int(Y.shape[0]),
                "R_local": self.n_row_blocks_, "map": self.feature_map.to_dict(),
                "loss": {"name": self.loss.name, "params": self.loss.get_params()},
                "regularizer": self.regularizer.name, **self.settings.checkpointed(),
                "data": data_checksum(X, Y)}

    def _write_checkpoint(self, it, rho):
        arrays = self.state_.arrays()
        meta = dict(self._ckpt_meta, iteration=it, rho=rho, history=self.history_,
                    unconverged_rows=self.iteration_.unconverged_rows)
        if self.accelerator_ is not None:
            arrays.update(self.accelerator_.arrays())
            meta["anderson"] = self.accelerator_.meta()
        save_checkpoint(self._ckpt_file, meta, arrays)

    def _resume(self):
        """Restore the state (and Anderson's memory) of this rank's checkpoint file;
        returns (rho, iteration)."""
        meta, arrays = load_checkpoint(self._ckpt_file, self._ckpt_meta)
        self.state_.load(arrays)
        if self.accelerator_ is not None:
            self.accelerator_.load(arrays, meta["anderson"])
        self.iteration_.unconverged_rows = int(meta["unconverged_rows"])
        self.history_ = list(meta["history"])
        return float(meta["rho"]), int(meta["iteration"])


class _RankInfo(NamedTuple):
    """What each rank tells the others before the run (one allgather)."""
    n_rows: int             # its rows
    d: int                  # input features
    m: int                  # outputs
    n_row_blocks: int       # its row blocks
    resuming: bool          # its checkpoint file exists
    settings: dict          # BlockADMM._settings: what must be the same on every rank


class _Consensus:
    """The consensus of one iteration over every rank: Wbar = (sum of every rank's W'^ sums
    + W^) / (R + 1), by a Reduce to the root and a Bcast (bitwise the same Wbar on every
    rank).  `complete` makes a rank whose step failed before the consensus take part in it
    all the same, so that no rank waits for it."""

    def __init__(self, dist, R, shape):
        self.dist, self.R, self.shape, self.done = dist, R, shape, False

    def __call__(self, local_sum, W_hat):
        dist = self.dist
        self.done = True
        total = np.empty_like(local_sum) if dist.is_root else None
        dist.reduce_sum(local_sum, total)
        Wbar = np.empty_like(local_sum)
        if dist.is_root:
            Wbar[...] = (total + W_hat) / (self.R + 1.0)
        dist.broadcast(Wbar)
        return Wbar

    def complete(self, guard):
        if not self.done and guard.error is not None:
            dist = self.dist
            dummy = np.zeros(self.shape)
            dist.reduce_sum(dummy, np.empty(self.shape) if dist.is_root else None)
            dist.broadcast(dummy)
