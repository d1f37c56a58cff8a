"""The `skylite` command line.

    skylite train TRAIN -m MODEL [--val FILE] [--[no-]early-stop] [--validation-fraction F]
                  [--n-iter-no-change N] [--kernel K] [--sigma S] [--loss L] [--reg R]
                  [--alpha A] [--features S] [--blocks C] [--iters N] [--threads T] [--seed N]
    skylite predict MODEL TEST [--output FILE] [--decision-values]
    skylite tune TRAIN -m MODEL [--sigma LIST] [--C LIST | --alpha LIST] [--cv K]
                 [--plot FILE] [--kernel K] [--loss L] [--features S] [--threads T]
    skylite demo

Inputs are LIBSVM/svmlight text (plain or gzipped; one-based feature indices unless
--zero-based), `.npz` files (arrays `X`, `y`, or `X_train`/`y_train` for training and
`X_test`/`y_test` for validation and prediction), `.npy` files (rows; labels in NAME.y.npy
beside NAME.X.npy or NAME.npy, or --labels) or HDF5 files (datasets `X` and `y`, or
--x-dataset / --y-dataset; needs h5py).  `.npy` and HDF5 rows are memory-mapped, not copied,
and under mpiexec each rank reads only its rows.  `train` prints one progress line per
iteration and a summary, and writes the model (`skylite.load` reads it); `predict` writes one
prediction per line.  Errors in files or options print one line and exit non-zero.
"""
import argparse
import sys

from . import __version__
from ._flags import PARAMETERS


def _parse_bytes(text):
    """'512M', '2G', '1e9' or '0' -> bytes."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    text = text.strip().lower().removesuffix("b")
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(float(text))
    except (ValueError, OverflowError):      # 'abc'; 'inf', 'nan', '1e999'
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (a finite number of bytes, "
                                         f"e.g. 0, 512M, 4G)") from None


# ---- the parser ----

def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    return parse


def _fraction(text):
    if text == "auto":
        return text
    if text == "none":          # the estimator's None (`skylite._commands._make_model`)
        return text
    value = _positive(float)(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"must be < 1, got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block) and exit status 2, and every
    option's default in --help."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _DefaultsFormatter(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help unless it has no default or already
    says it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (not action.option_strings or action.default in (None, False, argparse.SUPPRESS)
                or "default" in text):
            return text
        return f"{text} (default: %(default)s)"


# Options that apply only with others (`_APPLIES`): their defaults (the estimator's) are
# filled in after the check, so that an option given where it does not apply is an error,
# not ignored.
_LATER = {dest: PARAMETERS[dest] for dest in ("features", "validation_fraction",
                                              "n_iter_no_change", "scoring",
                                              "checkpoint_every")}


def _defaults():
    """The defaults of KernelMachine's parameters (imported here, so that the parser of
    another command, --help and --version load nothing numerical)."""
    from .estimators import KernelMachine
    return KernelMachine().get_params(deep=False)


_EARLY = "early stopping (not --no-early-stop)"
# option dest -> (does it apply to these args?, where it applies); the kernels' parameters
# and --quasi are added from the kernels' table (`_kernel_applies`)
def _ridge(args):
    """Whether the command's problem is ridge regression (skylite._solvers.is_ridge)."""
    from ._solvers import is_ridge_by_name
    return is_ridge_by_name(args.loss, args.reg, args.classification)


def _method(args):
    """The feature-map method the command's fit uses, "auto" resolved for its kernel
    (skylite._problem.resolved_method; None: the kernel's first)."""
    from ._problem import resolved_method
    return resolved_method(args.method, args.kernel)


_APPLIES = {
    "features": (lambda a: a.kernel != "linear" or _method(a) not in (None, "identity"),
                 "random features or a linear sketch (--kernel linear without --method has "
                 "s = the input features)"),
    "landmarks": (lambda a: _method(a) == "nystroem",
                  "--method nystroem (or --method auto with --kernel gaussian)"),
    "classification": (lambda a: a.loss in ("squared", "lad"), "--loss squared or lad"),
    "validation_fraction": (lambda a: a.early_stop is not False and not a.val,
                            f"{_EARLY} without --val"),
    "n_iter_no_change": (lambda a: a.early_stop is not False, _EARLY),
    "scoring": (lambda a: a.early_stop is not False, _EARLY),
    "checkpoint_every": (lambda a: a.checkpoint is not None, "--checkpoint"),
    "solver": (lambda a: a.solver in ("auto", "admm") or _ridge(a)
               or (a.solver == "dcd" and a.loss == "hinge"),
               "--loss squared and --reg l2 (regression), or dcd with --loss hinge"),
}


