"""The `skylite` command line.

    skylite train TRAIN -m MODEL [--val FILE] [--early-stop [--validation-fraction F]
                  [--n-iter-no-change N]] [--kernel K] [--sigma S] [--loss L] [--reg R]
                  [--alpha A] [--features S] [--blocks C] [--iters N] [--threads T] [--seed N]
    skylite predict MODEL TEST [--output FILE] [--decision-values]
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
import contextlib
import os
import sys
import time
import warnings

import numpy as np

from . import __version__
from . import _global_stats as stats
from ._distributed import Distributed
from .admm import ConvergenceError, ConvergenceWarning
from .datasets import load_pendigits
from .estimators import KERNEL_NAMES, PRESETS, KernelMachine, KernelSVC, load
from .io.arrays import HDF5_SUFFIXES, NPY_SUFFIXES
from .io.files import read_rows
from .io.svmlight import iter_svmlight_rows


# ---- processes ----

def world():
    """The `Distributed` of this run: MPI.COMM_WORLD when launched by mpiexec with more than
    one rank (detected from the launcher's environment, so a plain run never loads MPI),
    else one process."""
    size = next((int(os.environ[name]) for name in _LAUNCHER_SIZE if name in os.environ), 1)
    if size <= 1:
        return Distributed(None)
    try:
        from mpi4py import MPI      # optional: only a run launched by mpiexec loads MPI
    except ImportError:
        raise ValueError(f"launched by mpiexec with {size} ranks, but mpi4py is not "
                         f"installed: pip install 'skylite[mpi]'") from None
    return Distributed(MPI.COMM_WORLD)


# Environment variables by which MPI launchers announce the number of ranks.
_LAUNCHER_SIZE = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "PMIX_SIZE")


def _parse_bytes(text):
    """'512M', '2G', '1e9' or '0' -> bytes."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    text = text.strip().lower().removesuffix("b")
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 0, 512M, 4G)") from None


# ---- train ----

def train(args, dist):
    """Under mpiexec every rank reads its share of the rows and trains with the others;
    rank 0 prints and writes the model."""
    say = print if dist.is_root else (lambda *a, **k: None)
    dist.agree(lambda: _check_writable(args.model, "the model") if dist.is_root else None)
    start = time.perf_counter()
    X, y = read_rows(args.train, part="train", n_features=args.input_features,
                     zero_based=args.zero_based, comm=dist,
                     **_array_options(args, labels=True))
    if y is None:
        raise ValueError(f"{args.train}: no labels (y) to train on")
    X_val = y_val = None
    if args.val:
        X_val, y_val = read_rows(args.val, part="test", n_features=X.shape[1],
                                 zero_based=args.zero_based, comm=dist,
                                 **_array_options(args, labels=False))
        if y_val is None:
            raise ValueError(f"{args.val}: no labels (y) to validate with")
    if args.threads is None and not dist.serial:     # share the node's cores among its ranks
        args.threads = max(1, (os.cpu_count() or 1) // dist.ranks_on_node())
    model = _make_model(args, dist)
    n_rows = int(dist.allreduce_sum(np.array([X.shape[0]], dtype=np.float64))[0])
    classes = len(dist.label_union(y)) if model.is_classifier else None
    ranks = f" over {dist.size} ranks" if dist.size > 1 else ""
    sparse = " (sparse)" if hasattr(X, "tocsr") else ""
    kinds = f", {_plural(classes, 'class')}" if classes else ""
    say(f"{args.train}: {n_rows} rows{ranks}, {X.shape[1]} features{sparse}{kinds}; read in "
        f"{time.perf_counter() - start:.1f}s")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)      # reported in the summary
        model.fit(X, y, X_val=X_val, y_val=y_val)
    seconds = time.perf_counter() - start
    if model.validation_indices_ is not None:
        held = int(dist.allreduce_sum([len(model.validation_indices_)])[0])
        say(f"validation: {held} training rows held out (--validation-fraction "
            f"{args.validation_fraction})")
    say(f"trained {type(model).__name__}: {_how_it_ended(model, args)}, "
        f"{seconds:.1f}s total")
    metric = "accuracy" if model.is_classifier else "R^2"
    say(f"training {metric}: {_format_score(model.score(X, y), metric)}")    # global
    if X_val is not None:
        say(f"validation {metric}: {_format_score(model.score(X_val, y_val), metric)}")
    if dist.is_root:
        model.save(args.model)
        say(f"model written to {args.model} ({os.path.getsize(args.model) / 2**10:.0f} KiB)")
    return 0


