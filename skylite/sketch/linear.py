"""Linear sketches z(x) = S x for high-dimensional (often sparse) inputs: libSkylark's JLT,
FJLT and CWT.

A random s x d matrix S with E[S^T S] = I keeps inner products in expectation,
E[(S x).(S x')] = x.x', and norms within the Johnson-Lindenstrauss bound: for n points and
s >= C log(n / delta) / eps^2, with probability >= 1 - delta every

    | ||S x||^2 - ||x||^2 | <= eps ||x||^2,     | (S x).(S y) - x.y | <= eps ||x|| ||y||

(the second from the first applied to x / ||x|| +- y / ||y||).  As maps of the linear kernel
k(x, x') = x.x' (`Linear().feature_map(s, method=...)`) they train linear models on s columns
instead of d; as the first stage of a ComposedMap they reduce d before a nonlinear map.

    class        S (block j of s_j rows, scaled by sqrt(s_j / s) like every map)   cost per row
    JLT          i.i.d. N(0, 1) / sqrt(s) entries (dense Gaussian JL)             O(d s) / O(nnz s)
    SRHT         rows of H B / sqrt(s): random signs B, Walsh-Hadamard H, rows     O(s log d)
                 sampled without replacement (subsampled randomized Hadamard)
    CountSketch  one +/-1 per column of S_j at a random row h_j(k) (hash)          O(nnz + s_j) per block

Block j is an independent sketch of its own (parameters from (seed, j) alone), so the blocks
stack to a sketch of s rows.  CountSketch of CSR rows touches only their nonzeros and gives
exactly the CountSketch of the dense rows.
"""
import numpy as np

from ._base import FeatureMap, register
from ._docs import parameters
from ._fastfood import SRHTTransform
from ._projection import Activation, ProjectionTransform, Spectrum
from ._tensorsketch import TensorSketchTransform
from .tensorsketch import check_hash_block_sizes


# the parameters of every linear sketch (docstrings)
_SKETCH_PARAMETERS = (
    ("n_features", "int, default=1024", "s, the sketch dimension (rows of S, columns of Z)."),
    ("n_blocks", "int, default=1",
     "C, the number of column blocks (1 <= C <= s), each an independent sketch."),
    "random_state")


@parameters(*_SKETCH_PARAMETERS)
class LinearSketch(FeatureMap):
    """Base of the linear sketches z(x) = S x (not used directly).

    transform(X) maps n x d (dense or CSR) to n x n_features, dense.  The subclasses `JLT`,
    `SRHT` and `CountSketch` take the same parameters.
    """

    def __init__(self, n_features=1024, n_blocks=1, random_state=0):
        self.n_features = n_features
        self.n_blocks = n_blocks
        self.random_state = random_state


@register
@parameters(*_SKETCH_PARAMETERS)
class JLT(LinearSketch):
    """Dense Gaussian Johnson-Lindenstrauss transform (libSkylark's JLT):

        z(x) = G^T x / sqrt(s),   G: d x s with i.i.d. N(0, 1) entries,

    so ||z(x)||^2 / ||x||^2 ~ chi^2_s / s: E = 1, variance 2 / s, and
    P(| ||z(x)||^2 - ||x||^2 | > eps ||x||^2) <= 2 exp(-s eps^2 / 8) for eps <= 1.
    One GEMM per block (skylite.sketch._projection, linear activation).
    """

    def _make_transform_op(self, d, offsets, seed):
        return ProjectionTransform(d, offsets, seed, Spectrum.GAUSSIAN,
                                   1.0 / np.sqrt(self.n_features),
                                   activation=Activation.LINEAR)


@register
@parameters(*_SKETCH_PARAMETERS)
class SRHT(LinearSketch):
    """Subsampled randomized Hadamard transform (libSkylark's FJLT):

        z(x) = [ (H B_c x)[R_c] ]_c / sqrt(s),

    x zero-padded to d' (the power of two >= d), per chunk c of d' rows: B_c random signs, H
    the d' x d' Walsh-Hadamard matrix, R_c rows sampled without replacement.  E[z.z'] = x.x'.
    O(s log d) per row and O(s) parameters (skylite.sketch._fastfood).
    """

    def _make_transform_op(self, d, offsets, seed):
        return SRHTTransform(d, offsets, seed)


@register
@parameters(*_SKETCH_PARAMETERS)
class CountSketch(LinearSketch):
    """CountSketch (Charikar, Chen & Farach-Colton 2002; Clarkson & Woodruff's sparse
    embedding, libSkylark's CWT):

        z_j(x)_c = sqrt(s_j / s) sum_{k : h_j(k) = c} g_j(k) x_k,

    h_j: [d] -> [s_j] a random hash, g_j: [d] -> {+1, -1} random signs, one pair per block.
    E[z.z'] = x.x' and Var(||z||^2) = (2 / s)(||x||^4 - sum_k x_k^4).  A CSR row costs
    O(nnz) per block (plus zeroing its s_j outputs).  It is skylite's TensorSketch of degree 1
    without the constant coordinate (skylite.sketch._tensorsketch): h_j(k) = element k of stream
    (seed, j, 0) below s_j, g_j(k) from stream (seed, j, 1).
    """

    def _check_params(self):
        self._check_common_params()
        check_hash_block_sizes(self)

    def _make_transform_op(self, d, offsets, seed):
        return TensorSketchTransform(d, offsets, seed, 1, 1.0, 0.0)
