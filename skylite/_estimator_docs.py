"""The docstrings of the kernel machines: one text for every parameter and attribute, shared
by `KernelMachine` and its presets, so that `help(skylite.KernelSVC)` explains all of them.
The entries of the engine's options ({rho}, ...) are the settings' own
(skylite.admm.settings.EngineSettings.doc)."""
import inspect
import textwrap

from ._solvers import AUTO_RULE
from .admm.settings import EngineSettings
from .sketch import DEFAULT_BLOCKS_RULE

# the classifiers' C, with alpha in its place when given (_KernelClassifier)
_C_AND_ALPHA = """\
C : float > 0, default={C!r}
    Regularization as in scikit-learn's SVC and LIBSVM: the problem is
    (1/n) sum_i V(y_i, W^T z(x_i)) + alpha r(W) with alpha = 1 / (n C), n the rows the loss
    averages over (every rank's, less the early-stopping rows), so that the same C is the
    same model at any number of rows; larger C, weaker regularization.  `alpha_` records
    the alpha fitted.  KernelSVC's default is 10, not SVC's 1: its one-vs-rest hinge loss
    without an intercept is not SVC's one-vs-one machines, and 10 had the best validation
    accuracy of 1, 2, 5 and 10 on five data sets (docs/choosing_parameters.md, "Defaults").
alpha : float >= 0 or None, default=None
    The regularization weight itself, in place of C (then leave C at {C!r}): alpha = 1 / (n C).
    None: from C."""