def _how_it_ended(model, args):
    """'30 iterations (converged), objective 3.58e-02', or what a non-ADMM solver did."""
    if model.solver_ in ("direct", "exact"):
        return f"{model.solver_} solve (--solver {model.solver_})"
    status = ("converged" if model.converged_ else
              f"early stop, best validation at iteration {model.best_iteration_}"
              if model.best_iteration_ < model.n_iter_ else f"stopped at --iters {args.iters}")
    if model.solver_ == "pcg":
        return f"{model.n_iter_} pcg iterations ({status})"
    return (f"{model.n_iter_} iterations ({status}), objective "
            f"{model.history_[-1]['objective']:.6e}")


def _check_writable(path, what):
    """Fail before the work, not after, when its output (`what`) cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {what} to {path}: no folder {folder}")
    if not os.access(folder, os.W_OK) or os.path.isdir(path):
        raise PermissionError(f"cannot write {what} to {path}")


def _plural(count, noun):
    """'1 class', '3 classes', '2 rows'."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}es" if noun.endswith("s") else f"{count} {noun}s"


def _make_model(args, dist):
    # class labels with squared / lad: the general machine (the presets keep their kind)
    cls = KernelMachine if args.classification else PRESETS[args.loss]
    kernel_params = {name: getattr(args, name) for name in
                     ("sigma", "gamma", "degree", "coef0", "nu", "length_scale", "beta")
                     if getattr(args, name) is not None}
    return cls(args.kernel, loss=args.loss, regularizer=args.reg, alpha=args.alpha,
               n_features=args.features, n_blocks=args.blocks,
               method=f"qmc_{args.quasi}" if args.quasi else args.method,
               rho=args.rho, max_iter=args.iters, tol=args.tol, relaxation=args.relaxation,
               acceleration=None if args.acceleration == "none" else args.acceleration,
               n_threads=args.threads,
               memory_budget=args.memory_budget, precision=args.precision,
               random_state=args.seed, verbose=not args.quiet,
               comm=None if dist.serial else dist.comm, checkpoint=args.checkpoint,
               checkpoint_every=args.checkpoint_every, early_stopping=args.early_stop,
               solver=args.solver,
               validation_fraction=args.validation_fraction,
               n_iter_no_change=args.n_iter_no_change if args.early_stop else None,
               scoring=args.scoring,
               classification=args.classification or None, **kernel_params)


def _format_score(value, metric):
    return f"{100 * value:.2f}%" if metric == "accuracy" else f"{value:.4f}"


# ---- predict ----

def predict(args, dist):
    if not dist.serial:
        raise ValueError("predict runs in one process (predictions are row by row); "
                         "run it without mpiexec")
    if args.output:
        _check_writable(args.output, "the predictions")
    model = load(args.model)
    if args.threads is not None:
        model.set_params(n_threads=args.threads)
    if args.test == "-":
        return _predict_stream(model, args)
    X, y = read_rows(args.test, part="test", n_features=model.n_features_in_,
                     zero_based=args.zero_based, **_array_options(args, labels=True))
    _warn_if_narrower(X, model, args.test)
    predicted = model.predict(X)
    lines = _prediction_lines(model, X, predicted, args.decision_values)
    summary = sys.stdout
    if args.output:
        with open(args.output, "w") as out:
            out.write("\n".join(lines) + "\n")
    else:
        sys.stdout.write("\n".join(lines) + "\n")
        summary = sys.stderr        # keep stdout to the predictions
    if y is not None:
        print(_score_line(model, args.test, predicted, y), file=summary)
    return 0


def _warn_if_narrower(X, model, path):
    """Warn (stderr) when a sparse file uses fewer columns than the model was trained on:
    LIBSVM reads the missing ones as zeros, which is right for sparse data but also what a
    file of another feature layout looks like."""
    if not hasattr(X, "indices") or X.nnz == 0:        # dense rows have their own width
        return
    used = int(X.indices.max()) + 1
    if used < model.n_features_in_:
        print(f"skylite predict: warning: the largest feature index of {path} is {used}, "
              f"the model was trained on {model.n_features_in_} features; the missing "
              f"columns are read as zeros", file=sys.stderr)


