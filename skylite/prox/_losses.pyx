# cython: language_level=3
"""Losses V(y, o) (the table of docs/prox.md) and their prox operators, row by row.

Each loss is a small strategy object (a cdef class, see `_losses.pxd`) with

* nogil per-row kernels `value_row` / `prox_row` that the ADMM engine cimports and calls from
  its own `prange`, and row drivers `value_rows` / `prox_rows` parallel over rows;
* thin Python fronts `value(O, Y)` and `prox(V, Y, t, out=None)` that validate the input
  (before any GIL release) and run the drivers;
* what callers need to know about the loss without asking its name: `subgradient(O, Y)`,
  `classification`, `coding` and `with_classification(flag)`.

Shapes: O, V, Y, out are n x m (n rows, m outputs).  Computation is in float64; float32 (or
integer) input is converted, and results are float64.  Prox convention:
prox_{t f}(v) = argmin_x t f(x) + 1/2 ||x - v||^2, applied to f = V(y_i, .) on each row i.

Results do not depend on the number of threads: each row is computed the same way whatever
thread runs it, and sums over rows are taken over fixed chunks of rows, then in order.
"""
from cython.parallel cimport prange, threadid
from libc.math cimport exp, log, log1p, fabs, copysign, NAN, INFINITY
from libc.float cimport DBL_EPSILON
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy

import numpy as np

from .._threads import resolve_threads
from .._validation import check_positive
from ._checks import (check_matrix, check_one_hot, check_out, check_plus_minus_one,
                      check_same_shape, check_step, warn_unconverged)

cdef Py_ssize_t VALUE_CHUNK = 1024  # rows per partial sum in value_rows


