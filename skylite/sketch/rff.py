"""Random Fourier features (Rahimi & Recht, 2007) for shift-invariant kernels.

For a kernel k(x, x') = k(x - x') with spectral density p(w) (Bochner's theorem),

    z_j(x) = sqrt(2 / s_j) cos(W_j^T x + b_j),   W_j: d x s_j with columns w ~ p,  b ~ U[0, 2 pi)

satisfies E[z_j(x) . z_j(x')] = k(x, x').  Block j's W_j and b_j come from (seed, j).
Cost: one GEMM, n x d times d x s_j, per block (O(nnz s_j) for CSR rows), plus a
vectorized cosine.
"""
from .._validation import check_positive
from ._base import BandwidthFeatureMap, FeatureMap, register
from ._projection import ProjectionTransform, Spectrum


@register
class GaussianRFF(BandwidthFeatureMap):
    """Random Fourier features of the Gaussian kernel exp(-||x - x'||^2 / (2 sigma^2)).

    w ~ N(0, I / sigma^2).  (scikit-learn's RBFSampler(gamma) is sigma = 1 / sqrt(2 gamma).)
    Parameters n_features, sigma, n_blocks, random_state: see BandwidthFeatureMap.
    """

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.GAUSSIAN, 1.0 / self.sigma)


@register
class LaplacianRFF(BandwidthFeatureMap):
    """Random Fourier features of the Laplacian kernel exp(-||x - x'||_1 / sigma).

    The kernel is a product over coordinates of exp(-|t| / sigma), whose spectral density
    is Cauchy: w_k ~ Cauchy(0, 1 / sigma) independently.  Parameters as GaussianRFF.
    """

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.CAUCHY, 1.0 / self.sigma)


@register
class MaternRFF(FeatureMap):
    """Random Fourier features of the Matern kernel

        k(r) = 2^(1 - nu) / Gamma(nu) * (sqrt(2 nu) r / l)^nu * K_nu(sqrt(2 nu) r / l),

    r = ||x - x'||_2, l = length_scale (scikit-learn's Matern).  Its spectral density is a
    multivariate Student t with 2 nu degrees of freedom: w = g / l * sqrt(nu / G) with
    g ~ N(0, I_d) and G ~ Gamma(nu, 1) (one G per feature).  nu = 0.5 is exp(-r / l);
    nu -> infinity tends to the Gaussian kernel with sigma = l.
    """

    def __init__(self, n_features=1024, nu=1.5, length_scale=1.0, n_blocks=1, random_state=0):
        self.n_features = n_features
        self.nu = nu
        self.length_scale = length_scale
        self.n_blocks = n_blocks
        self.random_state = random_state

    def _check_params(self):
        self._check_common_params()
        check_positive(self.nu, "nu")
        check_positive(self.length_scale, "length_scale")

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.STUDENT_T, 1.0 / self.length_scale,
                                   float(self.nu))
