"""Fastfood (Le, Sarlos & Smola, 2013): random Fourier features of the Gaussian kernel in
O(s log d) time and O(s) memory per block instead of O(s d).

Random Fourier features of k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)) need a d x s matrix
W of N(0, 1 / sigma^2) entries.  Fastfood replaces each d' x d' piece of W^T
(d' = the next power of two >= d, x zero-padded to d') by the structured matrix

    V = 1 / (sigma sqrt(d')) * S H G Pi H B,

    B   diagonal, random signs +/-1
    H   the unnormalized d' x d' Walsh-Hadamard matrix (entries +/-1), applied in
        O(d' log d') by the fast Walsh-Hadamard transform
    Pi  a random permutation
    G   diagonal, N(0, 1) entries
    S   diagonal, S_kk = c_k / ||G||_F with c_k ~ chi(d')

H G Pi H B has rows of norm sqrt(d') ||G||_F, so row k of V has norm c_k / sigma: the norm of
a d'-dimensional N(0, I / sigma^2) vector, while the Hadamard-Gaussian mixing makes its
direction nearly uniform.  Block j of s_j features stacks ceil(s_j / d') independent
chunks V (the last truncated) into V_j and, as for GaussianRFF,

    z_j(x) = sqrt(2 / s_j) cos(V_j x + b_j),   b_j ~ U[0, 2 pi),

so E[z_j(x) . z_j(x')] ~= k(x, x').  All random parameters of block j (B, Pi, G, S, b: about
4 s_j + 4 d' numbers, see skylite.sketch._fastfood) come from (seed, j) alone.
"""
from ._base import BandwidthFeatureMap, MaternFeatureMap, register
from ._docs import parameters
from ._fastfood import FastfoodTransform


@register
@parameters("n_features", "sigma", "n_blocks", "random_state")
class Fastfood(BandwidthFeatureMap):
    """Fastfood random features of the Gaussian kernel exp(-||x - x'||^2 / (2 sigma^2)).

    Same kernel and same distribution of feature norms as GaussianRFF, computed with fast
    Walsh-Hadamard transforms: O(s log d) per row instead of O(s d).
    """

    def _make_transform_op(self, d, offsets, seed):
        return FastfoodTransform(d, offsets, seed, float(self.sigma))


@register
@parameters("n_features", "nu", "length_scale", "n_blocks", "random_state")
class MaternFastfood(MaternFeatureMap):
    """Fastfood random features of the Matern kernel (libSkylark's FastMaternRFT)

        k(r) = 2^(1 - nu) / Gamma(nu) * (sqrt(2 nu) r / l)^nu * K_nu(sqrt(2 nu) r / l),

    r = ||x - x'||_2 (scikit-learn's Matern, as MaternRFF).  Its spectral measure is rotation
    invariant: w = g sqrt(nu / G) / l, g ~ N(0, I), G ~ Gamma(nu, 1), a uniform direction times
    the radius ||w|| = chi(d') sqrt(nu / G) / l.  Fastfood's rows S H G Pi H B have nearly
    uniform directions, so the Matern map is Gaussian Fastfood with sigma = l and that radial
    distribution on S: S_kk = chi_k(d') sqrt(nu / G_k) / ||G||_F, one G_k ~ Gamma(nu, 1) per
    row (skylite.sketch._fastfood).  O(s log d) per row; transform(X) maps n x d to
    n x n_features.
    """

    def _make_transform_op(self, d, offsets, seed):
        return FastfoodTransform(d, offsets, seed, float(self.length_scale), float(self.nu))