def softmax(O):
    """Class probabilities of the logistic loss: the row-wise softmax of O (n x m), stable
    for any magnitude (shifted by each row's maximum)."""
    O = np.asarray(O, dtype=np.float64)
    E = np.exp(O - O.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


cdef class Loss:
    """Base class of the losses: V(y, o) summed over the rows of n x m arrays.

    Subclasses implement the nogil kernels of `_losses.pxd` and `_subgradient`; this class
    holds the parallel row drivers and the Python fronts.  Attributes: `name` (registry
    name), `coding` (how class labels are coded for this loss: "ovr" = one-vs-rest +/-1,
    "onehot"; see skylite.prox.coding), `classification` (whether the targets are class
    labels coded that way, which the fronts check), `smooth` (differentiable with a
    Lipschitz gradient, so that the ADMM map is smooth near the optimum and Anderson
    acceleration pays off: skylite.admm's acceleration="auto").
    """
    name = None
    coding = "ovr"
    smooth = False
    # rows per thread below which the fronts use fewer threads (a parallel region costs
    # microseconds, far more under load; results do not depend on the thread count)
    _grain = 4096

    def __cinit__(self, *args, **kwargs):
        if type(self) is Loss:
            raise TypeError("Loss is abstract: use SquaredLoss, AbsoluteLoss, HingeLoss, "
                            "LogisticLoss or skylite.prox.get_loss(name)")

    # ---- nogil kernels (overridden) ---------------------------------------------------
    cdef Py_ssize_t work_size(self, Py_ssize_t m) noexcept nogil:
        return 0

    cdef double value_row(self, const double *o, const double *y, Py_ssize_t m) noexcept nogil:
        return NAN

    cdef int prox_row(self, const double *v, const double *y, double t, double *x,
                      Py_ssize_t m, bint warm, double *work) noexcept nogil:
        return 0

    # ---- parallel row drivers -----------------------------------------------------------
    cdef double value_rows(self, const double *O, const double *Y, Py_ssize_t n,
                           Py_ssize_t m, int n_threads) noexcept nogil:
        cdef Py_ssize_t n_chunks = (n + VALUE_CHUNK - 1) // VALUE_CHUNK
        cdef Py_ssize_t c, i, stop
        cdef double acc, total = 0.0
        cdef double *partial
        if n <= 0:
            return 0.0
        partial = <double *> malloc(n_chunks * sizeof(double))
        if partial == NULL:
            return NAN
        for c in prange(n_chunks, schedule='static', num_threads=n_threads):
            acc = 0.0
            stop = min(n, (c + 1) * VALUE_CHUNK)
            for i in range(c * VALUE_CHUNK, stop):
                acc = acc + self.value_row(O + i * m, Y + i * m, m)
            partial[c] = acc
        for c in range(n_chunks):
            total += partial[c]
        free(partial)
        return total

    cdef Py_ssize_t prox_rows(self, const double *V, const double *Y, double t, double *X,
                              Py_ssize_t n, Py_ssize_t m, bint warm,
                              int n_threads) noexcept nogil:
        cdef Py_ssize_t ws = self.work_size(m) + 1
        cdef Py_ssize_t i, bad = 0
        cdef double *work
        if n <= 0:
            return 0
        work = <double *> malloc(n_threads * ws * sizeof(double))
        if work == NULL:
            return -1
        for i in prange(n, schedule='guided', num_threads=n_threads):
            bad += self.prox_row(V + i * m, Y + i * m, t, X + i * m, m, warm,
                                 work + threadid() * ws)
        free(work)
        return bad

    # ---- Python fronts ------------------------------------------------------------------
    def check_targets(self, Y, *, n_threads=None):
        """Raise ValueError unless Y holds finite targets coded as this loss requires
        (skylite.prox.coding): what `value`, `prox` and `subgradient` check first.  The
        engine calls it once, before its nogil kernels, which check nothing.

        Parameters
        ----------
        Y : array-like of shape (n, m)
            The targets y_i, one row each.
        n_threads : int or None, default=None
            OpenMP threads of the check (None: every available core).
        """
        cdef int nt = resolve_threads(n_threads)
        self._check_targets(check_matrix(Y, "Y", n_threads=nt), nt)

    def _check_targets(self, Y, n_threads=1):
        """Raise ValueError unless Y is coded as this loss requires (overridden)."""

    def _unconverged(self, count, n):
        """Report rows on which an iterative prox hit its cap (overridden)."""

    def value(self, O, Y, *, n_threads=None):
        """sum_i V(y_i, o_i) over the rows of O and Y.

        Parameters
        ----------
        O : array-like of shape (n, m)
            The outputs o_i, one row each.
        Y : array-like of shape (n, m)
            The targets y_i, coded as the loss requires.
        n_threads : int or None, default=None
            OpenMP threads (None: every available core).

        Returns
        -------
        value : float
            The loss summed over the rows.
        """
        cdef int nt = resolve_threads(n_threads)
        O = check_matrix(O, "O", n_threads=nt)
        Y = check_matrix(Y, "Y", n_threads=nt)
        check_same_shape(O, Y, "O", "Y")
        self._check_targets(Y, nt)
        if O.size == 0:
            return 0.0
        cdef const double[:, ::1] o = O
        cdef const double[:, ::1] y = Y
        cdef Py_ssize_t n = O.shape[0], m = O.shape[1]
        cdef double total
        nt = min(nt, 1 + n // type(self)._grain)
        with nogil:
            total = self.value_rows(&o[0, 0], &y[0, 0], n, m, nt)
        if total != total:
            raise MemoryError("could not allocate the partial sums")
        return total

    def prox(self, V, Y, t, out=None, *, n_threads=None):
        """prox_{t V(y_i, .)}(v_i) for every row i.

        x_i = argmin_x t V(y_i, x) + 1/2 ||x - v_i||^2.

        Parameters
        ----------
        V : array-like of shape (n, m)
            The points v_i (float32 or float64).
        Y : array-like of shape (n, m)
            The targets y_i, coded as the loss requires.
        t : float > 0
            The step, finite.
        out : ndarray of shape (n, m) or None, default=None
            A C-contiguous float64 array to write into (returned); it may be V itself.  For
            the iterative (logistic) prox its contents are a warm start.
        n_threads : int or None, default=None
            OpenMP threads (None: every available core); the result does not depend on it.

        Returns
        -------
        X : ndarray of shape (n, m), float64
            The rows x_i (`out` when given).
        """
        cdef int nt = resolve_threads(n_threads)
        V = check_matrix(V, "V", n_threads=nt)
        Y = check_matrix(Y, "Y", n_threads=nt)
        check_same_shape(V, Y, "V", "Y")
        cdef double step = check_step(t)
        self._check_targets(Y, nt)
        cdef bint warm = out is not None
        if out is None:
            out = np.empty(V.shape, dtype=np.float64)
        else:
            check_out(out, V.shape)
            if np.may_share_memory(out, V):
                V = V.copy()
            if np.may_share_memory(out, Y):
                Y = Y.copy()
        if V.size == 0:
            return out
        cdef const double[:, ::1] v = V
        cdef const double[:, ::1] y = Y
        cdef double[:, ::1] x = out
        cdef Py_ssize_t n = V.shape[0], m = V.shape[1], bad
        nt = min(nt, 1 + n // type(self)._grain)
        with nogil:
            bad = self.prox_rows(&v[0, 0], &y[0, 0], step, &x[0, 0], n, m, warm, nt)
        if bad < 0:
            raise MemoryError("could not allocate the prox work buffers")
        if bad > 0:
            self._unconverged(bad, n)
        return out

    def subgradient(self, O, Y):
        """A (sub)gradient G of sum_i V(y_i, o_i) with respect to O, at O.

        Parameters
        ----------
        O : array-like of shape (n, m)
            The outputs.
        Y : array-like of shape (n, m)
            The targets, coded as the loss requires (as for `value`).

        Returns
        -------
        G : ndarray of shape (n, m), float64
            The gradient; where V is not differentiable, one element of its subdifferential
            (the one named in the subclass's docstring).
        """
        O = check_matrix(O, "O")
        Y = check_matrix(Y, "Y")
        check_same_shape(O, Y, "O", "Y")
        self._check_targets(Y)
        return self._subgradient(O, Y)

    def _subgradient(self, O, Y):
        """G of `subgradient` for validated float64 O and Y (overridden)."""
        raise NotImplementedError(f"{type(self).__name__} defines no subgradient")

    def with_classification(self, classification):
        """This loss for class labels (classification=True) or real targets (False).

        Parameters
        ----------
        classification : bool
            Whether the targets are class labels.

        Returns
        -------
        loss : Loss
            Self when it already is of that kind; a loss only for class labels (hinge,
            logistic) raises ValueError for False.
        """
        if bool(classification) == self.classification:
            return self
        kind = "class labels" if self.classification else "real targets"
        raise ValueError(f"the {self.name} loss is only for {kind}; it cannot be used with "
                         f"classification={bool(classification)}")

    # ---- object protocol ----------------------------------------------------------------
    def get_params(self):
        """The constructor arguments, as a dict."""
        return {}

    def __reduce__(self):
        return (type(self), (), self.get_params())

    def __sklearn_clone__(self):
        """A new object with the same parameters (what scikit-learn's `clone` makes of an
        estimator parameter)."""
        return type(self)(**self.get_params())

    def __setstate__(self, state):
        self.__init__(**state)

    def __eq__(self, other):
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.get_params().items()))))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


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


