"""Coding class labels into loss targets Y, and decision values back into classes.

The coding of docs/prox.md: with K = number of classes (sorted unique labels, `classes`),

* one-vs-rest +/-1 (squared, LAD, hinge; `loss.coding == "ovr"`): Y is n x K with
  Y[i, k] = +1 if y_i is class k else -1; for K = 2 a single column m = 1 with +1 for
  classes[1] (the positive class) and -1 for classes[0] (scikit-learn's convention);
* one-hot (logistic; `loss.coding == "onehot"`): Y is n x K of 0/1 with a single 1, also
  for K = 2.

Decoding: the class index of a row of decision values O (n x m) is argmax_k O[i, k] (first
maximum on ties), or, for one column, 1 if O[i, 0] > 0 else 0.  `decision_values` gives
scikit-learn's decision_function for two classes: one value per row, > 0 for classes[1].
"""
import numpy as np

from ._logistic_loss import softmax  # noqa: F401  (public here: class probabilities)
from ._registry import get_loss


def _coding_of(loss):
    if loss in ("ovr", "onehot"):
        return loss
    return get_loss(loss).coding


def n_outputs(n_classes, loss):
    """m, the number of output columns for n_classes classes under `loss`.

    Parameters
    ----------
    n_classes : int >= 2
        The number of classes.
    loss : str or Loss
        A loss name or object, or a coding ("ovr" or "onehot").

    Returns
    -------
    m : int
        1 for two classes coded one-vs-rest, else n_classes.
    """
    if n_classes < 2:
        plural = "" if n_classes == 1 else "es"
        raise ValueError(f"classification needs at least two classes, got {n_classes} "
                         f"class{plural}")
    if _coding_of(loss) == "ovr" and n_classes == 2:
        return 1
    return int(n_classes)


def code_labels(y, loss, *, classes=None):
    """Code class labels for `loss`.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels of any sortable type.
    loss : str or Loss
        A loss name or object, or a coding ("ovr" or "onehot").
    classes : array-like or None, default=None
        The sorted class labels (None: np.unique(y)); every label must be among them.

    Returns
    -------
    Y : ndarray of shape (n, m), float64
        The coded targets, m = n_outputs(len(classes), loss).
    classes : ndarray
        The class labels, sorted.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of class labels, got {y.ndim}-D")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity")
    classes = np.unique(y) if classes is None else np.asarray(classes)
    if classes.ndim != 1 or classes.size == 0:
        raise ValueError("classes must be a non-empty 1-D array of labels")
    if classes.size > 1 and not (classes[1:] > classes[:-1]).all():
        raise ValueError("classes must be sorted and unique")
    m = n_outputs(classes.size, loss)
    idx = np.searchsorted(classes, y)
    idx_clipped = np.minimum(idx, classes.size - 1)
    unknown = classes[idx_clipped] != y
    if unknown.any():
        raise ValueError(f"y contains labels not in classes, e.g. {y[unknown][0]!r}")
    n = y.shape[0]
    if _coding_of(loss) == "onehot":
        Y = np.zeros((n, m))
        Y[np.arange(n), idx] = 1.0
    elif m == 1:
        Y = np.where(idx == 1, 1.0, -1.0).reshape(n, 1)
    else:
        Y = np.full((n, m), -1.0)
        Y[np.arange(n), idx] = 1.0
    return Y, classes


def decision_values(O, loss):
    """scikit-learn's decision values from the outputs O of a classifier.

    They give the class of `decode_decision(O)` (sign, or argmax).

    Parameters
    ----------
    O : array-like of shape (n, m)
        The classifier's outputs.
    loss : str or Loss
        A loss name or object, or a coding ("ovr" or "onehot").

    Returns
    -------
    values : ndarray of shape (n,) or (n, m)
        For two classes one value per row, positive for classes[1] (one-vs-rest: the
        single column; one-hot: the log-odds O[:, 1] - O[:, 0]); otherwise O itself.
    """
    O = np.asarray(O)
    if O.ndim == 2 and O.shape[1] == 2 and _coding_of(loss) == "onehot":
        return O[:, 1] - O[:, 0]
    return O.ravel() if O.ndim == 2 and O.shape[1] == 1 else O


def decode_decision(O):
    """Class indices from decision values: argmax over columns, or O[:, 0] > 0 for one column.

    Parameters
    ----------
    O : array-like of shape (n, m)
        Decision values, m >= 1.

    Returns
    -------
    indices : ndarray of shape (n,), intp
        Index `classes` with them to get labels.
    """
    O = np.asarray(O)
    if O.ndim != 2 or O.shape[1] == 0:
        raise ValueError(f"decision values must be an n x m array with m >= 1, got shape "
                         f"{O.shape}")
    if O.shape[1] == 1:
        return (O[:, 0] > 0).astype(np.intp)
    return np.argmax(O, axis=1).astype(np.intp)
