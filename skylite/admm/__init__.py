"""The BlockADMM engine (docs/engine.md): block-splitting ADMM over implicit features.

`iteration` holds the algorithm (state, update rules, residuals, rho balancing),
`acceleration` Anderson acceleration, `settings` the options, `blockadmm` the driver,
`_column_blocks` the native block store with its two sweeps `_column_sweep` and `_row_sweep`,
`checkpoint` and `memory` the checkpoint files and the memory plan (docs/engine.md, "Where
things are").
"""
from .blockadmm import BlockADMM, ConvergenceWarning
from .iteration import ConvergenceError
from .memory import MemoryRefused, WideInputWarning, paper_estimate_bytes
from .settings import EngineSettings

__all__ = ["BlockADMM", "ConvergenceError", "ConvergenceWarning", "EngineSettings",
           "MemoryRefused", "WideInputWarning", "paper_estimate_bytes"]
