"""One BlockADMM iteration: the state, the update rules, the residuals and rho balancing.

This file is the algorithm of docs/engine.md; `skylite.admm.blockadmm.BlockADMM` drives it
(settings, MPI, faults, callbacks, history, checkpoints).  Shapes: s features, m outputs,
C column blocks, R row blocks over all ranks, n rows over all ranks, n_i in row block i.

Per iteration, with the relaxation a in (0, 2) (a = 1: plain ADMM):

    1. O_i   <- prox_{(1/rho) l_i}(Obar_i - nu_i)               l_i = (1/n) sum_{rows of i} V
    2. W     <- prox_{(alpha/rho) r}(Wbar - mu)
    3. the graph projection of each row block i (native, parallel):
         W'_ij <- (Z^T Z + I)^-1 [Wbar_j - mu'_ij + U_ij + Z^T (Dbar_i/(C+1) + nu_i)]
         S_i   <- sum_j Z_ij W'_ij                               (= Z_i W'_i)
         U_ij  <- a Z^T Z W'_ij + (1 - a)(U_ij + Z^T Dbar_i/(C+1))
       by the column sweep (each block whole, twice) or the row sweep (one pass over tiles
       of rows, which also leaves the next iteration's Z^T B: `Iteration._row_sweep`)
    4. exchange of the outputs (relaxed: O^ = a O + (1 - a) Obar):
         D_i    <- a (O_i - S_i)
         Obar_i <- O^_i - D_i/(C+1) ;  nu_i <- nu_i + D_i/(C+1) ;  Dbar_i <- D_i
    5. consensus of the weights (relaxed: W'^ = a W' + (1 - a) Wbar, W^ likewise):
         Wbar  <- (sum_i W'^_i + W^) / (R + 1)                   (a sum over every rank)
    6. consensus duals, against the new Wbar:
         mu'_i <- mu'_i + W'^_i - Wbar ;  mu <- mu + W^ - Wbar

Everything runs on the preconditioned Z~ = c Z, W~ = W / c with c^2 = 1/(alpha n), or
sqrt(1/(alpha n)) for a piecewise-linear loss when 1/(alpha n) > 1 (`preconditioning`; the
sweep's `scale`); the model is coef_ = c W.  The loss prox step is t = 1/rho (rho relative
to the loss scale 1/n).  The prox calls go straight to the nogil kernels of skylite.prox:
the targets are validated once, at setup, and the iterates are checked for non-finite values
after every sweep.
"""
import time

import numpy as np

from ..prox import Loss, Regularizer
from ._exchange import SUMS as EXCHANGE_SUMS, exchange_outputs
from ._prox_kernels import loss_prox, loss_value, regularizer_prox, regularizer_value


class ConvergenceError(FloatingPointError):
    """ADMM produced non-finite values: the model is not returned."""


class RowBlockState:
    """Row block i's share of the state: O, Obar, nu, Dbar (n_i x m) and W' (`Wp`), mu'
    (`mu_p`), U (s x m).  Obar, nu, Dbar, mu', U are views into the state's flat vector of
    fixed-point variables.

    With the row sweep, G = Z_i^T B_i (s x k, B_i = [Dbar_i/(C+1) + nu_i | Dbar_i/(C+1)],
    the second half only when relaxed) is carried from one iteration's pass over the rows
    to the next iteration's solve; `G_valid[0]` says whether it matches the state (it does
    not at the start, and after Anderson moves the state)."""

    def __init__(self, flat, n_i, s, m, k):
        self.O = np.zeros((n_i, m))
        self.Wp = np.zeros((s, m))
        self.G = np.zeros((s, k))
        self.G_valid = np.zeros(1)
        views = _views(flat, [(n_i, m)] * 3 + [(s, m)] * 2)
        self.Obar, self.nu, self.Dbar, self.mu_p, self.U = views

    def rhs(self, C, relaxed):
        """B_i = Dbar_i/(C+1) + nu_i, with Dbar_i/(C+1) beside it when relaxed: the matrix
        whose Z_i^T B_i the graph projection needs (n_i x m or n_i x 2m)."""
        B = self.Dbar / (C + 1) + self.nu
        return np.hstack([B, self.Dbar / (C + 1)]) if relaxed else B

    def rescale_duals(self, factor):
        """nu /= factor, mu' /= factor, and G to match: its first half Z^T(Dbar/(C+1) + nu)
        becomes G2 + (G1 - G2)/factor with G2 = Z^T Dbar/(C+1); without G2 (unrelaxed) G
        is marked stale."""
        self.mu_p /= factor
        self.nu /= factor
        m = self.nu.shape[1]
        if self.G.shape[1] == 2 * m:
            G1, G2 = self.G[:, :m], self.G[:, m:]
            G1[...] = G2 + (G1 - G2) / factor
        else:
            self.G_valid[0] = 0.0


