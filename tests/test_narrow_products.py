"""The narrow products Z W and Z^T B (skylite/_native/skylite_narrow.c) that BlockADMM's sweeps
use on CPUs with AVX-512: their values against exact products, bfloat16 input against the
float32 input holding the same values (bitwise), and a fit with them against the same fit
with BLAS (sgemm, dgemm)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from skylite.admm import BlockADMM
from skylite.admm import _column_blocks
from skylite.admm._column_blocks import _aligned_empty, bfloat16_round
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite.sketch import GaussianRFF
from skylite._native import _narrow

needs_kernels = pytest.mark.skipif(not _narrow.available(),
                                   reason="the narrow kernels need AVX-512")


def bfloat16_bits(Z):
    """Z rounded to bfloat16: (the float32 values, their uint16 top halves)."""
    rounded = np.array(Z, dtype=np.float32)
    bfloat16_round(rounded)
    return rounded, (rounded.view(np.uint32) >> 16).astype(np.uint16)


def sum_bound(A, B, eps):
    """A bound on the rounding of a product A B with s-term sums in a precision of unit
    roundoff eps: 4 s eps |A| |B| (room for the order of the sums)."""
    s = A.shape[1]
    return 4 * s * eps * (np.abs(A).astype(np.float64) @ np.abs(B)) + 1e-300


def exact(A, B):
    """A B in float64 from float32 operands (exact to float64 rounding)."""
    return A.astype(np.float64) @ B.astype(np.float64)


@needs_kernels
@settings(max_examples=150, deadline=None)
@given(rows=st.integers(1, 70), s=st.integers(1, 70), m=st.integers(1, 30),
       seed=st.integers(0, 2**31 - 1))
def test_products_match_float64_and_bfloat16_matches_float32_bitwise(rows, s, m, seed):
    """Every shape of the drivers' row groups (4), output groups (5, 12) and column chunks
    (16, 32), tails included: the values are float32 products of the same numbers, and a
    bfloat16 Z gives the bits of the float32 Z with its values."""
    rng = np.random.default_rng(seed)
    Z, Z16 = bfloat16_bits(rng.standard_normal((rows, s)))
    W = rng.standard_normal((s, m)).astype(np.float32)
    B = rng.standard_normal((rows, m)).astype(np.float32)

    forward = _narrow.times(Z, W)
    assert forward.shape == (rows, m) and forward.dtype == np.float32
    assert np.all(np.abs(forward - exact(Z, W)) <= sum_bound(Z, W, 2.0**-24))
    np.testing.assert_array_equal(_narrow.times(Z16, W), forward)

    backward = _narrow.t_times(Z, B)
    assert backward.shape == (s, m)
    assert np.all(np.abs(backward - exact(Z.T, B)) <= sum_bound(Z.T, B, 2.0**-24))
    np.testing.assert_array_equal(_narrow.t_times(Z16, B), backward)


@needs_kernels
@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 40), s=st.integers(1, 40), m=st.integers(1, 30),
       seed=st.integers(0, 2**31 - 1))
def test_float64_products_match_exact_products(rows, s, m, seed):
    """The float64 kernels (8 lanes: row groups of 4, output groups of 5 and 12, column
    chunks of 8 and 16) on float32 numbers, whose float64 products are exact up to the sums'
    rounding."""
    rng = np.random.default_rng(seed)
    Z, W, B = (rng.standard_normal(shape).astype(np.float32)
               for shape in ((rows, s), (s, m), (rows, m)))
    forward = _narrow.times(Z.astype(np.float64), W)
    assert forward.dtype == np.float64
    assert np.all(np.abs(forward - exact(Z, W)) <= sum_bound(Z, W, 2.0**-53))
    backward = _narrow.t_times(Z.astype(np.float64), B)
    assert np.all(np.abs(backward - exact(Z.T, B)) <= sum_bound(Z.T, B, 2.0**-53))


@needs_kernels
def test_bad_operands_are_named():
    Z = np.ones((4, 3), np.float32)
    with pytest.raises(ValueError, match="Z must be a 2-d float32 or float64"):
        _narrow.times(np.ones((4, 3), np.int64), np.ones((3, 2)))
    with pytest.raises(ValueError, match="W must be a 2-d array with 3 rows"):
        _narrow.times(Z, np.ones((4, 2)))
    with pytest.raises(ValueError, match="B must be a 2-d array with 4 rows"):
        _narrow.t_times(Z, np.ones((3, 2)))
    # the benchmarks' unchecked-copy entry points still check shapes and dtypes
    with pytest.raises(ValueError, match=r"wt \(m x s\)"):
        _narrow.times_into(Z, np.ones((2, 4), np.float32), np.empty((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"pt \(k x s\)"):
        _narrow.t_times_into(Z, np.ones((4, 2), np.float32), np.empty((3, 2), np.float32))
    with pytest.raises(ValueError):
        _narrow.times_into(Z, np.ones((2, 3)), np.empty((4, 2)))       # float64 W for float32 Z
    out = np.empty((4, 2), np.float32)
    _narrow.times_into(Z, np.ones((2, 3), np.float32), out)
    np.testing.assert_array_equal(out, 3.0)


def test_feature_caches_start_on_cache_lines():
    for shape, dtype in (((7, 5), np.float32), ((3, 33), np.uint16), ((1000, 17), np.float64)):
        a = _aligned_empty(shape, dtype)
        assert a.shape == shape and a.dtype == dtype and a.ctypes.data % 64 == 0


@needs_kernels
@pytest.mark.parametrize("precision, tolerance", [("float32", 1e-4), ("float64", 1e-10)])
@pytest.mark.parametrize("sweep", ["rows", "columns"])
@pytest.mark.parametrize("features, blocks, budget", [(320, 5, 10**9), (1024, 2, 0)])
def test_a_fit_with_the_kernels_is_the_fit_with_blas(pendigits, sweep, precision, tolerance,
                                                     features, blocks, budget):
    """The same hinge-loss problem (ten classes of 1,000 pendigits rows; 5 cached blocks of
    64 features, or 2 regenerated blocks of 512, wider than a tile has rows; relaxation on,
    so that the column sweep's Z^T B has 2m columns) solved with the kernels (the products,
    and the blocked solves with the factors: 512 features are four blocks of 128) and with
    BLAS: the same iterations, coefficients equal up to rounding."""
    X = pendigits[0][:1000].astype(np.float64) / 100.0
    Y, _ = code_labels(pendigits[1][:1000], "hinge")
    fmap = GaussianRFF(features, sigma=0.6, n_blocks=blocks, random_state=0).fit(X)
    fits = []
    try:
        for use in (True, False):
            assert _column_blocks.use_narrow_kernels(use) == use
            fits.append(BlockADMM(fmap, get_loss("hinge"), get_regularizer("l2"), 1e-3,
                                  precision=precision, sweep=sweep, tol=1e-4, max_iter=3000,
                                  memory_budget=budget).fit(X, Y))
    finally:
        _column_blocks.use_narrow_kernels(True)
    kernels, blas = fits
    assert kernels.row_sweep_ == blas.row_sweep_ == (sweep == "rows")
    assert kernels.cache_plan.n_z_cached == (blocks if budget else 0)
    assert kernels.n_iter_ == blas.n_iter_
    difference = np.linalg.norm(kernels.coef_ - blas.coef_) / np.linalg.norm(blas.coef_)
    assert 0 < difference < tolerance
