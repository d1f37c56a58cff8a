"""Exact kernels: agreement with scikit-learn, sparse input, blocking, bad parameters."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.gaussian_process.kernels import Matern as SkMatern
from sklearn.metrics.pairwise import (laplacian_kernel, linear_kernel, polynomial_kernel,
                                      rbf_kernel)

import skylite.kernels._kernels as kernels_module
from skylite.kernels import ExpSemigroup, Gaussian, Laplacian, Linear, Matern, Polynomial
from skylite.sketch import (GaussianRFF, Identity, LaplacianRFF, MaternRFF, RandomLaplace)


@pytest.fixture
def XY(digits_small):
    return digits_small[:120], digits_small[120:200]


def exp_semigroup_reference(X, Y, beta):
    return np.exp(-beta * np.sqrt(X[:, None, :] + Y[None, :, :]).sum(axis=2))


@pytest.mark.parametrize("kernel, reference", [
    (Gaussian(0.7), lambda X, Y: rbf_kernel(X, Y, gamma=1 / (2 * 0.7**2))),
    (Laplacian(3.0), lambda X, Y: laplacian_kernel(X, Y, gamma=1 / 3.0)),
    (Polynomial(3, 0.5, 1.0), lambda X, Y: polynomial_kernel(X, Y, 3, 0.5, 1.0)),
    (Linear(), linear_kernel),
    (Matern(0.5, 1.3), lambda X, Y: SkMatern(1.3, nu=0.5)(X, Y)),
    (Matern(1.5, 1.3), lambda X, Y: SkMatern(1.3, nu=1.5)(X, Y)),
    (Matern(2.5, 1.3), lambda X, Y: SkMatern(1.3, nu=2.5)(X, Y)),
    (Matern(0.8, 1.3), lambda X, Y: SkMatern(1.3, nu=0.8)(X, Y)),
    (ExpSemigroup(0.4), lambda X, Y: exp_semigroup_reference(X, Y, 0.4)),
])
def test_gram_matches_reference(kernel, reference, XY):
    X, Y = XY
    np.testing.assert_allclose(kernel.gram(X, Y), reference(X, Y), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kernel.gram(X), reference(X, X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kernel.gram(sp.csr_matrix(X), sp.csr_matrix(Y)),
                               reference(X, Y), rtol=1e-9, atol=1e-12)


def test_gram_is_computed_in_blocks(XY, monkeypatch):
    X, Y = XY
    full = Gaussian(1.0).gram(X, Y)
    # a tiny workspace forces many row blocks of X and Y; the result must not change
    monkeypatch.setattr(kernels_module, "_WORKSPACE", 64)
    np.testing.assert_allclose(Gaussian(1.0).gram(X, Y), full, rtol=1e-12)
    np.testing.assert_allclose(ExpSemigroup(0.3).gram(X, Y),
                               exp_semigroup_reference(X, Y, 0.3), rtol=1e-12)


ALL_KERNELS = [Gaussian(1.0), Laplacian(2.0), Matern(0.5), Matern(1.5), Matern(2.5),
               Matern(0.7, 2.0), Polynomial(3, 0.5, 1.0), ExpSemigroup(0.3), Linear()]


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
@pytest.mark.parametrize("d", [1, 2, 8, 64, 784, 10**5, 3 * 10**6])
def test_gram_blocks_respect_the_workspace(kernel, d):
    """Row blocks for large n keep the pair's workspace within _WORKSPACE (only rows longer
    than half of it cannot: one row each), and stay large enough to be efficient."""
    W = kernels_module._WORKSPACE
    for n_x, n_y in [(10**8, 10**8), (3, 10**8), (10**8, 3)]:
        rows_x, rows_y = kernel._block_rows(d, n_x, n_y)
        assert 1 <= rows_x <= n_x and 1 <= rows_y <= n_y
        if 2 * d + kernel._pair_elements(d) <= W:
            assert kernel._workspace(d, rows_x, rows_y) <= W
            # at least a quarter of what the workspace could hold per row of X
            assert kernel._workspace(d, rows_x, rows_y) >= W / 4 or min(rows_x, rows_y) < 8
        else:
            assert (rows_x, rows_y) == (1, 1)
    # few rows of X: the Y block gets the rest of the workspace
    assert kernel._block_rows(d, 3, 10**8)[1] >= kernel._block_rows(d, 10**8, 10**8)[1]


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
@pytest.mark.parametrize("d", [1, 40])
def test_gram_memory_is_the_result_plus_the_workspace(kernel, d, monkeypatch):
    """Measured (tracemalloc sees numpy's buffers): the peak beyond K stays within the
    workspace, plus a constant for numpy's and scipy's own buffers."""
    W = 50_000
    monkeypatch.setattr(kernels_module, "_WORKSPACE", W)
    rng = np.random.default_rng(d)
    X, Y = rng.random((700, d)), rng.random((500, d))
    tracemalloc.start()
    try:
        K = kernel.gram(X, Y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak - K.nbytes <= 8 * (W + 16384)


@pytest.mark.parametrize("kernel, cls", [
    (Gaussian(2.0), GaussianRFF), (Laplacian(2.0), LaplacianRFF), (Matern(1.5, 2.0), MaternRFF),
    (ExpSemigroup(0.5), RandomLaplace), (Linear(), Identity)])
def test_feature_map_builds_the_matching_map(kernel, cls):
    fmap = kernel.feature_map(64, n_blocks=4, random_state=3)
    assert type(fmap) is cls
    assert fmap.n_blocks == 4
    with pytest.raises(ValueError, match="unknown feature-map method"):
        kernel.feature_map(64, method="no_such_map")


@pytest.mark.parametrize("make, message", [
    (lambda: Gaussian(0), "sigma"), (lambda: Gaussian(-1.0), "sigma"),
    (lambda: Laplacian(float("nan")), "sigma"), (lambda: Matern(nu=0), "nu"),
    (lambda: Matern(length_scale=-2), "length_scale"), (lambda: Polynomial(degree=1.5), "degree"),
    (lambda: Polynomial(degree=0), "degree"), (lambda: Polynomial(gamma=0), "gamma"),
    (lambda: Polynomial(coef0=-1), "coef0"), (lambda: ExpSemigroup(beta=0), "beta"),
])
def test_bad_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_input(XY):
    X, Y = XY
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Gaussian(1.0).gram(bad)
    with pytest.raises(ValueError, match="features"):
        Gaussian(1.0).gram(X, Y[:, :5])
    with pytest.raises(ValueError, match="2D array"):
        Gaussian(1.0).gram(X[0])
    with pytest.raises(ValueError, match="negative"):
        ExpSemigroup(1.0).gram(X - 0.5)