class State:
    """The whole ADMM state of this process: W, mu, Wbar (s x m) and one RowBlockState per
    local row block.

    The variables the next iteration reads (its fixed point: Wbar, mu, and Obar, nu, Dbar,
    mu', U of every row block) live in two flat float64 vectors, `shared` (identical on
    every rank) and `local` (this rank's row blocks), which Anderson acceleration treats as
    one vector.  W, O and W' are outputs of an iteration, kept for the residuals and the
    model.  `arrays()` / `load()` are the whole state by name, for checkpoints.  k is the
    number of columns of each row block's carried G = Z_i^T B_i: m, or 2m when relaxed.
    Whoever writes the fixed-point vectors from outside the iteration calls `moved()`.
    """

    SHARED = ("W", "mu", "Wbar")
    PER_BLOCK = ("O", "Obar", "nu", "Dbar", "Wp", "mu_p", "U", "G", "G_valid")

    def __init__(self, s, m, block_rows, k):
        self.shared = np.zeros(2 * s * m)
        self.Wbar, self.mu = _views(self.shared, [(s, m)] * 2)
        self.W = np.zeros((s, m))
        sizes = [3 * n_i * m + 2 * s * m for n_i in block_rows]
        self.local = np.zeros(sum(sizes))
        bounds = np.cumsum([0] + sizes)
        self.blocks = [RowBlockState(self.local[a:b], n_i, s, m, k)
                       for a, b, n_i in zip(bounds[:-1], bounds[1:], block_rows)]
        self._u_parts = [(b - s * m, b) for b in bounds[1:]]    # U_i is last in its block

    def arrays(self):
        """Every state array by name: W, mu, Wbar and O_i, Obar_i, ... for block i."""
        named = {name: getattr(self, name) for name in self.SHARED}
        for i, rb in enumerate(self.blocks):
            named.update({f"{name}_{i}": getattr(rb, name) for name in self.PER_BLOCK})
        return named

    def load(self, arrays):
        """Copy arrays (as from `arrays()`) into the state, in place."""
        for name, target in self.arrays().items():
            if name not in arrays or np.shape(arrays[name]) != target.shape:
                raise ValueError(f"state array {name} is missing or has the wrong shape")
            target[...] = arrays[name]

    def rescale_duals(self, factor):
        """Scaled duals after rho <- rho * factor: mu, mu', nu divided by factor."""
        self.mu /= factor
        for rb in self.blocks:
            rb.rescale_duals(factor)

    def rescale_preconditioning(self, ratio):
        """The same point in the variables of a new scale c' = ratio * c (`preconditioning`;
        W~ = W / c, Z~ = c Z): the weight copies W, Wbar, W' divided by ratio, so that the
        model c W~ is unchanged; mu', mu and U, which are Z~^T times output-space
        quantities at a fixed point (mu'_ij = Z~_ij^T nu_i, U_ij = Z~_ij^T Z~_ij W~_j),
        multiplied by it; the output-space variables (O, Obar, nu, Dbar) unchanged.  The
        row sweep's carried G is then stale."""
        self.W /= ratio
        self.Wbar /= ratio
        self.mu *= ratio
        for rb in self.blocks:
            rb.Wp /= ratio
            rb.mu_p *= ratio
            rb.U *= ratio
            rb.G_valid[0] = 0.0

    def carried(self):
        """The arrays the iteration carries beside the fixed-point vectors, linear in them:
        the row sweep's G of every row block, or None when any of them is stale (always
        with the column sweep)."""
        if not all(rb.G_valid[0] for rb in self.blocks):
            return None
        return [rb.G for rb in self.blocks]

    def moved(self, carried=None):
        """The fixed-point variables were set from outside the iteration (Anderson).
        carried: the G of every row block that matches the new point (the same combination
        of stored images), or None: every carried G is then stale and is recomputed by a
        pass over Z."""
        for i, rb in enumerate(self.blocks):
            if carried is None:
                rb.G_valid[0] = 0.0
            else:
                rb.G[...] = carried[i]
                rb.G_valid[0] = 1.0

    def whiten(self, f_local, rows, n_threads):
        """Rewrite a residual of `local` in place so that its Euclidean norm measures each
        U_i in the metric (Z_ij^T Z_ij + I)^-1 of its column blocks (`ColumnBlocks.whiten`,
        see skylite.admm.acceleration); the other parts are unchanged."""
        m = self.Wbar.shape[1]
        for (a, b), data in zip(self._u_parts, rows):
            data.columns.whiten(f_local[a:b].reshape(-1, m), n_threads)


