"""skylite: kernel machines at scale with random feature maps and block-splitting ADMM."""
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

from . import admm, kernels, prox, sketch  # noqa: E402
from .estimators import (KernelLADRegression, KernelLogisticRegression, KernelMachine,
                         KernelRidge, KernelSVC, load)

__version__ = "0.1.0"
__all__ = ["KernelMachine", "KernelSVC", "KernelLogisticRegression", "KernelRidge",
           "KernelLADRegression", "load", "admm", "kernels", "prox", "sketch", "__version__"]
