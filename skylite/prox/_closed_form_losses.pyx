# cython: language_level=3
"""The losses whose prox is a closed form, coordinate by coordinate: squared, absolute (LAD)
and hinge (the table of docs/prox.md), on the interface of `Loss` (`_losses.pyx`).

Shapes: o, v, y, x are rows of m outputs; float64.  prox_{t f}(v) = argmin_x t f(x) +
1/2 ||x - v||^2 with f = V(y, .).
"""
from libc.math cimport fabs, copysign

import numpy as np

from skylite.prox._losses cimport Loss

from ._checks import check_plus_minus_one


cdef class RealTargetLoss(Loss):
    """Base of the losses on real targets (SquaredLoss, AbsoluteLoss).

    classification=False: Y is any real n x m target (regression).  classification=True:
    Y must be one-vs-rest +/-1 coded (see `skylite.prox.coding`); the fronts check it.
    """

    def __init__(self, classification=False):
        self.classification = bool(classification)

    def get_params(self):
        return {"classification": bool(self.classification)}

    def with_classification(self, classification):
        """This loss with the given `classification` flag (a new object if it changes).

        Parameters
        ----------
        classification : bool
            Whether the targets are class labels (coded one-vs-rest +/-1).

        Returns
        -------
        loss : Loss
            Self, or a new loss of the same class and parameters.
        """
        if bool(classification) == self.classification:
            return self
        return type(self)(**dict(self.get_params(), classification=bool(classification)))

    def _check_targets(self, Y, n_threads=1):
        if self.classification:
            check_plus_minus_one(Y, f"{type(self).__name__}(classification=True)",
                                 n_threads)


# The docstrings of the loss classes with parameters start with the constructor's signature,
# "Name(...)" then a line "--" (CPython's __text_signature__ convention): a Cython class has no
# signature of its own, and inspect.signature, help() and the API reference need one.
cdef class SquaredLoss(RealTargetLoss):
    """SquaredLoss(classification=False)
--

    Squared loss V(y, o) = 1/2 ||o - y||^2.

    prox: x = (v + t y) / (1 + t), computed as v/(1+t) + y t/(1+t).  Gradient: o - y.

    Parameters
    ----------
    classification : bool, default=False
        False: the targets are real (regression).  True: they are class labels coded
        one-vs-rest +/-1 (see `skylite.prox.coding`), which the fronts check.
    """
    name = "squared"
    smooth = True

    def _subgradient(self, O, Y):
        return O - Y

    cdef double value_row(self, const double *o, const double *y, Py_ssize_t m) noexcept nogil:
        cdef double s = 0.0, r
        cdef Py_ssize_t k
        for k in range(m):
            r = o[k] - y[k]
            s += r * r
        return 0.5 * s

    cdef int prox_row(self, const double *v, const double *y, double t, double *x,
                      Py_ssize_t m, bint warm, double *work) noexcept nogil:
        cdef double a = 1.0 / (1.0 + t)
        cdef double b = t / (1.0 + t)
        cdef Py_ssize_t k
        for k in range(m):
            x[k] = a * v[k] + b * y[k]
        return 0


cdef class AbsoluteLoss(RealTargetLoss):
    """AbsoluteLoss(classification=False)
--

    Least absolute deviations (LAD, L1) loss V(y, o) = ||o - y||_1.

    prox, per coordinate: x = y + soft_threshold(v - y, t), i.e. v - t if v - y > t,
    v + t if v - y < -t, and y otherwise.  Subgradient: sign(o - y) (0 where o = y).

    Parameters
    ----------
    classification : bool, default=False
        False: the targets are real (regression).  True: they are class labels coded
        one-vs-rest +/-1 (see `skylite.prox.coding`), which the fronts check.
    """
    name = "lad"

    def _subgradient(self, O, Y):
        return np.sign(O - Y)

    cdef double value_row(self, const double *o, const double *y, Py_ssize_t m) noexcept nogil:
        cdef double s = 0.0
        cdef Py_ssize_t k
        for k in range(m):
            s += fabs(o[k] - y[k])
        return s

    cdef int prox_row(self, const double *v, const double *y, double t, double *x,
                      Py_ssize_t m, bint warm, double *work) noexcept nogil:
        cdef double d, vk, yk
        cdef Py_ssize_t k
        for k in range(m):  # selects, not branches: the cases are unpredictable
            vk = v[k]
            yk = y[k]
            d = vk - yk
            x[k] = yk if fabs(d) <= t else vk - copysign(t, d)
        return 0


cdef class HingeLoss(Loss):
    """Hinge loss V(y, o) = sum_k max(0, 1 - y_k o_k), y one-vs-rest +/-1 coded (checked).

    prox, per coordinate with z = y v: x = v if z >= 1; x = v + t y if z <= 1 - t;
    otherwise x = y (the kink y x = 1).  Subgradient: -y_k where y_k o_k < 1, else 0 (also
    at the kink).
    """
    name = "hinge"

    def __init__(self):
        self.classification = True

    def _check_targets(self, Y, n_threads=1):
        check_plus_minus_one(Y, "HingeLoss", n_threads)

    def _subgradient(self, O, Y):
        return np.where(Y * O < 1.0, -Y, 0.0)

    cdef double value_row(self, const double *o, const double *y, Py_ssize_t m) noexcept nogil:
        cdef double s = 0.0, r
        cdef Py_ssize_t k
        for k in range(m):
            r = 1.0 - y[k] * o[k]
            if r > 0.0:
                s += r
        return s

    cdef int prox_row(self, const double *v, const double *y, double t, double *x,
                      Py_ssize_t m, bint warm, double *work) noexcept nogil:
        cdef double z, vk, yk, a
        cdef Py_ssize_t k
        for k in range(m):  # selects, not branches: the cases are unpredictable
            vk = v[k]
            yk = y[k]
            z = yk * vk
            a = vk + t * yk if z <= 1.0 - t else vk
            x[k] = yk if (z < 1.0) & (z > 1.0 - t) else a
        return 0