class RowData:
    """Row block i's data: rows X_i, coded targets Y_i (n_i x m) and `columns`, its block
    store with its sweep (a ColumnSweep or RowSweep: the factors and caches of Z_i1..Z_iC)."""

    def __init__(self, X, Y, columns):
        self.X, self.Y, self.columns = X, Y, columns


class StepInfo:
    """What an iteration leaves for the residuals and the record: the consensus weights
    before it (Wbar_prev), the local models' outputs S_i = Z_i W'_i, each row block's
    output terms of the residual sums (`exchange_outputs`), the sum of this rank's raw W'_i,
    and the seconds spent in the prox operators."""

    def __init__(self, Wbar_prev):
        self.Wbar_prev = Wbar_prev
        self.S, self.output_sums, self.Wp_sum, self.prox_seconds = [], [], None, 0.0


class Iteration:
    """The update rules (module docstring) for one problem.

    Parameters
    ----------
    loss, regularizer : skylite.prox Loss / Regularizer objects
    alpha : float >= 0, the regularization weight
    scale : float, c (see the module docstring and `preconditioning`)
    n_rows : int, n over every rank (the loss scale 1/n)
    n_column_blocks : int, C
    relaxation : float in (0, 2), a
    n_threads : int
    row_sweep : bool
        Step 3 by one pass over the rows per iteration (`RowSweep.row_sweep`) instead of
        the sweep over the column blocks, which holds a whole n_i x s_j block per thread.
    kappa2 : float > 0
        (c / c0)^2 of `preconditioning`: the weight of the weight copies in the residuals.
    """

    def __init__(self, loss, regularizer, alpha, scale, n_rows, n_column_blocks, relaxation,
                 n_threads, row_sweep=False, kappa2=1.0):
        self.loss, self.regularizer = loss, regularizer
        self.alpha, self.scale, self.n = alpha, scale, n_rows
        self.C, self.relaxation, self.n_threads = n_column_blocks, relaxation, n_threads
        self.row_sweep, self.kappa2 = row_sweep, kappa2
        self.unconverged_rows = 0     # rows whose iterative (logistic) prox hit its cap

    def step(self, state, rows, rho, consensus):
        """One iteration on `state` (updated in place) for this rank's row blocks `rows`.

        consensus(local_sum, W_hat) -> Wbar: the mean (sum_i W'^_i + W^) / (R + 1) over
        every rank's row blocks, given this rank's sum of relaxed W'^_i.
        """
        a, C, nt = self.relaxation, self.C, self.n_threads
        info = StepInfo(state.Wbar.copy())
        tick = time.perf_counter()
        # 1. the loss prox of every row block
        for rb, data in zip(state.blocks, rows):
            self.unconverged_rows += _loss_prox(self.loss, rb.Obar - rb.nu, data.Y,
                                                1.0 / rho, rb.O, nt)
        # 2. the regularizer prox, exact through c: prox_{t r(c.)}(v) = prox_{t c^2 r}(c v)/c
        if self.alpha > 0:
            c = self.scale
            _regularizer_prox(self.regularizer, c * (state.Wbar - state.mu),
                              self.alpha * self.n * c * c / rho, state.W, nt)
            state.W /= c
        else:
            np.subtract(state.Wbar, state.mu, out=state.W)
        info.prox_seconds = time.perf_counter() - tick
        # 3. the graph projection of every row block
        for rb, data in zip(state.blocks, rows):
            S = np.empty_like(rb.O)
            if self.row_sweep:
                failed = self._row_sweep(state, rb, data.columns, S)
            else:
                failed = data.columns.sweep(state.Wbar, rb.mu_p, rb.U, rb.Wp,
                                            rb.rhs(C, a != 1.0), S, a, nt)
            if failed:
                raise ConvergenceError("graph-projection factorization failed: the feature "
                                       "block has non-finite values")
            if not (np.isfinite(rb.Wp).all() and np.isfinite(S).all()):
                raise ConvergenceError("ADMM produced non-finite values; the features or "
                                       f"rho={rho:g} may be badly scaled")
            info.S.append(S)
        # 4. the exchange of the outputs: O = S + D is shared out over the C + 1 copies
        # (one native pass, which also takes the output terms of the residual sums)
        for rb, S in zip(state.blocks, info.S):
            info.output_sums.append(exchange_outputs(rb.O, S, rb.Obar, rb.nu, rb.Dbar, a, C,
                                                     nt))
        # 5. the consensus of the weights (every rank's row blocks)
        relaxed = lambda V: V if a == 1.0 else a * V + (1.0 - a) * info.Wbar_prev
        Wp_hat = [relaxed(rb.Wp) for rb in state.blocks]
        W_hat = relaxed(state.W)
        state.Wbar[...] = consensus(np.ascontiguousarray(sum(Wp_hat)), W_hat)
        # 6. the consensus duals, against the new Wbar
        for rb, Wp in zip(state.blocks, Wp_hat):
            rb.mu_p += Wp - state.Wbar
        state.mu += W_hat - state.Wbar
        return info

    def _row_sweep(self, state, rb, columns, S):
        """Step 3 for one row block with one pass over its rows (docs/engine.md, "Two ways
        through Z").  The solve needs only G = Z^T B, which the previous iteration's pass left
        (or, at the start and after Anderson, one pass over each block computes, with the
        factors).  The pass then computes S = Z W' and, from the same tiles, the next
        iteration's G: step 4 makes the next B = nu + (2a/(C+1))(O - S) (and
        Dbar/(C+1) = (a/(C+1))(O - S)), so B_next = E + S coefs with E and coefs below.
        Relaxed, G = [G1 | G2] = [Z^T(Dbar/(C+1) + nu) | Z^T Dbar/(C+1)], and the pass makes
        only P = Z^T Dbar_next/(C+1): nu_next = nu + Dbar_next/(C+1), so Z^T nu_next =
        G1 - G2 + P, and G_next = [G1 - G2 + 2P | P] costs m columns of Z^T B, not 2m.
        Returns the number of failed factorizations."""
        a, C, nt = self.relaxation, self.C, self.n_threads
        if not (rb.G_valid[0] and columns.factored_all):
            failed = columns.factor_and_project(rb.rhs(C, a != 1.0), rb.G, not rb.G_valid[0],
                                                nt)
            if failed:
                return failed
            rb.G_valid[0] = 1.0
        columns.solve(state.Wbar, rb.mu_p, rb.U, rb.Wp, rb.G, a, nt)
        if a == 1.0:
            E = rb.nu + (2.0 / (C + 1)) * rb.O
            columns.row_sweep(rb.Wp, E, np.array([-2.0 / (C + 1)]), S, rb.G, nt)
            return 0
        m = S.shape[1]
        P = np.empty((rb.G.shape[0], m))
        columns.row_sweep(rb.Wp, (a / (C + 1)) * rb.O, np.array([-a / (C + 1)]), S, P, nt)
        G1, G2 = rb.G[:, :m], rb.G[:, m:]
        G1 -= G2
        G1 += 2.0 * P
        G2[...] = P
        return 0

    def local_sums(self, state, rows, info):
        """This rank's partial sums for the residuals and the objective, in the order of
        `SUMS` (terms in W, Wbar and mu alone, the same on every rank, are added by
        `residuals` after the sums are reduced over the ranks).  The weight copies' terms
        are weighed by kappa2 (`preconditioning`), the weight duals' by 1/kappa2."""
        sq = lambda A: float(np.vdot(A, A))
        k2 = self.kappa2
        out = dict(zip(EXCHANGE_SUMS, np.sum(info.output_sums, axis=0) if info.output_sums
                       else np.zeros(len(EXCHANGE_SUMS))))
        return np.array([
            sum(k2 * sq(rb.Wp - state.Wbar) for rb in state.blocks) + out["primal"],
            out["dual"],
            sum(k2 * sq(rb.Wp) for rb in state.blocks) + out["norm_x"],
            out["norm_z"],
            sum(sq(rb.mu_p) / k2 for rb in state.blocks) + out["norm_dual"],
            sum(_loss_value(self.loss, S, data.Y, self.n_threads)
                for data, S in zip(rows, info.S)),
        ])

    SUMS = ("primal", "dual", "norm_x", "norm_z", "norm_dual", "loss")

    def objective(self, total, state):
        """F read off the iteration: the loss at the local models Z_i W'_i (from the reduced
        sums) and the regularizer at the consensus; both equal F(coef_) at convergence."""
        value = total[self.SUMS.index("loss")] / self.n
        if self.alpha > 0:
            value += self.alpha * _regularizer_value(self.regularizer,
                                                     self.scale * state.Wbar, self.n_threads)
        return value


