"""Statistics over rows spread across MPI ranks, for the estimators under `comm=`.

Everything an estimator computes from the data must be global, i.e. the same as if one
process held the union of the ranks' rows, and identical on every rank:

- the default Gaussian / Laplacian bandwidth sigma = sqrt(d Var(X) / 2) (mean and variance
  over all n x d entries; two reductions: the mean, then the centred sum of squares, the
  same two-pass formula as numpy for dense rows; two Reduce + Bcast pairs);
- class labels (`Distributed.label_union`: every rank's unique labels, allgathered);
- `score` (accuracy: correct and total counts; R^2: the residual and the total sum of
  squares about the *global* column means);
- `objective` (the loss summed over every rank's rows over the global n);
- the per-iteration validation score (`CollectiveValidation`: partial sums that travel in
  the engine's one Allreduce per iteration).

Sums go through `Distributed.sum_to_all` (Reduce to the root, then Bcast), so every rank
gets bitwise the same numbers whatever the MPI library's reduction order (they feed the
model: sigma; and the returned scores).
Local work that may fail on one rank (input checks, predictions) runs under
`Distributed.agree`, so every rank raises instead of waiting for a failed one.
With one process each function reduces to the serial formula.
"""
import numpy as np

from ._distributed import Distributed


def distributed(comm):
    """A `Distributed` for a communicator of more than one rank, else None (serial
    code paths, bitwise the same as comm=None)."""
    if comm is None:
        return None
    dist = Distributed(comm)
    return None if dist.serial else dist


def global_scale_sigma(X, dist):
    """sqrt(d Var(X) / 2) over every rank's rows X (n_i x d, dense or CSR)."""
    d = X.shape[1]
    if hasattr(X, "toarray"):
        total, squares = float(X.sum()), float(X.multiply(X).sum())
        count, total, squares = dist.sum_to_all([X.shape[0] * d, total, squares])
        mean = total / count
        var = squares / count - mean**2
    else:
        count, total = dist.sum_to_all([X.size, float(np.sum(X, dtype=np.float64))])
        mean = total / count
        centred = float(np.sum((X - mean) ** 2, dtype=np.float64))
        var = dist.sum_to_all([centred])[0] / count
    return float(np.sqrt(max(d * var, 1e-12) / 2.0))


def labels_1d(y):
    """y as a 1-D array of labels (an n x 1 column is flattened)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of class labels, got {y.ndim}-D")
    return y


def global_score(dist, prediction, y, classification):
    """Accuracy or R^2 over every rank's rows.  prediction and y: this rank's rows."""
    y = np.asarray(y)
    if classification:
        correct = np.sum(prediction == y.reshape(prediction.shape))
        correct, count = dist.sum_to_all([correct, prediction.shape[0]])
        return float(correct / count) if count else 0.0
    y = y.astype(np.float64).reshape(prediction.shape)
    y2 = y.reshape(y.shape[0], -1)
    sums = dist.sum_to_all(np.concatenate([[y2.shape[0]], y2.sum(axis=0)]))
    mean = sums[1:] / max(sums[0], 1)
    residual, total = dist.sum_to_all([np.sum((y - prediction) ** 2),
                                          np.sum((y2 - mean) ** 2)])
    return float(1.0 - residual / total) if total > 0 else 0.0


def global_objective(dist, loss, O, Y, alpha, regularizer_value):
    """F(W) = (1/n) sum over every rank's rows of V + alpha r(W)."""
    value, n = dist.sum_to_all([loss.value(O, Y), O.shape[0]])
    return value / n + alpha * regularizer_value


class CollectiveValidation:
    """The engine's validation protocol over rows spread across ranks: `partial(W)` gives
    this rank's partial sums (n_partial floats), the engine adds them to its per-iteration
    Allreduce and `finish` turns the reduced sums into the global score (accuracy or R^2).

    outputs(W, X) -> O (n_i x m) and predict(O) -> predictions come from the estimator.
    """

    def __init__(self, dist, outputs, predict, X, y, classification):
        self.outputs, self.predict, self.X = outputs, predict, X
        self.classification = classification
        self.y = np.asarray(y)
        if classification:
            self.n_partial = 2
        else:
            y2 = self.y.astype(np.float64).reshape(self.y.shape[0], -1)
            sums = dist.sum_to_all(np.concatenate([[y2.shape[0]], y2.sum(axis=0)]))
            mean = sums[1:] / max(sums[0], 1)
            self.total = dist.sum_to_all([np.sum((y2 - mean) ** 2)])[0]
            self.n_partial = 1

    def partial(self, W):
        prediction = self.predict(self.outputs(W, self.X))
        if self.classification:
            return np.array([np.sum(prediction == self.y.reshape(prediction.shape)),
                             prediction.shape[0]], dtype=np.float64)
        y = self.y.astype(np.float64).reshape(prediction.shape)
        return np.array([np.sum((y - prediction) ** 2)])

    def finish(self, sums):
        if self.classification:
            return float(sums[0] / sums[1]) if sums[1] else 0.0
        return float(1.0 - sums[0] / self.total) if self.total > 0 else 0.0