# ---- multinomial logistic ---------------------------------------------------------------

cdef inline Py_ssize_t _hot_index(const double *y, Py_ssize_t m) noexcept nogil:
    """The index of the 1 of a one-hot row."""
    cdef Py_ssize_t k, c = 0
    for k in range(1, m):
        if y[k] > y[c]:
            c = k
    return c


cdef int _compare_descending(const void *a, const void *b) noexcept nogil:
    cdef double x = (<const double *> a)[0], y = (<const double *> b)[0]
    return (x < y) - (x > y)


cdef void _max_surrogate_prox(const double *v, Py_ssize_t c, double t, Py_ssize_t m,
                              double *u, double *x) noexcept nogil:
    """x = argmin t (max(x) - x_c) + 1/2 ||x - v||^2, the logistic prox with lse replaced
    by max (exact in O(m log m) by water-filling).  lse - max lies in [0, log m], so this is
    a starting point close to the solution when the entries of v are far apart, where
    Newton from v alone needs many damped steps.  u: scratch of m doubles.

    Optimality: x_k = min(v_k, L) for k != c at a level L, and either x_c = L with
    L - v_c = sum_{k != c} (v_k - L)_+ <= t, or x_c = v_c + t with sum (v_k - L)_+ = t.
    """
    cdef Py_ssize_t k, r, j, n_u = 0
    cdef double vc = v[c], csum, L = vc, nxt, umax = -INFINITY, val
    for k in range(m):
        if k != c:
            u[n_u] = v[k]
            if v[k] > umax:
                umax = v[k]
            n_u += 1
    if umax <= vc:  # c is the maximum (or m = 1): x = v
        memcpy(x, v, m * sizeof(double))
        return
    if n_u <= 32:  # insertion sort, descending: no comparator calls for the usual small m
        for r in range(1, n_u):
            val = u[r]
            j = r - 1
            while j >= 0 and u[j] < val:
                u[j + 1] = u[j]
                j -= 1
            u[j + 1] = val
    else:
        qsort(u, n_u, sizeof(double), _compare_descending)
    csum = 0.0
    for r in range(1, n_u + 1):
        csum += u[r - 1]
        L = (vc + csum) / (r + 1)
        nxt = u[r] if r < n_u else -INFINITY
        if L >= nxt:
            break
    if L - vc <= t:
        for k in range(m):
            x[k] = v[k] if v[k] < L else L
        x[c] = L
        return
    csum = 0.0
    for r in range(1, n_u + 1):
        csum += u[r - 1]
        L = (csum - t) / r
        nxt = u[r] if r < n_u else -INFINITY
        if L >= nxt:
            break
    for k in range(m):
        x[k] = v[k] if v[k] < L else L
    x[c] = vc + t