def _kernel_applies():
    """The `_APPLIES` entries of the kernels' parameters and of --quasi, from
    skylite.kernels.KERNELS: a parameter applies with the kernels that take it (gamma also
    with those that take sigma: scikit-learn's alternative to it), --quasi with the kernels
    that have quasi-Monte-Carlo features.  Messages name each kernel once (not its
    aliases)."""
    from .kernels import KERNEL_PARAMETERS, KERNELS
    takers = {param: [name for name, (_, params) in KERNELS.items()
                      if param in params or (param == "gamma" and "sigma" in params)]
              for param in KERNEL_PARAMETERS}
    takers["quasi"] = [name for name, (cls, _) in KERNELS.items() if "qmc" in cls().methods]
    first = {}
    for name, (cls, _) in KERNELS.items():
        first.setdefault(cls, name)
    entries = {}
    for dest, names in takers.items():
        shown = [name for name in names if first[KERNELS[name][0]] == name]
        where = (" or ".join(shown) if len(shown) < 3
                 else ", ".join(shown[:-1]) + " or " + shown[-1])
        entries[dest] = (lambda a, names=tuple(names): a.kernel in names, "--kernel " + where)
    return entries


def _check_input_options(args, parser):
    """--x-dataset / --y-dataset need an HDF5 input, --labels an .npy input."""
    inputs = [getattr(args, name) for name in ("train", "val", "test")
              if getattr(args, name, None)]
    from .io.arrays import HDF5_SUFFIXES, NPY_SUFFIXES
    is_hdf5 = any(str(p).lower().endswith(HDF5_SUFFIXES) for p in inputs)
    for option, value in (("--x-dataset", args.x_dataset), ("--y-dataset", args.y_dataset)):
        if value and not is_hdf5:
            parser.error(f"{option} applies only to HDF5 files (.h5, .hdf5)")
    main = getattr(args, "train", None) or getattr(args, "test", None)
    if args.labels and not str(main).lower().endswith(NPY_SUFFIXES):
        parser.error("--labels applies only to an .npy file of rows")


def _add_input_options(p):
    g = p.add_argument_group("array files")
    g.add_argument("--labels", metavar="FILE",
                   help="an .npy file's labels (default: NAME.y.npy beside NAME.X.npy or "
                        "NAME.npy)")
    g.add_argument("--x-dataset", dest="x_dataset", metavar="NAME",
                   help="the HDF5 dataset of the rows (default: X)")
    g.add_argument("--y-dataset", dest="y_dataset", metavar="NAME",
                   help="the HDF5 dataset of the labels (default: y)")


def _check_applicable(args, parser, later):
    """Refuse train options given where they do not apply, then fill in `_LATER`'s defaults
    (`later`: option dest -> default)."""
    _check_input_options(args, parser)
    for dest, (applies, where) in {**_kernel_applies(), **_APPLIES}.items():
        if getattr(args, dest) not in (None, False) and not applies(args):
            option = "--" + dest.replace("_", "-")
            parser.error(f"{option} applies only with {where}")
    for dest, default in later.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)


COMMANDS = {
    "train": ("train a kernel machine on a LIBSVM, .npz, .npy or HDF5 file",
              "Train a kernel machine on TRAIN and write the model to MODEL: a feature map "
              "(--method: random features, Nystroem landmarks or a linear sketch) and a "
              "solver (--solver: BlockADMM, or for kernel ridge PCG, the closed form or "
              "exact)."),
    "predict": ("predict with a saved model",
                "Predict TEST rows with MODEL; prints accuracy (or R^2) when TEST has labels."),
    "tune": ("choose sigma and C by cross-validation, and train the best",
             "Cross-validate every pair of --sigma and --C (or --alpha) values on TRAIN, "
             "print the mean scores as a table and the best pair, and train the best on all "
             "of TRAIN into MODEL (skylite.model_selection.KernelGridSearchCV: the values "
             "of C of one sigma share their setup in each fold).  LIST: comma-separated "
             "values (1,10,100), each may be a power of two (2^-3), or a log2 range "
             "START:STOP:STEP as LIBSVM's grid.py (2^-1:2^11:2 is 2^-1, 2^1, ..., 2^11)."),
    "demo": ("train on pendigits (shipped): kernel vs linear",
             "Train a linear and a Gaussian kernel SVM on UCI pendigits (shipped with "
             "skylite) and print their test accuracies."),
}


