"""The BlockADMM engine (docs/engine.md): block-splitting ADMM over implicit features.

`iteration` holds the algorithm (state, update rules, residuals, rho balancing),
`acceleration` Anderson acceleration, `blockadmm` the driver, `_graph_projection` the native
column sweep, `checkpoint` and `memory` the checkpoint files and the memory plan.
"""
from .blockadmm import BlockADMM, ConvergenceWarning
from .iteration import ConvergenceError
from .memory import MemoryRefused, WideInputWarning, paper_estimate_bytes

__all__ = ["BlockADMM", "ConvergenceError", "ConvergenceWarning", "MemoryRefused",
           "WideInputWarning", "paper_estimate_bytes"]
