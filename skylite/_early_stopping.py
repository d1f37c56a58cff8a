"""Early stopping of the iterative solvers, judged on validation rows.

`holdout_rows` draws a rank's validation rows from its training rows (stratified by
class): by default a sample the fit still learns from, or rows held out of it
(`validation_fraction`).  `EarlyStopping` is the driver callback that, once the solver's
residuals are near their tolerance, keeps the model of the best validation value and stops
after `patience` iterations without a better one.  The validation values are global under
MPI (the driver reduces them), so every rank takes the same decision.
"""
import numbers

import numpy as np

from . import _global_stats as stats
from ._solvers import is_ridge
from ._validation import check_positive, resolve_seed

__all__ = ["SCORINGS", "AUTO_EARLY_STOPPING_ROWS", "AUTO_VALIDATION_FRACTION",
           "AUTO_VALIDATION_ROWS", "MONITOR_RELATIVE_RESIDUAL", "holdout_rows", "EarlyStopping",
           "EarlyStoppingParameters"]

# early_stopping="auto" stops early above this many training rows (as
# scikit-learn's HistGradientBoosting does); what it costs is measured in
# docs/choosing_parameters.md.
AUTO_EARLY_STOPPING_ROWS = 10_000

# validation_fraction=None (the default) scores AUTO_VALIDATION_ROWS of the training rows
# (all ranks'), which stay in the fit; "auto" holds out AUTO_VALIDATION_FRACTION of them, at
# most AUTO_VALIDATION_ROWS: every held-out row is a row the model does not learn from, and
# on MNIST 20k holding out 10% (2,000 rows) cost 0.2 points where 500 rows cost 0.03
# (measured on other training rows; benchmarks/bench_early_stopping.py).
AUTO_VALIDATION_FRACTION = 0.1
AUTO_VALIDATION_ROWS = 500

# Early stopping monitors the validation rows once the solver's residuals relative to the
# size of its iterates are below this (20 times the default tol = 1e-3), chosen on
# validation splits of training rows (benchmarks/bench_early_stopping.py --select): the
# largest value whose kept iterate scored within 0.05 points of the run to tol on the
# selection rows of pendigits, letter and MNIST 20k (0.03 cost letter 0.13 points).
MONITOR_RELATIVE_RESIDUAL = 0.02

#: what early stopping monitors on the validation rows (`scoring`)
SCORINGS = ("loss", "score")


def holdout_rows(groups, fraction, rng):
    """Split rows 0..n-1 into (fit rows, validation rows), two sorted index arrays.

    groups: (n,) integer group of each row (the class index for a stratified split, all
    zeros otherwise).  Of each group's n_c rows, floor(fraction n_c + 1/2) drawn at random
    by the numpy Generator `rng` are validation rows.
    """
    n = len(groups)
    held = [rng.choice(rows, size=int(np.floor(fraction * len(rows) + 0.5)), replace=False)
            for rows in (np.flatnonzero(groups == g) for g in np.unique(groups))]
    val_rows = np.sort(np.concatenate(held)) if held else np.zeros(0, dtype=np.intp)
    fit = np.ones(n, dtype=bool)
    fit[val_rows] = False
    return np.flatnonzero(fit), val_rows


class EarlyStopping:
    """An engine callback: the early-stopping rule (docs/choosing_parameters.md, "Solver
    controls").

    The first iterations are not monitored: while the solver's relative residuals are above
    `MONITOR_RELATIVE_RESIDUAL` (the record's "residual_ratio", the residuals over their
    tolerance, times `tol`, above it) the iterates still move a lot and a validation value of a few hundred rows says
    little about where they go.  From the first iteration under that ratio on, it keeps
    the W of the best validation value (the highest "validation" score for
    scoring="score", the lowest "validation_loss" for "loss"), the latest W of equal
    values, which is nearer the optimum; and it stops the run after `patience`
    iterations without a strictly better value.  The user's callback, if any, is called
    first and may stop the run too.  The values are global under MPI, so every rank
    takes the same decision.

    `model` maps what the engine hands the callback (its `readout`, e.g. the whitened
    weights of skylite.admm.whitening) to the model W; None: it is W.  The user's callback
    is given W, and `best_model()` is the kept iterate's W."""

    def __init__(self, patience, tol, scoring="score", callback=None, model=None):
        self.patience = patience
        self.tol = tol
        self.key, self.sign = (("validation_loss", -1.0) if scoring == "loss"
                               else ("validation", 1.0))
        self.callback = callback
        self.model = model
        self.best_score = -np.inf
        self.best_W = None
        self.best_iteration = 0
        self.improved_at = 0
        self.monitored_from = None

    def __call__(self, iteration, record, W):
        if self.callback:
            stop = bool(self.callback(iteration, record,
                                      W if self.model is None else self.model(W)))
        else:
            stop = False
        if self.monitored_from is None:
            if record.get("residual_ratio", 0.0) * self.tol > MONITOR_RELATIVE_RESIDUAL:
                return stop
            self.monitored_from = iteration
        value = self.sign * record[self.key]
        if value >= self.best_score:
            if value > self.best_score:
                self.best_score, self.improved_at = value, iteration
            self.best_W, self.best_iteration = W.copy(), iteration
        return stop or iteration - self.improved_at >= self.patience

    def best_model(self):
        """W of the kept iterate (None if none was kept)."""
        if self.best_W is None or self.model is None:
            return self.best_W
        return self.model(self.best_W)


