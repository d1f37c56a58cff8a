"""Block-splitting ADMM for kernel machines on implicit features, as a method of the driver.

Solves  minimize_W  F(W) = (1/n) sum_i V(y_i, W^T z(x_i)) + alpha r(W)   (W: s x m)

over an R x C grid of blocks Z_ij = T[X_i, j] of the feature matrix, which is never formed
(docs/engine.md; Parikh & Boyd 2014, reorganized as in Sindhwani & Avron).  `ADMM` is the
method (`skylite.admm.driver.Method`): its setup (memory plan, state, column blocks), its step
(`skylite.admm.iteration`: the update rules, residuals and rho balancing), its sums, record,
convergence test and adaptation (rho balancing, Anderson acceleration from
`skylite.admm.acceleration`), its checkpointed state and its starts
(`skylite.admm.starts`).  The driver (`skylite.admm.driver.Driver`) runs it: rank
agreement, the loop, fault guards, the per-iteration Allreduce, validation, callback,
history, stopping and checkpoints.
`BlockADMM` is the engine's public face: the method and the driver in one object with the
fitted attributes of the run.

MPI (`comm=`, docs/mpi.md).  Each rank holds its own row blocks; R counts every rank's blocks
and n every rank's rows (c and the loss scale 1/n are global).  Per iteration a rank sends
one Reduce of its sum of W'_i (s x m) to the root, which forms Wbar and broadcasts it (Bcast:
bitwise the same Wbar everywhere); W and mu are then computed redundantly, and identically,
on every rank.  Everything else (residual norms, objective, validation, Anderson's inner
products, the failure flag) is the driver's one Allreduce of a short vector of partial sums,
from which every rank takes the same decisions.
"""
import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .._machine import format_bytes
from .._threads import resolve_threads
from .._validation import with_native_index_dtypes
from ..prox import StackedLoss, get_loss, get_regularizer
from ..sketch._base import operator_for_rows
from ._column_blocks import PHASES
from ._column_sweep import ColumnSweep
from ._row_sweep import RowSweep
from .acceleration import AndersonAcceleration
from .driver import ConvergenceWarning, Driver, Method
from .iteration import (ConvergenceError, Iteration, RowData, State, balanced_rho,
                        preconditioning, residuals)
from .memory import WideInputWarning, agreed_cache_precision, plan_run
from .settings import EngineSettings
from .starts import start_at_model

__all__ = ["BlockADMM", "ADMM", "ConvergenceError", "ConvergenceWarning"]

_OPTIONS = frozenset(EngineSettings.names())


