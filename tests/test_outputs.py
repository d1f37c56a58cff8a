"""Model outputs z(X) W by blocks: cached or not, float32 products."""
import numpy as np
import pytest

from skylite import _outputs
from skylite._outputs import CachedOutputs, kept_features, outputs
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


@pytest.mark.parametrize("dtype", [None, np.float32])
def test_kept_features_give_the_same_bits_and_transform_once(dtype, monkeypatch):
    """Inside kept_features() the outputs of several W on the same rows and map are bitwise
    those computed without it, from one transform of the rows; other rows, a budget too
    small, or a call after the block transform again."""
    rng = np.random.default_rng(1)
    X, other = rng.standard_normal((250, 6)), rng.standard_normal((40, 6))
    Ws = [rng.standard_normal((64, 2)) for _ in range(3)]
    fmap = GaussianRFF(64, sigma=1.5, n_blocks=4, random_state=0).fit(X)
    expected = [outputs(fmap, W, X, dtype=dtype, rows=100) for W in Ws]
    transforms = []
    make = _outputs._chunk_blocks
    monkeypatch.setattr(_outputs, "_chunk_blocks",
                        lambda *a: transforms.append(1) or make(*a))
    itemsize = 4 if dtype == np.float32 else 8
    with kept_features(250 * 64 * itemsize):
        for W, O in zip(Ws, expected):
            np.testing.assert_array_equal(outputs(fmap, W, X, dtype=dtype, rows=100), O)
        assert len(transforms) == 3                    # 3 chunks of rows, transformed once
        outputs(fmap, Ws[0], other, dtype=dtype, rows=100)
        outputs(fmap, Ws[1], other, dtype=dtype, rows=100)
        assert len(transforms) == 5                    # beyond the budget: not kept
    np.testing.assert_array_equal(outputs(fmap, Ws[2], X, dtype=dtype, rows=100), expected[2])
    assert len(transforms) == 8 and _outputs._kept is None
