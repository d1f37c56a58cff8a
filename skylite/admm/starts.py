"""Where a block-ADMM solve starts, besides a cold start (everything zero): at a model W0.

`start_at_model` puts every ADMM variable where a fixed point of the iteration at W0 would
put it, so that a run started at its optimum stops within a few iterations.  The other start,
a continuation from the previous solve's whole state on the same setup, needs no
construction: the state is kept and carried to the new scale c
(`skylite.admm.iteration.State.rescale_preconditioning`, `ADMM.set_problem(keep_state=True)`).
"""
import numpy as np

from .._distributed import Guard
from .._threads import blas_single_threaded
from .iteration import ConvergenceError

__all__ = ["start_at_model"]


def start_at_model(W0, state, rows, feature_map, loss, c, rho, n_threads, dist):
    """Set `state` (skylite.admm.iteration.State, preconditioned variables with scale c) to
    the fixed point a model W0 (s x m) implies:

        W = Wbar = W'_i = W0 / c,  O_i = Obar_i = Z_i W0,  U_ij = Z~_ij^T Z~_ij W~0_j,
        Dbar_i = 0,  nu_i = -(1/rho) g_i,  mu'_ij = Z~_ij^T nu_i,  mu = -sum_i mu'_i

    with g_i a (sub)gradient of the loss V at O_i, Z~ = c Z, and the sum over every rank's
    row blocks (one Reduce + Bcast).  rows: this rank's RowData; collective.

    A row block swept by rows (`RowSweep`) is started by the engine's own passes: one that
    factors its blocks (and fills the planned caches, which the first iteration would do),
    one for O_i (`row_sweep`) and one for Z~_i^T nu_i (`factor_and_project`), whose result
    is also the G the first iteration needs; U_ij comes from the factors.  So the start
    costs two passes over Z_i (reads of the cache where Z is cached) in the fit's
    precision, in tiles, and no memory beyond the plan's.  Other row blocks (column sweep)
    make each Z_ij twice in numpy."""
    W0 = np.asarray(W0, dtype=np.float64)
    state.W[:] = W0 / c
    state.Wbar[:] = W0 / c
    guard = Guard()
    with guard:
        for rb, data in zip(state.blocks, rows):
            rb.Wp[:] = W0 / c
            if getattr(data.columns, "row_sweep_possible", False):
                with blas_single_threaded():    # the passes' threads call BLAS
                    _start_by_passes(rb, data, loss, rho, n_threads)
            else:
                _start_by_blocks(rb, data, feature_map, loss, c, rho, n_threads)
    dist.check(guard.error)
    state.mu -= dist.sum_to_all(np.ascontiguousarray(sum(rb.mu_p for rb in state.blocks)))


def _start_by_passes(rb, data, loss, rho, n_threads):
    """One row block's start (`start_at_model`) with the row sweep's passes; rb.Wp holds
    W~0 already.  Leaves the carried G = Z~_i^T [nu_i | 0] valid."""
    columns, (n_i, m), k = data.columns, rb.O.shape, rb.G.shape[1]
    B = np.zeros((n_i, k))       # unread by the factor pass; zero for the row sweep below
    if columns.factor_and_project(B, rb.G, False, n_threads):
        raise ConvergenceError("graph-projection factorization failed: the feature block "
                               "has non-finite values")
    # S = sum_j Z~_ij W~0_j = Z_i W0, with B = 0 (the G it makes is overwritten below)
    columns.row_sweep(rb.Wp, B, np.zeros(k // m), rb.O, rb.G, n_threads)
    rb.Obar[:] = rb.O
    rb.nu[:] = -loss.subgradient(rb.O, data.Y) / rho
    U = rb.Wp.copy()
    columns.times_factored(U, n_threads)             # (Z~^T Z~ + I) W~0, block by block
    rb.U[:] = U - rb.Wp
    # B = Dbar/(C+1) + nu with Dbar = 0 (and Dbar/(C+1) = 0 beside it when relaxed)
    B[:, :m] = rb.nu
    columns.factor_and_project(B, rb.G, True, n_threads)
    rb.mu_p[:] = rb.G[:, :m]
    rb.G_valid[0] = 1.0


def _start_by_blocks(rb, data, feature_map, loss, c, rho, n_threads):
    """One row block's start (`start_at_model`) with each feature block made in numpy."""
    offsets = feature_map.transform_op_.block_offsets
    blocks = [slice(offsets[j], offsets[j + 1]) for j in range(len(offsets) - 1)]
    block = lambda X, j: c * feature_map.block(X, j, n_threads=n_threads)
    partial = [block(data.X, j) @ rb.Wp[cols] for j, cols in enumerate(blocks)]
    rb.O[:] = sum(partial)
    rb.Obar[:] = rb.O
    rb.nu[:] = -loss.subgradient(rb.O, data.Y) / rho
    # each block again rather than kept from above: nu needs all of them first,
    # and Z is never stored
    for j, cols in enumerate(blocks):
        Zj = block(data.X, j)
        rb.U[cols] = Zj.T @ partial[j]
        rb.mu_p[cols] = Zj.T @ rb.nu