def _prediction_lines(model, X, predicted, decision_values):
    """One line per row: the predicted label or target, or the decision values."""
    if decision_values:                 # a regressor's decision values are its predictions
        values = model.decision_function(X) if model.is_classifier else predicted
        return [" ".join(f"{v:.10g}" for v in np.atleast_1d(row)) for row in values]
    return [str(label) for label in predicted]


def _score_line(model, name, predicted, y):
    """'NAME: accuracy 97.39% (3213/3299)' or 'NAME: R^2 0.9123' of the predictions."""
    metric = "accuracy" if model.is_classifier else "R^2"
    y = np.asarray(y)
    score = stats.score(Distributed(None), predicted, y, classification=model.is_classifier)
    detail = f" ({int(round(score * len(y)))}/{len(y)})" if metric == "accuracy" else ""
    return f"{name}: {metric} {_format_score(score, metric)}{detail}"


def _predict_stream(model, args):
    """`predict MODEL -`: LIBSVM rows from standard input, one prediction written (and
    flushed) per row as it arrives (libSkylark's streaming predict).  At the end the
    accuracy (or R^2) against the labels read goes to stderr (stdout with --output)."""
    out = open(args.output, "w") if args.output else sys.stdout
    labels, predicted = [], []
    try:
        for X, y in iter_svmlight_rows(sys.stdin.buffer, n_features=model.n_features_in_,
                                       zero_based=args.zero_based, name="<stdin>"):
            prediction = model.predict(X)
            out.write(_prediction_lines(model, X, prediction, args.decision_values)[0]
                      + "\n")
            out.flush()
            labels.append(y[0])
            predicted.append(prediction[0])
    finally:
        if args.output:
            out.close()
    if labels:
        summary = sys.stdout if args.output else sys.stderr
        print(_score_line(model, "<stdin>", np.asarray(predicted), labels), file=summary)
    return 0


# ---- demo ----

def demo(args, dist):
    begin = time.perf_counter()
    X_train, y_train, X_test, y_test = load_pendigits()
    X_train, X_test = X_train / 100.0, X_test / 100.0   # features are integers 0..100
    print(f"pendigits: {len(X_train)} train / {len(X_test)} test rows, "
          f"{X_train.shape[1]} features, {len(set(y_train))} classes")
    models = demo_models(args.features, args.blocks, args.sigma, args.alpha, args.seed)
    print(f"{'model':<46} {'test accuracy':>13} {'iterations':>10} {'seconds':>8}")
    for name, model in models:
        model.set_params(n_threads=args.threads)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)   # shown as "(max)" below
            model.fit(X_train, y_train)
        accuracy = model.score(X_test, y_test)
        iterations = f"{model.n_iter_}{'' if model.converged_ else ' (max)'}"
        print(f"{name:<46} {100 * accuracy:>12.2f}% {iterations:>10} "
              f"{time.perf_counter() - start:>8.2f}")
    print(f"demo done in {time.perf_counter() - begin:.1f} s with {model.n_threads_} "
          f"thread{'s' * (model.n_threads_ > 1)}")
    return 0


def demo_models(features, blocks, sigma, alpha, seed):
    """[(name, unfitted model)] of `skylite demo`: a linear SVM and a Gaussian kernel SVM.

    Both get the iterations they need to converge to tol (the linear SVM about 430 at
    alpha = 1e-5 on pendigits), so the comparison is of converged models."""
    return [
        ("linear SVM", KernelSVC("linear", alpha=alpha, max_iter=2000)),
        (f"kernel SVM (gaussian sigma={sigma}, s={features})",
         KernelSVC(sigma=sigma, n_features=features, n_blocks=blocks, alpha=alpha,
                   random_state=seed, max_iter=2000)),
    ]


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


# Options that apply only with others (`_APPLIES`): their defaults are filled in after the
# check, so that an option given where it does not apply is an error, not ignored.
_LATER = {"features": 2048, "validation_fraction": 0.1, "n_iter_no_change": 10,
          "scoring": "score", "checkpoint_every": 10}

