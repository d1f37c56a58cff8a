"""The BlockADMM engine (DESIGN.md section 3): block-splitting ADMM over implicit features."""
from .blockadmm import BlockADMM, ConvergenceError, ConvergenceWarning
from .memory import paper_estimate_bytes

__all__ = ["BlockADMM", "ConvergenceError", "ConvergenceWarning", "paper_estimate_bytes"]
