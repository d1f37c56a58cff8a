"""skylite: kernel machines at scale with random feature maps and block-splitting ADMM.

`import skylite` is light: the estimators and subpackages load on first use
(`skylite.KernelSVC`, `from skylite import sketch`), so the `skylite` command's --help and
--version, and a program that only imports skylite, do not load numpy, SciPy or
scikit-learn.
"""
import importlib as _importlib
import os as _os

# Before the OpenMP runtime loads (with skylite's first native module): libgomp lets a thread
# that waits at the end of a parallel region spin for 300,000 iterations before it sleeps.
# On a machine where another process wants the cores, that spinning steals the core the
# working thread needs, and two threads became slower than one (docs/engine.md, "Threads on
# a busy machine").  Waiting threads sleep at once instead.  A user's own OMP_WAIT_POLICY or
# GOMP_SPINCOUNT is left alone; this only applies if libgomp has not been loaded by another
# package first.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = "passive"

__version__ = "0.1.0"

from ._check_build import build_error as _build_error, check_build as _check_build  # noqa: E402

_check_build(_os.path.dirname(__file__))

# public name -> the module that defines it, imported when the name is first used
_LAZY = {
    **{name: "skylite.estimators" for name in (
        "KernelMachine", "KernelSVC", "KernelLogisticRegression", "KernelRidge",
        "KernelLADRegression", "load")},
    **{name: f"skylite.{name}" for name in ("admm", "kernels", "model_selection", "prox",
                                            "sketch")},
}
__all__ = [*_LAZY, "__version__"]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'skylite' has no attribute {name!r}")
    try:
        module = _importlib.import_module(_LAZY[name])
    except ModuleNotFoundError as exc:     # one compiled module missing from a partial build
        if not (exc.name or "").startswith("skylite."):
            raise
        raise _build_error(_os.path.dirname(__file__), exc.name) from exc
    value = module if module.__name__ == f"skylite.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
