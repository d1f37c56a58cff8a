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
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import ClassifierTags, RegressorTags

from . import _global_stats as stats
from . import kernels as kernels_module
from . import persistence
from ._all_or_nothing import restored_on_failure
from ._distributed import Distributed
from ._early_stopping import EarlyStopping, EarlyStoppingParameters
from ._estimator_docs import estimator_docstring
from ._estimator_inputs import InputChecks
from ._linalg import kernel_matvec
from ._outputs import CachedOutputs, outputs
from ._path import PathFitting
from ._problem import ProblemParameters, with_C
from ._machine import available_memory_bytes
from ._solvers import ClosedForm, regularizer_for_map, resolve_solver
from ._validation import resolve_seed, take_rows
from .admm import BlockADMM
from .admm.driver import Driver
from .admm.dual_cd import DUAL_CD_TOL_PER_TOL, DualCD, DualCDPath
from .admm.pcg import PCG
from .admm.settings import DEFAULTS, EngineSettings
from .admm.whitening import WhitenedBlockADMM, early_stopping_readout, whitening_factor
from .prox import get_regularizer
from .prox.coding import code_labels, decision_values, decode_decision, softmax

_KERNELS = kernels_module.KERNELS
#: the kernel names `KernelMachine(kernel=...)` accepts
KERNEL_NAMES = tuple(_KERNELS)

# The most the feature blocks of the validation rows may keep between iterations (1 GiB:
# MNIST's 6,000 early-stopping rows at s = 16384 in float32 take 393 MB).
VALIDATION_CACHE_BYTES = 2**30


