"""Where a block-ADMM solve starts, besides a cold start (everything zero): at a model W0.

`start_at_model` puts every ADMM variable where a fixed point of the iteration at W0 would
put it, so that a run started at its optimum stops within a few iterations.  The other start,
a continuation from the previous solve's whole state on the same setup, needs no
construction: the state is kept and carried to the new scale c
(`skylite.admm.iteration.State.rescale_preconditioning`, `ADMM.set_problem(keep_state=True)`).
"""
import numpy as np

from .._distributed import Guard

__all__ = ["start_at_model"]


def start_at_model(W0, state, rows, feature_map, loss, c, rho, n_threads, dist):
    """Set `state` (skylite.admm.iteration.State, preconditioned variables with scale c) to
    the fixed point a model W0 (s x m) implies:

        W = Wbar = W'_i = W0 / c,  O_i = Obar_i = Z_i W0,  U_ij = Z~_ij^T Z~_ij W~0_j,
        Dbar_i = 0,  nu_i = -(1/rho) g_i,  mu'_ij = Z~_ij^T nu_i,  mu = -sum_i mu'_i

    with g_i a (sub)gradient of the loss V at O_i, Z~ = c Z, and the sum over every rank's
    row blocks (one Reduce + Bcast).  rows: this rank's RowData; collective."""
    W0 = np.asarray(W0, dtype=np.float64)
    state.W[:] = W0 / c
    state.Wbar[:] = W0 / c
    offsets = feature_map.transform_op_.block_offsets
    blocks = [slice(offsets[j], offsets[j + 1]) for j in range(len(offsets) - 1)]
    block = lambda X, j: c * feature_map.block(X, j, n_threads=n_threads)
    guard = Guard()
    with guard:
        for rb, data in zip(state.blocks, rows):
            rb.Wp[:] = W0 / c
            partial = [block(data.X, j) @ state.W[cols] for j, cols in enumerate(blocks)]
            rb.O[:] = sum(partial)
            rb.Obar[:] = rb.O
            rb.nu[:] = -loss.subgradient(rb.O, data.Y) / rho
            # each block again rather than kept from above: nu needs all of them first,
            # and Z is never stored
            for j, cols in enumerate(blocks):
                Zj = block(data.X, j)
                rb.U[cols] = Zj.T @ partial[j]
                rb.mu_p[cols] = Zj.T @ rb.nu
    dist.check(guard.error)
    state.mu -= dist.sum_to_all(np.ascontiguousarray(sum(rb.mu_p for rb in state.blocks)))
