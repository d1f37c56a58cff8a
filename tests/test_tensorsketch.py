"""TensorSketch (polynomial kernel) and its FFT."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.kernel_approximation import PolynomialCountSketch

from skylite.kernels import Polynomial
from skylite.sketch import TensorSketch, map_from_dict
from skylite.sketch._tensorsketch import fft


@pytest.fixture(scope="module")
def rows(mnist600):
    """The first 200 MNIST training rows, unit-norm, float64."""
    X = mnist600[:200]
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _rel_err(Z, K):
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


# ---------------------------------------------------------------- the FFT

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 12, 64, 333, 1000, 1024, 4096])
def test_fft_matches_numpy(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    for ours, ref in ((fft(x), np.fft.fft(x)), (fft(x, inverse=True), np.fft.ifft(x))):
        assert np.abs(ours - ref).max() <= 1e-12 * np.abs(ref).max()
    np.testing.assert_allclose(fft(fft(x), inverse=True), x, rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.complex128, st.integers(1, 300),
                  elements=st.complex_numbers(max_magnitude=1e3, allow_nan=False,
                                              allow_infinity=False)))
def test_fft_any_length(x):
    scale = max(np.abs(x).max(), 1.0) * len(x)
    assert np.abs(fft(x) - np.fft.fft(x)).max() <= 1e-12 * scale
    assert np.abs(fft(x, inverse=True) - np.fft.ifft(x)).max() <= 1e-12 * scale


def test_fft_rejects_bad_input():
    with pytest.raises(ValueError):
        fft(np.zeros(0))
    with pytest.raises(ValueError):
        fft(np.zeros((2, 2)))


# ---------------------------------------------------------------- exact values

def _reference(ts, X):
    """TensorSketch recomputed with numpy from the stored hashes and signs."""
    op, q = ts.transform_op_, ts.degree
    D = X.shape[1] + 1
    Xt = np.hstack([np.sqrt(ts.gamma) * X, np.full((X.shape[0], 1), np.sqrt(ts.coef0))])
    blocks = []
    for j, s_j in enumerate(ts.block_sizes):
        p = op.block_params(j)
        spectra = np.ones((X.shape[0], s_j), dtype=complex)
        for k in range(q):
            h, sign = p[k * D:(k + 1) * D].astype(int), p[(q + k) * D:(q + k + 1) * D]
            C = np.zeros((X.shape[0], s_j))
            for c in range(D):
                C[:, h[c]] += sign[c] * Xt[:, c]
            spectra *= np.fft.fft(C, axis=1)
        blocks.append(np.sqrt(s_j / ts.n_features) * np.fft.ifft(spectra, axis=1).real)
    return np.hstack(blocks)


@pytest.mark.parametrize("n_features,degree,n_blocks", [
    (64, 2, 1), (64, 3, 2), (333, 2, 1), (333, 3, 1), (333, 4, 1), (1000, 3, 1),
    (1000, 2, 3), (36, 5, 3), (1, 3, 1), (5, 1, 2), (3, 3, 1)])
def test_matches_numpy_reference(rows, n_features, degree, n_blocks):
    # covers the three convolution paths: power-of-two size, zero-padded linear convolution
    # folded mod s, and Bluestein (see _tensorsketch._conv_length)
    X = rows[:5, ::8]
    ts = TensorSketch(n_features, degree=degree, gamma=0.7, coef0=1.3, n_blocks=n_blocks,
                      random_state=11).fit(X)
    ref = _reference(ts, X)
    L = ts.transform_op_.conv_length(0)
    assert L == 0 if degree == 1 else L >= ts.block_sizes[0]
    np.testing.assert_allclose(ts.transform(X), ref, rtol=0, atol=1e-12 * np.abs(ref).max())


# ---------------------------------------------------------------- accuracy

@pytest.mark.parametrize("degree", [2, 3])
def test_gram_error_falls_like_inverse_sqrt_s(rows, degree):
    X = rows[:150]
    K = Polynomial(degree, 1.0, 1.0).gram(X)
    err = {s: np.mean([_rel_err(TensorSketch(s, degree=degree, random_state=seed)
                                .fit_transform(X), K) for seed in range(3)])
           for s in (256, 1000, 4096)}
    # 16x more features: ideally 4x smaller error
    assert err[4096] < 0.4 * err[256]
    assert err[1000] < err[256]
    assert err[4096] < {2: 0.08, 3: 0.12}[degree]


@pytest.mark.parametrize("degree,s_j", [(1, 16), (2, 16), (2, 12), (3, 16), (3, 7)])
def test_unbiased(degree, s_j):
    # many independent blocks at once: block j (scaled by sqrt(s_j / s)) gives the estimate
    # (s / s_j) z_j(x) . z_j(x') of k(x, x')
    gamma, coef0 = 0.8, 0.5
    x = np.random.default_rng(1).standard_normal((2, 20))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[1] = 0.6 * x[0] + 0.8 * x[1]      # correlated rows: k(x, x') away from coef0^q
    k = Polynomial(degree, gamma, coef0).gram(x)[0, 1]
    n_blocks = 3000
    ts = TensorSketch(s_j * n_blocks, degree=degree, gamma=gamma, coef0=coef0,
                      n_blocks=n_blocks, random_state=7).fit(x)
    # one thread: the driver opens a parallel region per block, costly for 3000 tiny blocks
    Z = ts.transform(x, n_threads=1).reshape(2, n_blocks, s_j)
    est = n_blocks * np.einsum("bk,bk->b", Z[0], Z[1])
    assert abs(est.mean() - k) < 4.5 * est.std() / np.sqrt(n_blocks)
    # the sum over blocks is the whole map's estimate
    assert np.isclose(est.mean(), Z[0].ravel() @ Z[1].ravel())


def test_degree_one_is_countsketch(rows):
    X = rows[:50]
    Z = TensorSketch(4096, degree=1, gamma=2.0, coef0=0.5).fit_transform(X)
    K = Polynomial(1, 2.0, 0.5).gram(X)
    assert _rel_err(Z, K) < 0.1
    # a CountSketch has at most d + 1 nonzeros per row, and it is linear in x~
    assert (np.count_nonzero(Z, axis=1) <= X.shape[1] + 1).all()


def test_homogeneous_scaling():
    # coef0 = 0: z(c x) = c^q z(x)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 10))
    ts = TensorSketch(100, degree=3, coef0=0.0, n_blocks=2).fit(X)
    np.testing.assert_allclose(ts.transform(2.0 * X), 8.0 * ts.transform(X), rtol=1e-12,
                               atol=1e-12)


def test_comparable_to_sklearn(rows):
    X = rows[:150]
    K = Polynomial(2, 1.0, 1.0).gram(X)
    ours = np.mean([_rel_err(TensorSketch(1024, degree=2, random_state=s).fit_transform(X), K)
                    for s in range(4)])
    theirs = np.mean([_rel_err(PolynomialCountSketch(degree=2, gamma=1.0, coef0=1.0,
                                                     n_components=1024, random_state=s)
                               .fit_transform(X), K) for s in range(4)])
    assert ours < 1.5 * theirs


# ---------------------------------------------------------------- structure

@pytest.mark.parametrize("n_features,n_blocks", [(1000, 3), (4096, 4), (7, 7), (333, 1)])
def test_transform_is_hstack_of_blocks(rows, n_features, n_blocks):
    X = rows[:9]   # odd number of rows: the last row of the tile has no partner
    ts = TensorSketch(n_features, degree=3, n_blocks=n_blocks, random_state=3).fit(X)
    Z = ts.transform(X)
    assert Z.shape == (9, n_features)
    blocks = [ts.block(X, j) for j in range(n_blocks)]
    assert [b.shape[1] for b in blocks] == ts.block_sizes
    np.testing.assert_array_equal(Z, np.hstack(blocks))


def test_threads_and_tiles_do_not_change_values(rows):
    X = np.vstack([rows] * 3)   # 600 rows: several tiles of 256
    ts = TensorSketch(300, degree=2, n_blocks=2).fit(X)
    Z1 = ts.transform(X, n_threads=1)
    np.testing.assert_array_equal(Z1, ts.transform(X, n_threads=2))
    np.testing.assert_array_equal(Z1[256:300], ts.transform(X[256:300]))


def test_seeds(rows):
    X = rows[:5]
    a = TensorSketch(128, random_state=1).fit_transform(X)
    np.testing.assert_array_equal(a, TensorSketch(128, random_state=1).fit_transform(X))
    assert not np.allclose(a, TensorSketch(128, random_state=2).fit_transform(X))
    # blocks of one map are independent
    ts = TensorSketch(128, n_blocks=2, random_state=1).fit(X)
    assert not np.allclose(ts.block(X, 0), ts.block(X, 1))


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_csr_equals_dense(rows, degree):
    X = rows[:11].copy()
    X[X < 0.05] = 0.0
    ts = TensorSketch(250, degree=degree, n_blocks=2).fit(X)
    Zd = ts.transform(X)
    np.testing.assert_allclose(ts.transform(sp.csr_matrix(X)), Zd, rtol=1e-12, atol=1e-13)
    Z32 = ts.transform(sp.csr_matrix(X.astype(np.float32)))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, Zd, rtol=0, atol=1e-5 * np.abs(Zd).max())
    # an empty CSR row sees only the constant coordinate
    E = sp.csr_matrix((2, X.shape[1]))
    np.testing.assert_allclose(ts.transform(E), ts.transform(np.zeros((2, X.shape[1]))),
                               atol=1e-14)


def test_float32(rows):
    X = rows[:20]
    ts = TensorSketch(1000, degree=3, n_blocks=2).fit(X)
    Z64 = ts.transform(X)
    Z32 = ts.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    np.testing.assert_allclose(Z32, Z64, rtol=0, atol=1e-5 * np.abs(Z64).max())


def test_serialization_round_trip(rows):
    X = rows[:7]
    ts = TensorSketch(500, degree=3, gamma=0.3, coef0=2.0, n_blocks=3, random_state=42).fit(X)
    state = ts.to_dict()
    assert state["type"] == "TensorSketch"
    for again in (TensorSketch.from_dict(state), map_from_dict(state)):
        np.testing.assert_array_equal(again.transform(X), ts.transform(X))
        assert again.get_params() == ts.get_params()


def test_pickle(rows):
    X = rows[:4]
    ts = TensorSketch(300, degree=3, n_blocks=2, random_state=9).fit(X)
    again = pickle.loads(pickle.dumps(ts))
    np.testing.assert_array_equal(again.transform(X), ts.transform(X))


def test_params_layout(rows):
    ts = TensorSketch(100, degree=3, n_blocks=2).fit(rows[:2])
    p = ts.transform_op_.block_params(1)
    D = rows.shape[1] + 1
    assert p.shape == (2 * 3 * D,)
    hashes, signs = p[:3 * D], p[3 * D:]
    assert set(np.unique(signs)) <= {-1.0, 1.0}
    assert hashes.min() >= 0 and hashes.max() < 50 and (hashes == np.round(hashes)).all()
    np.testing.assert_array_equal(ts.transform_op_.block_params(1, np.float32), p)


def test_polynomial_kernel_builds_it(rows):
    fm = Polynomial(3, 0.5, 1.5).feature_map(64, n_blocks=2, random_state=5)
    assert isinstance(fm, TensorSketch)
    assert (fm.degree, fm.gamma, fm.coef0, fm.n_blocks) == (3, 0.5, 1.5, 2)
    assert fm.fit_transform(rows[:3]).shape == (3, 64)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 6), d=st.integers(1, 8), s=st.integers(1, 40),
       degree=st.integers(1, 4), data=st.data())
def test_property_blocks_and_finite(n, d, s, degree, data):
    n_blocks = data.draw(st.integers(1, min(s, 4)))
    X = data.draw(hnp.arrays(np.float64, (n, d), elements=st.floats(-10, 10)))
    ts = TensorSketch(s, degree=degree, n_blocks=n_blocks, random_state=0).fit(X)
    Z = ts.transform(X)
    assert Z.shape == (n, s) and np.isfinite(Z).all()
    np.testing.assert_array_equal(Z, np.hstack([ts.block(X, j) for j in range(n_blocks)]))
    # with one feature per block the sketch is exact up to the sign: s_j = 1 hashes everything
    # to one bucket, and the product of q sums is z = sqrt(1/s) prod_p (sigma_p . x~)
    if s == n_blocks == 1:
        p = ts.transform_op_.block_params(0)
        D = d + 1
        xt = np.hstack([X, np.ones((n, 1))])
        expect = np.prod([xt @ p[(degree + q) * D:(degree + q + 1) * D]
                          for q in range(degree)], axis=0)
        np.testing.assert_allclose(Z[:, 0], expect, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("kwargs,word", [
    ({"degree": 0}, "degree"), ({"degree": 1.5}, "degree"), ({"degree": -2}, "degree"),
    ({"degree": True}, "degree"), ({"gamma": 0.0}, "gamma"), ({"gamma": -1.0}, "gamma"),
    ({"gamma": np.nan}, "gamma"), ({"coef0": -0.1}, "coef0"), ({"coef0": np.inf}, "coef0"),
    ({"n_features": 0}, "n_features"), ({"n_blocks": 0}, "n_blocks"),
    ({"n_features": 4, "n_blocks": 5}, "n_blocks"),
])
def test_bad_parameters(kwargs, word):
    with pytest.raises(ValueError, match=word):
        TensorSketch(**kwargs).fit(np.ones((2, 3)))


def test_bad_input():
    ts = TensorSketch(16).fit(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        ts.transform(np.array([[1.0, np.nan, 0.0]]))
    with pytest.raises(ValueError, match="features"):
        ts.transform(np.ones((2, 4)))
    with pytest.raises(ValueError, match="not fitted"):
        TensorSketch(16).transform(np.ones((2, 3)))
    with pytest.raises(IndexError):
        ts.block(np.ones((2, 3)), 1)