class KernelMachine(ProblemParameters, InputChecks, EarlyStoppingParameters, PathFitting,
                    BaseEstimator):
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
                 cache_precision=DEFAULTS.cache_precision, random_state=0,
                 verbose=DEFAULTS.verbose, callback=None,
                 early_stopping="auto", validation_fraction=None, n_iter_no_change=10,
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
        self.cache_precision = cache_precision
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

    def __setstate__(self, state):
        if "coef_" in state and "precision_" not in state:   # pickled before precision_
            precision = state.get("precision", "float64")
            state["precision_"] = "float64" if precision == "auto" else precision
        super().__setstate__(state)

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
        with restored_on_failure(self):
            self._fit(X, y, X_val, y_val, warm_start)
        return self

    def _fit(self, X, y, X_val, y_val, warm_start, path=None):
        """`fit`'s work, which sets the fitted attributes as it goes; with a `path`
        (skylite._path.RegularizationPath), its further values are solved on this setup."""
        dist = self._distributed()      # every local step below is agreed by all ranks
        self._agree_settings(dist, X_val is not None, y_val is not None)
        self.n_threads_ = dist.agree(self._check_rank_local)  # what the native code will use
        if (X_val is None) != (y_val is None):
            given, missing = ("X_val", "y_val") if y_val is None else ("y_val", "X_val")
            raise ValueError(f"{given} was given without {missing}: pass both or neither")
        X, y = dist.agree(self._validate_training_rows, X, y)
        dist.same_everywhere("number of input features (columns of X)", X.shape[1])
        self.precision_ = self._resolved_precision(dist, X)
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
            X_val, y_val = take_rows(X, val_rows), y[val_rows]
            if self.validation_fraction is not None:      # held out: not fitted on
                X, Y = take_rows(X, fit_rows), Y[fit_rows]
            self.validation_indices_ = val_rows
        self.alpha_ = self._resolved_alpha(dist, X.shape[0])
        self.feature_map_, kernel = self._make_feature_map(X, dist)   # sigma from the fit rows
        self.sigma_ = getattr(kernel, "sigma", None)
        regularizer = regularizer_for_map(regularizer, self.feature_map_, self.precision_)
        iterative = (X_val is not None or self.early_stopping_ or self.checkpoint is not None
                     or self.callback is not None or warm_start is not None)
        solver = self.solver_ = resolve_solver(
            self.solver, loss, regularizer, self.alpha_, self.feature_map_.n_features,
            iterative=iterative, distributed=self.comm is not None)
        if solver in ("exact", "pcg") and kernel is None:     # a user's map: its kernel
            kernel = self._kernel_object(X, dist)
        if solver in ("direct", "exact"):
            closed_form = ClosedForm(solver, X, Y, feature_map=self.feature_map_,
                                     kernel=kernel, precision=self.precision_,
                                     keep=path is not None and len(path.values) > 1,
                                     verbose=self.verbose)
            result = closed_form.solve(self.alpha_)
            if self.verbose and solver == "direct":
                print(f"skylite: closed form of the squared loss with l2 "
                      f"(s={self.feature_map_.n_features}): {result.phase_seconds['direct']:.2f}s")
            self._set_fitted(result, None, loss, regularizer, kernel)
            if path is not None:
                path.continue_from(self, closed_form, dist, X.shape[0], None,
                                   (loss, regularizer, kernel))
            return
        validation, callback, early = None, self.callback, None
        memory_budget = self.memory_budget
        method = None
        if solver == "pcg":
            method = PCG(kernel, self.feature_map_, self.alpha_, self.tol)
        elif solver == "dcd":
            method = DualCD(self.feature_map_, regularizer, self.alpha_,
                            DUAL_CD_TOL_PER_TOL * self.tol, resolve_seed(self.random_state),
                            self.n_threads_, self.max_iter)
        early_stops = X_val is not None and patience is not None
        validation_outputs = None
        if X_val is not None and solver != "pcg":   # a primal model W on the map's features
            validation_outputs = self._validation_cache(X_val, self.feature_map_)
            if memory_budget is not None:
                memory_budget = max(0, memory_budget - validation_outputs.nbytes)
        elif X_val is not None:
            validation_outputs = (lambda A, X_rows: kernel_matvec(kernel, method.X_all, A,
                                                                  X_rows))
        settings = self._engine_settings(memory_budget=memory_budget, alpha=self.alpha_,
                                         precision=self.precision_)
        factor = unwhitening = model = None
        if method is None:
            long_run = not early_stops or (path is not None and len(path.values) > 1)
            factor = dist.agree(whitening_factor, self.feature_map_, regularizer, settings,
                                X.shape[0], available_memory_bytes() // dist.ranks_on_node(),
                                long_run, self.n_threads_)
            if not all(dist.allgather(factor is not None)):      # every rank, or none
                factor = None
        readout = None
        if factor is not None and early_stops:
            # early stopping is given W~ and scores whitened validation rows, instead of
            # reading W = U W~ every iteration (skylite.admm.whitening); the whitened rows
            # replace the cached blocks
            readout = early_stopping_readout(dist, factor, validation_outputs, self.n_threads_,
                                             self._feature_dtype())
            if readout is not None:
                unwhitening, validation_outputs, model = readout
        if X_val is not None:
            Y_val = dist.agree(self._code_validation_targets, y_val, loss, classes,
                               Y.shape[1])
            validation = stats.CollectiveValidation(dist, validation_outputs,
                                                    self._predict_from, X_val, y_val,
                                                    classes is not None, loss, Y_val)
            if early_stops:
                early = callback = EarlyStopping(patience, self.tol, self.scoring,
                                                 self.callback, model)
        runtime = dict(callback=callback, validation=validation, comm=self.comm)
        engine = None
        if method is None:
            if factor is None:
                engine = BlockADMM(self.feature_map_, loss, regularizer, settings, **runtime)
            else:
                engine = WhitenedBlockADMM(self.feature_map_, loss, regularizer, settings,
                                           factor=factor, unwhitening=unwhitening,
                                           whitened_readout=readout is not None, **runtime)
            result = engine.fit(X, Y, W0=warm_start, checked=True).result_
        else:
            driver = Driver(method, settings.driver(), **runtime)
            result = driver.run(X, Y, warm_start, checked=True)
            if solver == "dcd":
                engine = DualCDPath(method, driver)
        self._set_fitted(result, early, loss, regularizer, kernel)
        if path is not None:
            new_early = (lambda: None) if early is None else (
                lambda: EarlyStopping(patience, self.tol, self.scoring, self.callback, model))
            path.continue_from(self, engine, dist, X.shape[0], new_early,
                               (loss, regularizer, kernel))

    def _set_fitted(self, result, early, loss, regularizer, kernel):
        """The fitted attributes from a solver's RunResult (the one place that writes them):
        the model (coef_, or for the exact kernel solvers dual_coef_ over X_fit_), the best
        iteration's model when early stopping kept one, and how the run went."""
        coef, best = result.coef, result.n_iter
        if early is not None and early.best_W is not None:
            coef, best = early.best_model(), early.best_iteration
        if "X_fit" in result.details:              # a dual model over the training rows
            self.dual_coef_, self.X_fit_, self.kernel_ = coef, result.details["X_fit"], kernel
            self.coef_ = None
        else:
            self.coef_ = coef.copy() if early is None else coef
        self.best_iteration_ = best
        self.n_iter_ = result.n_iter
        self.history_ = result.history
        self.converged_ = result.converged
        self.memory_estimate_ = result.memory_estimate
        self.phase_seconds_ = result.phase_seconds
        if "n_row_blocks" in result.details:
            self.n_row_blocks_ = result.details["n_row_blocks"]
            self.sweep_ = result.details["sweep"]
            self.cache_precision_ = result.details["cache_precision"]
        self.loss_ = loss
        self.regularizer_ = regularizer
        return self

    def _engine_settings(self, **overrides):
        """The EngineSettings of this estimator: its parameters named like an engine option
        (alpha, rho, max_iter, ...), with `overrides`; checks them (ValueError)."""
        params = self.get_params(deep=False)
        if params.get("alpha") is None:      # a classifier given C: alpha_ is set at fit
            params["alpha"] = getattr(self, "alpha_", DEFAULTS.alpha)
        return EngineSettings(**{name: overrides.get(name, params[name])
                                 for name in EngineSettings.names() if name in params})

    def save(self, path):
        """Write the fitted model to `path` (see skylite.persistence); `skylite.load` reads it.

        Under a communicator only rank 0 writes (the model is the same on every rank), and
        if it fails every rank raises its error.

        Parameters
        ----------
        path : str or path-like
            The file to write.
        """
        dist = self._distributed()
        dist.agree(lambda: persistence.save(self, path) if dist.is_root else None)

    # ---- evaluation ----

    def _model_outputs(self, X):
        """The fitted model's outputs on validated rows X: z(X) coef_, or, for the exact
        kernel solvers, K(X, X_fit_) dual_coef_."""
        if getattr(self, "dual_coef_", None) is not None:
            return kernel_matvec(self.kernel_, self.X_fit_, self.dual_coef_, X)
        return self._outputs(self.coef_, X)

    def _feature_dtype(self):
        """The precision of the model's feature blocks (`precision_`) as a dtype, or None
        for float64."""
        return np.float32 if self.precision_ == "float32" else None

    def _outputs(self, W, X):
        """O = z(X) W (n x m), block by block over chunks of rows, in the model's precision."""
        return outputs(self.feature_map_, W, X, n_threads=self.n_threads,
                       dtype=self._feature_dtype())

    def _validation_cache(self, X_val, feature_map):
        """(W, X) -> z(X_val) W (z: the fitted `feature_map`, a CachedOutputs) for the
        per-iteration validation score, with the blocks of X_val kept when they fit in at
        most VALIDATION_CACHE_BYTES and the memory budget (its `nbytes`)."""
        budget = (available_memory_bytes() // 8 if self.memory_budget is None
                  else self.memory_budget)
        return CachedOutputs(feature_map, X_val, n_threads=self.n_threads,
                             budget_bytes=min(budget, VALIDATION_CACHE_BYTES),
                             dtype=self._feature_dtype())

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
        prediction, y = dist.agree(self._predictions_and_targets, X, y)
        return stats.score(dist, prediction, y, classification=hasattr(self, "classes_"))

    def _predictions_and_targets(self, X, y):
        """This rank's predictions of X and its y, checked to match them in length.  Under
        a communicator a rank may hold no row (e.g. of a cross-validation fold)."""
        y = np.asarray(y)
        if self.comm is not None and getattr(X, "shape", (None,))[0] == 0 and y.shape[0] == 0:
            return np.empty(y.shape, dtype=getattr(self, "classes_", y).dtype), y
        prediction = self.predict(X)
        if y.shape[0] != prediction.shape[0] or (not hasattr(self, "classes_")
                                                 and y.size != prediction.size):
            raise ValueError(f"y has shape {y.shape}, the predictions of X "
                             f"{prediction.shape}: one target per row of X")
        return prediction, y

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
        return stats.objective(dist, self.loss_, O, Y, self.alpha_, self._regularizer_value())

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