def build_parser(options_of=tuple(COMMANDS)):
    """The `skylite` argument parser: train, predict, demo.

    Only the commands in `options_of` get their options: `main` passes the one it runs, so
    that `skylite --help` and `skylite --version` build the parser without importing numpy
    or scikit-learn (train's choices of kernels and losses come from the estimators)."""
    parser = _Parser(prog="skylite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"skylite {__version__}",
                        help="print skylite's version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser,
                                     help="train, predict, tune or demo (skylite COMMAND "
                                          "--help)")
    add_options = {"train": _train_options, "predict": _predict_options,
                   "tune": _tune_options, "demo": _demo_options}
    for name, (summary, description) in COMMANDS.items():
        p = commands.add_parser(name, help=summary, description=description)
        if name in options_of:
            add_options[name](p)
    return parser


def _kernel_defaults():
    """{(kernel name, parameter): default} from the kernel classes' signatures
    (skylite.kernels.KERNELS)."""
    import inspect
    from .kernels import KERNELS
    return {(name, param): inspect.signature(cls).parameters[param].default
            for name, (cls, params) in KERNELS.items() for param in params}


def _train_options(p):
    """The options of `train`: defaults and choices are the estimator's (`_defaults`) and the
    engine's (skylite.admm.settings), read here, never written twice."""
    from .admm.settings import RELAXATION, EngineSettings
    from ._early_stopping import (AUTO_EARLY_STOPPING_ROWS, AUTO_VALIDATION_FRACTION,
                                  AUTO_VALIDATION_ROWS, SCORINGS)
    from ._solvers import AUTO_RULE, SOLVERS
    from .estimators import KERNEL_NAMES, PRESETS, KernelMachine
    from .prox import REGULARIZERS
    from .sketch import DEFAULT_BLOCKS_RULE
    default = _defaults()
    later = {dest: default[param] for dest, param in _LATER.items()}
    accelerations = tuple("none" if c is None else c
                          for c in EngineSettings.choices("acceleration"))
    p.add_argument("train", metavar="TRAIN",
                   help="training data (LIBSVM text, .gz, .npz, .npy or HDF5 .h5)")
    p.add_argument("-m", "--model", required=True, metavar="MODEL",
                   help="where to write the model (checked before training)")
    p.add_argument("--val", metavar="FILE",
                   help="validation data, scored every iteration and used for early stopping "
                        "(unless --no-early-stop)")
    g = p.add_argument_group("model")
    kernel = _kernel_defaults()
    g.add_argument("--kernel", default=default["kernel"], choices=KERNEL_NAMES, help="the kernel")
    g.add_argument("--sigma", type=_positive(float),
                   help="bandwidth (gaussian, laplacian) (default: sqrt(d Var(X) / 2))")
    g.add_argument("--gamma", type=_positive(float),
                   help="scikit-learn's gamma: gaussian 1/(2 sigma^2), or polynomial scale "
                        f"(default: from --sigma; polynomial {kernel['polynomial', 'gamma']:g})")
    g.add_argument("--degree", type=_positive(int),
                   help=f"polynomial degree (default: {kernel['polynomial', 'degree']})")
    g.add_argument("--coef0", type=float,
                   help=f"polynomial offset (default: {kernel['polynomial', 'coef0']:g})")
    g.add_argument("--nu", type=_positive(float),
                   help=f"matern smoothness (default: {kernel['matern', 'nu']:g})")
    g.add_argument("--length-scale", dest="length_scale", type=_positive(float),
                   help=f"matern length scale (default: {kernel['matern', 'length_scale']:g})")
    g.add_argument("--beta", type=_positive(float),
                   help=f"exp_semigroup parameter (default: {kernel['exp_semigroup', 'beta']:g})")
    g.add_argument("--loss", default=KernelMachine._default_loss, choices=sorted(PRESETS),
                   help="hinge, logistic (classification), squared, lad (regression)")
    g.add_argument("--classification", action="store_true",
                   help="with squared or lad: y holds class labels (one-vs-rest)")
    g.add_argument("--reg", default=default["regularizer"], choices=tuple(REGULARIZERS),
                   help="regularizer")
    g.add_argument("--alpha", type=float, default=default["alpha"],
                   help="regularization weight (scikit-learn's C = 1 / (n alpha))")
    g.add_argument("--features", type=_positive(int),
                   help=f"random features s, or the columns of a linear sketch (default: "
                        f"{later['features']}; with --kernel linear and no sketch s is the "
                        f"number of input features)")
    m = g.add_mutually_exclusive_group()
    m.add_argument("--method",
                   help="feature map method: rff, fastfood (gaussian, matern), qmc_halton / "
                        "qmc_sobol (gaussian, laplacian, matern), nystroem (every kernel but "
                        "linear: --features landmarks from the rows, see --landmarks), jlt / "
                        "srht / countsketch (linear: a sketch of --features columns), auto "
                        "(nystroem for gaussian, at most one landmark per row; the kernel's "
                        "first method for the others) (default: the kernel's first)")
    m.add_argument("--quasi", nargs="?", const="sobol", choices=("sobol", "halton"),
                   help="quasi-Monte-Carlo random features: scrambled Sobol' (default) or "
                        "leaped Halton (libSkylark's -q 1); same as --method qmc_SEQUENCE")
    g.add_argument("--landmarks", choices=("kmeans", "uniform"),
                   help="with --method nystroem: k-means centres of the rows (default) or "
                        "rows drawn uniformly")
    g = p.add_argument_group("solver")
    g.add_argument("--blocks", type=_positive(int),
                   help=f"column blocks C (default: {DEFAULT_BLOCKS_RULE})")
    g.add_argument("--iters", type=_positive(int), default=default["max_iter"],
                   help="max ADMM iterations")
    g.add_argument("--tol", type=_positive(float), default=default["tol"],
                   help="residual tolerance")
    g.add_argument("--solver", choices=SOLVERS, default=default["solver"],
                   help=f"--loss squared with l2 (libSkylark's skylark_krr): direct, the "
                        f"closed form on random features; exact, Cholesky of the kernel "
                        f"matrix; pcg, the kernel system by CG preconditioned with the random "
                        f"features (also under mpiexec); dcd, for --loss hinge: dual "
                        f"coordinate descent on every row's features in memory, in one "
                        f"process; auto: {AUTO_RULE} (default: "
                        f"{default['solver']})")
    g.add_argument("--rho", type=_positive(float), default=default["rho"],
                   help="initial ADMM rho")
    g.add_argument("--relaxation", type=_positive(float),
                   help=f"over-relaxation in (0, 2); 1: plain ADMM (default: "
                        f"{RELAXATION['anderson']:g} with Anderson acceleration, "
                        f"{RELAXATION[None]:g} without)")
    g.add_argument("--acceleration", choices=accelerations,
                   default=default["acceleration"] or "none",
                   help=f"Anderson acceleration of the ADMM iteration; auto: for the smooth "
                        f"losses (squared, logistic), not for hinge and lad (default: "
                        f"{default['acceleration'] or 'none'})")
    g.add_argument("--threads", type=_positive(int),
                   help="threads per process; the model does not depend on it (default: the "
                        "OpenMP thread limit in force, at most the usable cores; under "
                        "mpiexec the node's cores shared by its ranks)")
    g.add_argument("--memory-budget", dest="memory_budget", type=_parse_bytes,
                   help="bytes for caching feature blocks beyond the working memory, e.g. "
                        "0, 512M, 4G (default: half the free memory)")
    g.add_argument("--precision", default=default["precision"],
                   choices=EngineSettings.choices("precision"),
                   help="precision of the feature transform")
    g.add_argument("--cache-precision", dest="cache_precision",
                   default=default["cache_precision"],
                   choices=EngineSettings.choices("cache_precision"),
                   help="storage of cached feature blocks; bfloat16 (with --precision "
                        "float32) halves it and rounds the features to 16 bits; auto: "
                        "bfloat16 when that caches more blocks (default: auto)")
    g.add_argument("--seed", type=int, default=default["random_state"],
                   help="random seed of the feature map")
    g.add_argument("--early-stop", dest="early_stop", action=argparse.BooleanOptionalAction,
                   default=default["early_stopping"],
                   help=f"stop when the validation score or loss (--scoring; --val, else "
                        f"--validation-fraction of the training rows) has not improved for "
                        f"--n-iter-no-change iterations and keep the best model; neither "
                        f"flag: on with --val or above {AUTO_EARLY_STOPPING_ROWS:,} training "
                        f"rows, but not for --loss squared with --reg l2 (default: "
                        f"{default['early_stopping']})")
    g.add_argument("--validation-fraction", dest="validation_fraction", type=_fraction,
                   metavar="F",
                   help=f"with early stopping and no --val: where it scores the model; "
                        f"none: {AUTO_VALIDATION_ROWS} training rows, which stay in the fit; a "
                        f"share: that share of the training rows held out of the fit, "
                        f"stratified by class; auto: {100 * AUTO_VALIDATION_FRACTION:g}%%, at "
                        f"most {AUTO_VALIDATION_ROWS} rows held out (default: "
                        f"{later['validation_fraction'] or 'none'})")
    g.add_argument("--n-iter-no-change", dest="n_iter_no_change", type=_positive(int),
                   metavar="N", help=f"with early stopping: patience in iterations (default: "
                                     f"{later['n_iter_no_change']})")
    g.add_argument("--scoring", choices=SCORINGS,
                   help=f"with early stopping: what is monitored on the validation rows, their "
                        f"score (accuracy, R^2) or the loss (default: {later['scoring']})")
    g.add_argument("--checkpoint", metavar="FILE",
                   help="save the full ADMM state here every --checkpoint-every iterations; "
                        "if FILE exists, training resumes from it (removed when done)")
    g.add_argument("--checkpoint-every", dest="checkpoint_every", type=_positive(int),
                   metavar="N", help=f"with --checkpoint: iterations between checkpoints "
                                     f"(default: {later['checkpoint_every']})")
    p.add_argument("--input-features", dest="input_features", type=_positive(int),
                   help="columns of a LIBSVM file (default: its largest index)")
    p.add_argument("--zero-based", dest="zero_based", action="store_true",
                   help="LIBSVM feature indices start at 0 (default: 1, as LIBSVM)")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-iteration lines")
    _add_input_options(p)
    p.set_defaults(check=lambda args, parser: _check_applicable(args, parser, later))


