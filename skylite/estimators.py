"""Kernel machines: scikit-learn style estimators on top of the BlockADMM engine.

A `KernelMachine` fits W (s x m) in

    minimize_W  (1/n) sum_i V(y_i, W^T z(x_i)) + alpha r(W)

with a random feature map z of a kernel (or any skylite.sketch map), a loss V and a
regularizer r from skylite.prox, by BlockADMM over column blocks of Z = z(X), which is never
stored.  Presets: `KernelSVC` (hinge), `KernelLogisticRegression` (multinomial logistic),
`KernelRidge` (squared loss, regression) and `KernelLADRegression` (absolute loss, regression).

Outputs are computed block by block, O = sum_j Z_j W_j, over chunks of rows, so prediction
also never forms an n x s array.
"""
import numbers
import time
import warnings
from copy import deepcopy

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (check_array, check_consistent_length, check_is_fitted,
                                      validate_data)

from . import _global_stats as stats
from . import kernels as kernels_module
from . import persistence
from ._distributed import Distributed
from ._estimator_docs import estimator_docstring
from ._threads import resolve_threads
from ._validation import (FLOAT_DTYPES, check_positive, check_rows, native_rows,
                          resolve_seed, sparse_structure_checked)
from .admm import BlockADMM, ConvergenceWarning
from .admm.settings import DEFAULTS, EngineSettings
from ._outputs import CachedOutputs, outputs
from .krr import (exact_dual_coef, feature_ridge_coef, kernel_matvec, memory_bytes,
                  pcg_dual_coef)
from ._machine import available_memory_bytes
from .io.arrays import hdf5_rows, is_hdf5_dataset
from .prox import RKHSNorm, get_loss, get_regularizer
from .prox.coding import code_labels, decision_values, decode_decision, softmax
from .sketch import FeatureMap, default_n_blocks
from .sketch.nystroem import NYSTROEM_MAX_BLOCK


_KERNELS = kernels_module.KERNELS
#: the kernel names `KernelMachine(kernel=...)` accepts
KERNEL_NAMES = tuple(_KERNELS)

# The most the feature blocks of the validation rows may keep between iterations (1 GiB:
# MNIST's 6,000 early-stopping rows at s = 16384 in float32 take 393 MB).
VALIDATION_CACHE_BYTES = 2**30

SOLVERS = ("auto", "admm", "direct", "exact", "pcg")

# early_stopping="auto" holds out validation rows above this many training rows (as
# scikit-learn's HistGradientBoosting does): on MNIST's 60,000 rows it stops a kernel SVM
# at a tenth of the iterations that run to tol, at the same test accuracy
# (docs/choosing_parameters.md).
AUTO_EARLY_STOPPING_ROWS = 10_000
# solver="auto" solves squared loss + l2 in closed form up to this many features (s^2 float64:
# 512 MB, n s^2 flops)
DIRECT_MAX_FEATURES = 8192


