"""Exact kernels with row-blocked Gram matrices, each able to build its own feature map."""
from ._kernels import (ExpSemigroup, Gaussian, Kernel, Laplacian, Linear, Matern,
                       Polynomial)

__all__ = ["Kernel", "Gaussian", "Laplacian", "Matern", "Polynomial", "ExpSemigroup", "Linear"]
