"""Exact kernels with row-blocked Gram matrices, each able to build its own feature map."""
from ._kernels import (KERNEL_PARAMETERS, KERNELS, ExpSemigroup, Gaussian, Kernel, Laplacian,
                       Linear, Matern, Polynomial)

__all__ = ["KERNELS", "KERNEL_PARAMETERS", "Kernel", "Gaussian", "Laplacian", "Matern",
           "Polynomial", "ExpSemigroup", "Linear"]
