"""Names of losses and regularizers (libSkylark's strategy objects, chosen by name).

The engine and the estimators accept either a name or an object; these functions turn both
into the cdef objects whose nogil kernels the engine calls.
"""
from ._closed_form_losses import AbsoluteLoss, HingeLoss, SquaredLoss
from ._logistic_loss import LogisticLoss
from ._losses import Loss
from ._regularizers import L1, L2, NoRegularizer, Regularizer

#: loss name -> class
LOSSES = {"squared": SquaredLoss, "lad": AbsoluteLoss, "hinge": HingeLoss,
          "logistic": LogisticLoss}
#: regularizer name -> class
REGULARIZERS = {"l2": L2, "l1": L1, "none": NoRegularizer}


def get_loss(loss, **params):
    """A `Loss` object from a name, a `Loss` object or a `Loss` class.

    Parameters
    ----------
    loss : str, Loss or Loss subclass
        A name ("squared", "lad", "hinge", "logistic"; case-insensitive), an object
        (returned as is) or a class (instantiated).
    **params
        Passed to the constructor of a loss given by name or class, e.g.
        ``get_loss("squared", classification=True)`` or
        ``get_loss("logistic", max_iter=200)``.

    Returns
    -------
    loss : Loss
        The loss object.
    """
    return _get(loss, params, LOSSES, Loss, "loss")


def get_regularizer(regularizer):
    """A `Regularizer` object from a name, a `Regularizer` object or class.

    Parameters
    ----------
    regularizer : str, Regularizer, Regularizer subclass or None
        A name ("l2", "l1", "none"; case-insensitive; None means "none"), an object
        (returned as is) or a class (instantiated).

    Returns
    -------
    regularizer : Regularizer
        The regularizer object.
    """
    if regularizer is None:
        regularizer = "none"
    return _get(regularizer, {}, REGULARIZERS, Regularizer, "regularizer")


def _get(spec, params, registry, base, what):
    if isinstance(spec, base):
        if params:
            raise ValueError(f"parameters {sorted(params)} only apply to a {what} given by name")
        return spec
    if isinstance(spec, type) and issubclass(spec, base) and spec is not base:
        return spec(**params)
    if isinstance(spec, str) and spec.lower() in registry:
        return registry[spec.lower()](**params)
    raise ValueError(f"unknown {what} {spec!r}; use one of {sorted(registry)} or a "
                     f"skylite.prox {base.__name__} object")