class ADMM(Method):
    """Block-splitting ADMM as a method of `skylite.admm.driver.Driver` (module docstring).

    Parameters
    ----------
    feature_map : fitted skylite.sketch.FeatureMap
        The map z whose column blocks Z_j = z(X)_j are regenerated (or cached).
    loss : skylite.prox.Loss
        The loss V.
    regularizer : skylite.prox.Regularizer
        The regularizer r.
    settings : EngineSettings
        Resolved for the loss (`EngineSettings.resolved`); the method reads alpha, rho,
        relaxation, acceleration, anderson_memory, n_row_blocks, sweep, memory_budget,
        precision, adapt_rho and tol.
    n_threads : int
        Threads of the native code.
    """

    name = "BlockADMM"
    n_sums = len(Iteration.SUMS)

    def __init__(self, feature_map, loss, regularizer, settings, n_threads):
        self.feature_map, self.loss, self.regularizer = feature_map, loss, regularizer
        self.settings, self.n_threads = settings, n_threads

    # ---- setup ----

    @property
    def n_units(self):
        """This rank's row blocks (the driver sums them over the ranks into R)."""
        return self.n_row_blocks_

    @property
    def nan_targets(self):
        """NaN in Y marks the rows each problem of a stacked loss leaves out
        (skylite.prox.StackedLoss, which checks the targets)."""
        return isinstance(self.loss, StackedLoss)

    @property
    def n_features_in(self):
        """The columns the feature map takes (`Method.check_data` checks X against it)."""
        return self.feature_map.transform_op_.n_features_in

    def plan(self, X, Y, available):
        """This process's memory plan (skylite.admm.memory.plan_run), before anything is
        allocated, with precision "auto" made for X's dtype: sets row_sweep_, n_row_blocks_
        and memory_footprint_, or raises MemoryRefused."""
        self.settings = self.settings.for_rows(X.dtype == np.float32)
        plan, wide = plan_run(self.feature_map, self.regularizer, self.settings,
                              self.n_threads, X, Y.shape[1], available)
        if wide:
            warnings.warn(wide, WideInputWarning, stacklevel=5)
        self._plan = plan
        self.row_sweep_, self.n_row_blocks_ = plan.row_sweep, len(plan.ranges)
        self.memory_footprint_ = plan.footprint

    def collective_settings(self):
        return {**{k: v for k, v in self.settings.collective().items()
                   if k not in ("max_iter", "checkpoint", "checkpoint_every")},
                "map": self.feature_map.to_dict()}

    def setup(self, X, Y, n, n_row_blocks_total, dist):
        """Validate the targets for the loss and allocate the state and the column blocks
        by the memory plan (`plan`); n is the global number of rows (the scale c uses it)."""
        # first, before anything can fail (a collective under MPI)
        self.cache_precision_ = agreed_cache_precision(self._plan, self.settings, dist)
        bfloat16 = self.cache_precision_ == "bfloat16"
        self.loss.check_targets(Y)
        op = self.feature_map.transform_op_
        single = self.settings.precision == "float32"
        ranges = self._plan.ranges
        X = X.astype(np.float32 if single else np.float64, copy=False)
        self.n_rows_, self.n_row_blocks_total_ = n, n_row_blocks_total
        self.scale_, self._kappa2 = preconditioning(self.settings.alpha, n, self.loss)
        caches = self._plan.caches(single, self.cache_precision_)
        self.rows_ = []
        for (start, stop), plan in zip(ranges, caches):
            rows = X[start:stop]          # X is validated; a CSR slice needs its index dtypes
            if sp.issparse(rows):
                rows = with_native_index_dtypes(rows)
            sweep = RowSweep if self.row_sweep_ else ColumnSweep
            columns = sweep(*operator_for_rows(op, rows), single, plan.cache_z,
                            plan.cache_params, self.scale_, bfloat16=bfloat16)
            self.rows_.append(RowData(rows, Y[start:stop], columns))
        self.cache_plan = plan      # every row block gets the same share of the budget
        self.memory_estimate = self.memory_footprint_.total + plan.used * len(ranges)
        self._set_up, self._m = list(self.rows_), Y.shape[1]
        self._new_problem()
        self._dist = dist

    def _new_problem(self, kept=None):
        """The state, update rules and accelerator of a cold start at `settings.alpha`, or
        of a start from `kept` = (state, rho)."""
        op, s = self.feature_map.transform_op_, self.feature_map.transform_op_.n_features
        m, block_rows = self._m, [data.Y.shape[0] for data in self.rows_]
        if kept is None:
            self.rho = self.settings.rho
            self.state_ = State(s, m, block_rows,
                                m if self.settings.relaxation == 1.0 else 2 * m)
        else:
            self.state_, self.rho = kept
        self.iteration_ = Iteration(self.loss, self.regularizer, self.settings.alpha,
                                    self.scale_, self.n_rows_, op.n_blocks,
                                    self.settings.relaxation, self.n_threads,
                                    row_sweep=self.row_sweep_, kappa2=self._kappa2)
        self.accelerator_ = None
        if self.settings.acceleration == "anderson":
            state, rows, nt = self.state_, self.rows_, self.n_threads
            self.accelerator_ = AndersonAcceleration(
                self.settings.anderson_memory, whiten=lambda f: state.whiten(f, rows, nt))

    def set_problem(self, alpha=None, row_blocks=None, keep_state=False):
        """Make the set-up method solve another problem on the same setup (then
        `Driver.rerun`): one setup, many solves.  alpha: another alpha > 0 (None: the
        same); row_blocks: the indices of this rank's set-up row blocks the solve uses, e.g.
        a cross-validation fold's training rows (None: all of them).  The rows, the memory
        plan and the cached feature blocks are kept, rescaled to the new c (`preconditioning`
        of alpha and n, n: the rows of the blocks used, over every rank); the factors are
        rebuilt on their first visit.  The state starts cold (a warm start moves it), or with
        keep_state (the same row blocks as the last solve) it is the last solve's whole
        state, iterates, duals and rho, in the new c's variables
        (`State.rescale_preconditioning`).  Collective."""
        dist = self._dist
        alpha, blocks = dist.agree(self._checked_problem, alpha, row_blocks, keep_state)
        old_scale = self.scale_
        self.rows_ = [self._set_up[i] for i in blocks]
        n, R = dist.sum_to_all([sum(data.Y.shape[0] for data in self.rows_), len(blocks)])
        if n == 0:
            raise ValueError("row_blocks selects no row on any rank")
        self.n_rows_, self.n_row_blocks_total_ = int(n), int(R)
        self.n_row_blocks_ = len(blocks)
        self.settings = replace(self.settings, alpha=alpha)
        self.scale_, self._kappa2 = preconditioning(alpha, self.n_rows_, self.loss)
        for data in self.rows_:
            data.columns.rescale(self.scale_)
        if keep_state:
            self.state_.rescale_preconditioning(self.scale_ / old_scale)
            self._new_problem(kept=(self.state_, self.rho))
        else:
            self._new_problem()

    def _checked_problem(self, alpha, row_blocks, keep_state):
        alpha = self.settings.alpha if alpha is None else EngineSettings.check("alpha", alpha)
        if not alpha > 0:
            raise ValueError(f"another solve on the same setup needs alpha > 0, got {alpha}")
        count = len(self._set_up)
        blocks = list(range(count)) if row_blocks is None else sorted(set(row_blocks))
        if any(not isinstance(i, (int, np.integer)) or not 0 <= i < count for i in blocks):
            raise ValueError(f"row_blocks must be indices of the {count} row blocks set up on "
                             f"this rank, got {row_blocks!r}")
        if keep_state and [self._set_up[i] for i in blocks] != self.rows_:
            raise ValueError("keep_state continues the last solve: it needs the same "
                             "row_blocks")
        return alpha, blocks

    def header(self, dist):
        op = self.feature_map.transform_op_
        X0 = self.rows_[0].X
        return (f"BlockADMM: n={self.n_rows_} d={X0.shape[1]} s={op.n_features} "
                f"m={self.state_.W.shape[1]} R={self.n_row_blocks_total_} ranks={dist.size} "
                f"C={op.n_blocks} threads={self.n_threads} {self.settings.describe()}; "
                f"{'row' if self.row_sweep_ else 'column'} sweep; "
                f"rows per row block <= {max(b - a for a, b in self._plan.ranges):,}; "
                f"memory {self.memory_footprint_.describe()} + caches "
                f"{format_bytes(self.memory_estimate - self.memory_footprint_.total)}"
                f" (Z blocks {self.cache_plan.n_z_cached}/{op.n_blocks} in "
                f"{self.cache_precision_}, parameters "
                f"{self.cache_plan.n_params_cached}/{op.n_blocks})")

    def checkpoint_meta(self):
        op = self.feature_map.transform_op_
        return {"s": int(op.n_features), "R": self.n_row_blocks_total_,
                "R_local": self.n_row_blocks_, "map": self.feature_map.to_dict(),
                "loss": {"name": self.loss.name, "params": self.loss.get_params()},
                "regularizer": self.regularizer.name, **self.settings.checkpointed()}

    # ---- one iteration ----

    @property
    def n_dots(self):
        """Anderson's partial dots this iteration (their number grows with its memory)."""
        return self.accelerator_.n_dots if self.accelerator_ else 0

    def before_step(self):
        state = self.state_
        return (state.local.copy(), state.shared.copy()) if self.accelerator_ else None

    def step(self, dist):
        self._consensus = _Consensus(dist, self.n_row_blocks_total_, self.state_.Wbar.shape)
        return self.iteration_.step(self.state_, self.rows_, self.rho, self._consensus)

    def complete_step(self, error):
        self._consensus.complete(error)

    def local_sums(self, info):
        return self.iteration_.local_sums(self.state_, self.rows_, info)

    def dots(self, info, before):
        return self.accelerator_.residual_dots(before, self.state_)

    def record(self, it, sums, info):
        rho = self.rho
        primal, dual, eps_primal, eps_dual = residuals(
            self.state_, info, sums, rho, self.settings.tol, self.n_row_blocks_total_,
            self.n_rows_, self.iteration_.kappa2)
        record = {"iteration": it, "objective": self.iteration_.objective(sums, self.state_),
                  "primal": primal, "dual": dual, "rho": rho,
                  "residual_ratio": float(max(primal / eps_primal, dual / eps_dual)),
                  "prox_seconds": info.prox_seconds}
        if not all(np.isfinite([record["objective"], primal, dual])):
            raise ConvergenceError(
                f"ADMM diverged at iteration {it} (non-finite objective or residuals);"
                f" the data or rho={rho:g} may be badly scaled")
        self._ratios = (primal / eps_primal, dual / eps_dual)
        return record, bool(primal <= eps_primal and dual <= eps_dual)

    def adapt(self, it, record, dots, finished):
        """Anderson's next point, then residual balancing of rho every 10 iterations (the
        accelerator's memory is cleared when rho changes)."""
        if finished:
            return
        accel = self.accelerator_
        if accel:
            record["acceleration"] = accel.next_point(self.state_, dots)
        if self.settings.adapt_rho and it % 10 == 0:
            new_rho = balanced_rho(self.rho, *self._ratios)
            if new_rho != self.rho:
                self.state_.rescale_duals(new_rho / self.rho)
                self.rho = new_rho
                if accel:
                    accel.reset()

    def unconverged_message(self, last):
        return (f"tol={self.settings.tol:g} (primal residual {last['primal']:.2e}, "
                f"dual {last['dual']:.2e})")

    # ---- the model ----

    @property
    def coef(self):
        """The model W (s x m): the regularizer's iterate (exactly sparse for l1); it equals
        the consensus Wbar at convergence."""
        state = self.state_
        return self.scale_ * (state.W if self.settings.alpha > 0 else state.Wbar)

    def check_start(self, W0):
        W0 = np.asarray(W0, dtype=np.float64)
        if W0.shape != self.state_.W.shape:
            raise ValueError(f"warm start W0 must have shape {self.state_.W.shape}, "
                             f"got {W0.shape}")
        if not np.isfinite(W0).all():
            raise ValueError("warm start W0 contains NaN or infinity")

    def warm_start(self, W0, dist):
        """Start at the fixed point W0 implies (`skylite.admm.starts.start_at_model`)."""
        start_at_model(W0, self.state_, self.rows_, self.feature_map, self.loss, self.scale_,
                       self.settings.rho, self.n_threads, dist)

    # ---- checkpoints ----

    def progress(self):
        progress = {"rho": self.rho, "unconverged_rows": self.iteration_.unconverged_rows}
        if self.accelerator_ is not None:
            progress["anderson"] = self.accelerator_.meta()
        return progress

    def arrays(self):
        arrays = self.state_.arrays()
        if self.accelerator_ is not None:
            arrays.update(self.accelerator_.arrays())
        return arrays

    def load(self, meta, arrays):
        """Restore the state (and Anderson's memory) of a checkpoint."""
        self.state_.load(arrays)
        if self.accelerator_ is not None:
            self.accelerator_.load(arrays, meta["anderson"])
        self.iteration_.unconverged_rows = int(meta["unconverged_rows"])
        self.rho = float(meta["rho"])

    # ---- after the run ----

    def finish(self, n_iter, n_local):
        if self.iteration_.unconverged_rows:
            self.loss._unconverged(self.iteration_.unconverged_rows, n_local * n_iter)

    def phase_seconds(self, history):
        seconds = dict(zip(PHASES, np.sum(
            [np.asarray(data.columns.seconds) for data in self.rows_], axis=0)))
        for name in ("prox", "comm", "acceleration"):
            seconds[name] = sum(r[f"{name}_seconds"] for r in history)
        return seconds

    def result_details(self):
        return {"n_row_blocks": self.n_row_blocks_,
                "sweep": "rows" if self.row_sweep_ else "columns", "rho": self.rho,
                "cache_precision": self.cache_precision_}


