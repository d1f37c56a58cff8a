"""Safeguarded type-II Anderson acceleration of the ADMM fixed-point map.

One BlockADMM iteration is a map x_{k+1} = G(x_k) of its fixed-point variables x (Wbar, mu
and every row block's Obar, nu, Dbar, mu', U: `State.shared` and `State.local`).  Anderson
acceleration (type II; Walker & Ni 2011, as in Fu, Zhang & Boyd 2019, "Anderson accelerated
Douglas-Rachford splitting", and Zhang, O'Donoghue & Boyd 2020) replaces the plain step by the
combination of the last M + 1 images g_i = G(x_i) whose residuals f_i = g_i - x_i best
cancel:

    gamma = argmin ||f_k - dF gamma||^2 + eta ||dF||_F^2 ||gamma||^2      dF = [f_{i+1} - f_i]
    x_{k+1} = g_k - dG gamma                                              dG = [g_{i+1} - g_i]

The norm.  Every part of x lives in the space of the outputs O (n_i x m) or of the weights W
(s x m), where the preconditioning (docs/engine.md) makes the Euclidean norm the natural one,
except U_j = Z_j^T O'_j: Z_j^T multiplies an output-space vector by the singular values of
Z_j (up to about sqrt(n c^2) = sqrt(1/alpha)), so in the Euclidean norm U's residual outweighs
everything else and the least-squares problem cancels it alone.  The residuals' U parts are
therefore measured as ||U_j||^2 = U_j^T (Z_j^T Z_j + I)^-1 U_j (about ||O'_j||^2), through the
Cholesky factors the graph projection already has (`ColumnBlocks.whiten`).  Measured
(MNIST 3,000 rows, squared loss, s = 512 in 2 blocks, rho 0.1 fixed, memory 10): 188
iterations to tol with the Euclidean norm, 67 with this one, 143 without acceleration.

Safeguard: an extrapolated point is kept only if the residual it produces, ||f(x_AA)||, is
at most D ||f_0|| (n_AA + 1)^-(1 + eps) (A2DR's bound, n_AA the number of accepted
extrapolations so far) and at most `max_growth` times the residual of the point it was
extrapolated from (with the Euclidean norm of an earlier version, hinge-loss runs on MNIST
took twice as many iterations as plain ADMM without this second test; with the present norm
it made no difference to logistic loss on 5,000 MNIST rows, 80 iterations either way);
otherwise the run goes back to the plain image g of the last accepted point and the memory
is cleared.  The plain iteration converges from any point, and the
accepted extrapolations have summable residual bounds, so the accelerated run converges too.
The memory is also cleared when rho changes (the scaled duals are rescaled, so G changes).

Carried arrays.  The row sweep carries Z_i^T B_i (`RowBlockState.G`)
from one iteration to the next, a linear function of the state (`State.carried`).  Each
stored image keeps its own, and an extrapolation or a return to a stored image sets it by
the same combination, so that moving the state costs no extra pass over Z.

Inner products are global: each rank computes the dots of its `local` part, the driver adds
them over the ranks (in its per-iteration Allreduce), and the `shared` part (identical on every
rank) is added once.  Every rank therefore takes the same decisions.  Memory: 2 (M + 1)
copies of the fixed-point vector and M + 1 copies of the carried arrays.
"""
from typing import NamedTuple

import numpy as np


class Image(NamedTuple):
    """A stored image g_i = G(x_i): its `local` and `shared` parts (State's fixed-point
    vectors) and the carried arrays that match it (the row sweep's Z_i^T B_i of every row
    block, or None)."""
    local: np.ndarray
    shared: np.ndarray
    carried: list


class Residual(NamedTuple):
    """A stored residual f_i = g_i - x_i, its `local` part whitened."""
    local: np.ndarray
    shared: np.ndarray


