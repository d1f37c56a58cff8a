"""The engine's settings: every BlockADMM option once, with its default, its check and its doc.

`EngineSettings` is a frozen dataclass, one field per option.  Each field declares (`_option`)
its default, what it accepts (a `Positive` bound or a tuple of choices) and one paragraph of
documentation; `__post_init__` checks every field in declaration order, so an option is
checked in one place whoever sets it (as scikit-learn's `_parameter_constraints`).  Who
reads it:

- `BlockADMM(feature_map, loss, regularizer, settings)` runs by it (`resolved(loss)` fills
  in the choices "auto" and None leave to the loss);
- the estimators take their defaults from `DEFAULTS` and build it from their parameters
  (`KernelMachine._engine_settings`), and their docstrings take the options' docs (`doc`);
- the checkpoint header (`checkpointed`), the verbose header (`describe`) and the check
  that every MPI rank was given the same settings (`collective`) are written from it;
- the `skylite train` options take their defaults and choices from it (`skylite.cli`).

Runtime objects (the callback, the validation scorer, the communicator) are not settings:
BlockADMM takes them as keyword arguments.
"""
import numbers
import os
from dataclasses import dataclass, field, fields, replace

import numpy as np

from .._validation import check_positive
from .driver import DriverSettings

__all__ = ["EngineSettings", "DEFAULTS", "FLOAT32_MIN_TOL", "Positive", "RELAXATION"]

# relaxation=None: the relaxation with Anderson acceleration and without it (measured:
# docs/engine.md, "Which default")
RELAXATION = {"anderson": 1.0, None: 1.8}
# precision "auto" computes in float32 only down to this tol: float32 products round at
# about 1e-7 relative, so residuals much below 1e-6 cannot be reached in float32
FLOAT32_MIN_TOL = 1e-6


@dataclass(frozen=True)
class Positive:
    """The bound of a numeric option: > 0 (>= 0 with allow_zero), an integer if `integer`,
    None allowed if `optional`, below `below` and above `above` if given."""
    integer: bool = False
    allow_zero: bool = False
    optional: bool = False
    below: float = None
    above: float = None

    def check(self, name, value):
        """`value` if it satisfies the bound, else ValueError naming the option."""
        if value is None and self.optional:
            return value
        check_positive(value, name, integer=self.integer, allow_zero=self.allow_zero)
        if ((self.below is not None and not value < self.below)
                or (self.above is not None and not value > self.above)):
            raise ValueError(f"{name} must lie in ({self.above or 0:g}, {self.below:g}), "
                             f"got {value}")
        return value

    def describe(self):
        """'int > 0', 'float >= 0 or None', ... for a docstring."""
        kind = "int" if self.integer else "float"
        bound = (f"in ({self.above or 0:g}, {self.below:g})" if self.below
                 else (">= 0" if self.allow_zero else "> 0"))
        return f"{kind} {bound}" + (" or None" if self.optional else "")


def _option(default, accepts, doc, *, collective=False, checkpointed=False, driver=False):
    """A field of EngineSettings.  accepts: a `Positive` bound, a tuple of choices, bool
    (coerced with bool()), or "path" (None or a path, kept as str).  collective: every MPI
    rank must be given the same value; checkpointed: a resumed run must have the value the
    checkpoint was written with; driver: an option of the driver (`DriverSettings`: the
    iteration budget, printing, checkpoints), the others are the method's."""
    return field(default=default, metadata={"accepts": accepts, "doc": doc,
                                            "collective": collective,
                                            "checkpointed": checkpointed, "driver": driver})