class KernelMachine(BaseEstimator):
    __doc__ = estimator_docstring(
        "KernelMachine", """A kernel machine trained by BlockADMM on random features.

    Fits W in minimize_W (1/n) sum_i V(y_i, W^T z(x_i)) + alpha r(W) with any loss V and
    regularizer r of skylite.prox; the loss decides whether it is a classifier or a
    regressor.  The presets `KernelSVC`, `KernelLogisticRegression`, `KernelRidge` and
    `KernelLADRegression` fix that kind.""", "hinge")

    _default_loss = "hinge"
    _classifier = None           # the presets fix it: True (classifier) or False (regressor)

    def __init__(self, kernel="gaussian", *, loss=None, regularizer="l2",
                 alpha=DEFAULTS.alpha, n_features=2048, n_blocks=None, feature_map=None,
                 sigma=None, gamma=None, degree=None, coef0=None, nu=None, length_scale=None,
                 beta=None, classification=None, method=None, landmarks=None,
                 rho=DEFAULTS.rho,
                 max_iter=DEFAULTS.max_iter, tol=DEFAULTS.tol, adapt_rho=DEFAULTS.adapt_rho,
                 relaxation=DEFAULTS.relaxation, acceleration=DEFAULTS.acceleration,
                 anderson_memory=DEFAULTS.anderson_memory, n_threads=DEFAULTS.n_threads,
                 memory_budget=DEFAULTS.memory_budget, precision=DEFAULTS.precision,
                 random_state=0, verbose=DEFAULTS.verbose, callback=None,
                 early_stopping="auto", validation_fraction=0.1, n_iter_no_change=10,
                 scoring="score", comm=None, checkpoint=DEFAULTS.checkpoint,
                 checkpoint_every=DEFAULTS.checkpoint_every, solver="auto"):
        self.kernel = kernel
        self.loss = loss
        self.regularizer = regularizer
        self.alpha = alpha
        self.n_features = n_features
        self.n_blocks = n_blocks
        self.feature_map = feature_map
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.nu = nu
        self.length_scale = length_scale
        self.beta = beta
        self.classification = classification
        self.method = method
        self.landmarks = landmarks
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.adapt_rho = adapt_rho
        self.relaxation = relaxation
        self.acceleration = acceleration
        self.anderson_memory = anderson_memory
        self.n_threads = n_threads
        self.memory_budget = memory_budget
        self.precision = precision
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.scoring = scoring
        self.comm = comm
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.solver = solver

    def __getstate__(self):
        state = dict(super().__getstate__())
        state["comm"] = None          # a communicator belongs to this process's MPI job
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        classifier = self.is_classifier
        tags.estimator_type = "classifier" if classifier else "regressor"
        tags.classifier_tags = ClassifierTags() if classifier else None
        tags.regressor_tags = None if classifier else RegressorTags()
        tags.target_tags.required = True
        tags.target_tags.multi_output = not classifier
        tags.input_tags.sparse = True
        return tags

    @property
    def is_classifier(self):
        """Whether y holds class labels: `classification` if given, else the loss's kind
        (hinge, logistic: True; squared, lad: False)."""
        return self._loss_object().classification

    # ---- building blocks ----

    def _distributed(self):
        """`comm` wrapped for the collectives (the serial null communicator for None):
        every statistic of the estimator goes through it, serial or not."""
        return Distributed(self.comm)

    def _loss_object(self):
        loss = get_loss(self._default_loss if self.loss is None else self.loss)
        if self.classification is not None:
            loss = loss.with_classification(self.classification)
        if self._classifier is not None and loss.classification != self._classifier:
            name = type(self).__name__
            if self._classifier:
                raise ValueError(f"{name} is a classifier, but the {loss.name} loss with "
                                 f"classification={loss.classification} fits real targets; "
                                 f"use KernelRidge, KernelLADRegression or KernelMachine")
            raise ValueError(f"{name} is a regressor, but the {loss.name} loss with "
                             f"classification={loss.classification} takes class labels; "
                             f"use KernelMachine(loss={loss.name!r}, classification=True)")
        return loss

    def _kernel_object(self, X, dist=None):
        if not isinstance(self.kernel, str):
            if not isinstance(self.kernel, kernels_module.Kernel):
                raise ValueError(f"kernel must be a name or a skylite.kernels object, "
                                 f"got {self.kernel!r}")
            return self.kernel
        name = self.kernel.lower()
        if name not in _KERNELS:
            raise ValueError(f"unknown kernel {self.kernel!r}; use one of {sorted(_KERNELS)}")
        cls, names = _KERNELS[name]
        params = {p: getattr(self, p) for p in names if getattr(self, p) is not None}
        if "sigma" in names:
            if self.sigma is not None and self.gamma is not None:
                raise ValueError("give sigma or gamma, not both")
            if self.gamma is not None:
                gamma = check_positive(self.gamma, "gamma")
                # scikit-learn: rbf exp(-gamma ||x - y||^2), laplacian exp(-gamma ||x - y||_1)
                params["sigma"] = (1.0 / gamma if cls is kernels_module.Laplacian
                                   else 1.0 / np.sqrt(2.0 * gamma))
            elif self.sigma is None:
                params["sigma"] = stats.scale_sigma(
                    X, self._distributed() if dist is None else dist)
        return cls(**params)

    def _make_feature_map(self, X, dist):
        if self.feature_map is not None:
            if not isinstance(self.feature_map, FeatureMap):
                raise ValueError(f"feature_map must be a skylite.sketch map, "
                                 f"got {self.feature_map!r}")
            return deepcopy(self.feature_map).fit_distributed(X, dist)
        kernel = self._kernel_object(X, dist)
        check_positive(self.n_features, "n_features", integer=True)
        n_blocks = self.n_blocks
        if n_blocks is None:     # from the problem alone: the same model on every machine
            rows = max(dist.allgather(X.shape[0]))
            identity = (isinstance(kernel, kernels_module.Linear)      # s = d, not chosen
                        and self.method in (None, "identity"))
            nystroem = self.method == "nystroem"
            n_blocks = (default_n_blocks(X.shape[1], rows, max_block=None) if identity
                        else default_n_blocks(self.n_features, rows,
                                              **({"max_block": NYSTROEM_MAX_BLOCK}
                                                 if nystroem else {})))
        fmap = kernel.feature_map(self.n_features, n_blocks=n_blocks,
                                  random_state=self.random_state, method=self.method,
                                  landmarks=self.landmarks)
        return fmap.fit_distributed(X, dist)

    def _code_targets(self, y, loss, classes=None):
        """Y (n x m float64) from validated targets: class labels coded for the loss (and
        the classes), or real targets as columns."""
        if loss.classification:
            return code_labels(y, loss, classes=classes)
        self._y_1d = y.ndim == 1
        return _target_columns(y), None

    def _code_validation_targets(self, y_val, loss, classes, m):
        """Y_val (n_val x m) coded like the training targets, for the validation loss."""
        y_val = np.asarray(y_val)
        if loss.classification:
            unseen = ~np.isin(y_val, classes)
            if unseen.any():
                raise ValueError(f"y_val contains a label not among the training labels, "
                                 f"e.g. {y_val[unseen][0]!r}: the validation loss is undefined")
            return code_labels(y_val, loss, classes=classes)[0]
        Y_val = _target_columns(y_val)
        if Y_val.shape[1] != m:
            raise ValueError(f"y_val has {Y_val.shape[1]} targets per row, y has {m}")
        return Y_val

    def _patience(self):
        """n_iter_no_change checked (None or an int > 0), after checking the other early
        stopping parameters."""
        if not (self.early_stopping in (True, False) or self.early_stopping == "auto"):
            raise ValueError(f"early_stopping must be 'auto', True or False, got "
                             f"{self.early_stopping!r}")
        fraction = self.validation_fraction
        if self.early_stopping is not False and (isinstance(fraction, bool) or
                                    not isinstance(fraction, numbers.Real) or
                                    not 0 < fraction < 1):
            raise ValueError(f"validation_fraction must be a number in (0, 1), got "
                             f"{fraction!r}")
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}, got {self.scoring!r}")
        if self.n_iter_no_change is None:
            return None
        return check_positive(self.n_iter_no_change, "n_iter_no_change", integer=True)

    def _resolved_early_stopping(self, dist, n_rows, loss, regularizer, X_val):
        """`early_stopping` with "auto" resolved (the same on every rank): on for an ADMM
        fit of more than AUTO_EARLY_STOPPING_ROWS rows (all ranks') without X_val, off
        otherwise, and off for the squared loss with l2, which solver="auto" may solve in
        closed form (early stopping would force the ADMM)."""
        if self.early_stopping != "auto":
            return bool(self.early_stopping)
        if X_val is not None or self.solver in ("direct", "exact", "pcg"):
            return False
        if self.solver == "auto" and _is_ridge(loss, regularizer):
            return False
        return int(dist.sum_to_all(np.array([n_rows]))[0]) > AUTO_EARLY_STOPPING_ROWS

    def _holdout(self, dist, y, classes):
        """(fit rows, validation rows) of this rank for `early_stopping`: see
        `holdout_rows`; the seed is derived from random_state and the rank.  Raises
        ValueError (on every rank) if a class has no training row on any rank or no rank
        holds out a row."""
        groups = (np.zeros(len(y), dtype=np.intp) if classes is None
                  else np.searchsorted(classes, stats.labels_1d(y)))
        rng = np.random.default_rng([resolve_seed(self.random_state), dist.rank])
        fit_rows, val_rows = dist.agree(holdout_rows, groups, self.validation_fraction, rng)
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

    # ---- fitting ----

    def fit(self, X, y, *, X_val=None, y_val=None, warm_start=None):
        """Train on rows X and targets y.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            Training rows.
        y : array-like of shape (n,) or (n, m)
            Class labels or real targets.
        X_val, y_val : array-like or None, default=None
            A validation set scored every iteration (accuracy or R^2, recorded in
            ``history_``) and used for early stopping (see `n_iter_no_change`); it takes
            precedence over the `early_stopping` split.
        warm_start : ndarray of shape (s, m) or None, default=None
            A W to start from (e.g. a previous ``coef_`` with the same feature map).

        Returns
        -------
        self : object
            The fitted estimator.

        Notes
        -----
        All or nothing: the fitted attributes are replaced only when the fit completes.  A
        fit that raises or is interrupted (KeyboardInterrupt) leaves the previous model
        exactly as it was, or the estimator unfitted if it had never been fitted.
        """
        before = dict(self.__dict__)
        try:
            return self._fit(X, y, X_val, y_val, warm_start)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _fit(self, X, y, X_val, y_val, warm_start):
        """`fit`'s work, which sets the fitted attributes as it goes."""
        dist = self._distributed()      # every local step below is agreed by all ranks
        self._agree_settings(dist, X_val is not None, y_val is not None)
        self.n_threads_ = dist.agree(self._check_rank_local)  # what the native code will use
        if (X_val is None) != (y_val is None):
            given, missing = ("X_val", "y_val") if y_val is None else ("y_val", "X_val")
            raise ValueError(f"{given} was given without {missing}: pass both or neither")
        X, y = dist.agree(self._validate_training_rows, X, y)
        if X_val is not None:
            X_val, y_val = dist.agree(self._validate_validation_rows, X_val, y_val)
        patience = self._patience()
        loss = self._loss_object()
        regularizer = get_regularizer(self.regularizer)
        for stale in ("classes_", "_y_1d", "dual_coef_", "X_fit_", "kernel_"):  # earlier fits
            self.__dict__.pop(stale, None)
        classes = None
        if loss.classification:                   # a rank may lack a class
            classes = dist.label_union(dist.agree(stats.labels_1d, y))
        Y, classes = dist.agree(self._code_targets, y, loss, classes)
        if classes is not None:
            self.classes_ = classes
        self.validation_indices_ = None
        self.early_stopping_ = self._resolved_early_stopping(dist, len(y), loss, regularizer,
                                                             X_val)
        if X_val is None and self.early_stopping_:
            fit_rows, val_rows = self._holdout(dist, y, classes)
            X_val, y_val = check_rows(X[val_rows]), y[val_rows]
            X, Y = check_rows(X[fit_rows]), Y[fit_rows]
            self.validation_indices_ = val_rows
        self.feature_map_ = self._make_feature_map(X, dist)    # sigma from the fitted rows
        regularizer = _regularizer_for_map(regularizer, self.feature_map_, self.precision)
        solver = self.solver_ = self._resolved_solver(loss, regularizer, X_val, warm_start)
        if solver != "admm":
            return self._fit_one_solve(X, Y, loss, regularizer, dist, solver)
        validation, callback, early = None, self.callback, None
        memory_budget = self.memory_budget
        if X_val is not None:
            validation_outputs, kept = self._validation_outputs(X_val)
            if memory_budget is not None:
                memory_budget = max(0, memory_budget - kept)
            Y_val = dist.agree(self._code_validation_targets, y_val, loss, classes,
                               Y.shape[1])
            validation = stats.CollectiveValidation(dist, validation_outputs,
                                                    self._predict_from, X_val, y_val,
                                                    classes is not None, loss, Y_val)
            if patience is not None:
                early = callback = _EarlyStopping(patience, self.scoring, self.callback)
        engine = BlockADMM(self.feature_map_, loss, regularizer,
                           self._engine_settings(memory_budget=memory_budget),
                           callback=callback, validation=validation, comm=self.comm)
        engine.fit(X, Y, W0=warm_start)
        self.coef_ = engine.coef_.copy()
        self.best_iteration_ = engine.n_iter_
        if early is not None and early.best_W is not None:
            self.coef_, self.best_iteration_ = early.best_W, early.best_iteration
        self.n_iter_ = engine.n_iter_
        self.history_ = engine.history_
        self.converged_ = engine.converged_
        self.memory_estimate_ = engine.memory_estimate_
        self.n_row_blocks_ = engine.n_row_blocks_
        self.sweep_ = "rows" if engine.row_sweep_ else "columns"
        self.phase_seconds_ = engine.phase_seconds_
        self.loss_ = loss
        self.regularizer_ = regularizer
        return self

    def _engine_settings(self, **overrides):
        """The EngineSettings of this estimator: its parameters named like an engine option
        (alpha, rho, max_iter, ...), with `overrides`; checks them (ValueError)."""
        params = self.get_params(deep=False)
        return EngineSettings(**{name: overrides.get(name, params[name])
                                 for name in EngineSettings.names() if name in params})

    def save(self, path):
        """Write the fitted model to `path` (see skylite.persistence); `skylite.load` reads it.

        Under a communicator only rank 0 writes (the model is the same on every rank).

        Parameters
        ----------
        path : str or path-like
            The file to write.
        """
        if self._distributed().is_root:
            persistence.save(self, path)

    # ---- evaluation ----

    def _agree_settings(self, dist, *flags):
        """Collective, before any check that could raise on one rank alone: every rank must
        have been given the same parameters (but the rank-local ones, _RANK_LOCAL), so that
        each check below raises on all ranks or on none.  Raises ValueError on every rank,
        naming the parameters that differ and each rank's value."""
        if dist.serial:
            return
        mine = {name: _comparable(value) for name, value in self.get_params(deep=False).items()
                if name not in _RANK_LOCAL}
        mine["X_val, y_val given"] = repr(flags)
        everyone = dist.allgather(mine)
        differ = sorted(k for k in mine if any(other.get(k) != mine[k] for other in everyone))
        if differ:
            values = "; ".join(f"{k}: " + ", ".join(f"rank {r} {other.get(k)}"
                                                     for r, other in enumerate(everyone))
                               for k in differ[:3])
            raise ValueError(f"the ranks were given different {', '.join(differ)} ({values}); "
                             f"every rank must pass the same settings (control flow is "
                             f"collective)")

    def _check_rank_local(self):
        """Check the parameters a rank may hold alone (_RANK_LOCAL): through `dist.agree`,
        a bad value on one rank is an error on every rank.  Returns the resolved thread
        count."""
        EngineSettings.check("memory_budget", self.memory_budget)
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable or None, got {self.callback!r}")
        return resolve_threads(self.n_threads)

    def _validate_training_rows(self, X, y):
        """X (native layout) and y checked by scikit-learn's validate_data, which records
        n_features_in_ and feature_names_in_; class labels must be labels, real targets
        numbers (one or several columns)."""
        classifier = self.is_classifier
        X, y = validate_data(self, _in_place(sparse_structure_checked(X)), _in_place(y),
                             accept_sparse="csr", dtype=FLOAT_DTYPES,
                             multi_output=not classifier, y_numeric=not classifier)
        if classifier:
            check_classification_targets(y)
        return native_rows(X), y

    def _validate_validation_rows(self, X_val, y_val):
        """X_val, y_val checked like the training rows, against the fitted columns."""
        X_val, y_val = _in_place(X_val), _in_place(y_val)
        rows = check_rows(X_val, name="X_val", min_rows=1, n_features=self.n_features_in_,
                          who=type(self).__name__)
        validate_data(self, X_val, reset=False, skip_check_array=True)  # feature names
        classifier = self.is_classifier
        y_val = check_array(y_val, ensure_2d=False, dtype=None if classifier else "numeric",
                            input_name="y_val")
        check_consistent_length(rows, y_val)
        return rows, y_val

    def _check_X(self, X):
        """Rows to predict, checked against the fitted columns (number and names)."""
        check_is_fitted(self, "coef_")
        X = _in_place(sparse_structure_checked(X))
        return native_rows(validate_data(self, X, reset=False, accept_sparse="csr",
                                         dtype=FLOAT_DTYPES))

    def _model_outputs(self, X):
        """The fitted model's outputs on validated rows X: z(X) coef_, or, for the exact
        kernel solvers, K(X, X_fit_) dual_coef_."""
        if getattr(self, "dual_coef_", None) is not None:
            return kernel_matvec(self.kernel_, self.X_fit_, self.dual_coef_, X)
        return self._outputs(self.coef_, X)

    def _outputs(self, W, X):
        """O = z(X) W (n x m), block by block over chunks of rows, in the model's precision."""
        return outputs(self.feature_map_, W, X, n_threads=self.n_threads,
                       dtype=np.float32 if self.precision == "float32" else None)

    def _resolved_solver(self, loss, regularizer, X_val, warm_start):
        """The solver this fit uses: `solver`, with "auto" resolved to "direct" or "admm";
        raises ValueError for an unknown solver, or one of the squared-loss solvers where
        they do not apply."""
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.solver == "admm":
            return "admm"
        applies = _is_ridge(loss, regularizer) and self.alpha > 0
        if self.solver != "auto":
            if not applies:
                raise ValueError(f"solver={self.solver!r} needs the squared loss with the l2 "
                                 f"regularizer and alpha > 0, got loss={loss.name!r}, "
                                 f"regularizer={regularizer.name!r}, alpha={self.alpha!r}")
            if self.comm is not None:
                raise ValueError(f"solver={self.solver!r} runs in one process; use "
                                 f"solver='admm' with comm=")
            return self.solver
        iterative = (X_val is not None or self.early_stopping_ or self.checkpoint is not None
                     or self.callback is not None or warm_start is not None
                     or self.comm is not None)
        direct = (applies and not iterative
                  and self.feature_map_.n_features <= DIRECT_MAX_FEATURES)
        return "direct" if direct else "admm"

    def _fit_one_solve(self, X, Y, loss, regularizer, dist, solver):
        """The squared loss with l2 without the ADMM (skylite.krr): "direct", the closed form
        coef_ = (Z^T Z + n alpha I)^-1 Z^T Y on the random features; or the exact kernel
        problem f(x) = sum_i k(x, x_i) a_i with (K + n alpha I) A = Y, by Cholesky ("exact")
        or by CG preconditioned with the feature map ("pcg"), where the model keeps its
        training rows (X_fit_) and coef_ is None."""
        start = time.perf_counter()
        n_iter, converged, history = 1, True, []             # one solve
        if solver == "direct":
            rows = X.astype(np.float32, copy=False) if self.precision == "float32" else X
            self.coef_ = feature_ridge_coef(self.feature_map_, rows, Y, self.alpha)
        else:
            kernel = self._kernel_object(X, dist)
            if solver == "exact":
                self.dual_coef_ = exact_dual_coef(kernel, X, Y, self.alpha)
            else:
                result = pcg_dual_coef(kernel, X, Y, self.alpha, self.feature_map_,
                                       tol=self.tol, max_iter=self.max_iter)
                self.dual_coef_, n_iter, converged = (result.dual_coef, result.n_iter,
                                                      result.converged)
                history = [{"iteration": k + 1, "residual": r}
                           for k, r in enumerate(result.residuals)]
                if not converged:
                    warnings.warn(f"pcg stopped at max_iter={self.max_iter} with relative "
                                  f"residual {result.residuals[-1]:.2e} > tol={self.tol:g}",
                                  ConvergenceWarning, stacklevel=3)
            self.kernel_, self.X_fit_ = kernel, X
            self.coef_ = None                  # the model is dual: dual_coef_ over X_fit_
        seconds = time.perf_counter() - start
        s = self.feature_map_.n_features
        self.n_iter_ = self.best_iteration_ = n_iter
        self.converged_, self.history_ = converged, history
        self.memory_estimate_ = memory_bytes(solver, X.shape[0], s, Y.shape[1])
        self.phase_seconds_ = {solver: seconds}
        self.loss_, self.regularizer_ = loss, regularizer
        if self.verbose and solver == "direct":
            print(f"skylite: closed form of the squared loss with l2 (s={s}): {seconds:.2f}s")
        return self

    def _validation_outputs(self, X_val):
        """W -> z(X_val) W for the per-iteration validation score, with the blocks of X_val
        kept when they fit in at most VALIDATION_CACHE_BYTES and the memory budget.  Returns
        the function and the bytes it keeps."""
        budget = (available_memory_bytes() // 8 if self.memory_budget is None
                  else self.memory_budget)
        cache = CachedOutputs(self.feature_map_, X_val, n_threads=self.n_threads,
                              budget_bytes=min(budget, VALIDATION_CACHE_BYTES),
                              dtype=np.float32 if self.precision == "float32" else None)
        return (lambda W, X: cache(W)), cache.nbytes

    @property
    def decision_function(self):
        """Decision values of a classifier (see `_decision_function`); regressors have no
        decision_function (scikit-learn's convention): use `predict`."""
        if not self.is_classifier:
            raise AttributeError(f"{type(self).__name__} is a regressor and has no "
                                 f"decision_function; use predict")
        return self._decision_function

    def _decision_function(self, X):
        """Decision values from the outputs z(X) W (n x m): shape (n, m), or (n,) for two
        classes, positive for classes_[1] (skylite.prox.coding.decision_values)."""
        X = self._check_X(X)
        return decision_values(self._model_outputs(X), self.loss_)

    def predict(self, X):
        """Class labels (classification) or predicted targets (regression).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            The rows.

        Returns
        -------
        y : ndarray of shape (n,) or (n, m)
            The predictions.
        """
        X = self._check_X(X)
        return self._predict_from(self._model_outputs(X))

    def _predict_from(self, O):
        if hasattr(self, "classes_"):
            return self.classes_[decode_decision(O)]
        return O.ravel() if getattr(self, "_y_1d", False) else O

    def score(self, X, y):
        """Mean accuracy (classification) or the coefficient of determination R^2.

        Under a communicator: over every rank's rows.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            The rows.
        y : array-like of shape (n,) or (n, m)
            Their true labels or targets.

        Returns
        -------
        score : float
            Accuracy or R^2.
        """
        dist = self._distributed()
        return stats.score(dist, dist.agree(self.predict, X), y,
                           classification=hasattr(self, "classes_"))

    def objective(self, X, y):
        """F(W) = (1/n) sum_i V(y_i, z(x_i)^T W) + alpha r(W) on these rows.

        Under a communicator: on every rank's rows, with n the global count.

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            The rows.
        y : array-like of shape (n,) or (n, m)
            Their labels or targets.

        Returns
        -------
        objective : float
            F(W).
        """
        dist = self._distributed()
        O, Y = dist.agree(self._outputs_and_targets, X, y)
        return stats.objective(dist, self.loss_, O, Y, self.alpha, self._regularizer_value())

    def _regularizer_value(self):
        """r at the fitted model: r(coef_), or for the exact kernel solvers the RKHS norm
        1/2 ||f||^2 = 1/2 tr(A^T K A) with A = dual_coef_ (the l2 regularizer there)."""
        if getattr(self, "dual_coef_", None) is not None:
            A = self.dual_coef_
            return 0.5 * float(np.vdot(A, kernel_matvec(self.kernel_, self.X_fit_, A)))
        return self.regularizer_.value(self.coef_)

    def _outputs_and_targets(self, X, y):
        X = self._check_X(X)
        if hasattr(self, "classes_"):
            Y, _ = code_labels(np.asarray(y), self.loss_, classes=self.classes_)
        else:
            Y = np.asarray(y, dtype=np.float64).reshape(X.shape[0], -1)
        return self._model_outputs(X), Y