_PARAMETERS = """\
Parameters
----------
kernel : str or skylite.kernels.Kernel, default="gaussian"
    "gaussian" (alias "rbf"), "laplacian", "matern", "polynomial", "exp_semigroup",
    "linear", or a kernel object such as `skylite.kernels.Gaussian(sigma=5)`.  Ignored
    when `feature_map` is given.
loss : str, skylite.prox Loss or None, default=None
    "hinge" (SVM), "logistic" (multinomial; class probabilities), "squared" (ridge) or
    "lad" (absolute deviations), or a skylite.prox loss object.  None: {default_loss}.
{loss_kind}
regularizer : str or skylite.prox Regularizer, default="l2"
    "l2", "l1" (sparse weights) or "none".
{regularization}
n_features : int, default=2048
    s, the number of random features (for the linear kernel, the columns of a sketch
    `method`; its default identity map ignores it: s = d).
n_blocks : int or None, default=None
    C, the number of column blocks of the feature matrix Z.  None:
{blocks_rule}
feature_map : skylite.sketch map or None, default=None
    An unfitted feature map to use instead of the kernel's default one, e.g.
    `skylite.sketch.Fastfood(8192, sigma=5)`.
sigma : float > 0, "scale" or None, default=None
    Bandwidth of the "gaussian" and "laplacian" kernels.  "scale" (and None, without
    gamma) sets it from the training rows: sqrt(d Var(X) / 2), which is scikit-learn's
    gamma="scale" = 1 / (d Var(X)) (sqrt(1/2) for constant rows); `sigma_` records it.
gamma : float > 0, "scale" or None, default=None
    scikit-learn's gamma: for "gaussian" sigma = 1 / sqrt(2 gamma), for "laplacian"
    sigma = 1 / gamma (scikit-learn's rbf_kernel and laplacian_kernel); for "polynomial"
    the scale of x.y (default 1).  "scale": 1 / (d Var(X)), as scikit-learn's SVC.  Give
    sigma or gamma, not both.
degree : int or None, default=None
    Degree of the "polynomial" kernel (gamma x.y + coef0)^degree (default 2).
coef0 : float >= 0 or None, default=None
    Offset of the "polynomial" kernel (default 1).
nu : float > 0 or None, default=None
    Smoothness of the "matern" kernel (default 1.5).
length_scale : float > 0 or None, default=None
    Length scale of the "matern" kernel (default 1).
beta : float > 0 or None, default=None
    Parameter of the "exp_semigroup" kernel exp(-beta sum_k sqrt(x_k + y_k)), x >= 0
    (default 1).
classification : bool or None, default=None
    Whether y holds class labels.  None: the loss's own kind (hinge and logistic: class
    labels; squared and lad: real targets).  True with "squared" or "lad" codes the
    labels one-vs-rest as +/-1.
method : str or None, default={method}
    A feature-map variant of the kernel: "rff" (random Fourier features), "fastfood"
    (Gaussian, Matern), "qmc" / "qmc_sobol" / "qmc_halton" (quasi-Monte-Carlo features),
    "nystroem" (every kernel but the linear one: n_features landmarks from the training
    rows, `landmarks`), "jlt" / "srht" / "countsketch" (linear sketches of n_features
    columns for the linear kernel); `skylite.kernels.Gaussian().methods` lists a kernel's.
    None: the kernel's first method (random Fourier features for the Gaussian kernel).
    "auto": the map measured to give the most accuracy per second of fit, Nystroem with
    k-means landmarks for the Gaussian kernel (at most one landmark per training row, so
    that below n_features rows it is the exact kernel machine), the kernel's first method
    for the others.  The fit records its choice in ``method_``.
landmarks : {{"kmeans", "uniform"}} or None, default=None
    How method="nystroem" chooses its landmarks: k-means centres of a pool of rows, or
    rows drawn uniformly; None is the Nystroem default, "kmeans".  Only with
    method="nystroem" (ValueError otherwise).
{rho}
{max_iter}
{tol}
{adapt_rho}
{relaxation}
{acceleration}
{anderson_memory}
{n_threads}
{memory_budget}
{precision}
{cache_precision}
random_state : int, numpy Generator, RandomState or None, default=0
    Seed of the feature map (the model stores the seed, never the random numbers) and of
    the `early_stopping` split.  None draws a fresh seed, recorded in `feature_map_.seed_`.
{verbose}
callback : callable or None, default=None
    callback(iteration, record, W) after every iteration (record: the `history_` entry);
    returning True stops training.
early_stopping : "auto" or bool, default="auto"
    Stop once a validation score stops improving (the rule is described under
    `n_iter_no_change`).  Without X_val, y_val given to `fit`, the validation rows are
    drawn from the training rows (`validation_fraction`): a random choice seeded by
    `random_state` (and the rank, under `comm`), stratified by class for classifiers;
    `validation_indices_` lists them.  "auto" (as scikit-learn's HistGradientBoosting)
    turns it on when the fit runs the ADMM on more than 10,000 training rows (of all
    ranks), and off otherwise, and for the squared loss with l2, which ``solver="auto"``
    may solve in closed form; `early_stopping_` records the choice.
validation_fraction : None, "auto" or float in (0, 1), default=None
    Where `early_stopping` scores the model.  None (as in scikit-learn's
    HistGradientBoosting): on the training data, 500 training rows (of all ranks; all of
    them if fewer) that stay in the fit.  The problem is convex and C regularizes it, so
    early stopping only decides when the classifier has stopped changing, and a held-out
    row is a row the model does not learn from.  A float: that share of the training
    rows (of each class, rounded) held out of the fit, not even used for the default
    sigma; "auto": 10%, but at most 500 rows.  A split that leaves a class without a
    training row or holds out no row raises ValueError.
n_iter_no_change : int or None, default=10
    With a validation set (X_val, y_val given to `fit`, or the `early_stopping` split), its
    score (accuracy or R^2) and loss are computed every iteration (`history_`).  Early
    stopping judges the run on them once the solver's residuals relative to its iterates
    are at most 0.02 (``history_[i]["residual_ratio"] * tol <= 0.02``; 20 times the
    default tol): before that the iterates still move a lot and a validation set of a few
    hundred rows often scores the third iteration as well as the last, though the test
    accuracy still rises by half a point.  From there it keeps the W of the best value of
    the one `scoring` names, the latest of equal values (nearer the optimum), as `coef_`
    (`best_iteration_`), and stops after `n_iter_no_change` iterations without a strictly
    better value.  None only records them.  Measured against the run to tol (the mean of
    five seeds; benchmarks/bench_early_stopping.py), with 500 training rows scored and
    Nystroem features: pendigits 0.05 points lower at 0.58x the time, MNIST 20k (s = 4096,
    C = 10) 0.00 points lower at 0.64x (with 500 rows held out: 0.13 and 0.04).
    A run resumed from a checkpoint tracks the best value from the resumed iteration on.
scoring : {{"score", "loss"}}, default="score"
    What early stopping monitors on the validation rows: "score", the accuracy
    (classifiers) or R^2 (regressors), as SGDClassifier and MLPClassifier do; or "loss",
    the training loss (1/n_val) sum V(y_i, W^T z(x_i)) over them (lower is better), as
    scikit-learn's HistGradientBoosting does.  The accuracy of a few hundred rows moves in
    steps of 1/n_val and often stays on one value for tens of iterations; the loss moves
    with every iteration, but over-relaxation makes it oscillate in the first iterations,
    and the hinge loss of held-out rows can rise while their accuracy does not move.
comm : mpi4py communicator or None, default=None
    Under a communicator every rank calls `fit` with its own rows: the fitted model,
    `objective` and `score` are global and identical on every rank; `predict` stays
    row-wise and local; `save` writes on rank 0 only.  Never pickled or saved
    (docs/mpi.md).
{checkpoint}
{checkpoint_every}
solver : {{"auto", "admm", "direct", "exact", "pcg", "dcd"}}, default="auto"
    "admm": the BlockADMM iterations.  "dcd": dual coordinate descent (LIBLINEAR's dual
    solver, one problem per class) for the hinge loss with l2, or the RKHS norm of a
    Nystroem map; every row's features in memory (n s float64), one process; each epoch
    is an iteration, run until every class's projected gradients span at most 100 `tol`
    (0.1 at the default tol); `fit_path` continues each C from the previous one's dual
    variables; early stopping "auto" is off; no warm start from a model.  The others need
    the squared loss with the l2 regularizer and alpha > 0 (docs/kernel_ridge.md);
    "direct" and "exact" run in one process:
    "direct": the closed form of the random-feature problem, (Z^T Z + n alpha I) W = Z^T Y,
    with Z^T Z accumulated over chunks of rows (Z is never stored; s^2 float64; no
    iterations, so the iteration options do not apply).  "exact": the exact kernel problem,
    (K + n alpha I) A = Y by Cholesky (n^2 float64), predictions
    K(X, ``X_fit_``) ``dual_coef_``.  "pcg": the same exact system by conjugate gradients
    preconditioned with the random features (to relative residual `tol`, at most
    `max_iter` iterations; K in row blocks, never stored), run like the ADMM: under a
    communicator, with checkpoints, callback, validation and early stopping.  "auto":
{auto_rule}

Attributes
----------
alpha_ : float
    The alpha of the problem fitted (from C for the classifiers: 1 / (n C)).
sigma_ : float or None
    The bandwidth of the "gaussian" or "laplacian" kernel fitted (what "scale" chose);
    None for the other kernels and for a `feature_map` given by the user.
coef_ : ndarray of shape (s, m), or None
    The weights W (m outputs: one per class, one for two classes, or the targets'
    columns); None for the exact kernel solvers.
dual_coef_, X_fit_, kernel_ : (n, m) ndarray, the training rows, skylite.kernels object
    Only after solver="exact" or "pcg": the model is K(x, ``X_fit_``) ``dual_coef_``.
feature_map_ : skylite.sketch map
    The fitted feature map z (its seed in `feature_map_.seed_`).
classes_ : ndarray of shape (n_classes,)
    The class labels (classification only).
n_features_in_ : int
    The number of input features d.
n_threads_ : int
    The threads the fit used (`n_threads` resolved).
feature_names_in_ : ndarray of str
    The column names of a DataFrame X given to `fit` (only then); `predict` checks that
    the same columns arrive in the same order.
loss_, regularizer_ : skylite.prox objects
    The loss and regularizer used.
solver_ : str
    The solver the fit used ("admm", "dcd", "direct", "exact" or "pcg"; see `solver`).
n_iter_ : int
    Iterations run: ADMM's or pcg's; 1 for the one solve of "direct" and "exact".
best_iteration_ : int
    The iteration whose W is `coef_` (`n_iter_` unless early stopping kept an earlier one).
converged_ : bool
    Whether the residuals met `tol`.
history_ : list of dict
    One record per iteration, of Python numbers: objective, primal and dual residuals, rho,
    validation score and validation loss (with a validation set), seconds.
early_stopping_ : bool
    Whether early stopping was on in this fit (`early_stopping` with "auto" resolved).
validation_indices_ : ndarray or None
    The rows of X (of this rank's X under `comm`) that `early_stopping` scored, sorted:
    training rows, or rows held out of the fit when `validation_fraction` is a number or
    "auto".
memory_estimate_ : int
    Bytes this process allocated for training at its peak: the working memory (counted
    before the fit, see `memory_budget`) plus the caches.
n_row_blocks_ : int
    Row blocks of this process's rows in the ADMM (each with its own factors): 1 unless the
    column sweep needed more to keep the working memory within `memory_budget`.
sweep_ : {{"rows", "columns"}}
    How the ADMM passed over Z (docs/engine.md): "rows", one pass over tiles of rows per
    iteration (whenever every block has at most as many features as the row block has rows
    and it fits the budget), else "columns", an n_i x s_j block per thread.
precision_ : {{"float64", "float32"}}
    The precision the fit's feature blocks were computed in: `precision`, with "auto"
    resolved (float32 for float32 training rows, else float64).  Predictions use it too.
cache_precision_ : {{"float64", "float32", "bfloat16"}}
    The precision the fit's features were cached (and, for bfloat16, rounded) in: see
    `cache_precision`.
phase_seconds_ : dict
    Seconds spent per phase of the engine (transform, factor, products, ...).
"""

