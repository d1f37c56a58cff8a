"""Tests of the loss prox operators of skylite.prox (docs/prox.md)."""
import copy
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skylite.prox as P
from test_prox_reference import (EPS, logistic_gradient, logistic_objective, logistic_prox_bfgs,
                                 logistic_prox_dual, loss_value, scalar_prox_numeric)

LOSS_NAMES = ["squared", "lad", "hinge", "logistic"]
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_targets(name, rng, n, m, classification=True):
    """Y coded for the loss: +/-1 (squared/lad/hinge), one-hot (logistic), or real."""
    if name == "logistic":
        return np.eye(m)[rng.integers(0, m, n)]
    if name in ("squared", "lad") and not classification:
        return rng.normal(scale=2.0, size=(n, m))
    return rng.choice([-1.0, 1.0], size=(n, m))


@st.composite
def problems(draw, names=LOSS_NAMES, scale_exp=(-2.0, 3.0), t_exp=(-4.0, 4.0), max_m=5):
    """(name, V, Y, t) with n <= 6 rows, m <= max_m outputs, |V| ~ 10**scale, t ~ 10**t_exp."""
    name = draw(st.sampled_from(names))
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 6))
    m = draw(st.integers(2 if name == "logistic" else 1, max_m))
    scale = 10.0 ** draw(st.floats(*scale_exp))
    t = 10.0 ** draw(st.floats(*t_exp))
    rng = np.random.default_rng(seed)
    classification = draw(st.booleans())
    Y = make_targets(name, rng, n, m, classification)
    V = rng.normal(scale=scale, size=(n, m))
    if name in ("hinge", "lad", "squared") and draw(st.booleans()):
        # entries exactly at the kinks (v = y) and the case boundaries (y v = 1 - t, v - y = t)
        at = rng.random((n, m))
        V[at < 0.2] = Y[at < 0.2]
        edge = (at >= 0.2) & (at < 0.35)
        V[edge] = (Y * (1 - t) if name == "hinge" else Y + t)[edge]
    return name, V, Y, t


def loss_for(name, Y):
    if name in ("squared", "lad"):
        return P.get_loss(name, classification=bool(np.all(np.abs(Y) == 1)))
    return P.get_loss(name)


def subgradient_check(name, V, Y, t, X):
    """Assert v - x in t * subdifferential of V(y, .) at x, entrywise (to rounding)."""
    U = (V - X) / t
    # rounding of (v - x) / t: a few ulps of |v| and |x|, divided by t
    tol = 1e-9 + 8 * EPS * (np.abs(V) + np.abs(X) + np.abs(Y)) / t
    if name == "squared":
        np.testing.assert_array_less(np.abs(U - (X - Y)), tol + 1e-12 * np.abs(X - Y))
    elif name == "lad":
        at_kink = X == Y
        np.testing.assert_array_less(np.abs(U[at_kink]), 1 + tol[at_kink])
        S = np.sign(X - Y)
        np.testing.assert_array_less(np.abs(U - S)[~at_kink], tol[~at_kink])
    elif name == "hinge":
        Z = Y * X
        at_kink = Z == 1.0
        W = Y * U  # -1 on the slope, 0 on the flat part, [-1, 0] at the kink
        assert np.all(W[at_kink] <= tol[at_kink]) and np.all(W[at_kink] >= -1 - tol[at_kink])
        np.testing.assert_array_less(np.abs(W[Z > 1] - 0.0), tol[Z > 1])
        np.testing.assert_array_less(np.abs(W[Z < 1] + 1.0), tol[Z < 1])
    elif name == "logistic":
        G = logistic_gradient(X, V, Y, t)
        scale = np.maximum(1.0, np.abs(V).max(axis=1, keepdims=True))
        bound = 2e-10 * scale + 64 * EPS * (np.abs(X).max(axis=1, keepdims=True) + 1) \
            * (1 + np.abs(X - V).max(axis=1, keepdims=True))
        np.testing.assert_array_less(np.abs(G), np.broadcast_to(bound, G.shape))


# ---- optimality and independent minimization ------------------------------------------

@settings(max_examples=400, **SETTINGS)
@given(problems())
def test_optimality_condition(problem):
    name, V, Y, t = problem
    X = loss_for(name, Y).prox(V, Y, t)
    assert X.dtype == np.float64 and X.shape == V.shape
    subgradient_check(name, V, Y, t, X)


