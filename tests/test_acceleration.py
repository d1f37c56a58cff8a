"""AndersonAcceleration (skylite.admm.acceleration) on linear fixed-point maps x -> A x + b.

The accelerator only touches the engine's State through `local` and `shared` (the fixed-point
vector), `carried()` and `moved(carried)`; `FixedPointState` below is that interface for a
linear map, with carried arrays that are a linear function of x (as the row sweep's Z_i^T B_i
is), so every step of the accelerator can be checked against the map it accelerates.
"""
import io
import json

import numpy as np
import pytest

from skylite.admm.acceleration import AndersonAcceleration


class FixedPointState:
    """x = (local, shared) stepped by x -> A x + b; carried arrays C_j x (None while stale).

    Parameters
    ----------
    A : ndarray of shape (d, d)
    b : ndarray of shape (d,)
    n_local : int, the first n_local entries of x are `local`, the rest `shared`
    carry : list of ndarray of shape (c_j, d) or None, the maps of the carried arrays
    """

    def __init__(self, A, b, n_local, carry=None):
        self.A, self.b, self.n_local, self.carry = A, b, n_local, carry
        self.local = np.zeros(n_local)
        self.shared = np.zeros(len(b) - n_local)
        self._carried = None if carry is None else [C @ self.x for C in carry]
        self.moves = []   # what `moved` was given, in order

    @property
    def x(self):
        return np.concatenate([self.local, self.shared])

    def step(self):
        """x <- A x + b, and the carried arrays of the new x (what an engine step does)."""
        x = self.A @ self.x + self.b
        self.local[...], self.shared[...] = x[:self.n_local], x[self.n_local:]
        if self.carry is not None:
            self._carried = [C @ x for C in self.carry]

    def carried(self):
        return self._carried

    def moved(self, carried=None):
        self.moves.append(carried)
        self._carried = None if carried is None else [a.copy() for a in carried]

    def snapshot(self):
        return (self.local.copy(), self.shared.copy())


