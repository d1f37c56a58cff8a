"""Tests of the Fastfood feature map (skylite.sketch.Fastfood) and its FWHT."""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import skylite
from skylite._native._random import stream
from skylite.sketch import Fastfood, MaternFastfood, map_from_dict
from skylite.sketch._fastfood import fwht, padded_dim


def _data(n=60, d=20, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal((n, d)) * scale


def _rel_gram_error(Z, K):
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


# ---- the fast Walsh-Hadamard transform ----

@settings(max_examples=40, deadline=None)
@given(log_n=st.integers(0, 11), rows=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_fwht_equals_hadamard_matrix(log_n, rows, seed):
    n = 2 ** log_n
    A = np.random.default_rng(seed).standard_normal((rows, n))
    H = scipy.linalg.hadamard(n).astype(np.float64)
    expected = A @ H.T
    got = fwht(A.copy())
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * n)
    got32 = fwht(A.astype(np.float32))
    np.testing.assert_allclose(got32, expected, rtol=1e-5, atol=1e-5 * np.sqrt(n))


def test_fwht_integer_exact():
    # small integers: every operation is exact, so the result must be bit-identical
    rng = np.random.default_rng(1)
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096):
        A = rng.integers(-8, 9, size=(3, n)).astype(np.float64)
        H = scipy.linalg.hadamard(n).astype(np.float64)  # exact on small integers
        assert np.array_equal(fwht(A.copy()), A @ H.T)
        assert np.array_equal(fwht(A.astype(np.float32)), (A @ H.T).astype(np.float32))


def test_fwht_rejects_bad_length():
    with pytest.raises(ValueError):
        fwht(np.zeros((2, 3)))


def test_padded_dim():
    assert [padded_dim(d) for d in (1, 2, 3, 4, 5, 784, 1024, 1025)] == \
        [1, 2, 4, 4, 8, 1024, 1024, 2048]


# ---- parameters ----

