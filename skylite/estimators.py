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
import warnings

import numpy as np

from . import kernels as kernels_module
from ._distributed import Distributed
from ._global_stats import (CollectiveValidation, distributed, global_objective,
                            global_scale_sigma, global_score, labels_1d)
from ._params import Params
from ._threads import resolve_threads
from ._sklearn import data_conversion_warning, not_fitted_error
from ._validation import as_real_array, check_positive, check_rows
from .admm import BlockADMM
from .prox import get_loss, get_regularizer
from .prox.coding import code_labels, decode_decision, softmax
from .sketch import FeatureMap

# Rows per chunk when outputs are computed block by block (memory: rows x max s_j).
_PREDICT_ROWS = 8192

_KERNELS = {
    "gaussian": (kernels_module.Gaussian, ("sigma",)),
    "rbf": (kernels_module.Gaussian, ("sigma",)),
    "laplacian": (kernels_module.Laplacian, ("sigma",)),
    "matern": (kernels_module.Matern, ("nu", "length_scale")),
    "polynomial": (kernels_module.Polynomial, ("degree", "gamma", "coef0")),
    "exp_semigroup": (kernels_module.ExpSemigroup, ("beta",)),
    "linear": (kernels_module.Linear, ()),
}


class KernelMachine(Params):
    """A kernel machine trained by BlockADMM on random features.

    Parameters
    ----------
    kernel : str or skylite.kernels.Kernel
        "gaussian" (alias "rbf"), "laplacian", "matern", "polynomial", "exp_semigroup",
        "linear", or a kernel object such as `Gaussian(sigma=5)`.  Ignored if `feature_map`
        is given.
    loss : str or skylite.prox Loss
        "hinge", "logistic" (classification), "squared", "lad" (regression, or
        classification with +/-1 one-vs-rest coding when `classification=True`).
    regularizer : "l2", "l1", "none" or a skylite.prox Regularizer.
    alpha : float >= 0
        Regularization weight (the paper's lambda; scikit-learn's C is 1 / (n alpha)).
    n_features : int
        s, the number of random features.
    n_blocks : int or None
        C, the number of column blocks; None: max(threads, ceil(s / 1024)).
    feature_map : skylite.sketch.FeatureMap or None
        Use this (unfitted) map instead of the kernel's default one.
    sigma, gamma, degree, coef0, nu, length_scale, beta : kernel parameters for a kernel
        given by name (gamma for the Gaussian kernel is scikit-learn's: sigma =
        1 / sqrt(2 gamma)).  For "gaussian"/"laplacian" without sigma or gamma, sigma is set
        from the data: sqrt(d * Var(X) / 2) (scikit-learn's gamma="scale").
    classification : bool or None
        Whether y holds class labels; None means True for hinge/logistic, False otherwise.
    method : str or None
        The kernel's feature-map method (e.g. "fastfood" for the Gaussian kernel).
    rho, max_iter, tol, adapt_rho : ADMM controls (see skylite.admm.BlockADMM).
    n_threads : int or None (all cores)
    memory_budget : bytes for caching Z blocks / map parameters (0: none; None: half the
        available memory).
    precision : "float64" or "float32" (precision of the feature transform).
    random_state : int, numpy generator or None.
    verbose : bool, one line per iteration.
    callback : callable(iteration, record, W) -> bool or None; True stops training.
    n_iter_no_change : int or None
        Early stopping on the validation set of `fit(X_val=, y_val=)`: stop when its score
        has not improved for this many iterations, and keep the W of the best iteration
        (`best_iteration_`).  Test accuracy often peaks well before the residuals meet
        `tol` (MNIST: after 20-30 of 222 iterations).  A run resumed from a checkpoint
        tracks the best score from the resumed iteration on.
    comm : mpi4py communicator or None.  Under it every rank calls `fit` with its own rows:
        the fitted model, `objective` and `score` are global and identical on every rank
        (sigma, classes and scores computed collectively); `predict` stays row-wise and
        local; `save` writes on rank 0 only.  Never pickled or saved.  See docs/mpi.md.
    checkpoint : path or None; checkpoint_every : int.  Save the full ADMM state every
        `checkpoint_every` iterations; a `fit` that finds the file(s) resumes from them
        (see skylite.admm.checkpoint).

    Attributes
    ----------
    coef_ : (s, m) weights.  feature_map_ : the fitted map.  classes_ : labels
    (classification).  n_iter_ : iterations run.  best_iteration_ : the iteration whose W
    is coef_ (n_iter_ unless early stopping kept an earlier one).  history_ : one dict per
    iteration (objective, primal and dual residuals, rho, validation score, seconds).
    memory_estimate_ : the paper's per-process memory estimate in bytes.
    """

    _default_loss = "hinge"

    def __init__(self, kernel="gaussian", *, loss=None, regularizer="l2", alpha=1e-4,
                 n_features=2048, n_blocks=None, feature_map=None, sigma=None, gamma=None,
                 degree=None, coef0=None, nu=None, length_scale=None, beta=None,
                 classification=None, method=None, rho=1.0, max_iter=500, tol=1e-3,
                 adapt_rho=True, n_threads=None, memory_budget=None, precision="float64",
                 random_state=0, verbose=False, callback=None, n_iter_no_change=None,
                 comm=None, checkpoint=None, checkpoint_every=10):
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
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.adapt_rho = adapt_rho
        self.n_threads = n_threads
        self.memory_budget = memory_budget
        self.precision = precision
        self.random_state = random_state
        self.verbose = verbose
        self.callback = callback
        self.n_iter_no_change = n_iter_no_change
        self.comm = comm
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    def __getstate__(self):
        state = self.__dict__.copy()
        state["comm"] = None          # a communicator belongs to this process's MPI job
        return state

    def __repr__(self):
        defaults = type(self)().get_params()
        changed = {k: v for k, v in self.get_params().items() if not _same(v, defaults[k])}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def __sklearn_tags__(self):
        from ._sklearn import estimator_tags
        return estimator_tags(self._is_classifier())

    @property
    def _estimator_type(self):
        """"classifier" or "regressor" (scikit-learn's pre-1.6 protocol)."""
        return "classifier" if self._is_classifier() else "regressor"

    # ---- building blocks ----

    def _loss_object(self):
        loss = self._default_loss if self.loss is None else self.loss
        if isinstance(loss, str) and loss.lower() in ("squared", "lad"):
            return get_loss(loss, classification=self._is_classifier(loss))
        return get_loss(loss)

    def _is_classifier(self, loss=None):
        if self.classification is not None:
            return bool(self.classification)
        loss = loss if loss is not None else (self._default_loss if self.loss is None
                                              else self.loss)
        name = loss if isinstance(loss, str) else getattr(loss, "name", "")
        return name.lower() in ("hinge", "logistic") or bool(getattr(loss, "classification",
                                                                     False))

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
                params["sigma"] = 1.0 / np.sqrt(2.0 * gamma)
            elif self.sigma is None:
                params["sigma"] = (global_scale_sigma(X, dist) if dist is not None
                                   else _scale_sigma(X))
        return cls(**params)

    def _make_feature_map(self, X, dist=None):
        if self.feature_map is not None:
            if not isinstance(self.feature_map, FeatureMap):
                raise ValueError(f"feature_map must be a skylite.sketch map, "
                                 f"got {self.feature_map!r}")
            from copy import deepcopy
            return Distributed(self.comm).agree(deepcopy(self.feature_map).fit, X)
        kernel = self._kernel_object(X, dist)
        check_positive(self.n_features, "n_features", integer=True)
        n_blocks = self.n_blocks
        if n_blocks is None:
            threads = resolve_threads(self.n_threads)
            n_blocks = min(self.n_features, max(threads, -(-self.n_features // 1024)))
        fmap = kernel.feature_map(self.n_features, n_blocks=n_blocks,
                                  random_state=self.random_state, method=self.method)
        return Distributed(self.comm).agree(fmap.fit, X)

    def _code_targets(self, y, loss, classes=None):
        if self._is_classifier():
            y = np.asarray(y)
            if y.ndim == 2 and y.shape[1] == 1:
                warnings.warn("A column-vector y was passed when a 1d array was expected; "
                              "y.ravel() is used", data_conversion_warning(), stacklevel=3)
                y = y.ravel()
            _check_class_labels(y)
            return code_labels(y, loss, classes=classes)
        y = as_real_array(y, "y")
        if y.ndim not in (1, 2):
            raise ValueError(f"y must be 1-D or 2-D, got {y.ndim}-D")
        if not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity")
        self._y_1d = y.ndim == 1
        return np.ascontiguousarray(y.reshape(len(y), -1), dtype=np.float64), None

    # ---- fitting ----

    def fit(self, X, y, *, X_val=None, y_val=None, warm_start=None):
        """Train on rows X (n x d, dense or CSR) and targets y.

        X_val, y_val: optional validation set scored every iteration (accuracy or R^2,
        recorded in history_).  warm_start: an (s x m) W to start from (e.g. a previous
        coef_ with the same feature map).  Returns self.
        """
        dist = Distributed(self.comm)       # every local step below is agreed by all ranks
        X, y = dist.agree(_check_fit_rows, X, y, type(self).__name__)
        loss = self._loss_object()
        regularizer = get_regularizer(self.regularizer)
        for stale in ("classes_", "_y_1d"):       # from an earlier fit of another kind
            self.__dict__.pop(stale, None)
        classes = None
        if self._is_classifier() and not dist.serial:     # a rank may lack a class
            classes = dist.label_union(dist.agree(labels_1d, y))
        Y, classes = dist.agree(self._code_targets, y, loss, classes)
        if classes is not None:
            self.classes_ = classes
        self.feature_map_ = self._make_feature_map(X, None if dist.serial else dist)
        self.n_features_in_ = X.shape[1]
        validation = None
        if X_val is not None:
            X_val_checked = dist.agree(check_rows, X_val, name="X_val", n_features=X.shape[1])
            validation = lambda W: self._score_with(W, X_val_checked, y_val)
            if not dist.serial:
                validation = CollectiveValidation(dist, self._outputs, self._predict_from,
                                                  X_val_checked, y_val,
                                                  hasattr(self, "classes_"))
        callback, early = self.callback, None
        if self.n_iter_no_change is not None:
            if X_val is None:
                raise ValueError("n_iter_no_change (early stopping) needs a validation set: "
                                 "fit(X, y, X_val=..., y_val=...)")
            early = _EarlyStopping(check_positive(self.n_iter_no_change, "n_iter_no_change",
                                                  integer=True), self.callback)
            callback = early
        engine = BlockADMM(self.feature_map_, loss, regularizer, self.alpha, rho=self.rho,
                           max_iter=self.max_iter, tol=self.tol, n_threads=self.n_threads,
                           memory_budget=self.memory_budget, precision=self.precision,
                           adapt_rho=self.adapt_rho, verbose=self.verbose,
                           callback=callback, validation=validation, comm=self.comm,
                           checkpoint=self.checkpoint,
                           checkpoint_every=self.checkpoint_every)
        engine.fit(X, Y, W0=warm_start)
        self.coef_ = engine.coef_.copy()
        self.best_iteration_ = engine.n_iter_
        if early is not None and early.best_W is not None:
            self.coef_, self.best_iteration_ = early.best_W, early.best_iteration
        self.n_iter_ = engine.n_iter_
        self.history_ = engine.history_
        self.converged_ = engine.converged_
        self.memory_estimate_ = engine.memory_estimate_
        self.phase_seconds_ = engine.phase_seconds_
        self.loss_ = loss
        self.regularizer_ = regularizer
        return self

    def save(self, path):
        """Write the fitted model to `path` (see skylite.persistence); `skylite.load` reads it.
        Under a communicator only rank 0 writes (the model is the same on every rank)."""
        from .persistence import save
        if self.comm is not None and self.comm.Get_rank() != 0:
            return
        save(self, path)

    # ---- evaluation ----

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise not_fitted_error(f"This {type(self).__name__} instance is not fitted yet: "
                                   f"call fit first")

    def _check_X(self, X):
        self._check_fitted()
        return check_rows(X, n_features=self.n_features_in_, who=type(self).__name__)

    def _outputs(self, W, X):
        """O = z(X) W (n x m), block by block over chunks of rows."""
        fmap = self.feature_map_
        offsets = np.concatenate([[0], np.cumsum(fmap.block_sizes)])
        O = np.zeros((X.shape[0], W.shape[1]))
        for start in range(0, X.shape[0], _PREDICT_ROWS):
            rows = X[start:start + _PREDICT_ROWS]
            for j in range(len(offsets) - 1):
                Zj = fmap.block(rows, j, n_threads=self.n_threads)
                O[start:start + rows.shape[0]] += Zj @ W[offsets[j]:offsets[j + 1]]
        return O

    @property
    def decision_function(self):
        """Decision values of a classifier (see `_decision_function`); regressors have no
        decision_function (scikit-learn's convention): use `predict`."""
        if not self._is_classifier():
            raise AttributeError(f"{type(self).__name__} is a regressor and has no "
                                 f"decision_function; use predict")
        return self._decision_function

    def _decision_function(self, X):
        """Outputs z(X) W, shape (n, m), or (n,) with one column; for two classes with the
        logistic loss, the log-odds O[:, 1] - O[:, 0] (n,)."""
        X = self._check_X(X)
        O = self._outputs(self.coef_, X)
        if O.shape[1] == 2 and getattr(self.loss_, "name", None) == "logistic":
            return O[:, 1] - O[:, 0]
        return O.ravel() if O.shape[1] == 1 else O

    def predict(self, X):
        """Class labels (classification) or predicted targets (regression)."""
        X = self._check_X(X)
        return self._predict_from(self._outputs(self.coef_, X))

    def _predict_from(self, O):
        if hasattr(self, "classes_"):
            return self.classes_[decode_decision(O)]
        return O.ravel() if getattr(self, "_y_1d", False) else O

    def _score_with(self, W, X, y):
        prediction = self._predict_from(self._outputs(W, X))
        return _score(prediction, y, classification=hasattr(self, "classes_"))

    def score(self, X, y):
        """Mean accuracy (classification) or the coefficient of determination R^2 (over
        every rank's rows under a communicator)."""
        dist = distributed(self.comm)
        if dist is not None:
            return global_score(dist, dist.agree(self.predict, X), y,
                                classification=hasattr(self, "classes_"))
        return _score(self.predict(X), y, classification=hasattr(self, "classes_"))

    def objective(self, X, y):
        """F(W) = (1/n) sum_i V(y_i, z(x_i)^T W) + alpha r(W) on these rows (on every
        rank's rows, with n the global count, under a communicator)."""
        dist = distributed(self.comm)
        if dist is not None:
            O, Y = dist.agree(self._outputs_and_targets, X, y)
            return global_objective(dist, self.loss_, O, Y, self.alpha,
                                    self.regularizer_.value(self.coef_))
        O, Y = self._outputs_and_targets(X, y)
        value = self.loss_.value(O, Y) / O.shape[0]
        return value + self.alpha * self.regularizer_.value(self.coef_)

    def _outputs_and_targets(self, X, y):
        X = self._check_X(X)
        if hasattr(self, "classes_"):
            Y, _ = code_labels(np.asarray(y), self.loss_, classes=self.classes_)
        else:
            Y = np.asarray(y, dtype=np.float64).reshape(X.shape[0], -1)
        return self._outputs(self.coef_, X), Y


def _check_fit_rows(X, y, who):
    """Validated rows X and y as an array with one entry (or row) per row of X."""
    X = check_rows(X, min_rows=1)
    if y is None:
        raise ValueError(f"{who} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 0 or len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}")
    return X, y


def _score(prediction, y, classification):
    y = np.asarray(y)
    if classification:
        return float(np.mean(prediction == y.reshape(prediction.shape)))
    y = y.astype(np.float64).reshape(prediction.shape)
    residual = np.sum((y - prediction) ** 2)
    total = np.sum((y - y.mean(axis=0)) ** 2)
    return float(1.0 - residual / total) if total > 0 else 0.0


class _EarlyStopping:
    """An engine callback: remembers the W of the best validation score and stops the run
    after `patience` iterations without a better one (then calls the user's callback, if
    any).  The score is global under MPI, so every rank takes the same decision."""

    def __init__(self, patience, callback=None):
        self.patience = patience
        self.callback = callback
        self.best_score = -np.inf
        self.best_W = None
        self.best_iteration = 0

    def __call__(self, iteration, record, W):
        stop = bool(self.callback(iteration, record, W)) if self.callback else False
        if record["validation"] > self.best_score:
            self.best_score, self.best_W = record["validation"], W.copy()
            self.best_iteration = iteration
        return stop or iteration - self.best_iteration >= self.patience


def _check_class_labels(y):
    """Reject targets that cannot be class labels: non-integral floats ("continuous")."""
    if y.dtype.kind == "f" and np.isfinite(y).all() and (y != np.round(y)).any():
        raise ValueError("Unknown label type: continuous. A classifier needs class labels; "
                         "y holds non-integer floats (use a regressor such as KernelRidge)")


def _scale_sigma(X):
    """scikit-learn's gamma='scale' as a bandwidth: sigma = sqrt(d Var(X) / 2)."""
    if hasattr(X, "toarray"):
        mean = np.asarray(X.mean())
        var = float(np.asarray(X.multiply(X).mean()) - mean**2)
    else:
        var = float(X.var())
    return float(np.sqrt(max(X.shape[1] * var, 1e-12) / 2.0))


def _same(a, b):
    try:
        return bool(a == b) if isinstance(a, (numbers.Number, str, type(None))) else a is b
    except Exception:
        return False


class KernelSVC(KernelMachine):
    """Kernel support vector classifier: hinge loss, one-vs-rest over classes."""
    _default_loss = "hinge"


class KernelLogisticRegression(KernelMachine):
    """Multinomial kernel logistic regression; `predict_proba` gives class probabilities."""
    _default_loss = "logistic"

    def predict_proba(self, X):
        """Class probabilities softmax(z(X) W), shape (n, n_classes)."""
        X = self._check_X(X)
        return softmax(self._outputs(self.coef_, X))


class KernelRidge(KernelMachine):
    """Kernel ridge regression (squared loss, l2) on random features."""
    _default_loss = "squared"


class KernelLADRegression(KernelMachine):
    """Least-absolute-deviations kernel regression (absolute loss)."""
    _default_loss = "lad"
