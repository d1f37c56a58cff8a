"""The driver of skylite's iterative solvers: what every method needs, written once.

A *method* (`Method`: block ADMM in `skylite.admm.blockadmm`, preconditioned conjugate
gradients for kernel ridge in `skylite.admm.pcg`) knows its algorithm: its setup and memory
footprint, one step, its partial sums, its record and convergence test, its adaptation, its
state for checkpoints and its warm start.  The `Driver` runs any of them the same way:

1. the ranks agree on the data (each rank's rows checked under a collective guard) and on the
   settings (one allgather; any difference is an error on every rank);
2. the method plans its memory against this node's share of the available memory and sets up
   its state (collectively guarded: a failure on one rank raises on all);
3. a checkpoint is resumed, or a warm start applied;
4. the loop: each iteration runs the method's step under a fault guard, then one Allreduce of
   a short vector (`run.SumsLayout`: the method's partial sums, the validation scorer's, the
   method's extra dots, a failure flag), from which every rank takes the same decisions: the
   record (history), validation, the user's callback (which may stop the run), stopping at
   convergence, the method's adaptation, and the checkpoint cadence;
5. the checkpoint files are removed, a run that hit max_iter warns, and the result is one
   `RunResult`.

Under MPI (`comm=`) every rank passes its own rows; the driver never sends rows, and every
rank ends with the same result.  The serial path runs the same code on a null communicator.
"""
import os
import time
import warnings
from typing import NamedTuple

import numpy as np

from .._distributed import Distributed, Guard, different_settings_error
from .._machine import available_memory_bytes
from .._threads import blas_single_threaded
from .._validation import check_rows
from .checkpoint import (checkpoint_file, data_checksum, load_checkpoint, remove_checkpoint,
                         save_checkpoint)
from .run import SumsLayout, as_python_numbers, collective_callback, format_record

__all__ = ["Driver", "DriverSettings", "Method", "RunResult", "ConvergenceWarning"]


class ConvergenceWarning(UserWarning):
    """max_iter ended the run before the method's convergence test held."""


class DriverSettings(NamedTuple):
    """The options the driver reads (each declared, with its check and doc, in
    `skylite.admm.settings.EngineSettings`): the iteration budget, the printing, the
    checkpoint path and cadence."""
    max_iter: int
    verbose: bool = False
    checkpoint: str = None
    checkpoint_every: int = 10


class RunResult(NamedTuple):
    """What a run leaves: the model and how it was reached.

    coef : ndarray of shape (s, m) or (n, m)
        The method's model (primal weights W, or dual coefficients over the training rows).
    n_iter : int
        Iterations run (a resumed run counts the interrupted run's too).
    history : list of dict
        One record per iteration (Python numbers): the method's entries, validation scores,
        "comm_seconds", "seconds", "elapsed".
    converged : bool
        Whether the method's convergence test held at the end.
    memory_estimate : int
        Bytes the method planned for (working memory and caches).
    phase_seconds : dict
        Seconds by phase of the method's work.
    details : dict
        Method-specific facts (e.g. ADMM's row blocks and sweep), by name.
    """
    coef: np.ndarray
    n_iter: int
    history: list
    converged: bool
    memory_estimate: int
    phase_seconds: dict
    details: dict