class BlockADMM:
    """Block-splitting ADMM over a fitted feature map (see the module docstring): the
    `ADMM` method run by the `Driver`, with the run's results as attributes.

    Parameters
    ----------
    feature_map : fitted skylite.sketch.FeatureMap
        The map z whose column blocks Z_j = z(X)_j the engine regenerates (or caches).
    loss : skylite.prox.Loss or str
        The loss V (or its name: "hinge", "logistic", "squared", "lad").
    regularizer : skylite.prox.Regularizer, RKHSNorm or str
        The regularizer r (or its name: "l2", "l1", "none").
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
    coef_, history_, n_iter_, converged_, rho_, memory_estimate_, phase_seconds_
        After `fit`: the model W (s x m), one record per iteration, the iterations run,
        whether the residuals met tol, the final rho, the bytes planned, seconds by phase.
        The method's own attributes (``row_sweep_``, ``n_row_blocks_``,
        ``memory_footprint_``, ``cache_plan``, ``rows_``, ``state_``, ``scale_``) read
        through.

    The memory plan (skylite.admm.memory): every process counts its working memory before it
    allocates anything, splits its rows into row blocks for the column sweep when one block
    does not fit, and refuses a run that cannot fit with skylite.admm.memory.MemoryRefused (a
    MemoryError) saying what to change.  With `checkpoint` set, the full state (and
    Anderson's memory) is written every `checkpoint_every` iterations (one file per rank,
    skylite.admm.checkpoint); a `fit` that finds the file(s) resumes from them and reaches
    the uninterrupted run's model bitwise; they are removed when `fit` returns normally.
    """

    method_class = ADMM          # the method `fit` runs

    def __init__(self, feature_map, loss, regularizer, settings=None, /, *, callback=None,
                 validation=None, comm=None, **options):
        if not isinstance(settings, EngineSettings):
            if settings is not None:
                options["alpha"] = settings
            settings = EngineSettings(**options)
        elif options:
            raise TypeError(f"options {sorted(options)} given beside an EngineSettings")
        if not hasattr(feature_map, "transform_op_"):
            raise ValueError(f"feature_map must be a fitted skylite.sketch map (call its fit "
                             f"first), got {feature_map!r}")
        self.feature_map = feature_map
        self.loss = loss if isinstance(loss, StackedLoss) else get_loss(loss)
        self.regularizer = regularizer if hasattr(regularizer, "prox") else get_regularizer(
            regularizer)
        self.settings = settings.resolved(self.loss)
        self.n_threads = resolve_threads(settings.n_threads)
        self.callback = callback
        self.validation = validation
        self.comm = comm

    def __getattr__(self, name):
        """The options of `settings` read as attributes (``engine.relaxation``), and after
        `fit` the method's attributes (``engine.row_sweep_``)."""
        if name in _OPTIONS and "settings" in self.__dict__:
            return getattr(self.__dict__["settings"], name)
        method = self.__dict__.get("method_")
        if method is not None and (name.endswith("_") or name == "cache_plan"):
            if hasattr(method, name):
                return getattr(method, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def fit(self, X, Y, W0=None, *, checked=False):
        """Run ADMM on rows X and coded targets Y.

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
            at W0 would put it (`ADMM.warm_start`), so starting at the optimum stops at once.
        checked : bool, default=False
            X (native layout: `skylite._validation.check_rows`) and Y were checked by the
            caller; they are not scanned again.

        Returns
        -------
        self : BlockADMM
            The solution is ``self.coef_`` (s x m), the run is in ``self.history_``.
        """
        self._new_method(self.settings)
        self.result_ = self.driver_.run(X, Y, W0, checked=checked)
        return self._fitted(self.result_)

    def _new_method(self, settings):
        """A new ADMM method (`method_class`) with these settings, and its driver."""
        self.method_ = self.method_class(self.feature_map, self.loss, self.regularizer,
                                         settings, self.n_threads)
        self.driver_ = self.driver(self.method_)

    def solve(self, *, alpha=None, row_blocks=None, W0=None, keep_state=False):
        """Solve again on the setup of the last `fit` (its rows, memory plan and cached
        feature blocks), at another alpha and/or on some of the row blocks (`ADMM.set_problem`:
        e.g. cross-validation folds set up as row blocks, `n_row_blocks`), from W0 if given.
        Collective under a communicator; no checkpoint is written.

        Parameters
        ----------
        alpha : float > 0 or None, default=None
            The regularization weight (None: the last solve's).
        row_blocks : sequence of int or None, default=None
            This rank's set-up row blocks to use (None: all).
        W0 : ndarray of shape (s, m) or None, default=None
            A warm start from a model alone (the duals a fixed point at W0 implies).
        keep_state : bool, default=False
            Start from the last solve's whole state (iterates, duals, rho) instead, carried
            to the new alpha's preconditioning: a continuation along a path; on the last
            solve's row blocks, without W0.

        Returns
        -------
        self : BlockADMM
            The new solve's results as the fitted attributes.
        """
        if "driver_" not in self.__dict__:
            raise ValueError("solve needs the setup of a fit: call fit first")
        if keep_state and W0 is not None:
            raise ValueError("give W0 or keep_state, not both")
        self.method_.set_problem(alpha, row_blocks, keep_state)
        self.result_ = self.driver_.rerun(W0)
        return self._fitted(self.result_)

    def fit_path(self, X, Y, alphas, *, warm_start=True, checked=False):
        """Solve at each alpha in turn on one setup: the rows, memory plan and cached
        feature blocks of the first solve serve the others (`BlockADMM.solve`), and each
        solve continues from the previous one's whole state (`warm_start`: its iterates,
        duals and rho, `solve(keep_state=True)`).  A path from strong to
        weak regularization (decreasing alpha) is the usual order.  Checkpoints apply to
        the first solve only.

        Parameters
        ----------
        X, Y
            As for `fit`.
        alphas : sequence of float > 0
            The regularization weights, solved in this order.
        warm_start : bool, default=True
            Start each solve after the first from the previous solve's state (False: cold).
        checked : bool, default=False
            As for `fit`.

        Returns
        -------
        results : list of skylite.admm.driver.RunResult
            One per alpha; the engine's fitted attributes are the last solve's.
        """
        alphas = [EngineSettings.check("alpha", a) for a in alphas]
        if not alphas or not all(a > 0 for a in alphas):
            raise ValueError(f"alphas must be a non-empty sequence of numbers > 0, got "
                             f"{alphas!r}")
        self._new_method(replace(self.settings, alpha=alphas[0]))
        results = [self.driver_.run(X, Y, checked=checked)]
        for alpha in alphas[1:]:
            self.solve(alpha=alpha, keep_state=warm_start)
            results.append(self.result_)
        self.result_ = results[-1]
        self._fitted(self.result_)
        return results

    def driver(self, method):
        """The driver of `method` with this engine's settings, callback, validation and
        communicator.

        Parameters
        ----------
        method : Method
            The method the driver runs (this engine's block ADMM, or PCG).

        Returns
        -------
        Driver
            The driver, ready to run `method`.
        """
        return Driver(method, self.settings.driver(), callback=self.callback,
                      validation=self.validation, comm=self.comm)

    def _fitted(self, result):
        self.coef_, self.history_, self.n_iter_ = result.coef, result.history, result.n_iter
        self.converged_ = result.converged
        self.rho_ = result.details["rho"]
        self.memory_estimate_ = result.memory_estimate
        self.phase_seconds_ = result.phase_seconds
        return self


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

    def complete(self, error):
        if not self.done and error is not None:
            dist = self.dist
            dummy = np.zeros(self.shape)
            dist.reduce_sum(dummy, np.empty(self.shape) if dist.is_root else None)
            dist.broadcast(dummy)
