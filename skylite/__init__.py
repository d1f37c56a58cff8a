"""skylite: kernel machines at scale with random feature maps and block-splitting ADMM."""
from . import admm, kernels, prox, sketch
from .estimators import (KernelLADRegression, KernelLogisticRegression, KernelMachine,
                         KernelRidge, KernelSVC, load)

__version__ = "0.1.0"
__all__ = ["KernelMachine", "KernelSVC", "KernelLogisticRegression", "KernelRidge",
           "KernelLADRegression", "load", "admm", "kernels", "prox", "sketch", "__version__"]
