"""The BlockADMM engine (DESIGN.md section 3): block-splitting ADMM over implicit features."""
from .blockadmm import BlockADMM, ConvergenceError
from .memory import paper_estimate_bytes

__all__ = ["BlockADMM", "ConvergenceError", "paper_estimate_bytes"]