def parse_values(text):
    """A LIST of positive values: '1,10,100', '2^-3,2^0', or the log2 range
    'START:STOP:STEP' of LIBSVM's grid.py, START * 2^(k STEP) for k = 0, 1, ... up to STOP
    ('2^-1:2^11:2' -> 2^-1, 2^1, ..., 2^11)."""
    def number(item):
        item = item.strip()
        try:
            value = 2.0 ** float(item[2:]) if item.startswith("2^") else float(item)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"not a number: {item!r}") from None
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"values must be finite and > 0, got {item!r}")
        return value
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise argparse.ArgumentTypeError(f"a range is START:STOP:STEP, got {text!r}")
        start, stop = number(parts[0]), number(parts[1])
        try:
            step = float(parts[2])
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a log2 step: {parts[2]!r}") from None
        if not (step > 0 and stop >= start) or (stop / start) > 2.0 ** (64 * step):
            raise argparse.ArgumentTypeError(f"a range needs START <= STOP and a log2 STEP "
                                             f"> 0 (at most 64 values), got {text!r}")
        values, k = [], 0
        while start * 2.0 ** (k * step) <= stop * (1 + 1e-12):
            values.append(start * 2.0 ** (k * step))
            k += 1
        return values
    values = [number(item) for item in text.split(",") if item.strip()]
    if not values:
        raise argparse.ArgumentTypeError("an empty list of values")
    return values