_SIGMA_KERNELS = ("gaussian", "rbf", "laplacian")
# option dest -> (does it apply to these args?, where it applies)
_APPLIES = {
    "sigma": (lambda a: a.kernel in _SIGMA_KERNELS, "--kernel gaussian or laplacian"),
    "gamma": (lambda a: a.kernel in (*_SIGMA_KERNELS, "polynomial"),
              "--kernel gaussian, laplacian or polynomial"),
    "degree": (lambda a: a.kernel == "polynomial", "--kernel polynomial"),
    "coef0": (lambda a: a.kernel == "polynomial", "--kernel polynomial"),
    "nu": (lambda a: a.kernel == "matern", "--kernel matern"),
    "length_scale": (lambda a: a.kernel == "matern", "--kernel matern"),
    "beta": (lambda a: a.kernel == "exp_semigroup", "--kernel exp_semigroup"),
    "features": (lambda a: a.kernel != "linear" or a.method not in (None, "identity"),
                 "random features or a linear sketch (--kernel linear without --method has "
                 "s = the input features)"),
    "quasi": (lambda a: a.kernel in (*_SIGMA_KERNELS, "matern"),
              "--kernel gaussian, laplacian or matern"),
    "classification": (lambda a: a.loss in ("squared", "lad"), "--loss squared or lad"),
    "validation_fraction": (lambda a: a.early_stop and not a.val,
                            "--early-stop without --val"),
    "n_iter_no_change": (lambda a: a.early_stop, "--early-stop"),
    "scoring": (lambda a: a.early_stop, "--early-stop"),
    "checkpoint_every": (lambda a: a.checkpoint is not None, "--checkpoint"),
    "solver": (lambda a: a.solver in ("auto", "admm")
               or (a.loss == "squared" and a.reg == "l2" and not a.classification),
               "--loss squared and --reg l2 (regression)"),
}


def _array_options(args, *, labels):
    """read_rows keywords from --x-dataset / --y-dataset (HDF5 files) and --labels (an .npy
    file's labels; with labels=False not passed on: a validation .npy file has its own)."""
    options = {"x_dataset": args.x_dataset or "X", "y_dataset": args.y_dataset or "y"}
    if labels and args.labels:
        options["labels"] = args.labels
    return options


def _check_input_options(args, parser):
    """--x-dataset / --y-dataset need an HDF5 input, --labels an .npy input."""
    inputs = [getattr(args, name) for name in ("train", "val", "test")
              if getattr(args, name, None)]
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


def _check_applicable(args, parser):
    """Refuse train options given where they do not apply, then fill in `_LATER`."""
    _check_input_options(args, parser)
    for dest, (applies, where) in _APPLIES.items():
        if getattr(args, dest) not in (None, False) and not applies(args):
            option = "--" + dest.replace("_", "-")
            parser.error(f"{option} applies only with {where}")
    for dest, default in _LATER.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)