cdef double _logistic_objective(const double *x, const double *v, Py_ssize_t c, double t,
                                double w, Py_ssize_t m, double *e, double *S_out) noexcept nogil:
    """phi(x) / w with phi(x) = t (lse(x) - x_c) + 1/2 ||x - v||^2 (w = max(1, t) keeps it
    finite for huge t), to a relative error of a few m eps.

    lse(x) - x_c = (M - x_c) + log1p(sum_{k != kmax} exp(x_k - M)), M = x_kmax = max x: every
    term is non-negative and computed to a relative error of a few eps (no cancellation,
    even when t is huge and the loss tiny).  Writes e_k = exp(x_k - M) (so softmax(x) =
    e / S) and S = sum e_k.  NaN or inf in x propagate to the result.
    """
    cdef Py_ssize_t k, kmax = 0
    cdef double M, S1 = 0.0, q = 0.0, r
    for k in range(1, m):
        if x[k] > x[kmax]:
            kmax = k
    M = x[kmax]
    for k in range(m):
        r = x[k] - v[k]
        q += r * r
        if k == kmax:
            e[k] = 1.0
        else:
            e[k] = exp(x[k] - M)
            S1 += e[k]
    S_out[0] = 1.0 + S1
    return (t / w) * ((M - x[c]) + log1p(S1)) + (0.5 / w) * q


