"""Feature maps (sketches) z(x) whose inner products approximate kernels.

Every map is a scikit-learn style transformer split into column blocks, and exposes the
native block operator T[X_i, j] -> Z_ij (`transform_op_`) that the ADMM engine drives
without the GIL.  See docs/feature_maps.md.
"""
from ._base import (DEFAULT_BLOCKS_RULE, MAX_BLOCK, NYSTROEM_MAX_BLOCK, FeatureMap,
                    default_layout_blocks, default_n_blocks, map_from_dict, map_from_spec,
                    map_spec)
from .compose import ComposedMap
from .fastfood import Fastfood, MaternFastfood
from .identity import Identity
from .linear import JLT, SRHT, CountSketch, LinearSketch
from .nystroem import Nystroem
from .random_laplace import RandomLaplace
from .rff import GaussianRFF, LaplacianRFF, MaternRFF
from .tensorsketch import TensorSketch

__all__ = ["FeatureMap", "GaussianRFF", "LaplacianRFF", "MaternRFF", "Fastfood",
           "MaternFastfood", "Nystroem", "RandomLaplace", "TensorSketch", "Identity", "LinearSketch", "JLT",
           "SRHT", "CountSketch", "ComposedMap", "map_from_dict", "map_spec", "map_from_spec",
           "default_n_blocks", "default_layout_blocks", "DEFAULT_BLOCKS_RULE", "MAX_BLOCK",
           "NYSTROEM_MAX_BLOCK"]
