"""The problem an estimator's parameters define, resolved at fit time: the loss, the kernel
(with scikit-learn's gamma="scale" / sigma="scale" bandwidth), the feature map and its
column-block layout, and the regularization weight alpha, given as alpha or, for the
classifiers, as scikit-learn's C (alpha = 1 / (n C)).

`ProblemParameters` is a mixin of `skylite.estimators.KernelMachine`; `with_C` gives the
classifiers' __init__ its C.
"""
import functools
import inspect
from copy import deepcopy

import numpy as np

from . import _global_stats as stats
from . import kernels as kernels_module
from ._validation import check_positive
from .admm.settings import EngineSettings
from .prox import get_loss
from .sketch import FeatureMap, default_layout_blocks

__all__ = ["ProblemParameters", "with_C", "resolved_method"]

_KERNELS = kernels_module.KERNELS

# method="auto": per kernel, the feature map that gave the most accuracy per second of fit
# where it was measured (docs/feature_maps.md, "Which map gives the most accuracy per
# second"); the kernels not listed keep their first method.
AUTO_METHODS = {kernels_module.Gaussian: "nystroem"}


def resolved_method(method, kernel):
    """The feature-map method a fit uses: `method`, or for "auto" the measured default of
    `kernel` (a kernel name, a skylite.kernels class or object; None: the kernel's first
    method)."""
    if method != "auto":
        return method
    if isinstance(kernel, str):
        kernel = _KERNELS.get(kernel.lower(), (None,))[0]
    return AUTO_METHODS.get(kernel if isinstance(kernel, type) else type(kernel))


class ProblemParameters:
    """How a KernelMachine turns its parameters into the problem it fits (module docstring)."""

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
            if "scale" in (self.sigma, self.gamma) or (self.sigma is None
                                                       and self.gamma is None):
                # scikit-learn's gamma="scale", 1 / (d Var X), as a bandwidth
                params["sigma"] = stats.scale_sigma(
                    X, self._distributed() if dist is None else dist)
            elif self.gamma is not None:
                gamma = check_positive(self.gamma, "gamma")
                # scikit-learn: rbf exp(-gamma ||x - y||^2), laplacian exp(-gamma ||x - y||_1)
                params["sigma"] = (1.0 / gamma if cls is kernels_module.Laplacian
                                   else 1.0 / np.sqrt(2.0 * gamma))
        elif params.get("gamma") == "scale":          # polynomial: gamma x.y, 1 / (d Var X)
            sigma = stats.scale_sigma(X, self._distributed() if dist is None else dist)
            params["gamma"] = 1.0 / (2.0 * sigma * sigma)
        return cls(**params)

    def _make_feature_map(self, X, dist):
        """(the fitted feature map, the kernel it approximates or None for a user's map)."""
        if self.feature_map is not None:
            if not isinstance(self.feature_map, FeatureMap):
                raise ValueError(f"feature_map must be a skylite.sketch map, "
                                 f"got {self.feature_map!r}")
            self.method_ = None
            return deepcopy(self.feature_map).fit_distributed(X, dist, checked=True), None
        kernel = self._kernel_object(X, dist)
        n_features = check_positive(self.n_features, "n_features", integer=True)
        method = resolved_method(self.method, kernel)
        self.method_ = kernel.methods[0] if method is None else method
        counts = dist.allgather(X.shape[0])
        if self.method == "auto" and method == "nystroem":
            n_features = min(n_features, sum(counts))  # one landmark per row: exact
        n_blocks = self.n_blocks
        if n_blocks is None:     # from the problem alone: the same model on every machine
            identity = (isinstance(kernel, kernels_module.Linear)      # s = d, not chosen
                        and method in (None, "identity"))
            n_blocks = default_layout_blocks(X.shape[1] if identity else n_features,
                                             max(counts), method=method, identity=identity)
        fmap = kernel.feature_map(n_features, n_blocks=n_blocks,
                                  random_state=self.random_state, method=method,
                                  landmarks=self.landmarks)
        return fmap.fit_distributed(X, dist, checked=True), kernel

    def _checked_regularization(self):
        """("alpha", alpha) or, for a classifier given `C`, ("C", C), checked (ValueError):
        the regularization as given, before any data."""
        if not hasattr(self, "C"):                        # regressors and KernelMachine
            return "alpha", EngineSettings.check("alpha", self.alpha)
        if self.alpha is not None:
            if self.C != inspect.signature(type(self)).parameters["C"].default:
                raise ValueError(f"give C or alpha, not both (C={self.C!r}, "
                                 f"alpha={self.alpha!r}; C = 1 / (n alpha))")
            return "alpha", EngineSettings.check("alpha", self.alpha)
        return "C", check_positive(self.C, "C")

    def _resolved_alpha(self, dist, n_rows):
        """The alpha of the problem fitted: `alpha`, or for a classifier given `C`,
        alpha = 1 / (n C) with n the rows the loss averages over (this fit's rows, every
        rank's), so that the same C is the same model strength at any number of rows, as
        in scikit-learn's SVC and LIBSVM."""
        name, value = self._checked_regularization()
        if name == "alpha":
            return value
        n = int(dist.sum_to_all(np.array([n_rows], dtype=np.float64))[0])
        return 1.0 / (n * value)


def with_C(init, C=1.0, **defaults):
    """KernelMachine.__init__ with scikit-learn's C beside alpha, for the classifiers:
    C (default `C`) and ``alpha=None`` (alpha, when given, replaces C); `defaults` replace
    the defaults of other parameters (KernelSVC's measured method="auto").  scikit-learn
    reads an estimator's parameters from the signature of its __init__ (get_params,
    clone), so the wrapper declares the whole signature, with C placed before alpha."""
    signature = inspect.signature(init)
    parameters = []
    for parameter in signature.parameters.values():
        if parameter.name == "alpha":
            parameters.append(inspect.Parameter("C", parameter.KEYWORD_ONLY, default=C))
            parameter = parameter.replace(default=None)
        elif parameter.name in defaults:
            parameter = parameter.replace(default=defaults[parameter.name])
        parameters.append(parameter)
    default_C = C

    @functools.wraps(init)
    def __init__(self, *args, C=default_C, alpha=None, **kwargs):
        init(self, *args, alpha=alpha, **{**defaults, **kwargs})
        self.C = C
    __init__.__signature__ = signature.replace(parameters=parameters)
    return __init__