def test_params_layout_and_row_norms():
    d, s, sigma = 13, 40, 2.0
    ff = Fastfood(s, sigma=sigma, random_state=3).fit(np.zeros((1, d)))
    op = ff.transform_op_
    D = op.padded
    assert D == 16
    n_chunks = -(-s // D)
    p = op.block_params(0)
    assert p.size == 4 * D * n_chunks + s
    for c in range(n_chunks):
        B, Pi, G, S = p[4 * D * c:4 * D * (c + 1)].reshape(4, D)
        assert set(np.unique(B)) <= {-1.0, 1.0}
        assert np.array_equal(np.sort(Pi), np.arange(D))
        # the explicit chunk V = S H G Pi H B has rows of norm c_k / sigma
        H = scipy.linalg.hadamard(D)
        P = np.eye(D)[Pi.astype(int)]
        V = np.diag(S) @ H @ np.diag(G) @ P @ H @ np.diag(B)
        norms = np.linalg.norm(V, axis=1)
        chi = S * np.linalg.norm(G) * sigma * np.sqrt(D)
        np.testing.assert_allclose(norms, chi / sigma, rtol=1e-12)
    phases = p[4 * D * n_chunks:]
    assert phases.min() >= 0 and phases.max() < 2 * np.pi


def _documented_params(ff, j, dtype):
    """Block j's parameters rebuilt in numpy from the streams of _fastfood.pyx's docstring."""
    D, s_j, seed = ff.transform_op_.padded, ff.block_sizes[j], ff.seed_
    n_chunks = -(-s_j // D)
    parts = []
    for c in range(n_chunks):
        idx = c * D + np.arange(D)
        B = np.where(stream("uniform", seed, j, 0, idx) < 0.5, 1.0, -1.0)
        perm = np.arange(D)
        for k in range(D - 1, 0, -1):
            r = int(stream("below", seed, j, 1, [c * D + k], k + 1)[0])
            perm[k], perm[r] = perm[r], perm[k]
        G = stream("normal", seed, j, 2, idx)
        norm2 = 0.0
        for g in G:           # in order, as the native code sums
            norm2 += g * g
        scale = 1.0 / (np.sqrt(norm2) * ff.sigma * np.sqrt(D))
        S = np.sqrt(2.0 * stream("gamma", seed, j, 3, idx, 0.5 * D)) * scale
        parts += [B, perm.astype(np.float64), G, S]
    parts.append(2 * np.pi * stream("uniform", seed, j, 4, np.arange(s_j)))
    return np.concatenate(parts).astype(dtype)


@given(d=st.integers(1, 600), s=st.integers(1, 1200), n_blocks=st.integers(1, 3),
       seed=st.integers(0, 2**63 - 1), single=st.booleans())
@settings(max_examples=15, deadline=None)
def test_params_are_the_documented_streams(d, s, n_blocks, seed, single):
    """No scratch on the heap (the permutation is shuffled in place, G drawn in chunks on the
    stack): the same numbers as the documented streams."""
    n_blocks = min(n_blocks, s)
    ff = Fastfood(s, sigma=1.7, n_blocks=n_blocks, random_state=seed).fit(np.ones((1, d)))
    dtype = np.float32 if single else np.float64
    for j in range(n_blocks):
        np.testing.assert_array_equal(ff.transform_op_.block_params(j, dtype),
                                      _documented_params(ff, j, dtype))


def test_features_match_explicit_matrix():
    d, s, sigma = 5, 19, 1.5
    X = _data(7, d, seed=2)
    ff = Fastfood(s, sigma=sigma, random_state=11).fit(X)
    op = ff.transform_op_
    D = op.padded
    n_chunks = -(-s // D)
    p = op.block_params(0)
    H = scipy.linalg.hadamard(D)
    rows = []
    for c in range(n_chunks):
        B, Pi, G, S = p[4 * D * c:4 * D * (c + 1)].reshape(4, D)
        P = np.eye(D)[Pi.astype(int)]
        rows.append(np.diag(S) @ H @ np.diag(G) @ P @ H @ np.diag(B))
    V = np.vstack(rows)[:s, :d]
    b = p[4 * D * n_chunks:]
    expected = np.sqrt(2.0 / s) * np.cos(X @ V.T + b)
    np.testing.assert_allclose(ff.transform(X), expected, rtol=1e-10, atol=1e-12)


# ---- kernel approximation ----

def test_gram_error_falls_like_inverse_sqrt_s():
    X = _data(50, 30, seed=4, scale=0.25)
    K = skylite.kernels.Gaussian(1.5).gram(X)
    err = {}
    for s in (256, 4096):
        err[s] = np.mean([_rel_gram_error(Fastfood(s, sigma=1.5, random_state=r)
                                          .fit_transform(X), K) for r in range(6)])
    ratio = err[4096] / err[256]
    assert err[4096] < 0.05
    assert 0.12 < ratio < 0.45, (err, ratio)


def test_feature_map_from_kernel():
    X = _data(30, 9, seed=5)
    fm = skylite.kernels.Gaussian(2.0).feature_map(2048, method="fastfood", random_state=7)
    assert isinstance(fm, Fastfood)
    ref = Fastfood(2048, sigma=2.0, random_state=7).fit(X)
    np.testing.assert_array_equal(fm.fit_transform(X), ref.transform(X))
    K = skylite.kernels.Gaussian(2.0).gram(X)
    assert _rel_gram_error(ref.transform(X), K) < 0.1


# ---- blocks, seeds, input kinds ----

@pytest.mark.parametrize("n_blocks", [1, 3, 7])
def test_transform_is_hstack_of_blocks(n_blocks):
    X = _data(300, 21, seed=6)  # more than one tile of 256 rows
    ff = Fastfood(100, sigma=3.0, n_blocks=n_blocks, random_state=2).fit(X)
    Z = ff.transform(X)
    assert Z.shape == (300, 100)
    blocks = [ff.block(X, j) for j in range(n_blocks)]
    assert [b.shape[1] for b in blocks] == ff.block_sizes
    np.testing.assert_array_equal(Z, np.hstack(blocks))
    np.testing.assert_array_equal(Z, ff.transform(X, n_threads=1))


def test_seed_determines_features():
    X = _data(20, 10, seed=7)
    a = Fastfood(64, sigma=2.0, random_state=5).fit_transform(X)
    b = Fastfood(64, sigma=2.0, random_state=5).fit_transform(X)
    c = Fastfood(64, sigma=2.0, random_state=6).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 1e-3


def test_blocks_are_independent_draws():
    X = _data(10, 8, seed=8)
    ff = Fastfood(64, sigma=2.0, n_blocks=2, random_state=1).fit(X)
    b0, b1 = ff.block(X, 0), ff.block(X, 1)
    assert np.abs(b0 - b1).max() > 1e-3


def test_csr_equals_dense():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((270, 37)) * (rng.random((270, 37)) < 0.2)
    X[3] = 0.0  # an empty row
    ff = Fastfood(130, sigma=2.0, n_blocks=2, random_state=4).fit(X)
    dense = ff.transform(X)
    np.testing.assert_allclose(ff.transform(sp.csr_matrix(X)), dense, rtol=1e-12, atol=1e-14)
    X32 = X.astype(np.float32)
    np.testing.assert_allclose(ff.transform(sp.csr_matrix(X32)), ff.transform(X32),
                               rtol=1e-5, atol=1e-6)


def test_float32_close_to_float64():
    X = _data(80, 50, seed=10)
    ff = Fastfood(512, sigma=4.0, random_state=0).fit(X)
    Z64 = ff.transform(X)
    Z32 = ff.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    G64, G32 = Z64 @ Z64.T, Z32.astype(np.float64) @ Z32.T.astype(np.float64)
    assert np.linalg.norm(G32 - G64) / np.linalg.norm(G64) < 1e-4
    np.testing.assert_allclose(Z32, Z64, atol=1e-4)


@pytest.mark.parametrize("d", [1, 3, 100])
def test_dimensions_not_power_of_two(d):
    X = _data(40, d, seed=11, scale=1.0 / np.sqrt(d))
    K = skylite.kernels.Gaussian(1.0).gram(X)
    Z = Fastfood(4096, sigma=1.0, n_blocks=2, random_state=3).fit_transform(X)
    assert Z.shape == (40, 4096)
    assert np.isfinite(Z).all()
    assert _rel_gram_error(Z, K) < 0.08


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 40), s=st.integers(1, 90), n_blocks=st.integers(1, 4),
       n=st.integers(1, 6), seed=st.integers(0, 2**63 - 1))
def test_shapes_and_block_consistency(d, s, n_blocks, n, seed):
    n_blocks = min(n_blocks, s)
    X = np.random.default_rng(seed % 2**32).standard_normal((n, d))
    ff = Fastfood(s, sigma=1.0, n_blocks=n_blocks, random_state=seed).fit(X)
    Z = ff.transform(X)
    assert Z.shape == (n, s)
    # |z_k| <= sqrt(2 / s)
    assert np.abs(Z).max() <= np.sqrt(2.0 / s) * (1 + 1e-12)
    np.testing.assert_array_equal(Z, np.hstack([ff.block(X, j) for j in range(n_blocks)]))


# ---- serialization ----

def test_dict_round_trip():
    X = _data(25, 12, seed=12)
    ff = Fastfood(300, sigma=0.7, n_blocks=3, random_state=123).fit(X)
    state = ff.to_dict()
    assert state["type"] == "Fastfood"
    for rebuilt in (Fastfood.from_dict(state), map_from_dict(state)):
        assert isinstance(rebuilt, Fastfood)
        np.testing.assert_array_equal(rebuilt.transform(X), ff.transform(X))


# ---- validation ----

@pytest.mark.parametrize("sigma", [0.0, -1.0, np.nan, np.inf, "1"])
def test_bad_sigma(sigma):
    with pytest.raises(ValueError):
        Fastfood(16, sigma=sigma).fit(np.zeros((2, 3)))


@pytest.mark.parametrize("kwargs", [dict(n_features=0), dict(n_features=2.5),
                                    dict(n_blocks=0), dict(n_features=4, n_blocks=5)])
def test_bad_sizes(kwargs):
    with pytest.raises(ValueError):
        Fastfood(**kwargs).fit(np.zeros((2, 3)))


def test_bad_input():
    X = _data(5, 6, seed=13)
    ff = Fastfood(32, sigma=1.0).fit(X)
    bad = X.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError):
        ff.transform(bad)
    with pytest.raises(ValueError):
        Fastfood(32).fit(bad)
    with pytest.raises(ValueError):
        ff.transform(_data(5, 7))
    with pytest.raises(ValueError):
        ff.transform(sp.csr_matrix(_data(5, 5)))
    with pytest.raises(ValueError):
        Fastfood(32).transform(X)  # not fitted