class Method:
    """The protocol of a method the `Driver` runs (documentation and defaults; the methods
    subclass it).

    Attributes a method sets: `name` (str, for messages), `n_sums` (the length of
    `local_sums`), `n_dots` (the length of `dots` this iteration, 0 if none).

    Called by the driver, in order:

    - ``check_data(X, Y) -> (X, Y)``: this rank's rows and targets, checked;
    - ``plan(X, Y, available)``: count the working memory against `available` bytes before
      allocating anything (raise MemoryError if it cannot fit); ``n_units`` is then this
      rank's count of whatever the method splits its rows into (row blocks), summed over
      the ranks into ``setup``'s `n_units_total`;
    - ``collective_settings() -> dict``: what must be the same on every rank;
    - ``setup(X, Y, n, n_units_total, dist)``: allocate the state for n global rows (run
      under `Distributed.agree`, unless ``setup_is_collective``: then it must run each of
      its collectives through `Distributed.gather_checked`);
    - ``header(dist) -> str``: the verbose header line;
    - ``check_start(start)``, ``warm_start(start, dist)``: a start point;
    - per iteration: ``before_step()``, ``step(dist) -> info`` (its own collectives inside;
      ``complete_step(error)`` lets a rank whose step failed take part in them),
      ``local_sums(info)``, ``dots(info, before)``, ``record(it, sums, info) -> (record,
      converged)``, ``adapt(it, record, dots, converged_or_stopped)``;
    - ``coef``: the current model; ``readout``: what validation and the callback are given
      each iteration (``coef`` unless the method hands out its own coordinates of it, as
      `skylite.admm.whitening.WhitenedADMM` can);
    - checkpoints: ``checkpoint_meta()`` (what a resume must match), ``progress()`` (what
      changes as it runs: a dict of JSON values), ``arrays()``, ``load(meta, arrays)``;
    - ``finish(n_iter, n_local)``: after the loop; ``result_details()``,
      ``memory_estimate``, ``phase_seconds(history)``.
    """
    name = "method"
    setup_is_collective = False     # True: setup takes part in collectives (see Driver.run)
    n_sums = 0
    n_dots = 0
    n_units = 1
    n_features_in = None            # the columns X must have (None: any)
    nan_targets = False             # True: NaN in Y marks rows out of a stacked problem

    def check_data(self, X, Y):
        """X checked (`skylite._validation.check_rows`: real, finite, at least one row, the
        method's `n_features_in` columns) and Y as an n x m finite float64 array."""
        X = check_rows(X, min_rows=1, n_features=self.n_features_in, who=self.name)
        Y = np.ascontiguousarray(Y, dtype=np.float64)
        if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
            raise ValueError(f"Y must be an n x m array with n = {X.shape[0]} rows, "
                             f"got shape {Y.shape}")
        if not (np.isfinite(Y).all() or (self.nan_targets and not np.isinf(Y).any())):
            raise ValueError("Y contains NaN or infinity")
        return X, Y

    def before_step(self):
        return None

    def complete_step(self, error):
        """A rank whose step raised before the step's collectives still takes part in them
        (so that no rank waits); nothing to do for a method without such collectives."""

    def dots(self, info, before):
        return np.zeros(0)

    def adapt(self, it, record, dots, finished):
        """Change the method's parameters between iterations (e.g. ADMM's rho)."""

    def check_start(self, start):
        raise ValueError(f"{self.name} takes no warm start")

    def progress(self):
        return {}

    @property
    def readout(self):
        """What validation and the callback are given each iteration: the model `coef`."""
        return self.coef

    def finish(self, n_iter, n_local):
        """After the last iteration (e.g. report rows whose inner solver did not converge)."""

    def result_details(self):
        return {}

    def phase_seconds(self, history):
        return {}


