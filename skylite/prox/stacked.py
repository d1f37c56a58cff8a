"""A loss for k problems solved as one: their outputs side by side, each on its own rows.

Cross-validation fits k models on k overlapping sets of rows (the folds' training rows).
On the same features Z (n x s), the k problems

    minimize_{W_f}  sum_{i in rows_f} V(y_i, W_f^T z_i) + (1/2) ||W_f||^2,   f = 1..k

are one problem in W = [W_1 ... W_k] (s x k m), separable in the W_f, with the loss

    V_stacked(y_i, o_i) = sum_{f : i in rows_f} V(y_i, o_i^(f)),   o_i = [o_i^(1) ... o_i^(k)]

(each o_i^(f) a group of m outputs).  Its prox is the base loss's prox on the groups a row
belongs to and the identity on the others (the prox of zero).  The targets say which: the
stacked targets (n x k m) hold y_i in group f where row i is one of problem f's rows and
NaN where it is not.  Solving the stacked problem reads each feature block once per
iteration for all k problems, instead of k times.
"""
import numpy as np

__all__ = ["StackedLoss", "stack_targets"]


def stack_targets(Y, members):
    """The stacked targets (n x k m) of coded targets Y (n x m): Y in group f on the rows
    of problem f (`members[:, f]` True), NaN elsewhere.

    Parameters
    ----------
    Y : ndarray of shape (n, m)
        The coded targets of every row.
    members : ndarray of bool, shape (n, k)
        members[i, f]: row i belongs to problem f.

    Returns
    -------
    stacked : ndarray of shape (n, k m), float64
        Column block f (columns f m to (f + 1) m) holds Y on the rows of problem f and NaN
        on the others.
    """
    n, m = Y.shape
    k = members.shape[1]
    stacked = np.repeat(np.asarray(Y, dtype=np.float64)[:, None, :], k, axis=1)
    stacked[~members] = np.nan
    return stacked.reshape(n, k * m)


class StackedLoss:
    """The sum of a base loss over k problems on their own rows (module docstring).

    Parameters
    ----------
    base : skylite.prox.Loss
        The loss V of each problem.
    n_problems : int
        k.

    Notes
    -----
    The engine (skylite.admm) calls `prox` and `value` with rows of k m columns; the base
    loss's native kernels run on the (row, problem) pairs that belong to a problem.
    """

    def __init__(self, base, n_problems):
        self.base, self.k = base, int(n_problems)
        self.name = f"stacked {base.name}"
        self.smooth = base.smooth
        self.classification = base.classification

    def get_params(self):
        return {"base": self.base.name, "base_params": self.base.get_params(),
                "n_problems": self.k}

    def _pairs(self, A):
        """A (n x k m) as its (row, problem) pairs, (n k) x m (a view)."""
        n, km = A.shape
        if km % self.k:
            raise ValueError(f"stacked outputs need a multiple of {self.k} columns, got {km}")
        return A.reshape(n * self.k, km // self.k)

    def _active(self, Y):
        return ~np.isnan(self._pairs(Y)[:, 0])

    def check_targets(self, Y, *, n_threads=None):
        """Raise ValueError unless every group of Y is NaN or coded for the base loss.

        Parameters
        ----------
        Y : array-like of shape (n, k m)
            Stacked targets (`stack_targets`).
        n_threads : int or None, default=None
            Threads of the base loss's check (None: every usable core).
        """
        pairs = self._pairs(np.ascontiguousarray(Y, dtype=np.float64))
        active = ~np.isnan(pairs[:, 0])
        if np.isnan(pairs[active]).any() or (~np.isnan(pairs[~active])).any():
            raise ValueError("stacked targets must be whole groups of targets or of NaN")
        self.base.check_targets(pairs[active], n_threads=n_threads)

    def prox(self, V, Y, t, out, *, n_threads=None):
        """out <- the prox of t V_stacked at V, row by row: the base loss's prox on each
        (row, problem) pair of the row's problems, V itself on the others.

        Parameters
        ----------
        V : ndarray of shape (n, k m)
            The points.
        Y : ndarray of the same shape
            Stacked targets (`stack_targets`).
        t : float > 0
            The step.
        out : ndarray of shape (n, k m)
            Holds a warm start; receives the prox.
        n_threads : int or None, default=None
            Threads of the base loss's prox (None: every usable core).

        Returns
        -------
        out : ndarray of shape (n, k m)
            The prox, in `out`.
        """
        v, y, x = self._pairs(V), self._pairs(Y), self._pairs(out)
        active = ~np.isnan(y[:, 0])
        inactive = ~active
        x[inactive] = v[inactive]
        if active.any():
            part = np.ascontiguousarray(x[active])
            self.base.prox(np.ascontiguousarray(v[active]), y[active], t, out=part,
                           n_threads=n_threads)
            x[active] = part
        return out

    def value(self, O, Y, *, n_threads=None):
        """sum_i V_stacked(y_i, o_i): the base loss summed over each row's problems.

        Parameters
        ----------
        O : ndarray of shape (n, k m)
            The outputs.
        Y : ndarray of shape (n, k m)
            Stacked targets (`stack_targets`).
        n_threads : int or None, default=None
            Threads of the base loss's sum (None: every usable core).

        Returns
        -------
        value : float
            The sum.
        """
        o, y = self._pairs(O), self._pairs(Y)
        active = ~np.isnan(y[:, 0])
        if not active.any():
            return 0.0
        return self.base.value(o[active], y[active], n_threads=n_threads)

    def subgradient(self, O, Y):
        """A subgradient of sum_i V_stacked at O: the base loss's on the groups of each
        row's problems, 0 on the others.

        Parameters
        ----------
        O : array-like of shape (n, k m)
            The outputs.
        Y : ndarray of shape (n, k m)
            Stacked targets (`stack_targets`).

        Returns
        -------
        G : ndarray of shape (n, k m)
            The subgradient.
        """
        G = np.zeros(O.shape)
        g, o, y = self._pairs(G), self._pairs(np.ascontiguousarray(O, dtype=np.float64)), \
            self._pairs(Y)
        active = ~np.isnan(y[:, 0])
        if active.any():
            g[active] = self.base.subgradient(o[active], y[active])
        return G

    def _unconverged(self, count, n):
        self.base._unconverged(count, n)
