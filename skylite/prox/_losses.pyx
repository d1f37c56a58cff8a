# cython: language_level=3
"""The base class of the losses V(y, o) (the table of docs/prox.md): their nogil interface, the
parallel row drivers and the Python fronts.

Each loss is a small strategy object (a cdef class, see `_losses.pxd`) with

* nogil per-row kernels `value_row` / `prox_row` that the ADMM engine cimports and calls from
  its own `prange`, and row drivers `value_rows` / `prox_rows` parallel over rows;
* thin Python fronts `value(O, Y)` and `prox(V, Y, t, out=None)` that validate the input
  (before any GIL release) and run the drivers;
* what callers need to know about the loss without asking its name: `subgradient(O, Y)`,
  `classification`, `coding` and `with_classification(flag)`.

The losses themselves: `_closed_form_losses.pyx` (squared, absolute, hinge) and
`_logistic_loss.pyx` (multinomial logistic, whose prox is a Newton iteration).

Shapes: O, V, Y, out are n x m (n rows, m outputs).  Computation is in float64; float32 (or
integer) input is converted, and results are float64.  Prox convention:
prox_{t f}(v) = argmin_x t f(x) + 1/2 ||x - v||^2, applied to f = V(y_i, .) on each row i.

Results do not depend on the number of threads: each row is computed the same way whatever
thread runs it, and sums over rows are taken over fixed chunks of rows, then in order
(`_fixed_chunks.chunked_sum`).
"""
from cython.parallel cimport prange, threadid
from libc.math cimport NAN
from libc.stdlib cimport malloc, free

import numpy as np

from skylite.prox._fixed_chunks cimport chunked_sum

from .._threads import resolve_threads
from ._checks import check_matrix, check_out, check_same_shape, check_step

cdef Py_ssize_t VALUE_CHUNK = 1024  # rows per partial sum in value_rows


ctypedef struct LossRows:  # what value_rows hands to chunked_sum
    void *loss  # the Loss (borrowed: value_rows holds it)
    const double *O
    const double *Y
    Py_ssize_t m


cdef double _rows_value(const void *data, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """sum of V(y_i, o_i) over the rows start..stop-1, in order (a chunk of
    `Loss.value_rows`)."""
    cdef const LossRows *rows = <const LossRows *> data
    cdef Py_ssize_t i, m = rows.m
    cdef double acc = 0.0
    for i in range(start, stop):
        acc += (<Loss> rows.loss).value_row(rows.O + i * m, rows.Y + i * m, m)
    return acc


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
        cdef LossRows rows
        rows.loss = <void *> self
        rows.O = O
        rows.Y = Y
        rows.m = m
        return chunked_sum(_rows_value, &rows, n, VALUE_CHUNK, n_threads)

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
            OpenMP threads of the check (None: the default of skylite._threads.resolve_threads).
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
            OpenMP threads (None: the default of skylite._threads.resolve_threads).

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
            OpenMP threads (None: the default of skylite._threads.resolve_threads); the result does not depend on it.

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