def test_empty_input_and_too_many_features():
    X = _data(4, 6, seed=14)
    ff = Fastfood(40, sigma=1.0).fit(X)
    assert ff.transform(X[:0]).shape == (0, 40)
    assert ff.transform(sp.csr_matrix((0, 6))).shape == (0, 40)
    with pytest.raises(ValueError):
        Fastfood(8).fit(sp.csr_matrix((1, 2**24 + 1)))


# ---- Fastfood for the Matern kernel ----

def test_matern_radii_follow_the_multivariate_t():
    """Row k of a Matern chunk has norm chi_k(d') sqrt(nu / G_k) / l: squared and times
    l^2 / d', an F(d', 2 nu) variate (a chi^2_{d'} / d' over an independent chi^2_{2 nu} / (2 nu))."""
    from scipy import stats
    d, s, nu, l = 30, 4096, 1.5, 2.0
    ff = MaternFastfood(s, nu=nu, length_scale=l, random_state=8).fit(np.ones((1, d)))
    D = ff.transform_op_.padded
    p = ff.transform_op_.block_params(0)
    radii = []
    for c in range(s // D):
        G, S = p[4 * D * c + 2 * D:4 * D * (c + 1)].reshape(2, D)
        radii.append(S * np.linalg.norm(G) * np.sqrt(D))     # = chi sqrt(nu / G) / l
    r2 = np.concatenate(radii) ** 2 * l**2 / D
    assert stats.kstest(r2, stats.f(D, 2 * nu).cdf).pvalue > 1e-3
    # the Gaussian map's radii are chi(d') / sigma instead: F would be rejected
    g = Fastfood(s, sigma=l, random_state=8).fit(np.ones((1, d))).transform_op_.block_params(0)
    r2_gauss = np.concatenate([g[4 * D * c + 3 * D:4 * D * (c + 1)] *
                               np.linalg.norm(g[4 * D * c + 2 * D:4 * D * c + 3 * D]) * np.sqrt(D)
                               for c in range(s // D)]) ** 2 * l**2 / D
    assert stats.kstest(r2_gauss, stats.f(D, 2 * nu).cdf).pvalue < 1e-6


@given(d=st.integers(1, 300), s=st.integers(1, 700), seed=st.integers(0, 2**63 - 1),
       nu=st.floats(0.2, 5.0))
@settings(max_examples=8, deadline=None)
def test_matern_params_are_the_documented_streams(d, s, seed, nu):
    """Gaussian Fastfood's parameters with S' times sqrt(nu / Gamma(nu, 1)) from TAG_RADIAL."""
    ff = MaternFastfood(s, nu=nu, length_scale=1.7, n_blocks=1, random_state=seed)
    ff.fit(np.ones((1, d)))
    base = Fastfood(s, sigma=1.7, random_state=seed).fit(np.ones((1, d)))
    expected = _documented_params(base, 0, np.float64)
    D = base.transform_op_.padded
    for c in range(-(-s // D)):
        at = slice(4 * D * c + 3 * D, 4 * D * (c + 1))
        expected[at] *= np.sqrt(nu / stream("gamma", seed, 0, 5, c * D + np.arange(D), nu))
    np.testing.assert_allclose(ff.transform_op_.block_params(0), expected, rtol=1e-14)


@pytest.mark.parametrize("nu, length_scale", [(0.5, 1.0), (1.5, 1.0), (2.5, 2.0), (0.8, 1.5)])
def test_matern_fastfood_approximates_the_matern_gram(nu, length_scale):
    """As close to the Matern Gram matrix as MaternRFF, with the 1 / sqrt(s) rate."""
    X = _data(60, 30, seed=15, scale=0.3)
    kernel = skylite.kernels.Matern(nu, length_scale)
    K = kernel.gram(X)
    err = {s: np.mean([_rel_gram_error(MaternFastfood(s, nu=nu, length_scale=length_scale,
                                                      n_blocks=2, random_state=r)
                                       .fit_transform(X), K) for r in range(4)])
           for s in (256, 4096)}
    rff = np.mean([_rel_gram_error(skylite.sketch.MaternRFF(4096, nu=nu,
                                                            length_scale=length_scale,
                                                            random_state=r).fit_transform(X), K)
                   for r in range(4)])
    # 1 / sqrt(16) = 0.25 expected; a wrong radial law would leave a bias that s cannot remove
    assert err[4096] < 0.12 and err[4096] < 0.4 * err[256], err
    assert err[4096] < 1.25 * rff, (err, rff)


def test_matern_fastfood_from_the_kernel_and_round_trip():
    X = _data(20, 9, seed=16)
    fm = skylite.kernels.Matern(0.7, 2.0).feature_map(300, n_blocks=3, method="fastfood",
                                                       random_state=4)
    assert isinstance(fm, MaternFastfood) and (fm.nu, fm.length_scale) == (0.7, 2.0)
    Z = fm.fit_transform(X)
    np.testing.assert_array_equal(map_from_dict(fm.to_dict()).transform(X), Z)
    np.testing.assert_allclose(fm.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="nu"):
        MaternFastfood(8, nu=0).fit(X)
    with pytest.raises(ValueError, match="length_scale"):
        MaternFastfood(8, length_scale=-1).fit(X)
