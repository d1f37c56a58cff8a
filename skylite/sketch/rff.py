"""Random Fourier features (Rahimi & Recht, 2007) for shift-invariant kernels.

For a kernel k(x, x') = k(x - x') with spectral density p(w) (Bochner's theorem),

    z_j(x) = sqrt(2 / s_j) cos(W_j^T x + b_j),   W_j: d x s_j with columns w ~ p,  b ~ U[0, 2 pi)

satisfies E[z_j(x) . z_j(x')] = k(x, x').  Block j's W_j and b_j come from (seed, j).
Cost: one GEMM, n x d times d x s_j, per block (O(nnz s_j) for CSR rows), plus a
vectorized cosine.

Quasi-Monte-Carlo features (`sequence="sobol"` or `"halton"`; Yang, Sindhwani, Avron &
Mahoney, ICML 2014) take the frequencies from a low-discrepancy sequence instead, mapped
through the inverse CDF of the spectral measure, in cos / sin pairs sharing one frequency:

    z(x) = sqrt(2 / s) [cos(w_0.x), sin(w_0.x), cos(w_1.x), sin(w_1.x), ...],
    z(x).z(x') = (2 / s) sum_f cos(w_f.(x - x'))  ~  E_w cos(w.(x - x')) = k(x, x'),

w_f the f-th point of the sequence (skylite.sketch.qmc, skylite.sketch._projection).  Block j
is its own slice of the sequence (its global columns), so blocks are independent of the order
they are made in, and Z does not depend on n_blocks at all.
"""
from ._base import BandwidthFeatureMap, MaternFeatureMap, register
from ._docs import parameters
from ._projection import SEQUENCE_CODES, ProjectionTransform, Spectrum
from .qmc import check_sequence


class _SequenceMixin:
    """The `sequence` parameter of the random Fourier feature maps."""

    def _check_sequence(self):
        check_sequence(self.sequence)

    def _sequence_code(self):
        return SEQUENCE_CODES[self.sequence]


class _BandwidthRFF(_SequenceMixin, BandwidthFeatureMap):
    """Base of the random Fourier features of a kernel with one bandwidth sigma, with the
    `sequence` parameter (`parameters` below)."""

    def __init__(self, n_features=1024, sigma=1.0, n_blocks=1, random_state=0,
                 sequence="monte_carlo"):
        super().__init__(n_features, sigma, n_blocks, random_state)
        self.sequence = sequence

    def _check_params(self):
        super()._check_params()
        self._check_sequence()


@register
@parameters("n_features", "sigma", "n_blocks", "random_state", "sequence")
class GaussianRFF(_BandwidthRFF):
    """Random Fourier features of the Gaussian kernel exp(-||x - x'||^2 / (2 sigma^2)).

    w ~ N(0, I / sigma^2): w_r = Phi^{-1}(u_r) / sigma for uniforms u (i.i.d., or a point of
    the QMC sequence).  (scikit-learn's RBFSampler(gamma) is sigma = 1 / sqrt(2 gamma).)
    transform(X) maps n x d to n x n_features.
    """

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.GAUSSIAN, 1.0 / self.sigma,
                                   sequence=self._sequence_code())


@register
@parameters("n_features", "sigma", "n_blocks", "random_state", "sequence")
class LaplacianRFF(_BandwidthRFF):
    """Random Fourier features of the Laplacian kernel exp(-||x - x'||_1 / sigma).

    The kernel is a product over coordinates of exp(-abs(t) / sigma), whose spectral density
    is Cauchy: w_k ~ Cauchy(0, 1 / sigma) independently, w_k = tan(pi (u_k - 1/2)) / sigma
    (the inverse Cauchy CDF, for QMC too).
    """

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.CAUCHY, 1.0 / self.sigma,
                                   sequence=self._sequence_code())


@register
@parameters("n_features", "nu", "length_scale", "n_blocks", "random_state", "sequence")
class MaternRFF(_SequenceMixin, MaternFeatureMap):
    """Random Fourier features of the Matern kernel

        k(r) = 2^(1 - nu) / Gamma(nu) * (sqrt(2 nu) r / l)^nu * K_nu(sqrt(2 nu) r / l),

    r = ||x - x'||_2, l = length_scale (scikit-learn's Matern).  Its spectral density is a
    multivariate Student t with 2 nu degrees of freedom: w = g / l * sqrt(nu / G) with
    g ~ N(0, I_d) and G ~ Gamma(nu, 1) (one G per feature).  nu = 0.5 is exp(-r / l);
    nu -> infinity tends to the Gaussian kernel with sigma = l.

    With a QMC `sequence`, point f gives G = P^{-1}(nu, u_0) (the Gamma quantile, from the
    sequence's first coordinate) and g_r = Phi^{-1}(u_{r+1}).
    """

    def __init__(self, n_features=1024, nu=1.5, length_scale=1.0, n_blocks=1, random_state=0,
                 sequence="monte_carlo"):
        super().__init__(n_features, nu, length_scale, n_blocks, random_state)
        self.sequence = sequence

    def _check_params(self):
        super()._check_params()
        self._check_sequence()

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.STUDENT_T, 1.0 / self.length_scale,
                                   float(self.nu), sequence=self._sequence_code())
