"""What an iterative solver's driver shares, beside the settings (`settings`), the memory plan
(`memory`), the checkpoint files (`checkpoint`) and the MPI guards (skylite._distributed):
the layout of its one Allreduce per iteration, the user's callback under MPI, and the
history record (Python numbers; its verbose line).  BlockADMM's driver uses them; a second
solver would too.
"""
import numpy as np

from .._distributed import Guard

__all__ = ["SumsLayout", "collective_callback", "format_record", "as_python_numbers"]


class SumsLayout:
    """The vector of one iteration's Allreduce: this rank's `n_sums` partial sums of the
    solver (BlockADMM: `Iteration.SUMS`), then the validation scorer's `n_validation`
    partial sums, then the accelerator's `n_dots` partial dots, then a failure flag (1 on a
    rank whose step failed).  The attributes `sums`, `validation`, `dots` (slices) and
    `failed` (an index) read the reduced vector."""

    def __init__(self, n_sums, n_validation, n_dots):
        self.sums = slice(0, n_sums)
        self.validation = slice(n_sums, n_sums + n_validation)
        self.dots = slice(self.validation.stop, self.validation.stop + n_dots)
        self.failed = self.dots.stop
        self.size = self.failed + 1

    def pack(self, parts):
        """The vector of the parts in order with the flag 0, or None (a failed rank): zeros
        with the flag 1."""
        if parts is None:
            vector = np.zeros(self.size)
            vector[self.failed] = 1.0
            return vector
        return np.concatenate([*parts, [0.0]])


def collective_callback(dist, callback, it, record, W):
    """callback(it, record, W) on every rank, its stop request: under P > 1 ranks one extra
    2-float Allreduce makes a failure or a stop request on any rank stop every rank."""
    if dist.serial:
        return callback(it, record, W)
    guard = Guard()
    stop = False
    with guard:
        stop = bool(callback(it, record, W))
    flags = dist.allreduce_sum([guard.error is not None, stop])
    if flags[0] > 0:
        dist.raise_failures(guard.error)
    return flags[1] > 0


def format_record(r):
    """The verbose line of a history record (ADMM's, dual coordinate descent's, or PCG's
    relative residual)."""
    if "violation" in r:                       # dual coordinate descent
        line = (f"iter {r['iteration']:4d}  dual objective {r['dual_objective']:.6e}  span "
                f"{r['violation']:.2e}  solved {r['solved']}")
        if "objective" in r:
            line += f"  objective {r['objective']:.6e}  gap {r['gap']:.2e}"
    elif "objective" in r:
        line = (f"iter {r['iteration']:4d}  objective {r['objective']:.6e}  primal "
                f"{r['primal']:.2e}  dual {r['dual']:.2e}  rho {r['rho']:.2g}")
    else:
        line = f"iter {r['iteration']:4d}  residual {r['residual']:.2e}"
    if "validation" in r:
        line += f"  validation {r['validation']:.4f}"
    if "validation_loss" in r:
        line += f" (loss {r['validation_loss']:.4g})"
    return line + f"  {r['seconds']:.2f}s ({r['elapsed']:.1f}s)"


def as_python_numbers(record):
    """`record` with numpy scalars replaced by the Python numbers they hold (exactly), so
    that `history_` prints as plain numbers and serializes as JSON."""
    for key, value in record.items():
        if isinstance(value, np.generic):
            record[key] = value.item()
    return record
