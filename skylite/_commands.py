"""What the `skylite` commands do: train, predict, tune and demo (skylite.cli parses the command
line and calls these with its arguments and the run's `Distributed`)."""
import contextlib
import os
import re
import sys
import time
import warnings

import numpy as np

from . import _global_stats as stats
from ._distributed import Distributed
from .admm import ConvergenceError, ConvergenceWarning
from .datasets import load_pendigits
from ._flags import PARAMETERS
from .estimators import PRESETS, KernelMachine, KernelSVC, load
from .io.files import read_rows
from .kernels import KERNEL_PARAMETERS
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
        rows = int(dist.allreduce_sum([len(model.validation_indices_)])[0])
        say(f"validation: {rows} training rows held out (--validation-fraction "
            f"{args.validation_fraction})" if model.validation_fraction is not None else
            f"validation: early stopping scored {rows} of the training rows, which stay in "
            f"the fit (--validation-fraction none)")
    say(f"trained {type(model).__name__}: {_how_it_ended(model, args)}, "
        f"{seconds:.1f}s total")
    metric = "accuracy" if model.is_classifier else "R^2"
    say(f"training {metric}: {_format_score(model.score(X, y), metric)}")    # global
    if X_val is not None:
        say(f"validation {metric}: {_format_score(model.score(X_val, y_val), metric)}")
    model.save(args.model)                  # collective: rank 0 writes, every rank agrees
    say(f"model written to {args.model} ({os.path.getsize(args.model) / 2**10:.0f} KiB)")
    return 0


def _how_it_ended(model, args):
    """'30 iterations (converged), objective 3.58e-02', or what a non-ADMM solver did."""
    if model.solver_ in ("direct", "exact"):
        return f"{model.solver_} solve (--solver {model.solver_})"
    status = ("converged" if model.converged_ else
              f"early stop, best validation at iteration {model.best_iteration_}"
              if model.n_iter_ < args.iters else f"stopped at --iters {args.iters}")
    if model.solver_ == "pcg":
        return f"{model.n_iter_} pcg iterations ({status})"
    if model.solver_ == "dcd":
        return (f"{model.n_iter_} epochs of dual coordinate descent ({status}), objective "
                f"{model.history_[-1]['objective']:.6e}")
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
    """The estimator of `skylite train`: each option sets the parameter skylite.cli.PARAMETERS
    names (skylite._flags.PARAMETERS); the command's own conventions are translated here (--quasi, "none", -q, MPI)."""
    # class labels with squared / lad: the general machine (the presets keep their kind)
    cls = KernelMachine if args.classification else PRESETS[args.loss]
    params = {param: getattr(args, dest) for dest, param in PARAMETERS.items()}
    params.update(
        method=f"qmc_{args.quasi}" if args.quasi else args.method,
        acceleration=None if args.acceleration == "none" else args.acceleration,
        validation_fraction=(None if args.validation_fraction == "none"
                             else args.validation_fraction),
        verbose=not args.quiet, comm=None if dist.serial else dist.comm,
        n_iter_no_change=None if args.early_stop is False else args.n_iter_no_change,
        classification=args.classification or None,
        **{name: getattr(args, name) for name in KERNEL_PARAMETERS
           if getattr(args, name) is not None})
    return cls(**params)


def _format_score(value, metric):
    return f"{100 * value:.2f}%" if metric == "accuracy" else f"{value:.4f}"


# ---- tune ----

#: `skylite tune`'s regularization values when none are given: LIBSVM grid.py's C range
#: (2^-1 ... 2^11, every 2 in log2) and, for the regressors, three decades of alpha
TUNE_DEFAULTS = {"C": [2.0 ** k for k in range(-1, 12, 2)], "alpha": [1e-2, 1e-4, 1e-6]}