class AndersonAcceleration:
    """Anderson acceleration of a fixed-point iteration on a State (module docstring).

    Parameters
    ----------
    memory : int >= 1, M: the number of differences in the least-squares problem
    regularization : float >= 0, eta (Tikhonov weight relative to ||dF||_F^2)
    safeguard : float > 0, D
    epsilon : float > 0, eps
    max_growth : float > 0 or None, the largest accepted ratio of residual norms
    whiten : callable or None
        whiten(f_local) rewrites this rank's part of a residual, in place, into the
        coordinates whose Euclidean norm is the acceleration's norm (`State.whiten`: the U
        parts through the factors of Z_j^T Z_j + I); None: the Euclidean norm.
    """

    def __init__(self, memory=5, regularization=1e-10, safeguard=1e6, epsilon=1e-6,
                 max_growth=1.0, whiten=None):
        self.memory = int(memory)
        self.regularization = float(regularization)
        self.safeguard = float(safeguard)
        self.epsilon = float(epsilon)
        self.max_growth = max_growth
        self.whiten = whiten
        self.reset()
        self.f0_norm = None        # ||f|| of the first iteration
        self.last_norm = None      # ||f|| of the last point kept
        self.n_accepted = 0
        self.n_rejected = 0

    def reset(self):
        """Forget the stored images and residuals (after a change of rho or a rejection)."""
        self.images, self.residuals = [], []       # g_i (Image), f_i (Residual)
        self.gram = np.zeros((0, 0))   # F_i . F_j
        self.pending = False           # the current state is an extrapolated point
        self._f = None

    # ---- one iteration: residual, dots (reduced by the driver), then the next point ----

    @property
    def n_dots(self):
        """The length of `residual_dots`'s vector this iteration."""
        return len(self.residuals) + 1

    def residual_dots(self, x_prev, state):
        """f_k = g_k - x_k with g_k the state after a step from x_prev (a (local, shared)
        pair), its local part whitened; returns this rank's partial dots [f_k . f_i for
        stored f_i..., f_k . f_k] over the `local` parts, to be summed over the ranks."""
        f_local = state.local - x_prev[0]
        if self.whiten is not None:
            self.whiten(f_local)
        self._f = Residual(f_local, state.shared - x_prev[1])
        return np.array([np.vdot(f_local, f.local) for f in self.residuals]
                        + [np.vdot(f_local, f_local)])

    def next_point(self, state, local_dots):
        """Given the dots of `residual_dots` summed over the ranks, apply the safeguard and
        write the next point into `state` (the extrapolation, or the plain image if there is
        not enough memory yet).  Returns "accepted", "rejected" or "plain"."""
        f_local, f_shared = self._f
        dots = local_dots + np.array([np.vdot(f_shared, f.shared) for f in self.residuals]
                                     + [np.vdot(f_shared, f_shared)])
        norm = float(np.sqrt(max(dots[-1], 0.0)))
        if self.f0_norm is None:
            self.f0_norm = norm
        outcome = "plain"
        if self.pending:
            bound = (self.safeguard * self.f0_norm
                     * (self.n_accepted + 1) ** -(1.0 + self.epsilon))
            if self.max_growth is not None and self.last_norm is not None:
                bound = min(bound, self.max_growth * self.last_norm)
            if not norm <= bound:
                g = self.images[-1]
                state.local[...] = g.local
                state.shared[...] = g.shared
                state.moved(g.carried)
                self.n_rejected += 1
                self.reset()
                return "rejected"
            self.n_accepted += 1
            outcome = "accepted"
        self.last_norm = norm
        self._remember(state, f_local, f_shared, dots)
        self.pending = False
        if len(self.residuals) >= 2:
            gamma = self._coefficients()
            if gamma is not None:
                self._extrapolate(state, gamma)
                self.pending = True
        return outcome

    def _remember(self, state, f_local, f_shared, dots):
        """Store g_k (the state, with its carried arrays) and f_k with its row of the Gram
        matrix."""
        k = len(self.residuals)
        gram = np.zeros((k + 1, k + 1))
        gram[:k, :k] = self.gram
        gram[k, :k] = gram[:k, k] = dots[:-1]
        gram[k, k] = dots[-1]
        carried = state.carried()
        self.images.append(Image(state.local.copy(), state.shared.copy(),
                                 None if carried is None else [a.copy() for a in carried]))
        self.residuals.append(Residual(f_local, f_shared))
        if len(self.residuals) > self.memory + 1:
            del self.images[0], self.residuals[0]
            gram = gram[1:, 1:]
        self.gram = gram

    def _coefficients(self):
        """gamma of the regularized least-squares problem, from the Gram matrix of the
        stored residuals (dF^T dF and dF^T f_k by differences); None if it is singular."""
        g = self.gram
        k = g.shape[0] - 1
        dFdF = g[1:, 1:] - g[1:, :-1] - g[:-1, 1:] + g[:-1, :-1]
        dFf = g[1:, k] - g[:-1, k]
        A = dFdF + self.regularization * max(np.trace(dFdF), 1e-300) * np.eye(k)
        try:
            gamma = np.linalg.solve(A, dFf)
        except np.linalg.LinAlgError:
            return None
        return gamma if np.isfinite(gamma).all() else None

    def _extrapolate(self, state, gamma):
        """x_{k+1} = g_k - sum_i gamma_i (g_{i+1} - g_i), written into the state, and the
        carried arrays by the same combination (when every stored image has them)."""
        weights = np.zeros(len(self.images))
        weights[-1] = 1.0
        weights[1:] -= gamma
        weights[:-1] += gamma
        for part, target in (("local", state.local), ("shared", state.shared)):
            target[...] = 0.0
            for w, g in zip(weights, self.images):
                target += w * getattr(g, part)
        carried = None
        if all(g.carried is not None for g in self.images):
            carried = [sum(w * g.carried[b] for w, g in zip(weights, self.images))
                       for b in range(len(self.images[0].carried))]
        state.moved(carried)

    # ---- checkpoints ----

    def arrays(self):
        """The accelerator's memory by name (for checkpoints)."""
        named = {"anderson_gram": self.gram}
        for i, (g, f) in enumerate(zip(self.images, self.residuals)):
            named.update({f"anderson_g_local_{i}": g.local, f"anderson_g_shared_{i}": g.shared,
                          f"anderson_f_local_{i}": f.local, f"anderson_f_shared_{i}": f.shared})
            for b, a in enumerate(g.carried or []):
                named[f"anderson_g_carried_{i}_{b}"] = a
        return named

    def meta(self):
        """The accelerator's counters (JSON-able, for checkpoints)."""
        return {"stored": len(self.residuals), "pending": self.pending,
                "f0_norm": self.f0_norm, "last_norm": self.last_norm,
                "carried": [0 if g.carried is None else len(g.carried) for g in self.images],
                "n_accepted": self.n_accepted, "n_rejected": self.n_rejected}

    def load(self, arrays, meta):
        """Restore from `arrays()` and `meta()` of a checkpoint."""
        self.reset()
        for i in range(meta["stored"]):
            n_carried = meta["carried"][i]
            carried = ([arrays[f"anderson_g_carried_{i}_{b}"] for b in range(n_carried)]
                       if n_carried else None)
            self.images.append(Image(arrays[f"anderson_g_local_{i}"],
                                     arrays[f"anderson_g_shared_{i}"], carried))
            self.residuals.append(Residual(arrays[f"anderson_f_local_{i}"],
                                           arrays[f"anderson_f_shared_{i}"]))
        k = len(self.residuals)
        self.gram = np.array(arrays["anderson_gram"]).reshape(k, k)
        self.pending = bool(meta["pending"])
        self.f0_norm, self.last_norm = meta["f0_norm"], meta["last_norm"]
        self.n_accepted, self.n_rejected = int(meta["n_accepted"]), int(meta["n_rejected"])