# KernelSVC's defaults, chosen by measurement on validation rows (docs/choosing_parameters.md,
# "Defaults"): of C in {1, 2, 5, 10}, 10 had the best mean validation accuracy over MNIST
# 2k/6k/20k, pendigits and letter (benchmarks/bench_default_c.py; one-vs-rest without an
# intercept is not SVC's one-vs-one, so SVC's C = 1 need not suit it), and Nystroem
# features gave the most accuracy per second (benchmarks/bench_default_map.py)
SVC_DEFAULTS = {"C": 10.0, "method": "auto"}


class _KernelClassifier(ClassifierMixin, KernelMachine):
    """A kernel machine whose loss must take class labels (scikit-learn's classifier), with
    scikit-learn's C."""
    _classifier = True
    __init__ = with_C(KernelMachine.__init__)
    score = KernelMachine.score          # global under `comm` (the mixin's is local)


class _KernelRegressor(RegressorMixin, KernelMachine):
    """A kernel machine whose loss must take real targets (scikit-learn's regressor)."""
    _classifier = False
    score = KernelMachine.score          # global under `comm` (the mixin's is local)


class KernelSVC(_KernelClassifier):
    __doc__ = estimator_docstring("KernelSVC", """Kernel support vector classifier: hinge loss,
    one-vs-rest over the classes, on Nystroem features by default (method="auto") or random
    features.""", "hinge", True,
                                  defaults=SVC_DEFAULTS)
    _default_loss = "hinge"
    __init__ = with_C(KernelMachine.__init__, **SVC_DEFAULTS)


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