def _tune_options(p):
    from .admm.settings import EngineSettings
    from .estimators import KERNEL_NAMES, PRESETS
    default = _defaults()
    p.add_argument("train", metavar="TRAIN",
                   help="training data (LIBSVM text, .gz, .npz, .npy or HDF5 .h5)")
    p.add_argument("-m", "--model", required=True, metavar="MODEL",
                   help="where to write the best model, trained on all of TRAIN")
    p.add_argument("--sigma", type=parse_values, metavar="LIST",
                   help="bandwidths to try (default: scikit-learn's gamma='scale' only)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--C", dest="C", type=parse_values, metavar="LIST",
                   help="hinge and logistic: values of C (alpha = 1/(n C)) (default: "
                        "2^-1:2^11:2)")
    g.add_argument("--alpha", type=parse_values, metavar="LIST",
                   help="squared and lad: regularization weights (default: 1e-2,1e-4,1e-6)")
    p.add_argument("--cv", type=_positive(int), default=5, help="folds (stratified by class)")
    p.add_argument("--plot", metavar="FILE",
                   help="write a heatmap of the mean scores over log2 C and sigma (.png, "
                        ".svg, .pdf; needs matplotlib)")
    p.add_argument("--no-racing", dest="racing", action="store_false",
                   help="fit every pair on every fold (default: pairs clearly behind after a "
                        "fold are dropped)")
    p.add_argument("--kernel", default=default["kernel"], choices=KERNEL_NAMES,
                   help="the kernel")
    p.add_argument("--loss", default="hinge", choices=sorted(PRESETS),
                   help="hinge, logistic (classification), squared, lad (regression)")
    p.add_argument("--method", help="feature map method, as for train (default: the "
                                    "estimator's: auto with --loss hinge, as KernelSVC; "
                                    "else the kernel's first)")
    p.add_argument("--features", type=_positive(int), default=default["n_features"],
                   help="random features s")
    p.add_argument("--precision", default=default["precision"],
                   choices=EngineSettings.choices("precision"),
                   help="precision of the feature transform")
    p.add_argument("--seed", type=int, default=default["random_state"],
                   help="random seed of the feature map and of nothing else")
    p.add_argument("--threads", type=_positive(int),
                   help="threads per process (default: the OpenMP limit in force, at most "
                        "the usable cores)")
    p.add_argument("--input-features", dest="input_features", type=_positive(int),
                   help="columns of a LIBSVM file (default: its largest index)")
    p.add_argument("--zero-based", dest="zero_based", action="store_true",
                   help="LIBSVM feature indices start at 0 (default: 1, as LIBSVM)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no line per grid point and fold")
    _add_input_options(p)

    def check(args, parser):
        _check_input_options(args, parser)
        classifier = args.loss in ("hinge", "logistic")
        if classifier and args.alpha is not None:
            parser.error("--alpha applies only with --loss squared or lad (use --C)")
        if not classifier and args.C is not None:
            parser.error("--C applies only with --loss hinge or logistic (use --alpha)")
    p.set_defaults(check=check)


