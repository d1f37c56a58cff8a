"""skylite: kernel machines at scale with random feature maps and block-splitting ADMM."""
from . import kernels, sketch

__version__ = "0.1.0"
__all__ = ["kernels", "sketch", "__version__"]
