"""Independent reference implementations for the prox tests (numpy / scipy only)."""
import numpy as np
from scipy import optimize
from scipy.special import lambertw, logsumexp

EPS = np.finfo(np.float64).eps


def loss_value(name, O, Y):
    if name == "squared":
        return 0.5 * np.sum((O - Y) ** 2)
    if name == "lad":
        return np.sum(np.abs(O - Y))
    if name == "hinge":
        return np.sum(np.maximum(0.0, 1.0 - Y * O))
    if name == "logistic":
        return np.sum(logsumexp(O, axis=1) - np.sum(O * Y, axis=1))
    raise KeyError(name)


def reg_value(name, W):
    return {"l2": 0.5 * np.sum(W ** 2), "l1": np.sum(np.abs(W)), "none": 0.0}[name]


def scalar_loss(name, y):
    """The per-coordinate function of a separable loss, as a python callable of x."""
    return {
        "squared": lambda x: 0.5 * (x - y) ** 2,
        "lad": lambda x: abs(x - y),
        "hinge": lambda x: max(0.0, 1.0 - y * x),
        "l2": lambda x: 0.5 * x * x,
        "l1": lambda x: abs(x),
        "none": lambda x: 0.0,
    }[name]


def scalar_prox_numeric(name, v, y, t):
    """argmin_x t f(x) + 1/2 (x - v)^2 by bounded Brent (the minimizer lies in the bracket:
    within t * Lipschitz of v for the Lipschitz functions, between v and the minimizer of f
    for the quadratic ones)."""
    f = scalar_loss(name, y)
    anchor = {"squared": y, "l2": 0.0}.get(name, v)
    lo = min(v, anchor) - t - 1.0
    hi = max(v, anchor) + t + 1.0
    obj = lambda x: t * f(x) + 0.5 * (x - v) ** 2
    res = optimize.minimize_scalar(obj, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12 * max(1.0, hi - lo), "maxiter": 2000})
    return res.x, obj


def logistic_gradient(X, V, Y, t):
    """t (softmax(x) - y) + x - v per row, with (p - y)_c = -sum_{k != c} p_k at the hot index."""
    P = np.exp(X - logsumexp(X, axis=1, keepdims=True))
    R = P.copy()
    rows = np.arange(X.shape[0])
    c = Y.argmax(axis=1)
    Q = P.copy()
    Q[rows, c] = 0.0
    R[rows, c] = -Q.sum(axis=1)
    return t * R + X - V


def logistic_objective(x, v, y, t):
    return t * (logsumexp(x) - x @ y) + 0.5 * np.sum((x - v) ** 2)


def logistic_prox_bfgs(v, y, t):
    """The logistic prox of one row by scipy's BFGS with an analytic gradient."""
    def fun(x):
        p = np.exp(x - logsumexp(x))
        return logistic_objective(x, v, y, t), t * (p - y) + x - v
    res = optimize.minimize(fun, v.copy(), jac=True, method="BFGS",
                            options={"gtol": 1e-11, "maxiter": 10000})
    return res.x


def logistic_prox_dual(v, y, t):
    """The logistic prox through the Moreau decomposition: v = x + t u with
    u = prox_{f*/t}(v/t), f*(u) = sum w log w (w = u + y on the simplex).  The dual prox
    solves t w_k = W(t exp(t (a_k - mu) - 1)), a = y + v/t, sum w = 1 (Lambert W, 1-D root)."""
    a = y + v / t

    def w_of(mu):
        return np.real(lambertw(t * np.exp(t * (a - mu) - 1.0))) / t

    lo, hi = a.min() - 1.0, a.max() + 1.0
    while w_of(lo).sum() < 1.0:
        lo -= 1.0
    while w_of(hi).sum() > 1.0:
        hi += 1.0
    mu = optimize.brentq(lambda s: w_of(s).sum() - 1.0, lo, hi, xtol=1e-15, rtol=4 * EPS,
                         maxiter=500)
    u = w_of(mu) - y
    return v - t * u


# The references check each other: two independent routes to the logistic prox, and Brent
# against the closed form of the squared prox.

def test_logistic_references_agree():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = int(rng.integers(1, 6))
        v = rng.normal(scale=3.0, size=m)
        y = np.eye(m)[rng.integers(m)]
        t = 10.0 ** rng.uniform(-2, 1.5)
        np.testing.assert_allclose(logistic_prox_bfgs(v, y, t), logistic_prox_dual(v, y, t),
                                   atol=1e-7)


def test_brent_reference_matches_squared_closed_form():
    for v, y, t in [(3.0, -1.0, 0.5), (-2.0, 1.0, 7.0), (0.1, 0.2, 1e-3)]:
        x, _ = scalar_prox_numeric("squared", v, y, t)
        assert abs(x - (v + t * y) / (1 + t)) < 1e-7  # Brent: ~sqrt(eps) relative
