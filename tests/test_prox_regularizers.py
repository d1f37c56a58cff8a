"""Tests of the regularizer prox operators of skylite.prox (docs/prox.md)."""
import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skylite.prox as P
from test_prox_reference import EPS, reg_value, scalar_prox_numeric

REG_NAMES = ["l2", "l1", "none"]
SETTINGS = dict(deadline=None)


@st.composite
def problems(draw, scale_exp=(-2.0, 3.0), t_exp=(-4.0, 4.0)):
    name = draw(st.sampled_from(REG_NAMES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = (draw(st.integers(1, 8)), draw(st.integers(1, 4)))
    t = 10.0 ** draw(st.floats(*t_exp))
    V = rng.normal(scale=10.0 ** draw(st.floats(*scale_exp)), size=shape)
    if draw(st.booleans()):  # the kinks of l1: v = 0 and |v| = t
        at = rng.random(shape)
        V[at < 0.2] = 0.0
        V[(at >= 0.2) & (at < 0.4)] = t * np.sign(V[(at >= 0.2) & (at < 0.4)])
    return name, V, t


@settings(max_examples=120, **SETTINGS)
@given(problems())
def test_optimality_condition(problem):
    """v - x in t * subdifferential of r at x, entrywise."""
    name, V, t = problem
    X = P.get_regularizer(name).prox(V, t)
    assert X.dtype == np.float64 and X.shape == V.shape
    U = (V - X) / t
    tol = 1e-12 + 8 * EPS * (np.abs(V) + np.abs(X)) / t
    if name == "l2":
        np.testing.assert_array_less(np.abs(U - X), tol + 1e-12 * np.abs(X))
    elif name == "l1":
        zero = X == 0
        np.testing.assert_array_less(np.abs(U[zero]), 1 + tol[zero])
        np.testing.assert_array_less(np.abs(U - np.sign(X))[~zero], tol[~zero])
    else:
        np.testing.assert_array_equal(X, V)


@settings(max_examples=40, **SETTINGS)
@given(problems(scale_exp=(-1, 2), t_exp=(-2, 2)))
def test_matches_scipy(problem):
    name, V, t = problem
    X = P.get_regularizer(name).prox(V, t)
    for idx, v in np.ndenumerate(V):
        x_ref, obj = scalar_prox_numeric(name, v, 0.0, t)
        assert obj(X[idx]) <= obj(x_ref) + 1e-12 * (1 + abs(obj(x_ref)))
        # Brent converges slowly at the kink of l1 (x = 0), so the reference can be the one
        # that is off: the prox objective is 1-strongly convex, so at the exact minimizer
        # obj(x_ref) - obj(x) >= (x_ref - x)^2 / 2 (up to rounding of the objectives).
        d = abs(X[idx] - x_ref)
        assert (d <= 1e-6 * (1 + abs(x_ref))
                or obj(x_ref) - obj(X[idx]) >= 0.5 * d * d - 8 * EPS * abs(obj(x_ref)))


def conjugate_prox(name, U, s):
    """prox_{s r*}: l2* = 1/2|u|^2, l1* = indicator(|u|_inf <= 1), none* = indicator({0})."""
    return {"l2": U / (1 + s), "l1": np.clip(U, -1.0, 1.0), "none": np.zeros_like(U)}[name]


@settings(max_examples=80, **SETTINGS)
@given(problems())
def test_moreau_decomposition(problem):
    name, V, t = problem
    X = P.get_regularizer(name).prox(V, t)
    np.testing.assert_allclose(X + t * conjugate_prox(name, V / t, 1 / t), V, rtol=1e-12,
                               atol=1e-12 * (1 + t))


@settings(max_examples=40, **SETTINGS)
@given(problems(t_exp=(0, 0)))
def test_limits(problem):
    name, V, _ = problem
    reg = P.get_regularizer(name)
    small, big = 1e-10, 1e12
    # t -> 0: (v - x) / t -> the gradient of r at v (away from the kink of l1)
    U = (V - reg.prox(V, small)) / small
    grad = {"l2": V, "l1": np.sign(V), "none": np.zeros_like(V)}[name]
    keep = np.abs(V) > 1e-6
    np.testing.assert_allclose(U[keep], grad[keep], rtol=1e-5, atol=1e-5 * (1 + np.abs(V).max()))
    # t -> infinity: x -> the projection of v on argmin r ({0}, or everything for none)
    X = reg.prox(V, big)
    if name == "l1":
        np.testing.assert_array_equal(X, 0.0)
    elif name == "l2":
        np.testing.assert_array_less(np.abs(X), np.abs(V).max() / big * 1.01 + 1e-300)
    else:
        np.testing.assert_array_equal(X, V)


@settings(max_examples=60, **SETTINGS)
@given(problems())
def test_value(problem):
    name, W, _ = problem
    np.testing.assert_allclose(P.get_regularizer(name).value(W), reg_value(name, W),
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", REG_NAMES)
def test_dtypes_shapes_threads_and_magnitudes(name):
    reg = P.get_regularizer(name)
    rng = np.random.default_rng(0)
    W = rng.normal(size=(20000, 7)) * 10.0 ** rng.integers(-150, 150, size=(20000, 7))
    W32 = rng.normal(size=(40, 3)).astype(np.float32)
    np.testing.assert_array_equal(reg.prox(W32, 0.3), reg.prox(W32.astype(np.float64), 0.3))
    assert reg.prox(W32, 0.3).dtype == np.float64
    assert reg.value(W32) == reg.value(W32.astype(np.float64))
    for t in (1e-200, 1.0, 1e200):
        X1 = reg.prox(W, t, n_threads=1)
        np.testing.assert_array_equal(X1, reg.prox(W, t, n_threads=2))
        assert np.isfinite(X1).all()
    assert reg.value(W[:, :3] * 1e-100, n_threads=1) == reg.value(W[:, :3] * 1e-100, n_threads=2)
    # r is a sum over entries: any shape, and out / in place
    np.testing.assert_array_equal(reg.prox(W[:10].ravel(), 0.5), reg.prox(W[:10], 0.5).ravel())
    out = np.empty((10, 7))
    assert reg.prox(W[:10], 0.5, out=out) is out
    V = W[:10].copy()
    np.testing.assert_array_equal(reg.prox(V, 0.5, out=V), out)


@pytest.mark.parametrize("name", REG_NAMES)
def test_rejects_bad_input(name):
    reg = P.get_regularizer(name)
    W = np.ones((3, 2))
    for bad in (np.nan, np.inf):
        B = W.copy()
        B[2, 1] = bad
        with pytest.raises(ValueError, match="V contains NaN or infinity"):
            reg.prox(B, 1.0)
        with pytest.raises(ValueError, match="W contains NaN or infinity"):
            reg.value(B)
    for t in (0.0, -2.0, np.nan, np.inf, "x"):
        with pytest.raises(ValueError, match="t must be"):
            reg.prox(W, t)
    with pytest.raises(ValueError, match="shape"):
        reg.prox(W, 1.0, out=np.empty((2, 3)))
    with pytest.raises(ValueError, match="float64"):
        reg.prox(W, 1.0, out=np.empty((3, 2), np.float32))


def test_registry_and_objects():
    assert isinstance(P.get_regularizer("L2"), P.L2)
    assert isinstance(P.get_regularizer("l1"), P.L1)
    assert isinstance(P.get_regularizer("none"), P.NoRegularizer)
    assert isinstance(P.get_regularizer(None), P.NoRegularizer)
    assert isinstance(P.get_regularizer(P.L1), P.L1)
    obj = P.L2()
    assert P.get_regularizer(obj) is obj
    with pytest.raises(ValueError, match="unknown regularizer 'hinge'"):
        P.get_regularizer("hinge")
    assert [P.get_regularizer(n).name for n in REG_NAMES] == REG_NAMES
    for reg in (P.L2(), P.L1(), P.NoRegularizer()):
        for clone in (pickle.loads(pickle.dumps(reg)), copy.deepcopy(reg), eval(repr(reg), vars(P))):
            assert clone == reg and type(clone) is type(reg)
    assert P.L1() != P.L2()
    with pytest.raises(TypeError, match="abstract"):
        P.Regularizer()