def _loss_prox(loss, V, Y, t, out, n_threads):
    """out <- prox_{t V}(V) row by row: the native kernels, or the method of a loss that
    combines native ones (skylite.prox.StackedLoss, which reports its own unconverged
    rows).  Returns the rows whose iterative prox hit its cap."""
    if isinstance(loss, Loss):
        return loss_prox(loss, V, Y, t, out, n_threads)
    loss.prox(V, Y, t, out, n_threads=n_threads)
    return 0


def _loss_value(loss, O, Y, n_threads):
    if isinstance(loss, Loss):
        return loss_value(loss, O, Y, n_threads)
    return loss.value(O, Y, n_threads=n_threads)


def preconditioning(alpha, n, loss):
    """(c, kappa2): the scale of the preconditioned variables Z~ = c Z, W~ = W / c, and
    kappa2 = (c / c0)^2 with c0 = 1/sqrt(alpha n), by which `residuals` weighs the weight
    copies so that `tol` measures the residuals as it does at c = c0.

    c0^2 = 1/(alpha n) (scikit-learn's C) equalizes the curvature of the loss term (1/n for
    squared loss) and of alpha r (l2).  A piecewise-linear loss (not `loss.smooth`: hinge,
    LAD) has no curvature to equalize, and at C > 1 c0 weighs the outputs against the
    weights too heavily: c^2 = sqrt(C) there (docs/engine.md, "Preconditioning").  alpha = 0:
    c = 1."""
    if alpha <= 0:
        return 1.0, 1.0
    c0 = 1.0 / np.sqrt(alpha * n)
    if getattr(loss, "smooth", False) or c0 <= 1.0:
        return c0, 1.0
    return float(np.sqrt(c0)), 1.0 / c0


