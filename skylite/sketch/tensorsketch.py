"""TensorSketch (Pham & Pagh, 2013): random features of the polynomial kernel

    k(x, x') = (gamma x . x' + coef0)^q.

With the augmented vector x~ = [sqrt(gamma) x, sqrt(coef0)] (d + 1 entries),
k(x, x') = (x~ . x~')^q = <x~^{(x) q}, x'~^{(x) q}>.  A CountSketch of size s of the tensor
power x~^{(x) q}, with the hash H(i_1..i_q) = sum_p h_p(i_p) mod s and the sign
S(i_1..i_q) = prod_p sigma_p(i_p), is the circular convolution of q CountSketches of x~:

    z_j(x) = IFFT( prod_{p=1..q} FFT(C_p x~) ),   (C_p x~)_c = sum_{k: h_p(k) = c} sigma_p(k) x~_k,

computed in O(q (nnz(x) + s log s)) without forming the d^q-dimensional tensor.  With random
hashes h_p: [d + 1] -> [s] and signs sigma_p: [d + 1] -> {+1, -1}, E[z_j(x) . z_j(x')] =
(x~ . x~')^q exactly (unbiased), and the variance falls like 1/s.  q = 1 is a plain
CountSketch of x~ (no FFT), unbiased for gamma x . x' + coef0.

Block j of size s_j is an independent TensorSketch whose hashes and signs come from
(seed, j) alone; block values are scaled by sqrt(s_j / s) (docs/feature_maps.md).  The FFT is
skylite's own (radix-2 for power-of-two s_j, Bluestein's chirp-z for any other s_j), run
without the GIL in the driver's threads.  See `_tensorsketch.pyx` for the parameter layout.
"""
from .._validation import check_positive
from ._base import FeatureMap, register
from ._tensorsketch import TensorSketchTransform

# block sizes must be exact integers in a float32 parameter array
_MAX_BLOCK_SIZE = 2**24


def check_hash_block_sizes(fmap):
    """Raise ValueError if a block of a hashing map (TensorSketch, CountSketch) is larger
    than _MAX_BLOCK_SIZE: its hash values are stored in the float32 parameter array."""
    if -(-fmap.n_features // fmap.n_blocks) > _MAX_BLOCK_SIZE:
        raise ValueError(f"{type(fmap).__name__} blocks hold at most {_MAX_BLOCK_SIZE} "
                         f"features; use more blocks (n_features={fmap.n_features}, "
                         f"n_blocks={fmap.n_blocks})")


@register
class TensorSketch(FeatureMap):
    """TensorSketch features of the polynomial kernel (gamma x . x' + coef0)^degree.

    Matches scikit-learn's PolynomialCountSketch(gamma, degree, coef0, n_components) and
    the kernel `skylite.kernels.Polynomial(degree, gamma, coef0)` (not the same random
    features as scikit-learn's: the hashing differs).

    Parameters
    ----------
    n_features : int, default=1024
        s, the number of features (columns of Z).  Any size works; power-of-two block
        sizes s_j = n_features / n_blocks are the fastest (other sizes use Bluestein's FFT).
    degree : int >= 1, default=2
        q, the degree of the polynomial.
    gamma : float > 0, default=1.0
        Scale of the inner product.
    coef0 : float >= 0, default=1.0
        The constant term (0 gives the homogeneous kernel (gamma x . x')^q).
    n_blocks : int, default=1
        C, the number of column blocks (1 <= C <= s).
    random_state : int, numpy Generator or None, default=0
        The seed; block j's hashes and signs depend on (seed, j) only.

    Attributes
    ----------
    n_features_in_ : int
        d, the number of input features (after fit).
    seed_ : int
        The seed used.
    transform_op_ : BlockTransform
        The native block operator.
    """

    def __init__(self, n_features=1024, degree=2, gamma=1.0, coef0=1.0, n_blocks=1,
                 random_state=0):
        self.n_features = n_features
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.n_blocks = n_blocks
        self.random_state = random_state

    def _check_params(self):
        self._check_common_params()
        check_positive(self.degree, "degree", integer=True)
        check_positive(self.gamma, "gamma")
        check_positive(self.coef0, "coef0", allow_zero=True)
        check_hash_block_sizes(self)

    def _make_transform_op(self, d, offsets, seed):
        return TensorSketchTransform(d, offsets, seed, int(self.degree), float(self.gamma),
                                     float(self.coef0))