# parameters that may differ between MPI ranks: they change no collective decision
_RANK_LOCAL = ("comm", "callback", "verbose", "n_threads", "memory_budget", "checkpoint")


def _comparable(value):
    """A parameter's value as text that two ranks can compare (objects by their parameters;
    a random generator, whose state is each rank's own, by its type)."""
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return type(value).__name__
    return repr(value)


def _is_ridge(loss, regularizer):
    """Whether (loss, regularizer) is ridge regression, the squared loss with l2: the problem
    the solvers of skylite.krr solve without the ADMM (with alpha > 0)."""
    return loss.name == "squared" and regularizer.name == "l2"


def _regularizer_for_map(regularizer, fmap, precision):
    """l2 on a Nystroem map of several column blocks becomes the RKHS norm of the functions
    it spans (skylite.prox.RKHSNorm, kept in the fit's precision): the full-Nystroem problem
    whatever the blocks."""
    if (regularizer.name == "l2" and hasattr(fmap, "rkhs_gram")
            and fmap.transform_op_.n_blocks > 1):
        return RKHSNorm(fmap, np.float32 if precision == "float32" else np.float64)
    return regularizer


def _target_columns(y):
    """Real targets y, (n,) or (n, m), as an n x m float64 array of columns."""
    return np.ascontiguousarray(y.reshape(len(y), -1), dtype=np.float64)


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


