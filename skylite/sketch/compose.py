"""A linear sketch followed by a feature map: z(x) = z_2(S x).

For inputs of very many (sparse) columns, a nonlinear map is expensive per column: random
Fourier features cost O(nnz s) per row and keep a d x s_j matrix per block.  A linear sketch
S: R^d -> R^m (CountSketch in O(nnz), or JLT / SRHT; skylite.sketch.linear) first, then the
map z_2: R^m -> R^s on the sketched rows, costs O(nnz + m s) and keeps m x s_j.  Since S keeps
distances within the Johnson-Lindenstrauss bound, ||S x - S x'|| = (1 +- eps) ||x - x'||, a
distance kernel of the sketched rows approximates the kernel of the originals:

    z_2(S x) . z_2(S x')  ~  k(S x, S x')  ~  k(x, x')      (e.g. CountSketch to 1024, then
                                                            Gaussian random Fourier features)
"""
import copy

from ._base import FeatureMap, map_from_spec, register
from ._compose import ComposedTransform
from .linear import LinearSketch

_MASK64 = 2**64 - 1


def second_seed(seed):
    """The seed of a composition's second map, derived from the composition's seed (the
    sketch's) by the splitmix64 finalizer, so the two maps draw unrelated random numbers."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


@register
class ComposedMap(FeatureMap):
    """z(x) = feature_map(sketch(x)): a linear sketch R^d -> R^m, then a map R^m -> R^s.

    Parameters
    ----------
    sketch : LinearSketch
        The first stage (JLT, SRHT or CountSketch) with its sketch dimension m = its
        n_features and its own blocks.  Its random_state is ignored.
    feature_map : FeatureMap
        The second stage, any map of real inputs (not RandomLaplace, which needs x >= 0),
        with its n_features s and n_blocks: they are the composition's.  Its random_state is
        ignored.
    random_state : int, numpy Generator or None, default=0
        The seed of the composition: the sketch uses it, the second map `second_seed(seed)`.

    Attributes
    ----------
    sketch_, feature_map_ : FeatureMap
        The fitted stages.
    n_features_in_ : int
        d, the number of input features.
    seed_ : int
        The seed used.
    transform_op_ : ComposedTransform
        The native block operator.

    Notes
    -----
    transform(X) maps n x d (dense or CSR) to n x s; block(X, j) is the second map's block j
    of the sketched rows.  Example: ``ComposedMap(CountSketch(1024), GaussianRFF(4096,
    sigma=1.0))`` for sparse rows of 10^5 columns.
    """

    def __init__(self, sketch=None, feature_map=None, random_state=0):
        self.sketch = sketch
        self.feature_map = feature_map
        self.random_state = random_state

    def _check_params(self):
        if not isinstance(self.sketch, LinearSketch):
            raise ValueError(f"sketch must be a linear sketch (JLT, SRHT or CountSketch), "
                             f"got {self.sketch!r}")
        if not isinstance(self.feature_map, FeatureMap):
            raise ValueError(f"feature_map must be a skylite feature map, "
                             f"got {self.feature_map!r}")
        if self.feature_map._nonnegative_input:
            raise ValueError(f"{type(self.feature_map).__name__} needs inputs x >= 0; a "
                             f"sketch's output has both signs")
        self.sketch._check_params()

    @property
    def n_features(self):
        """s, the number of output features (the second map's)."""
        stage = getattr(self, "feature_map_", self.feature_map)
        return stage.n_features

    @property
    def n_blocks(self):
        """C, the number of column blocks (the second map's)."""
        return self.feature_map.n_blocks

    @property
    def block_sizes(self):
        """The sizes s_j of the column blocks (the second map's)."""
        self._check_params()
        stage = getattr(self, "feature_map_", self.feature_map)
        return stage.block_sizes

    def _fit_dimension(self, d, seed):
        self._check_params()
        first = _with_seed(self.sketch, seed)._fit_dimension(d, seed)
        then_seed = second_seed(seed)
        then = _with_seed(self.feature_map, then_seed)._fit_dimension(first.n_features,
                                                                      then_seed)
        op = ComposedTransform(first.transform_op_, then.transform_op_)
        op.check_apply()
        self.sketch_, self.feature_map_ = first, then
        self.n_features_in_ = int(d)
        self.seed_ = int(seed)
        self.transform_op_ = op
        return self

    @classmethod
    def _params_from_json(cls, params):
        params = dict(params)
        for name in ("sketch", "feature_map"):
            if isinstance(params.get(name), dict):
                params[name] = map_from_spec(params[name])
        return params

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("sketch_", None)          # rebuilt with the operator
        state.pop("feature_map_", None)
        return state


def _with_seed(fmap, seed):
    """An unfitted copy of fmap whose random_state (if it has one) is seed."""
    fmap = copy.deepcopy(fmap)
    for name in ("sketch_", "feature_map_", "transform_op_", "n_features_in_", "seed_"):
        fmap.__dict__.pop(name, None)
    if "random_state" in fmap._get_param_names():
        fmap.random_state = seed
    return fmap
