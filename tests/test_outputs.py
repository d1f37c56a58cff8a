"""Model outputs z(X) W by blocks: cached or not, float32 products."""
import numpy as np
import pytest

from skylite._outputs import CachedOutputs, outputs
from skylite.sketch import GaussianRFF


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_outputs_cached_or_chunked_equal_the_explicit_product(dtype):
    rng = np.random.default_rng(0)
    X, W = rng.standard_normal((300, 5)), rng.standard_normal((96, 3))
    fmap = GaussianRFF(96, sigma=2.0, n_blocks=3, random_state=0).fit(X)
    Z = fmap.transform(X.astype(dtype)).astype(np.float64)
    expected = Z @ W
    tol = 1e-12 if dtype == np.float64 else 1e-5
    chunked = outputs(fmap, W, X, dtype=dtype, rows=70)
    cached = CachedOutputs(fmap, X, budget_bytes=10**8, dtype=dtype)
    regenerated = CachedOutputs(fmap, X, budget_bytes=0, dtype=dtype)
    assert cached.cached and cached.nbytes == 300 * 96 * np.dtype(dtype).itemsize
    assert not regenerated.cached and regenerated.nbytes == 0
    for O in (chunked, cached(W), regenerated(W)):
        assert O.dtype == np.float64
        np.testing.assert_allclose(O, expected, atol=tol * np.abs(expected).max())
    np.testing.assert_array_equal(cached(W), cached(W))