def build_parser():
    """The `skylite` argument parser: train, predict, demo."""
    parser = _Parser(prog="skylite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"skylite {__version__}",
                        help="print skylite's version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser,
                                     help="train, predict or demo (skylite COMMAND --help)")

    p = commands.add_parser("train", help="train a kernel machine on a LIBSVM, .npz, .npy "
                                          "or HDF5 file",
                            description="Train a kernel machine by BlockADMM on random "
                                        "features and write the model to MODEL.")
    p.add_argument("train", metavar="TRAIN",
                   help="training data (LIBSVM text, .gz, .npz, .npy or HDF5 .h5)")
    p.add_argument("-m", "--model", required=True, metavar="MODEL",
                   help="where to write the model (checked before training)")
    p.add_argument("--val", metavar="FILE",
                   help="validation data, scored every iteration (and used by --early-stop)")
    g = p.add_argument_group("model")
    g.add_argument("--kernel", default="gaussian", choices=KERNEL_NAMES, help="the kernel")
    g.add_argument("--sigma", type=_positive(float),
                   help="bandwidth (gaussian, laplacian) (default: sqrt(d Var(X) / 2))")
    g.add_argument("--gamma", type=_positive(float),
                   help="scikit-learn's gamma: gaussian 1/(2 sigma^2), or polynomial scale "
                        "(default: from --sigma; polynomial 1)")
    g.add_argument("--degree", type=_positive(int), help="polynomial degree (default: 2)")
    g.add_argument("--coef0", type=float, help="polynomial offset (default: 1)")
    g.add_argument("--nu", type=_positive(float), help="matern smoothness (default: 1.5)")
    g.add_argument("--length-scale", dest="length_scale", type=_positive(float),
                   help="matern length scale (default: 1)")
    g.add_argument("--beta", type=_positive(float),
                   help="exp_semigroup parameter (default: 1)")
    g.add_argument("--loss", default="hinge", choices=sorted(PRESETS),
                   help="hinge, logistic (classification), squared, lad (regression)")
    g.add_argument("--classification", action="store_true",
                   help="with squared or lad: y holds class labels (one-vs-rest)")
    g.add_argument("--reg", default="l2", choices=("l2", "l1", "none"), help="regularizer")
    g.add_argument("--alpha", type=float, default=1e-4,
                   help="regularization weight (scikit-learn's C = 1 / (n alpha))")
    g.add_argument("--features", type=_positive(int),
                   help=f"random features s, or the columns of a linear sketch (default: "
                        f"{_LATER['features']}; with --kernel linear and no sketch s is the "
                        f"number of input features)")
    m = g.add_mutually_exclusive_group()
    m.add_argument("--method", help="feature map method: rff (default), fastfood (gaussian, "
                                    "matern), qmc_halton / qmc_sobol (gaussian, laplacian, "
                                    "matern), nystroem (every kernel but linear: --features "
                                    "landmarks, k-means centres; nystroem_uniform: drawn "
                                    "rows), jlt / srht / countsketch (linear: a sketch of "
                                    "--features columns) (default: the kernel's first)")
    m.add_argument("--quasi", nargs="?", const="sobol", choices=("sobol", "halton"),
                   help="quasi-Monte-Carlo random features: scrambled Sobol' (default) or "
                        "leaped Halton (libSkylark's -q 1); same as --method qmc_SEQUENCE")
    g = p.add_argument_group("solver")
    g.add_argument("--blocks", type=_positive(int),
                   help="column blocks C (default: ceil(s / 4096), ceil(s / 512) for "
                        "nystroem, at least 2, from s and the rows only)")
    g.add_argument("--iters", type=_positive(int), default=500, help="max ADMM iterations")
    g.add_argument("--tol", type=_positive(float), default=1e-3, help="residual tolerance")
    g.add_argument("--solver", choices=("auto", "admm", "direct", "exact", "pcg"),
                   default="auto",
                   help="--loss squared with l2 (libSkylark's skylark_krr): direct, the "
                        "closed form on random features; exact, Cholesky of the kernel "
                        "matrix; pcg, the kernel system by CG preconditioned with the random "
                        "features; auto: direct for s <= 8192 without --val, --early-stop or "
                        "--checkpoint, else admm (default: auto)")
    g.add_argument("--rho", type=_positive(float), default=1.0, help="initial ADMM rho")
    g.add_argument("--relaxation", type=_positive(float),
                   help="over-relaxation in (0, 2); 1: plain ADMM (default: 1 with Anderson "
                        "acceleration, 1.8 without)")
    g.add_argument("--acceleration", choices=("auto", "anderson", "none"), default="auto",
                   help="Anderson acceleration of the ADMM iteration; auto: for the smooth "
                        "losses (squared, logistic), not for hinge and lad (default: auto)")
    g.add_argument("--threads", type=_positive(int),
                   help="threads per process; the model does not depend on it (default: "
                        "all cores, shared by the MPI ranks of a node)")
    g.add_argument("--memory-budget", dest="memory_budget", type=_parse_bytes,
                   help="bytes for caching feature blocks beyond the working memory, e.g. "
                        "0, 512M, 4G (default: half the free memory)")
    g.add_argument("--precision", default="float64", choices=("float64", "float32"),
                   help="precision of the feature transform")
    g.add_argument("--seed", type=int, default=0, help="random seed of the feature map")
    g.add_argument("--early-stop", dest="early_stop", action="store_true",
                   help="stop when the validation score or loss (--scoring; --val, else "
                        "--validation-fraction of the training rows) has not improved for "
                        "--n-iter-no-change iterations and keep the best model")
    g.add_argument("--validation-fraction", dest="validation_fraction", type=_fraction,
                   metavar="F",
                   help=f"with --early-stop and no --val: the share of the training rows "
                        f"held out for validation, stratified by class (default: "
                        f"{_LATER['validation_fraction']})")
    g.add_argument("--n-iter-no-change", dest="n_iter_no_change", type=_positive(int),
                   metavar="N", help=f"with --early-stop: patience in iterations (default: "
                                     f"{_LATER['n_iter_no_change']})")
    g.add_argument("--scoring", choices=("score", "loss"),
                   help=f"with --early-stop: what is monitored on the validation rows, their "
                        f"score (accuracy, R^2) or the loss (default: {_LATER['scoring']})")
    g.add_argument("--checkpoint", metavar="FILE",
                   help="save the full ADMM state here every --checkpoint-every iterations; "
                        "if FILE exists, training resumes from it (removed when done)")
    g.add_argument("--checkpoint-every", dest="checkpoint_every", type=_positive(int),
                   metavar="N", help=f"with --checkpoint: iterations between checkpoints "
                                     f"(default: {_LATER['checkpoint_every']})")
    p.add_argument("--input-features", dest="input_features", type=_positive(int),
                   help="columns of a LIBSVM file (default: its largest index)")
    p.add_argument("--zero-based", dest="zero_based", action="store_true",
                   help="LIBSVM feature indices start at 0 (default: 1, as LIBSVM)")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-iteration lines")
    _add_input_options(p)
    p.set_defaults(run=train, check=_check_applicable)

    p = commands.add_parser("predict", help="predict with a saved model",
                            description="Predict TEST rows with MODEL; prints accuracy (or "
                                        "R^2) when TEST has labels.")
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
                   help="threads (default: all cores)")
    p.add_argument("--zero-based", dest="zero_based", action="store_true",
                   help="LIBSVM feature indices start at 0 (default: 1, as LIBSVM)")
    _add_input_options(p)
    p.set_defaults(run=predict, check=_check_input_options)

    p = commands.add_parser("demo", help="train on pendigits (shipped): kernel vs linear",
                            description="Train a linear and a Gaussian kernel SVM on UCI "
                                        "pendigits (shipped with skylite) and print their "
                                        "test accuracies.")
    p.add_argument("--features", type=_positive(int), default=2048, help="random features s")
    p.add_argument("--blocks", type=_positive(int),
                   help="column blocks C (default: ceil(s / 4096), at least 2)")
    p.add_argument("--sigma", type=_positive(float), default=0.6,
                   help="Gaussian kernel bandwidth")
    p.add_argument("--alpha", type=float, default=1e-5, help="regularization")
    p.add_argument("--seed", type=int, default=0, help="random seed of the feature map")
    p.add_argument("--threads", type=_positive(int),
                   help="threads (default: the OpenMP limit in force, at most the cores)")
    p.set_defaults(run=demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "check"):
        args.check(args, _subparser(parser, args.command))
    dist = None
    try:
        dist = world()
        with _warnings_as_lines(f"skylite {args.command}", dist):
            return args.run(args, dist)
    except KeyboardInterrupt:
        print(f"skylite {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # bad files, data, options or sizes: one line, no traceback; an error every rank
        # raised alike is printed by rank 0 only
        if dist is None or dist.is_root or not getattr(exc, "collective", False):
            where = f"[rank {dist.rank}] " if dist is not None and not dist.serial else ""
            print(f"skylite {args.command}: {where}error: {_one_line(exc)}", file=sys.stderr)
        return 1


def _subparser(parser, name):
    """The parser of subcommand `name` (for its one-line errors)."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


_EXPECTED = (ValueError, TypeError, OSError, MemoryError, ConvergenceError, RuntimeError)


def _one_line(exc):
    """The message of an error on one line; an unexpected kind of error is named."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    message = lines[0]
    return message if isinstance(exc, _EXPECTED) else f"{type(exc).__name__}: {message}"


@contextlib.contextmanager
def _warnings_as_lines(prefix, dist):
    """Show warnings as one line `prefix: warning: message`, on rank 0 only."""
    def show(message, category, filename, lineno, file=None, line=None):
        if dist.is_root:
            text = str(message).strip().splitlines()
            print(f"{prefix}: warning: {text[0] if text else category.__name__}",
                  file=sys.stderr)
    saved = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = saved
