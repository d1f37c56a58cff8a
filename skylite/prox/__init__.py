"""Prox operators of losses and regularizers (docs/prox.md).

Losses V(y, o) on n x m arrays of outputs O and coded targets Y (value = sum over rows):

=================  ===================================  ===========================
class (name)       V(y, o)                              targets Y
=================  ===================================  ===========================
SquaredLoss        1/2 ||o - y||^2                      real, or +/-1 with
("squared")                                             classification=True
AbsoluteLoss       ||o - y||_1                          same
("lad")
HingeLoss          sum_k max(0, 1 - y_k o_k)            +/-1 (one-vs-rest)
("hinge")
LogisticLoss       logsumexp(o) - o . y                 one-hot rows
("logistic")
=================  ===================================  ===========================

Regularizers r(W) on s x m weights: L2 ("l2", 1/2 ||W||_F^2), L1 ("l1", sum abs(W_ab)),
NoRegularizer ("none", 0); and RKHSNorm ("rkhs", 1/2 tr(W^T G W)), the norm of the functions a
Nystroem map spans, built from the map (not by name).

Every object has `value(...)` and `prox(..., t, out=None)` (losses also `subgradient(O, Y)`,
`classification`, `coding` and `with_classification(flag)`) with
prox_{t f}(v) = argmin_x t f(x) + 1/2 ||x - v||^2, computed in float64 (float32 input is
accepted; results are float64), in parallel over rows (`n_threads`, default every core; the
result does not depend on it).  Native code cimports the nogil kernels from
`skylite/prox/_losses.pxd` and `skylite/prox/_regularizers.pxd`.  `get_loss` and
`get_regularizer` accept names or objects; `skylite.prox.coding` codes class labels into Y.
"""
from . import coding
from ._checks import ProxConvergenceWarning
from ._closed_form_losses import AbsoluteLoss, HingeLoss, SquaredLoss
from ._logistic_loss import LogisticLoss
from ._losses import Loss
from ._registry import LOSSES, REGULARIZERS, get_loss, get_regularizer
from ._regularizers import L1, L2, NoRegularizer, Regularizer
from .rkhs import RKHSNorm
from .stacked import StackedLoss, stack_targets

__all__ = ["Loss", "SquaredLoss", "AbsoluteLoss", "HingeLoss", "LogisticLoss",
           "Regularizer", "L2", "L1", "NoRegularizer", "RKHSNorm", "get_loss", "get_regularizer",
           "StackedLoss", "stack_targets", "LOSSES", "REGULARIZERS", "ProxConvergenceWarning",
           "coding"]
