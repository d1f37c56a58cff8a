"""Exact kernels: agreement with scikit-learn, sparse input, blocking, bad parameters."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.gaussian_process.kernels import Matern as SkMatern
from sklearn.metrics.pairwise import (laplacian_kernel, linear_kernel, polynomial_kernel,
                                      rbf_kernel)

import skylite.kernels._kernels as kernels_module
from skylite.kernels import (ExpSemigroup, Gaussian, Kernel, Laplacian, Linear, Matern,
                             Polynomial)
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


ALL_KERNELS = [Gaussian(1.0), Laplacian(2.0), Matern(0.5), Matern(1.5), Matern(2.5),
               Matern(0.7, 2.0), Polynomial(3, 0.5, 1.0), ExpSemigroup(0.3), Linear()]


def _sparse_rows(draw, n, d):
    """n CSR rows of d columns with a few stored values each (some equal rows, some empty,
    some explicit zeros), values from a small set so that rows share columns and values."""
    rows = []
    for _ in range(n):
        k = draw(st.integers(0, min(6, d)))
        cols = draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k, unique=True))
        vals = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]), min_size=k,
                             max_size=k))
        rows.append((sorted(cols), vals))
    if n > 1 and draw(st.booleans()):
        rows[-1] = rows[0]
    indptr = np.cumsum([0] + [len(c) for c, _ in rows])
    indices = np.array([c for cols, _ in rows for c in cols], dtype=np.int64)
    data = np.array([v for _, vals in rows for v in vals], dtype=np.float64)
    return sp.csr_matrix((data, indices, indptr), shape=(n, d))


@st.composite
def sparse_pairs(draw):
    d = draw(st.sampled_from([1, 3, 40, 2**20]))
    return (_sparse_rows(draw, draw(st.integers(1, 9)), d),
            _sparse_rows(draw, draw(st.integers(1, 9)), d))


@settings(max_examples=60, deadline=None)
@given(pair=sparse_pairs(), kernel=st.sampled_from(ALL_KERNELS))
def test_sparse_by_sparse_gram_matches_the_dense_rows(pair, kernel):
    """Both sparse: the O(nnz) path (no row densified, d up to 2^20) gives the kernel values
    the dense rows give, for every kernel, on empty, equal and overlapping rows."""
    X, Y = pair
    d = X.shape[1]
    dense_columns = np.unique(np.concatenate([X.indices, Y.indices, [0]]))  # others: 0 in both
    Xd, Yd = X[:, dense_columns].toarray(), Y[:, dense_columns].toarray()
    # Matern with nu < 1 amplifies the rounding of ||x||^2 + ||y||^2 - 2 x.y near x = y
    # (as for CSR rows against dense ones): an absolute error of about 1e-7 there
    atol = 1e-6 if isinstance(kernel, Matern) and kernel.nu < 1 else 1e-12
    np.testing.assert_allclose(kernel.gram(X, Y), kernel.gram(Xd, Yd), rtol=1e-9, atol=atol)
    np.testing.assert_allclose(kernel.gram(X), kernel.gram(Xd), rtol=1e-9, atol=atol)
    if d < 100:
        np.testing.assert_allclose(kernel.gram(X, Y), kernel.gram(X, Y.toarray()), rtol=1e-12,
                                   atol=atol)


def test_sparse_gram_does_not_depend_on_the_threads_or_the_row_blocks(monkeypatch):
    rng = np.random.default_rng(0)
    X = sp.random(1100, 3000, density=0.02, format="csr", random_state=rng)
    Y = sp.random(900, 3000, density=0.02, format="csr", random_state=rng)
    for kernel in (Gaussian(0.5), Laplacian(4.0), Matern(1.5, 1.0), ExpSemigroup(0.5)):
        code, params = int(kernel.native_code), kernel.native_params()
        rows = [kernels_module._float64_rows(M) for M in (X, Y)]
        one, two = np.empty((1100, 900)), np.empty((1100, 900))
        kernels_module.fill_sparse_kernel_matrix(code, *params, *rows, one, 1)
        kernels_module.fill_sparse_kernel_matrix(code, *params, *rows, two, 2)
        np.testing.assert_array_equal(one, two)
        monkeypatch.setattr(kernels_module, "_SPARSE_ROWS", 128)     # 8 blocks of Y rows
        np.testing.assert_array_equal(kernel.gram(X, Y), one)
        monkeypatch.undo()


def test_sparse_gram_refuses_dense_or_mismatched_rows():
    X = kernels_module._float64_rows(sp.random(5, 7, density=0.5, format="csr"))
    with pytest.raises(ValueError, match="float64 CSR rows of 7 columns"):
        kernels_module.fill_sparse_kernel_matrix(0, 1.0, 0.0, 0.0, X, np.zeros((3, 7)),
                                                 np.empty((5, 3)), 1)
    Y = kernels_module._float64_rows(sp.random(3, 8, density=0.5, format="csr"))
    with pytest.raises(ValueError, match="float64 CSR rows of 7 columns"):
        kernels_module.fill_sparse_kernel_matrix(0, 1.0, 0.0, 0.0, X, Y, np.empty((5, 3)), 1)


def test_gram_is_computed_in_blocks(XY, monkeypatch):
    X, Y = XY
    full = Gaussian(1.0).gram(X, Y)
    # a tiny workspace forces many row blocks of X and Y; the result must not change
    monkeypatch.setattr(kernels_module, "_WORKSPACE", 64)
    np.testing.assert_allclose(Gaussian(1.0).gram(X, Y), full, rtol=1e-12)
    np.testing.assert_allclose(ExpSemigroup(0.3).gram(X, Y),
                               exp_semigroup_reference(X, Y, 0.3), rtol=1e-12)


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
@pytest.mark.parametrize("d", [1, 2, 8, 64, 784, 10**5, 3 * 10**6])
def test_gram_blocks_respect_the_workspace(kernel, d):
    """Row blocks for large n keep the pair's workspace within _WORKSPACE (only rows longer
    than half of it cannot: one row each), and stay large enough to be efficient."""
    W = kernels_module._WORKSPACE
    for n_x, n_y in [(10**8, 10**8), (3, 10**8), (10**8, 3)]:
        rows_x, rows_y = kernel._block_rows(d, n_x, n_y)
        assert 1 <= rows_x <= n_x and 1 <= rows_y <= n_y
        if 4 * d + 1 <= W:
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


@settings(max_examples=40, deadline=None)
@given(nu=st.floats(0.05, 1e7), length_scale=st.floats(0.05, 20.0), seed=st.integers(0, 99))
def test_matern_gram_is_a_kernel_of_values_in_0_1_over_the_whole_range_of_nu(
        nu, length_scale, seed):
    """In [0, 1], 1 on the diagonal, symmetric, whatever nu (no overflow of Gamma(nu),
    t^nu or K_nu(t) turns it into 0 or NaN)."""
    X = np.random.default_rng(seed).normal(size=(30, 3))
    K = Matern(nu, length_scale).gram(X)
    assert np.all((K >= 0.0) & (K <= 1.0))
    assert np.array_equal(np.diag(K), np.ones(30))
    np.testing.assert_allclose(K, K.T, rtol=1e-12, atol=1e-300)


@settings(max_examples=20, deadline=None)
@given(length_scale=st.floats(0.3, 5.0), seed=st.integers(0, 99))
def test_matern_tends_to_the_gaussian_kernel_as_nu_grows(length_scale, seed):
    """|k_nu - k_Gaussian| falls like 1/nu (k_nu = exp(-r^2/2 l^2) (1 + O(r^4 / nu)))."""
    X = np.random.default_rng(seed).normal(size=(25, 2))
    gaussian = Gaussian(length_scale).gram(X)
    errors = [np.abs(Matern(nu, length_scale).gram(X) - gaussian).max()
              for nu in (10.0, 100.0, 1e3, 1e4, 1e6)]
    assert all(b < a or b < 1e-12 for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-5, errors


@pytest.mark.parametrize("nu", [3.3, 20.0, 39.0, 40.0, 41.0, 60.0, 160.0])
def test_matern_agrees_with_the_bessel_formula_where_it_is_finite(nu):
    """Both branches (scipy's K_nu below MATERN_ASYMPTOTIC_NU, Debye's expansion from it on)
    match 2^(1-nu)/Gamma(nu) t^nu K_nu(t) wherever that product is finite and normal."""
    from scipy.special import gamma, kv
    from skylite.sketch._kernel_block import MATERN_ASYMPTOTIC_NU, matern
    assert MATERN_ASYMPTOTIC_NU == 40.0
    for r in (0.05, 0.3, 1.0, 2.0, 4.0):
        t = np.sqrt(2 * nu) * r
        with np.errstate(all="ignore"):
            reference = 2 ** (1 - nu) / gamma(nu) * t**nu * kv(nu, t)
        if np.isfinite(reference) and reference > 1e-300:
            assert np.isclose(matern(nu, r), reference, rtol=1e-10, atol=0), (nu, r)


def test_matern_of_large_nu_is_no_longer_zero_off_the_diagonal(XY):
    X = XY[0][:20] / 16.0
    K = Matern(nu=160).gram(X)
    assert (K[~np.eye(20, dtype=bool)] > 0).all()
    np.testing.assert_allclose(K, Matern(nu=150).gram(X), rtol=2e-2)


@pytest.mark.parametrize("kernel", ALL_KERNELS, ids=repr)
def test_to_dict_and_from_dict_round_trip(kernel):
    import json
    state = kernel.to_dict()
    assert state == json.loads(json.dumps(state)) and state["type"] == type(kernel).__name__
    assert Kernel.from_dict(state) == kernel
    assert type(kernel).from_dict(state) == kernel
    other = Linear() if not isinstance(kernel, Linear) else Gaussian()
    with pytest.raises(ValueError, match=f"not a {type(other).__name__}"):
        type(other).from_dict(state)
    with pytest.raises(ValueError, match="not a skylite kernel description"):
        Kernel.from_dict({"type": "NoSuchKernel", "params": {}})


def test_landmarks_is_a_parameter_of_the_nystroem_method():
    from skylite.sketch import Nystroem
    kernel = Laplacian(2.0)
    fmap = kernel.feature_map(32, method="nystroem")
    assert isinstance(fmap, Nystroem) and fmap.landmarks == "kmeans"
    assert kernel.feature_map(32, method="nystroem", landmarks="uniform").landmarks == "uniform"
    with pytest.raises(ValueError, match="landmarks='uniform' applies only to method='nystroem'"):
        kernel.feature_map(32, landmarks="uniform")
    for old_name in ("nystroem_uniform", "nystroem_kmeans"):
        with pytest.raises(ValueError, match="unknown feature-map method"):
            kernel.feature_map(32, method=old_name)