@settings(max_examples=40, **SETTINGS)
@given(problems(names=["squared", "lad", "hinge"], scale_exp=(-1, 2), t_exp=(-2, 2), max_m=3))
def test_separable_losses_match_scipy(problem):
    name, V, Y, t = problem
    X = loss_for(name, Y).prox(V, Y, t)
    for (i, k), v in np.ndenumerate(V):
        x_ref, obj = scalar_prox_numeric(name, v, Y[i, k], t)
        assert obj(X[i, k]) <= obj(x_ref) + 1e-12 * (1 + abs(obj(x_ref)))
        # a minimizer found by comparing objective values is only known to within
        # sqrt(2 eps |obj|) (the objective is flat to rounding there)
        resolution = 4 * np.sqrt(2 * np.finfo(float).eps * (1 + abs(obj(x_ref))))
        assert abs(X[i, k] - x_ref) <= max(1e-6 * (1 + abs(x_ref)), resolution)


@settings(max_examples=60, **SETTINGS)
@given(problems(names=["logistic"], scale_exp=(-1, 1.5), t_exp=(-2, 2), max_m=5))
def test_logistic_matches_scipy_bfgs(problem):
    _, V, Y, t = problem
    X = P.LogisticLoss().prox(V, Y, t)
    for i in range(V.shape[0]):
        x_ref = logistic_prox_bfgs(V[i], Y[i], t)
        np.testing.assert_allclose(X[i], x_ref, atol=1e-6 * (1 + np.abs(V[i]).max()))
        assert (logistic_objective(X[i], V[i], Y[i], t)
                <= logistic_objective(x_ref, V[i], Y[i], t) + 1e-10)


# ---- Moreau decomposition: v = prox_{t f}(v) + t prox_{f*/t}(v / t) -----------------------

def conjugate_prox(name, U, Y, s):
    """prox_{s f*}(u) for the closed-form conjugates of the separable losses."""
    if name == "squared":      # f*(u) = 1/2 |u|^2 + u.y
        return (U - s * Y) / (1 + s)
    if name == "lad":          # f*(u) = u.y + indicator(|u|_inf <= 1)
        return np.clip(U - s * Y, -1.0, 1.0)
    if name == "hinge":        # f*(u) = y u + indicator(y u in [-1, 0])
        return Y * np.clip(Y * U - s, -1.0, 0.0)
    raise KeyError(name)


@settings(max_examples=80, **SETTINGS)
@given(problems(names=["squared", "lad", "hinge"]))
def test_moreau_decomposition(problem):
    name, V, Y, t = problem
    X = loss_for(name, Y).prox(V, Y, t)
    D = t * conjugate_prox(name, V / t, Y, 1.0 / t)
    np.testing.assert_allclose(X + D, V, rtol=1e-12, atol=1e-12 * (1 + t + np.abs(Y).max()))


@settings(max_examples=60, **SETTINGS)
@given(problems(names=["logistic"], scale_exp=(-1, 1), t_exp=(-1.5, 1.5), max_m=5))
def test_logistic_moreau_dual(problem):
    """The prox equals v - t prox_{f*/t}(v/t) computed on the dual (negative entropy) side."""
    _, V, Y, t = problem
    X = P.LogisticLoss().prox(V, Y, t)
    for i in range(V.shape[0]):
        np.testing.assert_allclose(X[i], logistic_prox_dual(V[i], Y[i], t), atol=1e-8)


# ---- limits -------------------------------------------------------------------------------

def min_norm_subgradient(name, V, Y):
    """The gradient of V(y, .) at v where it exists (mask of differentiable points)."""
    if name == "squared":
        return V - Y, np.ones(V.shape, bool)
    if name == "lad":
        return np.sign(V - Y), np.abs(V - Y) > 1e-3
    if name == "hinge":
        Z = Y * V
        return np.where(Z < 1, -Y, 0.0), np.abs(Z - 1) > 1e-3
    if name == "logistic":
        Pm = np.exp(V - V.max(axis=1, keepdims=True))
        Pm /= Pm.sum(axis=1, keepdims=True)
        return Pm - Y, np.ones(V.shape, bool)


