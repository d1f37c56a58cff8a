"""Random Laplace features (Yang, Sindhwani, Fan, Avron & Mahoney, 2014).

The exponential-semigroup kernel on nonnegative data,

    k(x, x') = exp(-beta * sum_k sqrt(x_k + x'_k)),

is the Laplace transform of a product of Levy distributions: for L ~ Levy(0, beta^2 / 2),
E[exp(-L t)] = exp(-beta sqrt(t)).  Hence with W_j: d x s_j of i.i.d. such L,

    z_j(x) = sqrt(1 / s_j) exp(-W_j^T x),    E[z_j(x) . z_j(x')] = k(x, x').

The features are positive and bounded by sqrt(1 / s_j); input must satisfy x >= 0.
"""
from .._validation import check_positive
from ._base import FeatureMap, register
from ._docs import parameters
from ._projection import ProjectionTransform, Spectrum


@register
@parameters("n_features", ("beta", "float > 0, default=1.0", "The kernel's scale."), "n_blocks",
            "random_state")
class RandomLaplace(FeatureMap):
    """Random Laplace features of the exp-semigroup kernel exp(-beta sum_k sqrt(x_k + x'_k)).

    Input rows must be nonnegative (histograms, counts, pixel intensities).
    """

    _nonnegative_input = True

    def __init__(self, n_features=1024, beta=1.0, n_blocks=1, random_state=0):
        self.n_features = n_features
        self.beta = beta
        self.n_blocks = n_blocks
        self.random_state = random_state

    def _check_params(self):
        self._check_common_params()
        check_positive(self.beta, "beta")

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.LEVY, self.beta**2 / 2.0)
