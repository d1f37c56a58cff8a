"""Statistics over the rows an estimator was given, one implementation for one process and
for MPI ranks.

The estimators compute every statistic through a `Distributed` (skylite._distributed): with
comm=None it wraps the serial null communicator, whose collectives are copies, so the serial
result is the MPI formula with one rank.  Under `comm=` every rank holds its own rows and
the result is global, i.e. the same as if one process held the union of the ranks' rows,
and identical on every rank:

- the default Gaussian / Laplacian bandwidth sigma = sqrt(d Var(X) / 2) (mean and variance
  over all n x d entries; two reductions: the mean, then the centred sum of squares, the
  same two-pass formula as numpy for dense rows);
- class labels (`Distributed.label_union`: every rank's unique labels, allgathered);
- `score` (accuracy: correct and total counts; R^2: the residual and the total sum of
  squares about the *global* column means), through `Scorer`;
- `objective` (the loss summed over every rank's rows over the global n);
- the per-iteration validation score and loss (`CollectiveValidation`: a `Scorer`'s
  partial sums and the loss summed over the rows, which travel in the engine's one
  Allreduce per iteration).

Sums go through `Distributed.sum_to_all` (Reduce to the root, then Bcast), so every rank
gets bitwise the same numbers whatever the MPI library's reduction order (they feed the
model: sigma; and the returned scores).
Local work that may fail on one rank (input checks, predictions) runs under
`Distributed.agree`, so every rank raises instead of waiting for a failed one.
"""
import numpy as np


def scale_sigma(X, dist):
    """scikit-learn's gamma="scale" as a bandwidth, sqrt(d Var(X) / 2), over every rank's
    rows X (n_i x d, dense or CSR); relative to the data at any scale, and sqrt(1/2)
    (gamma = 1, as scikit-learn) for constant rows."""
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
    if not np.isfinite(var):
        raise ValueError("the variance of X overflows float64 (an entry of magnitude "
                         "~1e150 or more): the default sigma cannot be computed; rescale "
                         "the features (e.g. StandardScaler)")
    if not d * var > 0:               # constant rows: scikit-learn takes gamma = 1
        return float(np.sqrt(0.5))
    return float(np.sqrt(d * var / 2.0))


def labels_1d(y):
    """y as a 1-D array of labels (an n x 1 column is flattened)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of class labels, got {y.ndim}-D")
    return y


class Scorer:
    """Accuracy (classification) or R^2 of predictions of this rank's targets y, as partial
    sums: `partial(prediction)` gives this rank's `n_partial` float64 sums, and
    `finish(sums)` the score from their sum over the ranks.

    R^2 = 1 - sum (y - prediction)^2 / sum (y - mean(y))^2 needs the global column means of
    y: the constructor computes the total sum of squares collectively (0 total: score 0).
    """

    def __init__(self, dist, y, classification):
        self.y = np.asarray(y)
        self.classification = classification
        if classification:
            self.n_partial = 2
            return
        y2 = self.y.astype(np.float64).reshape(self.y.shape[0], -1)
        sums = dist.sum_to_all(np.concatenate([[y2.shape[0]], y2.sum(axis=0)]))
        mean = sums[1:] / max(sums[0], 1)
        self.total = dist.sum_to_all([np.sum((y2 - mean) ** 2)])[0]
        self.n_partial = 1

    def partial(self, prediction):
        """This rank's sums: [correct, count] (classification) or [residual sum of
        squares]."""
        if self.classification:
            return np.array([np.sum(prediction == self.y.reshape(prediction.shape)),
                             prediction.shape[0]], dtype=np.float64)
        y = self.y.astype(np.float64).reshape(prediction.shape)
        return np.array([np.sum((y - prediction) ** 2)])

    def finish(self, sums):
        """The score from the partial sums added over the ranks."""
        if self.classification:
            return float(sums[0] / sums[1]) if sums[1] else 0.0
        return float(1.0 - sums[0] / self.total) if self.total > 0 else 0.0


def score(dist, prediction, y, classification):
    """Accuracy or R^2 over every rank's rows.  prediction and y: this rank's rows."""
    scorer = Scorer(dist, y, classification)
    return scorer.finish(dist.sum_to_all(scorer.partial(prediction)))


def objective(dist, loss, O, Y, alpha, regularizer_value):
    """F(W) = (1/n) sum over every rank's rows of V(y_i, o_i) + alpha r(W).  O, Y: this
    rank's outputs and coded targets (n_i x m); regularizer_value: r(W)."""
    value, n = dist.sum_to_all([loss.value(O, Y), O.shape[0]])
    return value / n + alpha * regularizer_value


class CollectiveValidation:
    """The engine's validation protocol (skylite.admm.BlockADMM `validation=`): the score
    and the loss of W on this rank's validation rows X, y as `partial(W)` -> float64 vector
    of `n_partial` partial sums, which the engine adds to its per-iteration Allreduce, and
    `finish(summed vector)` -> {"validation": the global score (accuracy or R^2),
    "validation_loss": (1/n_val) sum over every rank's rows of V(y_i, o_i)}.

    outputs(W, X) -> O (n_i x m) and predict(O) -> predictions come from the estimator;
    loss (a skylite.prox Loss) and Y (the coded targets of y, n_i x m) give the loss.
    """

    def __init__(self, dist, outputs, predict, X, y, classification, loss, Y):
        self.outputs, self.predict, self.X = outputs, predict, X
        self.loss, self.Y = loss, Y
        self.scorer = Scorer(dist, y, classification)
        self.n_partial = self.scorer.n_partial + 2

    def partial(self, W):
        """This rank's partial sums of the score of W, then [sum of V, rows]."""
        O = self.outputs(W, self.X)
        return np.concatenate([self.scorer.partial(self.predict(O)),
                               [self.loss.value(O, self.Y), O.shape[0]]])

    def finish(self, sums):
        """The global score and loss from the summed partial sums."""
        k = self.scorer.n_partial
        return {"validation": self.scorer.finish(sums[:k]),
                "validation_loss": float(sums[k] / sums[k + 1]) if sums[k + 1] else 0.0}