@settings(max_examples=60, **SETTINGS)
@given(problems(scale_exp=(-1, 2), t_exp=(0, 0)))
def test_limit_t_to_zero(problem):
    """x -> v and (v - x) / t -> the gradient of the loss at v."""
    name, V, Y, _ = problem
    t = 1e-9
    X = loss_for(name, Y).prox(V, Y, t)
    grad, smooth = min_norm_subgradient(name, V, Y)
    np.testing.assert_allclose(((V - X) / t)[smooth], grad[smooth], rtol=1e-4,
                               atol=1e-4 * (1 + np.abs(V).max()))
    np.testing.assert_allclose(X, V, rtol=0, atol=1e-8 * (1 + np.abs(V).max() + np.abs(Y).max()))


@settings(max_examples=60, **SETTINGS)
@given(problems(scale_exp=(-1, 3), t_exp=(0, 0)))
def test_limit_t_to_infinity(problem):
    """x -> the projection of v onto argmin V(y, .) (exact once t is large enough), and for
    the logistic loss (no minimizer) the loss at x -> inf V = 0."""
    name, V, Y, _ = problem
    loss = loss_for(name, Y)
    big = 1e12
    X = loss.prox(V, Y, big)
    if name == "squared":
        np.testing.assert_allclose(X, Y, rtol=0, atol=2 * (np.abs(V - Y).max() / big) + 1e-15)
    elif name == "lad":
        np.testing.assert_array_equal(X, Y)
    elif name == "hinge":
        np.testing.assert_array_equal(X, np.where(Y * V >= 1, V, Y))
    else:
        values = [loss.value(loss.prox(V, Y, t), Y) for t in (1.0, 1e3, 1e6, 1e9, big)]
        # at the solution p_k = (v_k - x_k) / t for k != c, so V(y, x) ~ (x_c - v_c) / t
        assert values[-1] <= (np.ptp(V, axis=1).sum() + V.size * 40) / big
        assert all(a >= b for a, b in zip(values, values[1:]))


@settings(max_examples=60, **SETTINGS)
@given(problems(t_exp=(0, 0)))
def test_monotone_in_t(problem):
    """For any convex f, f(prox_{tf}(v)) is non-increasing and |prox_{tf}(v) - v| is
    non-decreasing in t."""
    name, V, Y, _ = problem
    loss = loss_for(name, Y)
    prev_val, prev_dist = np.inf, -np.inf
    for t in 10.0 ** np.arange(-4, 5):
        X = loss.prox(V, Y, t)
        val, dist = loss.value(X, Y), np.linalg.norm(X - V)
        assert val <= prev_val * (1 + 1e-9) + 1e-12
        assert dist >= prev_dist * (1 - 1e-9) - 1e-12
        prev_val, prev_dist = val, dist


# ---- values ---------------------------------------------------------------------------------

@settings(max_examples=80, **SETTINGS)
@given(problems())
def test_value_matches_reference(problem):
    name, O, Y, _ = problem
    got = loss_for(name, Y).value(O, Y)
    np.testing.assert_allclose(got, loss_value(name, O, Y), rtol=1e-12, atol=1e-12)


def test_logistic_value_is_accurate_when_tiny():
    O = np.array([[40.0, 0.0, -3.0]])
    Y = np.array([[1.0, 0.0, 0.0]])
    expected = np.log1p(np.exp(-40.0) + np.exp(-43.0))
    assert P.LogisticLoss().value(O, Y) == pytest.approx(expected, rel=1e-14)


# ---- dtypes, magnitudes, threads, buffers -------------------------------------------------

@pytest.mark.parametrize("name", LOSS_NAMES)
def test_float32_input(name):
    rng = np.random.default_rng(1)
    Y = make_targets(name, rng, 50, 4)
    V32 = rng.normal(scale=5, size=(50, 4)).astype(np.float32)
    loss = P.get_loss(name)
    X32 = loss.prox(V32, Y.astype(np.float32), 0.7)
    X64 = loss.prox(V32.astype(np.float64), Y, 0.7)
    assert X32.dtype == np.float64
    np.testing.assert_array_equal(X32, X64)
    assert loss.value(V32, Y.astype(np.float32)) == loss.value(V32.astype(np.float64), Y)


