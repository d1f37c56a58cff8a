"""The identity feature map of the linear kernel: blocks are column slices of X."""
from .._validation import check_positive
from ._base import FeatureMap, even_block_sizes, register
from ._identity import IdentityTransform


@register
class Identity(FeatureMap):
    """z(x) = x, split into n_blocks column slices, so the same engine trains linear models.

    s = d is fixed by the data at fit time; `block_sizes` is known after fit.
    Block j is X[:, offsets[j]:offsets[j + 1]], exact and unscaled.

    Parameters
    ----------
    n_blocks : int, default=1
        C, the number of column slices (1 <= C <= d).
    """

    def __init__(self, n_blocks=1):
        self.n_blocks = n_blocks

    def _check_params(self):
        check_positive(self.n_blocks, "n_blocks", integer=True)

    @property
    def block_sizes(self):
        """The widths of the column slices (they sum to d; known after fit)."""
        self._check_fitted()
        return even_block_sizes(self.n_features_in_, self.n_blocks)

    @property
    def n_features(self):
        """s = d, the number of input features (known after fit)."""
        self._check_fitted()
        return self.n_features_in_

    def _fit_dimension(self, d, seed):
        self._check_params()
        if self.n_blocks > d:
            raise ValueError(f"n_blocks ({self.n_blocks}) cannot exceed the number of input "
                             f"features ({d}) for the identity map")
        return self._set_transform_op(d, 0, even_block_sizes(d, self.n_blocks))

    def _make_transform_op(self, d, offsets, seed):
        return IdentityTransform(d, offsets)