def _predict_options(p):
    p.add_argument("model", metavar="MODEL", help="a model written by skylite train")
    p.add_argument("test", metavar="TEST",
                   help="LIBSVM text, .gz, .npz, .npy or HDF5 .h5; - reads LIBSVM rows from "
                        "standard input "
                        "and writes each prediction as its row arrives")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write predictions here, checked before predicting (default: stdout)")
    p.add_argument("--decision-values", dest="decision_values", action="store_true",
                   help="write decision values (one column per output) instead of labels")
    p.add_argument("--threads", type=_positive(int),
                   help="threads (default: the OpenMP thread limit in force, at most the "
                        "usable cores)")
    p.add_argument("--zero-based", dest="zero_based", action="store_true",
                   help="LIBSVM feature indices start at 0 (default: 1, as LIBSVM)")
    _add_input_options(p)
    p.set_defaults(check=_check_input_options)


#: the demo's problem (pendigits, features scaled to [0, 1]): a bandwidth and alpha chosen
#: once for it; everything else is the estimator's default
DEMO = {"sigma": 0.6, "alpha": 1e-5}


def _demo_options(p):
    p.add_argument("--features", type=_positive(int),
                   help="random features s (default: the estimator's n_features)")
    from .sketch import DEFAULT_BLOCKS_RULE
    p.add_argument("--blocks", type=_positive(int),
                   help=f"column blocks C (default: {DEFAULT_BLOCKS_RULE})")
    p.add_argument("--sigma", type=_positive(float), default=DEMO["sigma"],
                   help="Gaussian kernel bandwidth")
    p.add_argument("--alpha", type=float, default=DEMO["alpha"], help="regularization")
    p.add_argument("--seed", type=int,
                   help="random seed of the feature map (default: the estimator's)")
    p.add_argument("--threads", type=_positive(int),
                   help="threads (default: the OpenMP limit in force, at most the cores)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    parser = build_parser(options_of=(command,))
    args = parser.parse_args(argv)
    if hasattr(args, "check"):
        args.check(args, _subparser(parser, args.command))
    from . import _commands         # the numerical stack loads here, after the parse
    dist = None
    try:
        dist = _commands.world()
        with _commands.warnings_as_lines(f"skylite {args.command}", dist):
            return getattr(_commands, args.command)(args, dist)
    except KeyboardInterrupt:
        print(f"skylite {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # bad files, data, options or sizes: one line, no traceback; an error every rank
        # raised alike is printed by rank 0 only
        if dist is None or dist.is_root or not getattr(exc, "collective", False):
            where = f"[rank {dist.rank}] " if dist is not None and not dist.serial else ""
            print(f"skylite {args.command}: {where}error: {_commands.one_line(exc)}",
                  file=sys.stderr)
        return 1


def _subparser(parser, name):
    """The parser of subcommand `name` (for its one-line errors)."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]