@settings(max_examples=200, **SETTINGS)
@given(problems(names=["logistic"], scale_exp=(3, 4), t_exp=(-8, 8), max_m=12))
def test_logistic_extreme_magnitudes(problem):
    """|v| up to 1e4 with any t: finite, optimal, no warning."""
    _, V, Y, t = problem
    V = np.clip(V, -1e4, 1e4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = P.LogisticLoss().prox(V, Y, t)
    assert np.isfinite(X).all()
    subgradient_check("logistic", V, Y, t, X)


@pytest.mark.parametrize("t", [1e-300, 1e-12, 1e12, 1e30, 1e100, 1e300])
def test_logistic_extreme_steps(t):
    rng = np.random.default_rng(2)
    V = rng.uniform(-1e4, 1e4, size=(100, 7))
    V[:10] = 0.0  # all ties
    V[10:20] = rng.normal(size=(10, 7)) * 1e-3
    Y = np.eye(7)[rng.integers(0, 7, 100)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = P.LogisticLoss().prox(V, Y, t)
    assert np.isfinite(X).all()
    # the optimality condition, by rows: x - v = t (y - p), so |x - v| <= t and sum(x - v) = 0
    np.testing.assert_array_less(np.abs(X - V), t * (1 + 1e-12) + 1e-9 * np.abs(V).max())
    assert np.abs((X - V).sum(axis=1)).max() <= 1e-9 * (1 + np.abs(X).max())
    if t <= 1e12:
        subgradient_check("logistic", V, Y, t, X)


@pytest.mark.parametrize("name", ["squared", "lad", "hinge"])
def test_closed_forms_at_extreme_magnitudes(name):
    rng = np.random.default_rng(3)
    Y = make_targets(name, rng, 20, 3)
    V = rng.normal(size=(20, 3)) * 10.0 ** rng.integers(-150, 150, size=(20, 3))
    # t -> 0: (v - x) / t is rounding noise divided by t, so bound the move instead: the
    # subgradients of these losses are at most max(1, |x - y|), hence |x - v| <= t (1 + |v - y|)
    X = loss_for(name, Y).prox(V, Y, 1e-200)
    assert np.all(np.abs(X - V) <= 1e-200 * (1 + np.abs(V - Y)) + 4 * EPS * np.abs(V))
    for t in (1e-5, 1.0, 1e5, 1e200):
        X = loss_for(name, Y).prox(V, Y, t)
        assert np.isfinite(X).all()
        subgradient_check(name, V, Y, t, X)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_thread_count_does_not_change_results(name):
    rng = np.random.default_rng(4)
    n, m = 20_000, 5
    Y = make_targets(name, rng, n, m)
    V = rng.normal(scale=3, size=(n, m))
    loss = P.get_loss(name)
    X1 = loss.prox(V, Y, 0.3, n_threads=1)
    X2 = loss.prox(V, Y, 0.3, n_threads=2)
    X3 = loss.prox(V, Y, 0.3, n_threads=3)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(X1, X3)
    assert loss.value(V, Y, n_threads=1) == loss.value(V, Y, n_threads=2) \
        == loss.value(V, Y, n_threads=3)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_out_buffer_and_in_place(name):
    rng = np.random.default_rng(5)
    Y = make_targets(name, rng, 30, 3)
    V = rng.normal(size=(30, 3))
    loss = P.get_loss(name)
    expected = loss.prox(V, Y, 0.5)
    out = np.zeros_like(V)
    assert loss.prox(V, Y, 0.5, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)
    W = V.copy()
    assert loss.prox(W, Y, 0.5, out=W) is W
    np.testing.assert_allclose(W, expected, rtol=1e-13, atol=1e-13)


def test_logistic_warm_start():
    rng = np.random.default_rng(6)
    V = rng.normal(scale=20, size=(500, 6))
    Y = np.eye(6)[rng.integers(0, 6, 500)]
    loss = P.LogisticLoss()
    cold = loss.prox(V, Y, 3.0)
    # garbage (NaN, huge) in out is rejected in favour of the cold start
    for garbage in (np.nan, 1e300, -1e300):
        out = np.full(V.shape, garbage)
        np.testing.assert_array_equal(loss.prox(V, Y, 3.0, out=out), cold)
    # a warm start from the solution stays there; a nearby one converges to it
    np.testing.assert_allclose(loss.prox(V, Y, 3.0, out=cold.copy()), cold, atol=1e-9)
    near = cold + rng.normal(scale=0.1, size=cold.shape)
    np.testing.assert_allclose(loss.prox(V, Y, 3.0, out=near), cold, atol=1e-8)
    # with one Newton step allowed, the warm start from the solution is still exact
    one_step = P.LogisticLoss(max_iter=1)
    np.testing.assert_allclose(one_step.prox(V, Y, 3.0, out=cold.copy()), cold, atol=1e-9)


def test_logistic_iteration_cap_is_reported():
    rng = np.random.default_rng(7)
    V = rng.normal(scale=100, size=(50, 8))
    Y = np.eye(8)[rng.integers(0, 8, 50)]
    with pytest.warns(P.ProxConvergenceWarning, match="did not converge in 1 Newton"):
        X = P.LogisticLoss(max_iter=1).prox(V, Y, 1e6)
    assert np.isfinite(X).all()


# ---- validation -------------------------------------------------------------------------

@pytest.mark.parametrize("name", LOSS_NAMES)
def test_rejects_bad_input(name):
    rng = np.random.default_rng(8)
    Y = make_targets(name, rng, 4, 3)
    V = rng.normal(size=(4, 3))
    loss = P.get_loss(name)
    for bad in (np.nan, np.inf, -np.inf):
        W = V.copy()
        W[1, 2] = bad
        with pytest.raises(ValueError, match="V contains NaN or infinity"):
            loss.prox(W, Y, 1.0)
        with pytest.raises(ValueError, match="O contains NaN or infinity"):
            loss.value(W, Y)
        Z = Y.copy()
        Z[0, 0] = bad
        with pytest.raises(ValueError, match="Y contains NaN or infinity"):
            loss.prox(V, Z, 1.0)
    with pytest.raises(ValueError, match="same shape"):
        loss.prox(V[:3], Y, 1.0)
    with pytest.raises(ValueError, match="same shape"):
        loss.value(V[:, :2], Y[:, :2].T)
    with pytest.raises(ValueError, match="2-D"):
        loss.prox(V[0], Y[0], 1.0)
    for t in (0, 0.0, -1.0, np.nan, np.inf, "1", None, True):
        with pytest.raises(ValueError, match="t must be"):
            loss.prox(V, Y, t)
    with pytest.raises(ValueError, match="float64"):
        loss.prox(V, Y, 1.0, out=np.empty(V.shape, np.float32))
    with pytest.raises(ValueError, match="shape"):
        loss.prox(V, Y, 1.0, out=np.empty((4, 4)))
    with pytest.raises(ValueError, match="C-contiguous"):
        loss.prox(V, Y, 1.0, out=np.empty((3, 4)).T)
    with pytest.raises(ValueError, match="real numbers"):
        loss.prox(V.astype(complex), Y, 1.0)


def test_target_coding_checks():
    V = np.zeros((2, 2))
    with pytest.raises(ValueError, match=r"HingeLoss targets must be coded \+1/-1"):
        P.HingeLoss().prox(V, np.array([[1.0, 0.0], [1.0, -1.0]]), 1.0)
    with pytest.raises(ValueError, match=r"HingeLoss targets must be coded \+1/-1"):
        P.HingeLoss().value(V, np.array([[1.0, 0.5], [1.0, -1.0]]))
    for cls in (P.SquaredLoss, P.AbsoluteLoss):
        Y = np.array([[2.0, -1.0], [1.0, -1.0]])
        with pytest.raises(ValueError, match=r"classification=True\) targets must be coded"):
            cls(classification=True).prox(V, Y, 1.0)
        cls().prox(V, Y, 1.0)  # regression: any real target
    with pytest.raises(ValueError, match="one-hot rows of 0/1"):
        P.LogisticLoss().prox(V, np.array([[0.5, 0.5], [1.0, 0.0]]), 1.0)
    with pytest.raises(ValueError, match="row 1 has 2"):
        P.LogisticLoss().prox(V, np.array([[0.0, 1.0], [1.0, 1.0]]), 1.0)
    with pytest.raises(ValueError, match="row 0 has 0"):
        P.LogisticLoss().value(V, np.array([[0.0, 0.0], [1.0, 0.0]]))


def test_empty_input():
    for name in LOSS_NAMES:
        loss = P.get_loss(name)
        assert loss.prox(np.empty((0, 3)), np.empty((0, 3)), 1.0).shape == (0, 3)
        assert loss.value(np.empty((0, 3)), np.empty((0, 3))) == 0.0


# ---- subgradient ------------------------------------------------------------------------

@settings(max_examples=200, **SETTINGS)
@given(problems(t_exp=(0, 0)), st.integers(0, 2**32 - 1))
def test_subgradient_is_a_subgradient(problem, seed):
    """G = loss.subgradient(O, Y) lies in the subdifferential of sum_i V(y_i, .) at O (the
    optimality check of the prox with v = o + G, t = 1), and satisfies the subgradient
    inequality F(O') >= F(O) + <G, O' - O> of a convex F at random O'."""
    name, O, Y, _ = problem
    loss = loss_for(name, Y)
    G = loss.subgradient(O, Y)
    assert G.dtype == np.float64 and G.shape == O.shape
    subgradient_check(name, O + G, Y, 1.0, O)
    rng = np.random.default_rng(seed)
    F = loss_value(name, O, Y)
    for _ in range(5):
        O2 = O + rng.normal(scale=10.0 ** rng.uniform(-3, 1), size=O.shape)
        rounding = 64 * EPS * (1 + np.abs(O).sum() + np.abs(O2).sum() + F)
        assert loss_value(name, O2, Y) >= F + np.sum(G * (O2 - O)) - rounding


@pytest.mark.parametrize("name", ["squared", "logistic"])
def test_subgradient_of_smooth_losses_matches_finite_differences(name):
    rng = np.random.default_rng(4)
    O = rng.normal(size=(5, 3))
    Y = make_targets(name, rng, 5, 3, classification=False)
    loss = P.get_loss(name)
    h = 1e-6
    numeric = np.zeros_like(O)
    for index in np.ndindex(O.shape):
        step = np.zeros_like(O)
        step[index] = h
        numeric[index] = (loss.value(O + step, Y) - loss.value(O - step, Y)) / (2 * h)
    np.testing.assert_allclose(loss.subgradient(O, Y), numeric, rtol=1e-7, atol=1e-8)


def test_subgradient_checks_its_input():
    with pytest.raises(ValueError, match="same shape"):
        P.HingeLoss().subgradient(np.zeros((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="one-hot"):
        P.LogisticLoss().subgradient(np.zeros((2, 2)), np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="NaN"):
        P.SquaredLoss().subgradient(np.full((1, 1), np.nan), np.zeros((1, 1)))


def test_with_classification():
    squared = P.SquaredLoss()
    assert squared.with_classification(False) is squared
    assert squared.with_classification(True) == P.SquaredLoss(classification=True)
    assert P.AbsoluteLoss(True).with_classification(False) == P.AbsoluteLoss()
    hinge = P.HingeLoss()
    assert hinge.with_classification(True) is hinge
    with pytest.raises(ValueError, match="hinge loss is only for class labels"):
        hinge.with_classification(False)
    with pytest.raises(ValueError, match="logistic loss is only for class labels"):
        P.LogisticLoss().with_classification(False)


# ---- objects and registry ----------------------------------------------------------------

def test_registry_and_objects():
    assert isinstance(P.get_loss("squared"), P.SquaredLoss)
    assert isinstance(P.get_loss("LAD"), P.AbsoluteLoss)
    assert isinstance(P.get_loss("hinge"), P.HingeLoss)
    assert isinstance(P.get_loss(P.LogisticLoss), P.LogisticLoss)
    obj = P.LogisticLoss(tol=1e-12, max_iter=50)
    assert P.get_loss(obj) is obj
    assert P.get_loss("squared", classification=True).classification
    assert not P.SquaredLoss().classification and P.HingeLoss().classification
    assert P.get_loss("logistic", max_iter=7).max_iter == 7
    with pytest.raises(ValueError, match="unknown loss 'l2'"):
        P.get_loss("l2")
    with pytest.raises(ValueError, match="unknown loss"):
        P.get_loss(3)
    with pytest.raises(ValueError, match="only apply"):
        P.get_loss(obj, max_iter=3)
    with pytest.raises(ValueError, match="max_iter"):
        P.LogisticLoss(max_iter=0)
    assert [P.get_loss(n).name for n in LOSS_NAMES] == LOSS_NAMES
    assert {n: P.get_loss(n).coding for n in LOSS_NAMES} == {
        "squared": "ovr", "lad": "ovr", "hinge": "ovr", "logistic": "onehot"}
    for loss in (P.SquaredLoss(True), P.AbsoluteLoss(), P.HingeLoss(), obj):
        for clone in (pickle.loads(pickle.dumps(loss)), copy.deepcopy(loss),
                      eval(repr(loss), vars(P))):
            assert clone == loss and type(clone) is type(loss)
            assert clone.get_params() == loss.get_params()
    assert P.SquaredLoss(True) != P.SquaredLoss(False)
    with pytest.raises(TypeError, match="abstract"):
        P.Loss()
    assert P.LogisticLoss(max_iter=5) != P.LogisticLoss()