class _EarlyStopping:
    """An engine callback: remembers the W of the best validation value (the lowest
    "validation_loss" for scoring="loss", the highest "validation" score for "score") and
    stops the run after `patience` iterations without a better one (then calls the user's
    callback, if any).  The values are global under MPI, so every rank takes the same
    decision."""

    def __init__(self, patience, scoring="score", callback=None):
        self.patience = patience
        self.key, self.sign = (("validation_loss", -1.0) if scoring == "loss"
                               else ("validation", 1.0))
        self.callback = callback
        self.best_score = -np.inf
        self.best_W = None
        self.best_iteration = 0

    def __call__(self, iteration, record, W):
        stop = bool(self.callback(iteration, record, W)) if self.callback else False
        value = self.sign * record[self.key]
        if value > self.best_score:
            self.best_score, self.best_W = value, W.copy()
            self.best_iteration = iteration
        return stop or iteration - self.best_iteration >= self.patience


class _KernelClassifier(ClassifierMixin, KernelMachine):
    """A kernel machine whose loss must take class labels (scikit-learn's classifier)."""
    _classifier = True
    score = KernelMachine.score          # global under `comm` (the mixin's is local)


class _KernelRegressor(RegressorMixin, KernelMachine):
    """A kernel machine whose loss must take real targets (scikit-learn's regressor)."""
    _classifier = False
    score = KernelMachine.score          # global under `comm` (the mixin's is local)