_LOSS_KIND = {
    None: "The loss decides whether y holds class labels (see `classification`).",
    True: "{name} is a classifier: the loss must take class labels (hinge, logistic, or "
          "squared / lad with classification=True).",
    False: "{name} is a regressor: the loss must take real targets (squared or lad).",
}


def estimator_docstring(name, summary, default_loss, classification=None, defaults=None):
    """The docstring of a kernel machine: `summary`, then every parameter and attribute.

    classification: None for `KernelMachine` (its loss decides), True for a classifier
    preset, False for a regressor preset.  defaults: the preset's own defaults of C and
    method (with_C), else C = 1.0 and method None.
    """
    defaults = {"C": 1.0, "method": None, **(defaults or {})}
    loss_kind = textwrap.fill(_LOSS_KIND[classification].format(name=name), width=88,
                              initial_indent="    ", subsequent_indent="    ")
    engine = {name: EngineSettings.doc(name) for name in EngineSettings.names()}
    regularization = (_C_AND_ALPHA.format(C=defaults["C"]) if classification
                      else engine["alpha"])
    return (inspect.cleandoc(summary) + "\n\n"
            + _PARAMETERS.format(default_loss=f'"{default_loss}"', loss_kind=loss_kind,
                                 regularization=regularization,
                                 method=("None" if defaults["method"] is None
                                         else f'"{defaults["method"]}"'),
                                 blocks_rule=textwrap.fill(
                                     DEFAULT_BLOCKS_RULE + " (skylite.sketch.default_n_blocks, "
                                     "docs/choosing_parameters.md).", width=88,
                                     initial_indent="    ", subsequent_indent="    "),
                                 auto_rule=textwrap.fill(
                                     AUTO_RULE + ".", width=88, initial_indent="    ",
                                     subsequent_indent="    "), **engine))