cdef class LogisticLoss(Loss):
    """LogisticLoss(tol=1e-10, max_iter=100)
--

    Multinomial logistic loss V(y, o) = logsumexp(o) - o . y, y a one-hot row (checked).

    prox: per row, minimize phi(x) = t (lse(x) - x . y) + 1/2 ||x - v||^2 by damped Newton.
    With p = softmax(x), the gradient is g = t (p - y) + x - v and the Hessian
    H = t (diag(p) - p p^T) + I is diagonal-plus-rank-one, so the step -H^{-1} g costs O(m)
    (Sherman-Morrison, with the stable denominator 1 - t p.D^{-1}p = sum_k p_k / D_k,
    D = I + t diag(p), and p.D^{-1}g summed without cancellation even for t ~ 1e300).

    Start: whichever of v, the contents of `out` when given (a warm start), and (for t > 1)
    the exact prox of the surrogate t (max(x) - x . y) (water-filling, O(m log m); lse - max
    lies in [0, log m]) has the lowest objective.  A garbage `out` (NaN, huge, np.empty) is thus
    harmless, and rows with widely spread v (abs(v) ~ 1e4) start near their solution.

    Steps: backtracking (Armijo) on phi / max(1, t), with an allowance for the rounding
    error of phi (computed to a few m eps relative: lse - x_c = (max - x_c) +
    log1p(sum of the others)); when a full step beats the quadratic model (phi's
    exponential tail, large t), the step is doubled while phi decreases.

    Stop, per row: ||g||_inf <= tol * max(1, ||v||_inf) * min(1, t) (the optimality
    condition x = v - t (p - y), relative to the size of v and, for small t, of the step
    x - v), or when the Newton step is below the rounding of x (32 eps max(1, ||x||_inf):
    the solution is exact to working precision).  At most `max_iter` Newton steps per row
    (typically 1-5; about 10-30 for t >= 1e6); rows that hit the cap or whose line search
    fails are reported by a `ProxConvergenceWarning`, never silently (the nogil driver
    returns their count, prox_row returns 1).  The coordinate (p - y)_c at the hot index c
    is computed as -sum_{k != c} p_k, without cancellation.

    Gradient: softmax(o) - y.

    Parameters
    ----------
    tol : float > 0, default=1e-10
        The relative tolerance of the Newton iteration (see Stop above).
    max_iter : int, default=100
        The most Newton steps per row.
    """
    name = "logistic"
    smooth = True
    coding = "onehot"
    _grain = 64

    def __init__(self, tol=1e-10, max_iter=100):
        self.tol = float(check_positive(tol, "tol"))
        self.max_iter = check_positive(max_iter, "max_iter", integer=True)
        self.classification = True

    def get_params(self):
        return {"tol": float(self.tol), "max_iter": int(self.max_iter)}

    def _check_targets(self, Y, n_threads=1):
        check_one_hot(Y, "LogisticLoss", n_threads)

    def _unconverged(self, count, n):
        warn_unconverged(count, n, "LogisticLoss.prox", self.max_iter)

    def _subgradient(self, O, Y):
        return softmax(O) - Y

    cdef Py_ssize_t work_size(self, Py_ssize_t m) noexcept nogil:
        return 4 * m

    cdef double value_row(self, const double *o, const double *y, Py_ssize_t m) noexcept nogil:
        # lse(o) - o.y = sum_k y_k (M - o_k) + log1p(sum_{k != kmax} exp(o_k - M)), sum y = 1
        cdef Py_ssize_t k, kmax = 0
        cdef double M, S1 = 0.0, r = 0.0
        for k in range(1, m):
            if o[k] > o[kmax]:
                kmax = k
        M = o[kmax]
        for k in range(m):
            if k != kmax:
                S1 += exp(o[k] - M)
            r += y[k] * (M - o[k])
        return r + log1p(S1)

    cdef int prox_row(self, const double *v, const double *y, double t, double *x,
                      Py_ssize_t m, bint warm, double *work) noexcept nogil:
        cdef double *p = work           # softmax of the current x
        cdef double *d = work + m       # gradient, then Newton direction
        cdef double *xn = work + 2 * m  # trial point
        cdef double *en = work + 3 * m  # exp(xn - max xn)
        cdef Py_ssize_t c = _hot_index(y, m), k, it, ls
        cdef double f, fn, S, Sn
        cdef double w = t if t > 1.0 else 1.0  # the line search works on phi / w
        cdef double slack = 4.0 * (m + 8) * DBL_EPSILON  # relative rounding of phi
        cdef double dmax, xmax, q, g, r, a, gmax, Dk, den, tpa, tau_out, rB, aB, pB, pout, gDg, coef, lam2, s, gtol, vmax = 0.0
        cdef bint accepted, c_in
        for k in range(m):
            if fabs(v[k]) > vmax:
                vmax = fabs(v[k])
        gtol = self.tol * (vmax if vmax > 1.0 else 1.0) * (t if t < 1.0 else 1.0)

        # starting point: the lowest objective among the warm start (x on entry), v, and
        # the prox with lse replaced by max
        f = INFINITY
        if warm:
            f = _logistic_objective(x, v, c, t, w, m, p, &S)
            for k in range(m):
                p[k] = p[k] / S
        fn = _logistic_objective(v, v, c, t, w, m, en, &Sn)
        if not (f <= fn):  # also when the warm start is not finite
            memcpy(x, v, m * sizeof(double))
            for k in range(m):
                p[k] = en[k] / Sn
            f = fn
        if t > 1.0:
            # for t <= 1, |x* - v| <= t and H lies between I and 2I: Newton from v is quick
            _max_surrogate_prox(v, c, t, m, d, xn)
            fn = _logistic_objective(xn, v, c, t, w, m, en, &Sn)
        else:
            fn = INFINITY
        if fn < f:
            memcpy(x, xn, m * sizeof(double))
            for k in range(m):
                p[k] = en[k] / Sn
            f = fn

        for it in range(self.max_iter + 1):
            # gradient (in d), its norm, and the Sherman-Morrison sums
            q = 0.0
            for k in range(m):
                if k != c:
                    q += p[k]
            gmax = 0.0
            den = 0.0
            gDg = 0.0
            # tpa = t p^T D^{-1} g = sum_k t p_k g_k / D_k.  Its terms with t p_k >= 1 are
            # ~ t (p_k - y_k) and cancel; for those, t p_k g_k / D_k = g_k - g_k / D_k and
            # the sum of their g_k is formed without t (p - y), so tpa keeps its accuracy
            # for any t.
            tau_out = 0.0
            rB = 0.0
            aB = 0.0
            pB = 0.0
            pout = 0.0
            c_in = t * p[c] >= 1.0
            for k in range(m):
                r = x[k] - v[k]
                if k == c:
                    g = r - t * q
                else:
                    g = r + t * p[k]
                d[k] = g
                if fabs(g) > gmax:
                    gmax = fabs(g)
                Dk = 1.0 + t * p[k]
                a = g / Dk
                den += p[k] / Dk
                gDg += g * a
                if t * p[k] >= 1.0:
                    rB += r
                    aB += a
                    if k != c:
                        pB += p[k]
                else:
                    tau_out += t * p[k] * a
                    if k != c:
                        pout += p[k]
            if gmax <= gtol:
                return 0
            tpa = tau_out + (rB - aB) + t * (-pout if c_in else pB)
            # d = -H^{-1} g;  lam2 = g^T H^{-1} g (the Newton decrement squared)
            coef = tpa / den
            dmax = 0.0
            xmax = 1.0
            for k in range(m):
                d[k] = -(d[k] + coef * p[k]) / (1.0 + t * p[k])
                if fabs(d[k]) > dmax:
                    dmax = fabs(d[k])
                if fabs(x[k]) > xmax:
                    xmax = fabs(x[k])
            if dmax <= 32.0 * DBL_EPSILON * xmax:
                return 0  # the Newton step is below the rounding of x: converged to precision
            if it == self.max_iter:
                return 1
            lam2 = (gDg + coef * (tpa / t)) / w  # scaled like phi / w
            # backtracking line search on phi (Armijo, with an allowance for its rounding)
            s = 1.0
            accepted = False
            for ls in range(64):
                for k in range(m):
                    xn[k] = x[k] + s * d[k]
                fn = _logistic_objective(xn, v, c, t, w, m, en, &Sn)
                if fn <= f - 1e-4 * s * lam2 + slack * (f if f > fn else fn):
                    accepted = True
                    break
                s *= 0.5
            if not accepted:
                return 1
            if s == 1.0 and f - fn > 0.55 * lam2:
                # the decrease beat the quadratic model (lam2 / 2) by 10%: phi is in its
                # exponential tail, where Newton steps are too short; extend the step while
                # phi keeps decreasing (doubling s), so gaps of size log t open in O(log log t)
                # iterations instead of O(log t)
                s = 1.0
                for ls in range(40):
                    memcpy(x, xn, m * sizeof(double))
                    f = fn
                    S = Sn
                    for k in range(m):
                        xn[k] = x[k] + s * d[k]
                    memcpy(p, en, m * sizeof(double))  # keep exp(x - max) of the accepted x
                    fn = _logistic_objective(xn, v, c, t, w, m, en, &Sn)
                    if not (fn < f):
                        break
                    s *= 2.0
                if not (fn < f):
                    for k in range(m):
                        p[k] = p[k] / S
                    continue
            memcpy(x, xn, m * sizeof(double))
            for k in range(m):
                p[k] = en[k] / Sn
            f = fn
        return 1