class KernelSVC(_KernelClassifier):
    __doc__ = estimator_docstring("KernelSVC", """Kernel support vector classifier: hinge loss,
    one-vs-rest over the classes, on random features.""", "hinge", True)
    _default_loss = "hinge"


class KernelLogisticRegression(_KernelClassifier):
    __doc__ = estimator_docstring("KernelLogisticRegression", """Multinomial kernel logistic
    regression on random features; `predict_proba` gives class probabilities.""",
                                  "logistic", True)
    _default_loss = "logistic"

    def predict_proba(self, X):
        """Class probabilities softmax(z(X) W).

        Parameters
        ----------
        X : array-like or CSR matrix of shape (n, d)
            The rows.

        Returns
        -------
        proba : ndarray of shape (n, n_classes)
            One row of probabilities per row of X.
        """
        X = self._check_X(X)
        return softmax(self._model_outputs(X))


class KernelRidge(_KernelRegressor):
    __doc__ = estimator_docstring("KernelRidge", """Kernel ridge regression (squared loss)
    on random features.""", "squared", False)
    _default_loss = "squared"


class KernelLADRegression(_KernelRegressor):
    __doc__ = estimator_docstring("KernelLADRegression", """Least-absolute-deviations kernel
    regression (absolute loss) on random features: robust to outliers in y.""", "lad",
    False)
    _default_loss = "lad"


#: the preset of each loss name (`skylite train --loss NAME` builds it)
PRESETS = {cls._default_loss: cls for cls in (KernelSVC, KernelLogisticRegression,
                                               KernelRidge, KernelLADRegression)}


def load(path):
    """Read a model written by `KernelMachine.save` (skylite.persistence).

    Raises ValueError for a corrupted or foreign file.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    model : KernelMachine
        The fitted estimator, of the class it was saved from.
    """
    classes = (KernelMachine, *PRESETS.values())
    return persistence.load(path, {cls.__name__: cls for cls in classes})


def _in_place(X):
    """An h5py dataset as an ndarray view of its file where HDF5 allows (contiguous,
    uncompressed: memory-mapped; else read in its own dtype, skylite.io.arrays.hdf5_rows);
    anything else as it is.  np.memmap / .npy arrays need nothing: float32 and float64 rows
    pass validation without a copy, and the engine reads them block by block."""
    return hdf5_rows(X) if is_hdf5_dataset(X) else X
