# cython: language_level=3
"""The multinomial logistic loss V(y, o) = logsumexp(o) - o . y (y a one-hot row), its
class probabilities `softmax`, and its prox by damped Newton (see `LogisticLoss`), on the
interface of `Loss` (`_losses.pyx`).

Shapes: o, v, y, x are rows of m outputs; float64.  prox_{t f}(v) = argmin_x t f(x) +
1/2 ||x - v||^2 with f = V(y, .).
"""
from libc.math cimport exp, log1p, fabs, INFINITY
from libc.float cimport DBL_EPSILON
from libc.stdlib cimport qsort
from libc.string cimport memcpy

import numpy as np

from skylite.prox._losses cimport Loss

from .._validation import check_positive
from ._checks import check_one_hot, warn_unconverged


def softmax(O):
    """Class probabilities of the logistic loss: the row-wise softmax of O (n x m), stable
    for any magnitude (shifted by each row's maximum)."""
    O = np.asarray(O, dtype=np.float64)
    E = np.exp(O - O.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


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
    # Newton stops when ||g||_inf <= tol * max(1, ||v||_inf) * min(1, t), g the gradient of
    # the row's prox objective, or when its step is below the rounding of x; at most
    # max_iter Newton steps per row
    cdef readonly double tol
    cdef readonly int max_iter

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