class Driver:
    """Runs a `Method` (module docstring).

    Parameters
    ----------
    method : Method
        The algorithm.
    settings : DriverSettings
        max_iter, verbose, checkpoint, checkpoint_every.
    callback : callable or None, default=None
        callback(iteration, record, coef) -> bool or None; True stops the run.  Under a
        communicator it is called on every rank with identical arguments; an exception or
        a stop request on any rank stops every rank.
    validation : callable, object or None, default=None
        callable(coef) -> float, recorded as "validation"; or an object with
        `partial(coef)` -> float64 vector of `n_partial` partial sums over this rank's
        validation rows and `finish(summed vector)` -> float or dict of record entries,
        reduced in the per-iteration Allreduce (global scores under MPI).
    comm : mpi4py communicator or None, default=None
        Each rank passes its own rows to `run`.
    """

    def __init__(self, method, settings, *, callback=None, validation=None, comm=None):
        self.method = method
        self.settings = settings
        self.callback = callback
        self.validation = validation
        self.comm = comm

    def run(self, X, Y, start=None, *, checked=False):
        """Run the method on this rank's rows X and targets Y.

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n_i, d)
            This rank's rows.
        Y : ndarray of shape (n_i, m)
            Their targets, coded for the method's loss.
        start : ndarray or None, default=None
            A warm start (the method's model shape, the same on every rank); ignored when a
            checkpoint is resumed.
        checked : bool, default=False
            X and Y were checked by the caller (the estimators validate them once per fit):
            the method's `check_data` is skipped.

        Returns
        -------
        RunResult
        """
        method, settings = self.method, self.settings
        dist = self.dist = Distributed(self.comm)
        if checked:
            Y = np.ascontiguousarray(Y, dtype=np.float64)
        else:
            X, Y = dist.agree(method.check_data, X, Y)
        n_local, m = Y.shape
        ckpt_file = (checkpoint_file(settings.checkpoint, dist.rank, dist.size)
                     if settings.checkpoint is not None else None)
        available = available_memory_bytes() // dist.ranks_on_node()
        dist.agree(method.plan, X, Y, available)
        ranks = dist.allgather(_RankInfo(
            n_local, X.shape[1], m, method.n_units,
            ckpt_file is not None and os.path.exists(ckpt_file), self._collective(start)))
        if len({r.m for r in ranks}) > 1:
            raise ValueError(f"the ranks' targets have different numbers of columns "
                             f"{[r.m for r in ranks]}; code labels with the global classes")
        _check_same_settings([r.settings for r in ranks])
        n = int(sum(r.n_rows for r in ranks))
        n_units = int(sum(r.n_units for r in ranks))
        row_start = int(sum(r.n_rows for r in ranks[:dist.rank]))
        if method.setup_is_collective:    # its collectives carry their own failure flags
            method.setup(X, Y, n, n_units, dist)
        else:
            dist.agree(method.setup, X, Y, n, n_units, dist)
        resume = [r.resuming for r in ranks]
        if any(resume) and not all(resume):
            raise ValueError(f"checkpoint {settings.checkpoint!r}: files exist for ranks "
                             f"{[i for i, e in enumerate(resume) if e]} only; the run was "
                             f"started with another number of ranks or files were removed")
        self._ckpt_file = ckpt_file
        if ckpt_file is not None:
            self._ckpt_meta = {
                "n": n, "d": int(X.shape[1]), **method.checkpoint_meta(), "m": int(m),
                "P": dist.size, "rank": dist.rank, "row_start": row_start,
                "n_local": int(n_local), "data": data_checksum(X, Y)}
        if settings.verbose and dist.is_root:
            print(method.header(dist))
        self._n_local = n_local
        return self._solve(start, resume=bool(resume) and all(resume))

    def rerun(self, start=None):
        """Solve again on the rows of the last `run`, after the method changed its problem
        (`skylite.admm.blockadmm.ADMM.set_problem`): one setup, many solves.  What the method
        set up (features, caches, plan) is kept; the ranks agree on the settings again; no
        checkpoint is written or resumed.

        Parameters
        ----------
        start : ndarray or None, default=None
            A warm start, e.g. the previous solve's model.

        Returns
        -------
        RunResult
        """
        _check_same_settings(self.dist.allgather(self._collective(start)))
        self._ckpt_file = None
        return self._solve(start, resume=False)

    def _solve(self, start, resume):
        """From the set-up method: resume or warm start, the loop, the result."""
        method, settings, dist = self.method, self.settings, self.dist
        self.history = []
        self.converged = False
        first = 1
        if resume:
            done = dist.agree(self._resume)
            iterations = dist.allgather(done)
            if len(set(iterations)) > 1:
                raise ValueError(f"checkpoint {settings.checkpoint!r}: the ranks' files "
                                 f"are from different iterations {iterations} (a run was killed "
                                 f"while writing); delete them to start afresh")
            first = done + 1
            if settings.verbose and dist.is_root:
                progress = ", ".join(f"{k}={v:g}" for k, v in method.progress().items()
                                     if isinstance(v, float))
                print(f"{method.name}: resuming from checkpoint {settings.checkpoint} after "
                      f"iteration {done}" + (f" ({progress})" if progress else ""))
        elif start is not None:
            dist.agree(method.check_start, start)
            method.warm_start(start, dist)
        with blas_single_threaded():
            self._loop(first)
        n_iter = len(self.history)
        if self._ckpt_file is not None:
            remove_checkpoint(self._ckpt_file)
        if not self.converged and n_iter == settings.max_iter:
            warnings.warn(f"{method.name} stopped at max_iter={settings.max_iter} before "
                          f"reaching {method.unconverged_message(self.history[-1])}; "
                          f"raise max_iter or tol", ConvergenceWarning, stacklevel=4)
        method.finish(n_iter, self._n_local)
        return RunResult(method.coef, n_iter, self.history, self.converged,
                         method.memory_estimate, method.phase_seconds(self.history),
                         method.result_details())

    def _collective(self, start):
        """What decides the collective control flow: identical on every rank."""
        return {**self.method.collective_settings(),
                "max_iter": self.settings.max_iter,
                "checkpoint": self.settings.checkpoint is not None,
                "checkpoint_every": self.settings.checkpoint_every,
                "warm start": start is not None,
                "callback": self.callback is not None,
                "validation": (None if self.validation is None else
                               getattr(self.validation, "n_partial", "local"))}

    def _loop(self, first):
        """Iterations first..max_iter (module docstring, step 4)."""
        method, dist, validation = self.method, self.dist, self.validation
        collective_validation = hasattr(validation, "partial")
        start = time.perf_counter() - (self.history[-1]["elapsed"] if self.history else 0.0)
        for it in range(first, self.settings.max_iter + 1):
            tick = time.perf_counter()
            comm_start = dist.seconds
            before = method.before_step()
            guard, info = Guard(), None
            with guard:
                info = method.step(dist)
            if guard.error is not None and dist.serial:
                raise guard.error
            method.complete_step(guard.error)     # a rank that failed early takes part
            layout = SumsLayout(method.n_sums,
                                validation.n_partial if collective_validation else 0,
                                method.n_dots)     # e.g. Anderson's grow with its memory
            parts, coef = [], None
            if guard.error is None:
                with guard:
                    parts.append(method.local_sums(info))
                    if validation is not None or self.callback:    # read once: may cost
                        coef = method.readout                       # a product (whitening)
                    if collective_validation:
                        parts.append(validation.partial(coef))
                    if layout.dots.stop > layout.dots.start:
                        parts.append(method.dots(info, before))
            if guard.error is not None and dist.serial:
                raise guard.error
            total = dist.allreduce_sum(layout.pack(None if guard.error else parts))
            if total[layout.failed] > 0:
                dist.raise_failures(guard.error)
            record, converged = method.record(it, total[layout.sums], info)
            record["comm_seconds"] = dist.seconds - comm_start
            if collective_validation:
                scores = validation.finish(total[layout.validation])
                record.update(scores if isinstance(scores, dict) else {"validation": scores})
            elif validation is not None:
                record["validation"] = validation(coef)
            as_python_numbers(record)   # what follows adds Python floats and strings only
            stop = (collective_callback(dist, self.callback, it, record, coef)
                    if self.callback else False)
            adapt_tick = time.perf_counter()
            method.adapt(it, record, total[layout.dots], converged or stop)
            record["acceleration_seconds"] = time.perf_counter() - adapt_tick
            record["seconds"] = time.perf_counter() - tick
            record["elapsed"] = time.perf_counter() - start
            self.history.append(record)
            if self.settings.verbose and dist.is_root:
                print(format_record(record))
            if converged:
                self.converged = True
                break
            if stop:
                break
            if self._ckpt_file is not None and it % self.settings.checkpoint_every == 0:
                dist.agree(self._write_checkpoint, it)

    # ---- checkpoints (skylite.admm.checkpoint) ----

    def _write_checkpoint(self, it):
        meta = dict(self._ckpt_meta, iteration=it, history=self.history,
                    **self.method.progress())
        save_checkpoint(self._ckpt_file, meta, self.method.arrays())

    def _resume(self):
        """Restore this rank's checkpoint into the method; returns the iteration it was
        written after."""
        meta, arrays = load_checkpoint(self._ckpt_file, self._ckpt_meta,
                                       progress=tuple(self.method.progress()))
        self.method.load(meta, arrays)
        self.history = list(meta["history"])
        return int(meta["iteration"])


def _check_same_settings(everyone):
    """Raise ValueError (on every rank: each holds all of `everyone`, the ranks'
    `Driver._collective` dicts) naming the settings that differ between ranks."""
    error = different_settings_error(everyone, show=repr, hints={
        "precision": "precision='auto' follows each rank's rows: give every rank rows of "
                     "one dtype, or a precision"})
    if error is not None:
        raise error


class _RankInfo(NamedTuple):
    """What each rank tells the others before the run (one allgather)."""
    n_rows: int             # its rows
    d: int                  # input features
    m: int                  # outputs
    n_units: int            # its row blocks (the method's split of its rows)
    resuming: bool          # its checkpoint file exists
    settings: dict          # Driver._collective: what must be the same on every rank