class EarlyStoppingParameters:
    """A mixin of `skylite.estimators.KernelMachine`: its early-stopping parameters checked
    and resolved (`early_stopping`, `validation_fraction`, `n_iter_no_change`, `scoring`),
    and the validation rows of a rank."""

    def _patience(self):
        """n_iter_no_change checked (None or an int > 0), after checking the other early
        stopping parameters."""
        if not (self.early_stopping in (True, False) or self.early_stopping == "auto"):
            raise ValueError(f"early_stopping must be 'auto', True or False, got "
                             f"{self.early_stopping!r}")
        fraction = self.validation_fraction
        if self.early_stopping is not False and fraction is not None and fraction != "auto" and (
                isinstance(fraction, bool) or not isinstance(fraction, numbers.Real)
                or not 0 < fraction < 1):
            raise ValueError(f"validation_fraction must be None, 'auto' or a number in (0, 1), "
                             f"got {fraction!r}")
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}, got {self.scoring!r}")
        if self.n_iter_no_change is None:
            return None
        return check_positive(self.n_iter_no_change, "n_iter_no_change", integer=True)

    def _resolved_early_stopping(self, dist, n_rows, loss, regularizer, X_val):
        """`early_stopping` with "auto" resolved (the same on every rank): on for an ADMM
        fit of more than AUTO_EARLY_STOPPING_ROWS rows (all ranks') without X_val, off
        otherwise (solver="dcd" runs to its tolerance in few epochs), and off for the squared
        loss with l2, which solver="auto" may solve in closed form (early stopping would
        force the ADMM)."""
        if self.early_stopping != "auto":
            return bool(self.early_stopping)
        if X_val is not None or self.solver in ("direct", "exact", "pcg", "dcd"):
            return False
        if self.solver == "auto" and is_ridge(loss, regularizer):
            return False
        return int(dist.sum_to_all(np.array([n_rows]))[0]) > AUTO_EARLY_STOPPING_ROWS

    def _holdout(self, dist, y, classes):
        """(fit rows, validation rows) of this rank for `early_stopping`: see
        `holdout_rows`; the seed is derived from random_state and the rank.  With
        validation_fraction=None the validation rows are AUTO_VALIDATION_ROWS training rows
        (all ranks'; all of them if fewer) and the fit rows are every row.  Raises
        ValueError (on every rank) if a class has no training row on any rank or no rank
        holds out a row."""
        groups = (np.zeros(len(y), dtype=np.intp) if classes is None
                  else np.searchsorted(classes, stats.labels_1d(y)))
        rng = np.random.default_rng([resolve_seed(self.random_state), dist.rank])
        fraction = self.validation_fraction
        if fraction is None or fraction == "auto":
            n_rows = int(dist.sum_to_all(np.array([len(y)]))[0])
            fraction = (min(1.0, AUTO_VALIDATION_ROWS / n_rows) if fraction is None else
                        min(AUTO_VALIDATION_FRACTION, AUTO_VALIDATION_ROWS / n_rows))
        fit_rows, val_rows = dist.agree(holdout_rows, groups, fraction, rng)
        if self.validation_fraction is None:                   # scored, and fitted on
            fit_rows = np.arange(len(y))
        n_groups = 1 if classes is None else len(classes)
        counts = dist.sum_to_all(np.append(np.bincount(groups[fit_rows], minlength=n_groups),
                                           len(val_rows)))
        where = f"validation_fraction={self.validation_fraction!r} of the training rows"
        if counts[-1] == 0:
            raise ValueError(f"{where} holds out no row: raise validation_fraction or pass "
                             f"X_val, y_val")
        if (counts[:-1] == 0).any():
            what = ("no training row" if classes is None else f"no training row of class "
                    f"{classes[np.flatnonzero(counts[:-1] == 0)[0]].item()!r}")
            raise ValueError(f"{where} leaves {what}: lower validation_fraction or pass "
                             f"X_val, y_val")
        return fit_rows, val_rows