@dataclass(frozen=True)
class EngineSettings:
    """The options of a BlockADMM run (see the module docstring); every field is checked on
    construction.  The attributes `acceleration` and `relaxation` hold what was asked for;
    `resolved(loss)` returns the settings with the choices left to the loss made."""

    alpha: float = _option(1e-4, Positive(allow_zero=True), """\
The regularization weight of (1/n) sum_i V(y_i, o_i) + alpha r(W) (the paper's
lambda).  scikit-learn's and LIBSVM's C is 1 / (n alpha).""",
                           collective=True, checkpointed=True)
    rho: float = _option(1.0, Positive(above=1e-8, below=1e8), """\
Initial ADMM penalty, relative to the loss scale; adapted by residual balancing.  Outside
(1e-8, 1e8) the iteration cannot move: its steps 1/rho or rho vanish beside the data.""",
                         collective=True)
    max_iter: int = _option(500, Positive(integer=True), """\
Maximum iterations; reaching it warns (`skylite.admm.ConvergenceWarning`).""",
                            collective=True, driver=True)
    tol: float = _option(1e-3, Positive(), """\
Relative tolerance of the primal and dual ADMM residuals (docs/engine.md).""",
                         collective=True)
    acceleration: str = _option("auto", ("auto", "anderson", None), """\
Safeguarded Anderson acceleration of the ADMM iteration (skylite.admm.acceleration).
"auto": Anderson for the smooth losses (squared, logistic), none for hinge and LAD,
where it does not pay for itself (docs/engine.md, "Which default").""",
                                collective=True, checkpointed=True)
    relaxation: float = _option(None, Positive(optional=True, below=2.0), f"""\
Over-relaxation of the ADMM iteration (1: plain ADMM).  None: {RELAXATION["anderson"]:g} with
Anderson acceleration, {RELAXATION[None]:g} without.""",
                                collective=True, checkpointed=True)
    anderson_memory: int = _option(5, Positive(integer=True), """\
The number of past iterations Anderson acceleration combines.""",
                                   collective=True, checkpointed=True)
    n_row_blocks: int = _option(None, Positive(integer=True, optional=True), """\
Row blocks of this process (under `comm` each rank holds its own).  None: 1 with the row
sweep; with the column sweep, the fewest that keep the working memory within the memory
budget (skylite.admm.memory.plan_run).""")
    sweep: str = _option("auto", ("auto", "rows", "columns"), """\
How the graph projection passes over Z (docs/engine.md): "rows", one pass over tiles of
rows per iteration (needs n_i >= s_j); "columns", one n_i x s_j block per thread; "auto":
rows when n_i >= s_j and its working memory fits the budget, else columns.""")
    n_threads: int = _option(None, Positive(integer=True, optional=True), """\
Threads of the native code.  None takes the OpenMP thread limit in force, as
scikit-learn's OpenMP estimators do (OMP_NUM_THREADS, threadpoolctl's
``threadpool_limits(n, "openmp")``, joblib's limit in its workers), and never more than
the usable cores (CPU affinity, cgroup quota); a larger number is capped with a
warning.  The fitted model does not depend on it.""")
    memory_budget: int = _option(None, Positive(allow_zero=True, optional=True),
                                 """\
Bytes the fit may allocate (the input rows are not counted): the working memory
(state, factors, per-thread feature blocks and map parameters) first, with the rows
split into as many row blocks as it takes to fit (`n_row_blocks_`), then caches
(feature blocks Z_j, then map parameters) in what is left.  None takes half the
available memory; 0 caches nothing.  Everything is counted before anything is
allocated: a fit that cannot fit raises MemoryError with one line saying what to
change (docs/choosing_parameters.md).""")
    precision: str = _option("auto", ("auto", "float64", "float32"), """\
Precision of the feature blocks (transform, cache, products with Z); float32 halves
their cost and size.  "auto": float32 when the training rows are float32 (dense or CSR
values; on every rank) and tol is at least 1e-6 (float32 products cannot reach a tighter
tol), else float64.  The solver state stays float64.""",
                             collective=True, checkpointed=True)
    cache_precision: str = _option("auto", ("auto", "float64", "float32", "bfloat16"), """\
Storage of the cached feature blocks Z_j.  "bfloat16" (with precision="float32"): 16 bits
per value, half of float32, so twice as many blocks fit the memory budget and a cached
iteration reads half the bytes; the features are then rounded to bfloat16 (relative
rounding <= 2^-9) wherever they are used, cached or regenerated, with float32 products, so
the model does not depend on which blocks are cached.  "float32", "float64": the
precision's own (they must equal `precision`).  "auto": bfloat16 when the blocks are float32
and bfloat16 caches more of them within the memory budget, else the precision's own.""",
                                 collective=True, checkpointed=True)
    adapt_rho: bool = _option(True, bool, """\
Residual balancing of rho every 10 iterations.""", collective=True)
    verbose: bool = _option(False, bool, """\
Print a header (sizes, blocks, threads, memory) and one line per ADMM iteration
(objective, residuals, rho, validation score, seconds).  Off by default, so a long fit,
or a GridSearchCV of many, prints nothing until it returns.""", driver=True)
    checkpoint: str = _option(None, "path", """\
Save the full ADMM state there every `checkpoint_every` iterations; a `fit` that finds
the file(s) resumes from them and reaches the uninterrupted run's model.""",
                              collective=True, driver=True)
    checkpoint_every: int = _option(10, Positive(integer=True), """\
Iterations between checkpoints.""", collective=True, driver=True)

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, _checked(f, getattr(self, f.name)))
        cache = self.cache_precision
        if self.precision != "auto" and cache not in ("auto", self.precision) and not (
                cache == "bfloat16" and self.precision == "float32"):
            need = "float32" if cache == "bfloat16" else cache
            raise ValueError(f"cache_precision={cache!r} needs precision={need!r} (the cache "
                             f"stores the transform's blocks), got precision="
                             f"{self.precision!r}")

    # ---- reading the declarations ----

    @classmethod
    def check(cls, name, value):
        """`value` checked (and coerced) as option `name` would be; ValueError if not.

        Parameters
        ----------
        name : str
            An option's name (a field of EngineSettings).
        value : object
            The value to check.

        Returns
        -------
        object
            The value, coerced as the option stores it.
        """
        return _checked(_FIELDS[name], value)

    @staticmethod
    def names():
        """The options' names, in declaration (and checking) order."""
        return tuple(_FIELDS)

    @staticmethod
    def choices(name):
        """The values option `name` accepts, or None for a numeric option.

        Parameters
        ----------
        name : str
            An option with a fixed set of values, e.g. "acceleration" (the CLI's choices).

        Returns
        -------
        tuple or None
            The allowed values; None for a bounded number.
        """
        accepts = _FIELDS[name].metadata["accepts"]
        return accepts if isinstance(accepts, tuple) else None

    @staticmethod
    def doc(name):
        """The numpydoc entry of option `name`: 'rho : float > 0, default=1.0' and its
        paragraph, indented by four spaces.

        Parameters
        ----------
        name : str
            An option's name.

        Returns
        -------
        str
            The entry, as a docstring's Parameters section holds it.
        """
        f = _FIELDS[name]
        accepts = f.metadata["accepts"]
        if isinstance(accepts, tuple):
            names = [f'"{c}"' if isinstance(c, str) else repr(c) for c in accepts]
            kind = ", ".join(names[:-1]) + " or " + names[-1]
        elif accepts is bool:
            kind = "bool"
        elif accepts == "path":
            kind = "path or None"
        else:
            kind = accepts.describe()
        default = f'"{f.default}"' if isinstance(f.default, str) else repr(f.default)
        body = "\n".join("    " + line for line in f.metadata["doc"].splitlines())
        return f"{name} : {kind}, default={default}\n{body}"

    # ---- the run's view ----

    def resolved(self, loss):
        """These settings with "auto" acceleration and None relaxation made for `loss`:
        "auto" takes Anderson for a smooth loss (`loss.smooth`) and none otherwise;
        relaxation None takes RELAXATION's value for the acceleration.

        Parameters
        ----------
        loss : Loss
            The run's loss (skylite.prox); its `smooth` attribute decides "auto".

        Returns
        -------
        EngineSettings
            A copy with `acceleration` and `relaxation` resolved.
        """
        acceleration = self.acceleration
        if acceleration == "auto":
            acceleration = "anderson" if getattr(loss, "smooth", False) else None
        relaxation = self.relaxation
        if relaxation is None:
            relaxation = RELAXATION[acceleration]
        return replace(self, acceleration=acceleration, relaxation=float(relaxation))

    def for_rows(self, single):
        """These settings with precision "auto" made for the training rows: "float32" when
        `single` (the rows are float32, on every rank) and tol >= FLOAT32_MIN_TOL, else
        "float64".

        Parameters
        ----------
        single : bool
            Whether the rows are float32.

        Returns
        -------
        EngineSettings
            Self if precision is not "auto", else a copy with it resolved; ValueError if
            the resolved precision cannot hold the cache precision asked for.
        """
        if self.precision != "auto":
            return self
        float32 = single and self.tol >= FLOAT32_MIN_TOL
        if self.cache_precision == "bfloat16" and not float32:
            why = ("the training rows are not float32" if not single else
                   f"tol={self.tol:g} is below {FLOAT32_MIN_TOL:g}")
            raise ValueError(f"cache_precision='bfloat16' needs precision='float32': "
                             f"precision='auto' computes in float64 because {why}; pass "
                             f"precision='float32'")
        return replace(self, precision="float32" if float32 else "float64")

    def collective(self):
        """The options that decide the collective control flow, by name (a checkpoint path
        as whether there is one): every rank must have the same."""
        return {f.name: (getattr(self, f.name) is not None if f.metadata["accepts"] == "path"
                         else getattr(self, f.name))
                for f in fields(self) if f.metadata["collective"]}

    def checkpointed(self):
        """The options a checkpoint records and a resume must match, by name."""
        return {f.name: (float(self.alpha) if f.name == "alpha" else getattr(self, f.name))
                for f in fields(self) if f.metadata["checkpointed"]}

    def driver(self):
        """The driver's options (`skylite.admm.driver.DriverSettings`); the others are the
        method's (BlockADMM's: alpha, rho, tol, acceleration, ...)."""
        return DriverSettings(**{f.name: getattr(self, f.name) for f in fields(self)
                                 if f.metadata["driver"]})

    def describe(self):
        """'float64 acceleration=None relaxation=1.8': the verbose header's settings."""
        return (f"{self.precision} acceleration={self.acceleration} "
                f"relaxation={self.relaxation:g}")


def _checked(f, value):
    accepts = f.metadata["accepts"]
    if isinstance(accepts, Positive):
        return accepts.check(f.name, value)
    if isinstance(accepts, tuple):
        if value not in accepts:
            raise ValueError(f"{f.name} must be one of {accepts}, got {value!r}")
        return value
    if accepts is bool:
        if isinstance(value, (bool, np.bool_, numbers.Integral)):     # verbose=2 as well
            return bool(value)
        raise ValueError(f"{f.name} must be True or False, got {value!r}")
    if value is None:                                          # "path"
        return None
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ValueError(f"{f.name} must be a path (a non-empty str or os.PathLike) or None, "
                         f"got {value!r}")
    return os.fspath(value)


_FIELDS = {f.name: f for f in fields(EngineSettings)}
# the class's Parameters section, from the one declaration of each option
EngineSettings.__doc__ += ("\n\n    Parameters\n    ----------\n" + "\n".join(
    "\n".join("    " + line for line in EngineSettings.doc(name).splitlines())
    for name in _FIELDS) + "\n")
#: the default settings (the estimators' and the CLI's defaults read it)
DEFAULTS = EngineSettings()