def linear_map(d=60, rate=0.995, seed=0):
    """A symmetric A with eigenvalues spread over [0, rate] and b: the plain iteration's error
    shrinks by `rate` per step at worst."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A = (Q * np.linspace(0.0, rate, d)) @ Q.T
    return A, rng.standard_normal(d)


def accelerated_step(state, accel):
    """One iteration as BlockADMM runs it on one rank: step, residual dots, next point.
    Returns the outcome and ||f|| of the step."""
    x_prev = state.snapshot()
    state.step()
    dots = accel.residual_dots(x_prev, state)
    f_norm = np.linalg.norm(state.x - np.concatenate(x_prev))
    return accel.next_point(state, dots), f_norm


def iterations_to(tol, state, accel=None, max_iter=20000):
    """Steps until ||x_{k+1} - x_k|| <= tol (with the accelerator, if any)."""
    for k in range(1, max_iter + 1):
        if accel is None:
            x_prev = state.x
            state.step()
            f_norm = np.linalg.norm(state.x - x_prev)
        else:
            _, f_norm = accelerated_step(state, accel)
        if f_norm <= tol:
            return k
    raise AssertionError(f"no convergence to {tol} in {max_iter} iterations")


def test_converges_to_the_fixed_point_in_far_fewer_iterations():
    """On x -> A x + b with spectral radius 0.995, the plain iteration needs thousands of steps
    and Anderson (memory 10) over ten times fewer (about 260 against 4,500), and both reach
    x* = (I - A)^-1 b."""
    A, b = linear_map()
    x_star = np.linalg.solve(np.eye(len(b)) - A, b)
    plain = FixedPointState(A, b, 45)
    n_plain = iterations_to(1e-10, plain)
    state, accel = FixedPointState(A, b, 45), AndersonAcceleration(memory=10)
    n_anderson = iterations_to(1e-10, state, accel)
    assert n_plain > 3000
    assert n_anderson < n_plain / 10
    assert accel.n_accepted > 0
    for x in (plain.x, state.x):
        assert np.linalg.norm(x - x_star) <= 1e-6 * np.linalg.norm(x_star)


def test_memory_holds_the_last_m_plus_one_residuals():
    """The Gram matrix of the stored residuals is (M + 1) x (M + 1) once the memory is full,
    and equals the dots of the stored residuals (local and shared parts)."""
    A, b = linear_map(d=20, rate=0.9)
    state, accel = FixedPointState(A, b, 12), AndersonAcceleration(memory=3)
    for _ in range(8):
        accelerated_step(state, accel)
    assert len(accel.residuals) == len(accel.images) == 4
    F = np.array([np.concatenate([f.local, f.shared]) for f in accel.residuals])
    np.testing.assert_allclose(accel.gram, F @ F.T, rtol=1e-12)


def test_the_safeguard_rejects_a_bad_extrapolation():
    """When the extrapolated point's residual exceeds the bound, the state goes back to the
    plain image of the last kept point (with its carried arrays) and the memory is cleared."""
    A, b = linear_map(d=20, rate=0.9)
    carry = [np.arange(40.0).reshape(2, 20)]
    state = FixedPointState(A, b, 12, carry)
    accel = AndersonAcceleration(memory=5)
    assert accelerated_step(state, accel)[0] == "plain"
    x_prev = state.snapshot()
    state.step()
    image, image_carried = state.x, [a.copy() for a in state.carried()]
    accel.next_point(state, accel.residual_dots(x_prev, state))
    assert accel.pending                          # the state is now an extrapolated point
    assert not np.array_equal(state.x, image)
    x_prev = state.snapshot()
    state.local += 1e3                            # a step that blows the residual up
    outcome = accel.next_point(state, accel.residual_dots(x_prev, state))
    assert outcome == "rejected"
    assert accel.n_rejected == 1 and accel.n_accepted == 0
    np.testing.assert_array_equal(state.x, image)
    np.testing.assert_array_equal(state.carried()[0], image_carried[0])
    assert accel.residuals == [] and accel.images == [] and not accel.pending


@pytest.mark.parametrize("max_growth, outcome", [(None, "accepted"), (1.0, "rejected")])
def test_max_growth_bounds_the_residual_by_the_last_kept_one(max_growth, outcome):
    """A residual twice the last kept one is within the A2DR bound D ||f_0|| (D = 1e6) but
    not within max_growth = 1 times the last residual."""
    A, b = linear_map(d=20, rate=0.9)
    state = FixedPointState(A, b, 12)
    accel = AndersonAcceleration(memory=5, max_growth=max_growth)
    accelerated_step(state, accel)
    accelerated_step(state, accel)
    assert accel.pending
    x_prev = state.snapshot()
    step = 2.0 * accel.last_norm / np.sqrt(len(b))
    state.local += step
    state.shared += step
    assert accel.next_point(state, accel.residual_dots(x_prev, state)) == outcome


def test_extrapolation_combines_the_carried_arrays_like_the_state():
    """The carried arrays handed to `moved` are the same combination of the stored images as
    the new point: C x_{k+1} for a carried array C x; without carried arrays, moved(None)."""
    A, b = linear_map(d=20, rate=0.9)
    carry = [np.random.default_rng(1).standard_normal((3, 20)) for _ in range(2)]
    state, accel = FixedPointState(A, b, 12, carry), AndersonAcceleration(memory=4)
    for _ in range(6):
        accelerated_step(state, accel)
        if accel.pending:
            for C, a in zip(carry, state.moves[-1]):
                np.testing.assert_allclose(a, C @ state.x, rtol=1e-10, atol=1e-12)
    assert len(state.moves) >= 4

    state, accel = FixedPointState(A, b, 12), AndersonAcceleration(memory=4)
    for _ in range(4):
        accelerated_step(state, accel)
    assert state.moves and all(carried is None for carried in state.moves)


def test_reset_forgets_the_memory_but_keeps_the_counters():
    """After reset (a change of rho), two plain steps come before the next extrapolation."""
    A, b = linear_map(d=20, rate=0.9)
    state, accel = FixedPointState(A, b, 12), AndersonAcceleration(memory=4)
    outcomes = [accelerated_step(state, accel)[0] for _ in range(5)]
    assert outcomes[:2] == ["plain", "plain"] and "accepted" in outcomes
    n_accepted = accel.n_accepted
    accel.reset()
    assert accel.images == [] and accel.residuals == [] and accel.gram.shape == (0, 0)
    assert not accel.pending and accel.n_dots == 1
    assert accel.n_accepted == n_accepted
    assert accelerated_step(state, accel)[0] == "plain"
    assert not accel.pending
    assert accelerated_step(state, accel)[0] == "plain"
    assert accel.pending


@pytest.mark.parametrize("carried", [False, True])
def test_checkpoint_round_trip_reproduces_the_run_bitwise(carried):
    """`arrays` and `meta` (through np.savez and JSON, as a checkpoint stores them), loaded
    into a new accelerator, give the same next points, bit for bit, as the original."""
    A, b = linear_map(d=30, rate=0.98)
    carry = [np.random.default_rng(2).standard_normal((4, 30))] if carried else None
    state, accel = FixedPointState(A, b, 20, carry), AndersonAcceleration(memory=3)
    for _ in range(7):
        accelerated_step(state, accel)
    assert accel.pending and len(accel.residuals) == 4

    buffer = io.BytesIO()
    np.savez(buffer, **accel.arrays())
    buffer.seek(0)
    with np.load(buffer) as z:
        stored = {name: z[name] for name in z.files}
    meta = json.loads(json.dumps(accel.meta()))
    assert meta["stored"] == 4 and meta["carried"] == [1 if carried else 0] * 4
    restored = AndersonAcceleration(memory=3)
    restored.load(stored, meta)
    twin = FixedPointState(A, b, 20, carry)
    twin.local[...], twin.shared[...] = state.local, state.shared
    twin._carried = None if state.carried() is None else [a.copy() for a in state.carried()]

    for _ in range(10):
        outcomes = accelerated_step(state, accel)[0], accelerated_step(twin, restored)[0]
        assert outcomes[0] == outcomes[1]
        assert state.x.tobytes() == twin.x.tobytes()
    assert (accel.n_accepted, accel.n_rejected) == (restored.n_accepted, restored.n_rejected)
    assert accel.gram.tobytes() == restored.gram.tobytes()


def test_residual_dots_layout():
    """residual_dots returns this rank's [f_k . f_0, ..., f_k . f_{k-1}, f_k . f_k] over the
    whitened local parts only (the shared parts are added once, in next_point)."""
    A, b = linear_map(d=20, rate=0.9)
    state = FixedPointState(A, b, 12)
    accel = AndersonAcceleration(memory=5, whiten=lambda f: np.multiply(f, 3.0, out=f))
    for _ in range(3):
        accelerated_step(state, accel)
    assert accel.n_dots == len(accel.residuals) + 1 == 4
    x_prev = state.snapshot()
    state.step()
    dots = accel.residual_dots(x_prev, state)
    f_local = 3.0 * (state.local - x_prev[0])
    expected = [np.vdot(f_local, f.local) for f in accel.residuals] + [np.vdot(f_local, f_local)]
    assert dots.shape == (accel.n_dots,)
    np.testing.assert_allclose(dots, expected, rtol=1e-14)


def test_ranks_summing_their_dots_take_the_same_decisions():
    """Two ranks, each with half of `local` and the same `shared`, summing their residual
    dots (the driver's Allreduce), follow the single-rank run: same outcomes, same points."""
    A, b = linear_map(d=40, rate=0.99)
    n_local, half = 30, 15
    whole, accel = FixedPointState(A, b, n_local), AndersonAcceleration(memory=5)
    ranks = [AndersonAcceleration(memory=5) for _ in range(2)]
    x = np.zeros(len(b))
    parts = [slice(0, half), slice(half, n_local)]
    for _ in range(40):
        outcome, _ = accelerated_step(whole, accel)
        # both ranks step the same global map on their own part of local
        x_new = A @ x + b
        views = [RankView(x_new[part], x_new[n_local:]) for part in parts]
        dots = sum(r.residual_dots((x[part], x[n_local:]), v)
                   for r, v, part in zip(ranks, views, parts))
        rank_outcomes = [r.next_point(v, dots) for r, v in zip(ranks, views)]
        assert rank_outcomes == [outcome, outcome]
        np.testing.assert_array_equal(views[0].shared, views[1].shared)
        x = np.concatenate([views[0].local, views[1].local, views[0].shared])
        np.testing.assert_allclose(x, whole.x, rtol=1e-9, atol=1e-12)


class RankView:
    """One rank's part of the state: its own `local` rows and a copy of `shared`."""

    def __init__(self, local, shared):
        self.local, self.shared = local.copy(), shared.copy()

    def carried(self):
        return None

    def moved(self, carried=None):
        assert carried is None
