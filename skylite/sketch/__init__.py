"""Feature maps (sketches) z(x) whose inner products approximate kernels.

Every map is a scikit-learn style transformer split into column blocks, and exposes the
native block operator T[X_i, j] -> Z_ij (`transform_op_`) that the ADMM engine drives
without the GIL.  See docs/feature_maps.md.
"""
from ._base import (MAX_BLOCK, FeatureMap, default_n_blocks, map_from_dict, map_from_spec,
                    map_spec)
from .compose import ComposedMap
from .fastfood import Fastfood, MaternFastfood
from .identity import Identity
from .linear import JLT, SRHT, CountSketch, LinearSketch
from .nystroem import NYSTROEM_MAX_BLOCK, Nystroem
from .random_laplace import RandomLaplace
from .rff import GaussianRFF, LaplacianRFF, MaternRFF
from .tensorsketch import TensorSketch

__all__ = ["FeatureMap", "GaussianRFF", "LaplacianRFF", "MaternRFF", "Fastfood",
           "MaternFastfood", "Nystroem", "RandomLaplace", "TensorSketch", "Identity", "LinearSketch", "JLT",
           "SRHT", "CountSketch", "ComposedMap", "map_from_dict", "map_spec", "map_from_spec",
           "default_n_blocks", "MAX_BLOCK", "NYSTROEM_MAX_BLOCK"]