def _regularizer_prox(regularizer, V, t, out, n_threads):
    """out <- prox_{t r}(V): the native elementwise kernels, or the method of a regularizer
    that couples the entries of W (skylite.prox.RKHSNorm)."""
    if isinstance(regularizer, Regularizer):
        regularizer_prox(regularizer, V, t, out, n_threads)
    else:
        regularizer.prox(V, t, out=out, n_threads=n_threads)


def _regularizer_value(regularizer, W, n_threads):
    if isinstance(regularizer, Regularizer):
        return regularizer_value(regularizer, W, n_threads)
    return regularizer.value(W, n_threads=n_threads)


def residuals(state, info, total, rho, tol, R, n, kappa2=1.0):
    """Primal and dual residuals (Boyd et al. 2011, 3.3) and their tolerances, from the
    reduced sums `total` (Iteration.SUMS) and the shared W, Wbar, mu:

        primal = sqrt( k sum_i ||W'_i - Wbar||^2 + k ||W - Wbar||^2 + sum_i ||O_i - Obar_i||^2 )
        dual   = rho sqrt( k (R + 1) ||Wbar - Wbar_prev||^2 + sum_i ||Obar_i - Obar_i,prev||^2 )

    with k = kappa2 (`preconditioning`; 1 at c = c0): the weight copies measured in the
    metric of c0, their duals in its inverse, so that tol means the same for any c.
    The run has converged when primal <= tol * (norm of the primal iterates) and dual <= tol
    * rho * (norm of the scaled duals), each plus an absolute floor of 1e-12 sqrt(size).
    Returns (primal, dual, eps_primal, eps_dual)."""
    primal_sum, dual_sum, norm_x, norm_z, norm_dual, _ = total[:len(Iteration.SUMS)]
    sq = lambda A: float(np.vdot(A, A))
    k2 = kappa2
    primal = np.sqrt(primal_sum + k2 * sq(state.W - state.Wbar))
    dual = rho * np.sqrt(k2 * (R + 1) * sq(state.Wbar - info.Wbar_prev) + dual_sum)
    floor = 1e-12 * np.sqrt((R + 1) * state.Wbar.size + n * state.Wbar.shape[1])
    scale_primal = max(np.sqrt(norm_x + k2 * sq(state.W)),
                       np.sqrt(k2 * (R + 1) * sq(state.Wbar) + norm_z))
    scale_dual = rho * np.sqrt(sq(state.mu) / k2 + norm_dual)
    return primal, dual, tol * scale_primal + floor, tol * scale_dual + floor


def balanced_rho(rho, primal_ratio, dual_ratio, mu=5.0, clip=100.0):
    """Residual balancing (Boyd et al. 2011, 3.4.1) on residuals relative to their
    tolerances, as OSQP does: rho * sqrt(primal_ratio / dual_ratio), clipped to a factor
    of `clip`, when one ratio exceeds the other by more than `mu`; else rho unchanged.
    The caller rescales the scaled duals by rho_old / rho_new (State.rescale_duals)."""
    if primal_ratio == 0 or dual_ratio == 0:
        return rho
    if not (primal_ratio > mu * dual_ratio or dual_ratio > mu * primal_ratio):
        return rho
    return rho * float(np.clip(np.sqrt(primal_ratio / dual_ratio), 1 / clip, clip))


def _views(flat, shapes):
    """Consecutive C-contiguous views of `shapes` into the flat vector."""
    views, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        views.append(flat[start:start + size].reshape(shape))
        start += size
    return views
