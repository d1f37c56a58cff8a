"""The ADMM iteration's own parts (skylite.admm.iteration): the state's layout, the rescaling
of the scaled duals when rho changes, the residuals and their tolerances, rho balancing."""
import numpy as np
import pytest

from hypothesis import given, settings, strategies as st

from skylite.admm._exchange import SUMS, exchange_outputs
from skylite.admm.iteration import Iteration, State, StepInfo, balanced_rho, residuals


def filled_state(seed=0, relaxed=True):
    rng = np.random.default_rng(seed)
    state = State(6, 2, [4, 3], 4 if relaxed else 2)
    for array in state.arrays().values():
        array[...] = rng.standard_normal(array.shape)
    return state


def test_state_views_share_the_flat_vectors_and_round_trip():
    state = filled_state()
    assert np.shares_memory(state.Wbar, state.shared) and np.shares_memory(state.mu, state.shared)
    for rb in state.blocks:
        for name in ("Obar", "nu", "Dbar", "mu_p", "U"):
            assert np.shares_memory(getattr(rb, name), state.local)
    copy = State(6, 2, [4, 3], 4)
    copy.load({k: v.copy() for k, v in state.arrays().items()})
    assert all(np.array_equal(a, b) for a, b in zip(copy.arrays().values(),
                                                    state.arrays().values()))
    with pytest.raises(ValueError, match="state array W is missing"):
        copy.load({})


@pytest.mark.parametrize("relaxed", [True, False])
def test_rescaling_the_duals_keeps_the_carried_products_consistent(relaxed):
    """After rho <- rho * f the scaled duals are divided by f; the carried
    G = Z^T [Dbar/(C+1) + nu | Dbar/(C+1)] follows (relaxed), or is marked stale."""
    state = filled_state(relaxed=relaxed)
    rng = np.random.default_rng(1)
    Z = [rng.standard_normal((n, 6)) for n in (4, 3)]
    C = 3
    for rb, Zi in zip(state.blocks, Z):
        rb.G[...] = Zi.T @ rb.rhs(C, relaxed)
        rb.G_valid[0] = 1.0
    mu, nu = state.mu.copy(), [rb.nu.copy() for rb in state.blocks]
    state.rescale_duals(4.0)
    assert np.allclose(state.mu, mu / 4.0)
    for rb, Zi, old in zip(state.blocks, Z, nu):
        assert np.allclose(rb.nu, old / 4.0)
        if relaxed:
            assert np.allclose(rb.G, Zi.T @ rb.rhs(C, True))
        else:
            assert rb.G_valid[0] == 0.0


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 9000), m=st.integers(1, 3), a=st.floats(0.1, 1.9),
       C=st.integers(1, 20), seed=st.integers(0, 2**16))
def test_the_native_exchange_is_step_4_and_its_sums(n, m, a, C, seed):
    """exchange_outputs equals the update rules of step 4 written out in numpy, and its sums
    the norms the residuals need, whatever the thread count (bitwise: fixed chunks)."""
    rng = np.random.default_rng(seed)
    O, S, Obar, nu, Dbar = (rng.standard_normal((n, m)) for _ in range(5))
    D = a * (O - S)
    want = {"Obar": a * O + (1.0 - a) * Obar - D / (C + 1), "nu": nu + D / (C + 1), "Dbar": D}
    sq = lambda A: float(np.vdot(A, A))
    want_sums = [sq(O - want["Obar"]), sq(want["Obar"] - Obar), sq(O), sq(want["Obar"]),
                 sq(want["nu"])]
    results = []
    for threads in (1, 2):
        arrays = {"Obar": Obar.copy(), "nu": nu.copy(), "Dbar": Dbar.copy()}
        sums = exchange_outputs(O, S, arrays["Obar"], arrays["nu"], arrays["Dbar"], a, C,
                                threads)
        for name, value in want.items():
            np.testing.assert_allclose(arrays[name], value, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sums, want_sums, rtol=1e-10, atol=1e-12)
        results.append((sums, arrays))
    assert len(SUMS) == len(results[0][0])
    assert np.array_equal(results[0][0], results[1][0])
    assert all(np.array_equal(results[0][1][k], results[1][1][k]) for k in want)


def test_the_native_exchange_refuses_mismatched_arrays():
    O = np.zeros((5, 2))
    with pytest.raises(ValueError, match="nu is 4 x 2, O is 5 x 2"):
        exchange_outputs(O, O.copy(), O.copy(), np.zeros((4, 2)), O.copy(), 1.0, 3, 1)


def test_residuals_from_the_reduced_sums():
    state = filled_state()
    info = StepInfo(state.Wbar - 0.5)
    sums = np.array([2.0, 3.0, 5.0, 7.0, 11.0, 0.0])
    assert len(sums) == len(Iteration.SUMS)
    rho, tol, R, n = 2.0, 1e-3, 2, 7
    primal, dual, eps_p, eps_d = residuals(state, info, sums, rho, tol, R, n)
    sq = lambda A: float(np.vdot(A, A))
    assert primal == pytest.approx(np.sqrt(2.0 + sq(state.W - state.Wbar)))
    assert dual == pytest.approx(rho * np.sqrt((R + 1) * sq(np.full((6, 2), 0.5)) + 3.0))
    floor = 1e-12 * np.sqrt((R + 1) * 12 + n * 2)
    scale_p = max(np.sqrt(5.0 + sq(state.W)), np.sqrt((R + 1) * sq(state.Wbar) + 7.0))
    assert eps_p == pytest.approx(tol * scale_p + floor)
    assert eps_d == pytest.approx(tol * rho * np.sqrt(sq(state.mu) + 11.0) + floor)


@pytest.mark.parametrize("primal, dual, expected", [
    (1.0, 1.0, 2.0),            # balanced: unchanged
    (4.0, 1.0, 2.0),            # within the factor mu = 5: unchanged
    (100.0, 1.0, 20.0),         # primal ahead: rho * sqrt(100)
    (1.0, 100.0, 0.2),          # dual ahead: rho / sqrt(100)
    (1e9, 1.0, 200.0),          # clipped to a factor of 100
    (0.0, 5.0, 2.0),            # a zero ratio leaves rho alone
])
def test_rho_balancing(primal, dual, expected):
    assert balanced_rho(2.0, primal, dual) == pytest.approx(expected)