def tune(args, dist):
    """Cross-validate the grid, print the table and the best pair, write the best model
    (and the heatmap); collective under mpiexec, rank 0 prints and writes."""
    from .model_selection import KernelGridSearchCV
    say = print if dist.is_root else (lambda *a, **k: None)
    for path, what in ((args.model, "the model"), (args.plot, "the plot")):
        if path:
            dist.agree(lambda p=path, w=what: _check_writable(p, w) if dist.is_root else None)
    X, y = read_rows(args.train, part="train", n_features=args.input_features,
                     zero_based=args.zero_based, comm=dist,
                     **_array_options(args, labels=True))
    if y is None:
        raise ValueError(f"{args.train}: no labels (y) to tune on")
    if args.threads is None and not dist.serial:
        args.threads = max(1, (os.cpu_count() or 1) // dist.ranks_on_node())
    cls = PRESETS[args.loss]
    method = {} if args.method is None else {"method": args.method}   # else the preset's
    estimator = cls(kernel=args.kernel, n_features=args.features, **method,
                    precision=args.precision, random_state=args.seed,
                    n_threads=args.threads, comm=None if dist.serial else dist.comm)
    name = "C" if "C" in estimator.get_params() else "alpha"
    grid = {name: getattr(args, name) or TUNE_DEFAULTS[name]}
    if args.sigma:
        grid["sigma"] = args.sigma
    n_rows = int(dist.sum_to_all(np.array([X.shape[0]]))[0])
    points = int(np.prod([len(v) for v in grid.values()]))
    say(f"{args.train}: {n_rows} rows, {X.shape[1]} features; {points} grid points x "
        f"{args.cv} folds")
    start = time.perf_counter()
    search = KernelGridSearchCV(estimator, grid, cv=args.cv, racing=args.racing,
                                verbose=0 if args.quiet else 1).fit(X, y)
    metric = "accuracy" if estimator.is_classifier else "R^2"
    for line in _search_table(search, name, metric):
        say(line)
    best = search.best_params_
    sigma = best.get("sigma", search.best_estimator_.sigma_)
    log2 = f" (log2 C = {np.log2(best[name]):g})" if name == "C" else ""
    say(f"best: sigma={sigma:g} {name}={best[name]:g}{log2}, CV {metric} "
        f"{_format_score(search.best_score_, metric)}; search and refit "
        f"{time.perf_counter() - start:.1f}s")
    search.best_estimator_.save(args.model)
    say(f"model written to {args.model}")
    if args.plot and dist.is_root:
        import matplotlib
        matplotlib.use("Agg")
        from .plotting import plot_search
        ax = plot_search(search, x=name, y="sigma" if args.sigma else None,
                         title=f"{args.train}: mean {args.cv}-fold CV {metric}")
        ax.figure.savefig(args.plot, dpi=120)
        say(f"heatmap written to {args.plot}")
    return 0


def _search_table(search, name, metric):
    """The mean CV scores as lines of a table: a row per sigma, a column per value of
    `name` (C or alpha); '-' marks a pair racing dropped (its mean is over fewer folds)."""
    params = search.cv_results_["params"]
    values = sorted({p[name] for p in params})
    sigmas = sorted({p.get("sigma") for p in params}, key=lambda s: (s is None, s))
    cell = {(p.get("sigma"), p[name]): (score, dropped >= 0) for p, score, dropped in zip(
        params, search.cv_results_["mean_test_score"], search.dropped_after_)}
    lines = [f"{'sigma':>8} " + " ".join(f"{_value_label(name, v):>10}" for v in values)]
    for sigma in sigmas:
        row = [f"{'scale' if sigma is None else f'{sigma:g}':>8}"]
        for v in values:
            score, dropped = cell[(sigma, v)]
            text = _format_score(score, metric) + ("-" if dropped else "")
            row.append(f"{text:>10}")
        lines.append(" ".join(row))
    return lines


def _value_label(name, value):
    """'C=2^3' for a power of two, else 'C=0.3' (a table column's header)."""
    exponent = np.log2(value)
    return f"{name}=2^{exponent:g}" if exponent == round(exponent) else f"{name}={value:g}"


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
    alpha = 1e-5 on pendigits), so the comparison is of converged models.  features and
    seed None: the estimator's defaults."""
    kernel_svm = KernelSVC(sigma=sigma, n_blocks=blocks, alpha=alpha, max_iter=2000)
    if features is not None:
        kernel_svm.set_params(n_features=features)
    if seed is not None:
        kernel_svm.set_params(random_state=seed)
    return [
        ("linear SVM", KernelSVC("linear", alpha=alpha, max_iter=2000)),
        (f"kernel SVM (gaussian sigma={sigma}, s={kernel_svm.n_features})", kernel_svm),
    ]


def _array_options(args, *, labels):
    """read_rows keywords from --x-dataset / --y-dataset (HDF5 files) and --labels (an .npy
    file's labels; with labels=False not passed on: a validation .npy file has its own)."""
    options = {"x_dataset": args.x_dataset or "X", "y_dataset": args.y_dataset or "y"}
    if labels and args.labels:
        options["labels"] = args.labels
    return options


_EXPECTED = (ValueError, TypeError, OSError, MemoryError, ConvergenceError, RuntimeError)


def _as_flags(message):
    """`message` with the estimator parameters it names ("n_blocks=16", "acceleration=None",
    "(n_features)") written as the command's flags ("--blocks 16", "--acceleration none",
    "(--features)"), by the one table of their names (skylite._flags.PARAMETERS)."""
    for dest, param in PARAMETERS.items():
        flag = "--" + dest.replace("_", "-")
        message = re.sub(rf"\({param}\)", f"({flag})", message)
        if param in _READER_WORDS:
            continue
        message = re.sub(rf"\b{param}=None\b", f"{flag} none", message)
        message = re.sub(rf"\b{param}=", f"{flag} ", message)
    return message


# "n_features=d" in the readers' messages is a file's columns, not the random features
_READER_WORDS = ("n_features",)


def one_line(exc):
    """The message of an error on one line, parameters named as flags; an unexpected kind
    of error is named."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    message = _as_flags(lines[0])
    return message if isinstance(exc, _EXPECTED) else f"{type(exc).__name__}: {message}"


@contextlib.contextmanager
def warnings_as_lines(prefix, dist):
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
