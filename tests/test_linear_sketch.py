"""Linear sketches (JLT, SRHT, CountSketch) as maps of the linear kernel and before a
nonlinear map (ComposedMap): the Johnson-Lindenstrauss bounds, the documented formulas, CSR
rows, composition end to end in KernelSVC on the sparse Reuters set."""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from skylite import KernelSVC, load
from skylite._native._random import stream
from skylite.io import load_svmlight
from skylite.kernels import Gaussian, Linear
from skylite.sketch import (JLT, SRHT, ComposedMap, CountSketch, GaussianRFF, Identity,
                            MaternRFF, RandomLaplace, map_from_dict)
from skylite.sketch.compose import second_seed

from conftest import DATA

SKETCHES = {"jlt": JLT, "srht": SRHT, "countsketch": CountSketch}


def jl_epsilon(s, n_pairs, delta=1e-9):
    """The Johnson-Lindenstrauss distortion for n_pairs vectors at failure probability delta:
    P(| ||S x||^2 - ||x||^2 | > eps ||x||^2) <= 2 exp(-s eps^2 / 8) for each vector."""
    return np.sqrt(8.0 * np.log(2.0 * n_pairs / delta) / s)


# ---- the Johnson-Lindenstrauss property ----

@given(name=st.sampled_from(sorted(SKETCHES)), s=st.sampled_from([512, 2048]),
       n_blocks=st.integers(1, 4), seed=st.integers(0, 2**64 - 1),
       sparse=st.booleans())
@settings(max_examples=20, deadline=None)
def test_norms_and_inner_products_within_the_jl_bound(name, s, n_blocks, seed, sparse,
                                                      mnist600):
    """On real rows, every squared norm of the 30 * 29 / 2 differences and every inner
    product of normalized rows is kept within the JL bound's eps (delta = 1e-9).  The bound
    is exact for JLT; CountSketch and SRHT reach it on vectors whose mass is spread over many
    coordinates (MNIST: 784 columns, about 150 nonzero pixels), while on a vector of a few
    large entries a CountSketch collision can cost up to 2 |x_k x_l| / ||x||^2 (its guarantee
    there is only the variance, test_unbiased_with_the_documented_variance)."""
    X = mnist600[:30]
    i, j = np.triu_indices(len(X), 1)
    D = X[i] - X[j]
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    fmap = SKETCHES[name](s, n_blocks=n_blocks, random_state=seed).fit(X)
    SD = fmap.transform(sp.csr_matrix(D) if sparse else D)
    SU = fmap.transform(sp.csr_matrix(U) if sparse else U)
    eps = jl_epsilon(s, len(D) + len(U) ** 2)
    ratio = np.sum(SD**2, axis=1) / np.sum(D**2, axis=1)
    assert np.abs(ratio - 1).max() <= eps, (np.abs(ratio - 1).max(), eps)
    assert np.abs(SU @ SU.T - U @ U.T).max() <= eps


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_unbiased_with_the_documented_variance(name):
    """E ||S x||^2 = ||x||^2; Var = 2 ||x||^4 / s (JLT), (2 / s)(||x||^4 - sum x_k^4)
    (CountSketch, exact), at most 3 ||x||^4 / s (SRHT: sampled rotated coordinates)."""
    x = np.random.default_rng(0).standard_normal((1, 24))
    x[0, :4] *= 6.0                     # uneven mass: the variance formulas differ
    s, seeds = 48, 400
    dev = np.array([np.sum(SKETCHES[name](s, n_blocks=2, random_state=seed).fit(x)
                           .transform(x, n_threads=1) ** 2)
                    for seed in range(seeds)]) - np.sum(x**2)
    norm4 = np.sum(x**2) ** 2
    assert abs(dev.mean()) <= 5 * dev.std() / np.sqrt(seeds)
    variance = np.mean(dev**2)
    expected = {"jlt": 2 * norm4 / s, "countsketch": 2 * (norm4 - np.sum(x**4)) / s,
                "srht": None}[name]
    if expected is None:
        assert variance < 3 * norm4 / s * 1.3
    else:
        assert 0.7 * expected < variance < 1.3 * expected, (variance, expected)


# ---- the documented formulas ----

def assert_sketch_is(fmap, matrix_of_block, d, rtol=1e-12):
    """fmap.transform(X) == [X S_0^T, X S_1^T, ...], S_j = matrix_of_block(j, s_j, params_j)
    (s_j x d, the block scaling included)."""
    X = np.random.default_rng(1).standard_normal((6, d))
    expected = np.hstack([X @ matrix_of_block(j, s_j, fmap.transform_op_.block_params(j)).T
                          for j, s_j in enumerate(fmap.block_sizes)])
    np.testing.assert_allclose(fmap.transform(X), expected, rtol=rtol, atol=1e-13)


def test_jlt_is_gaussian_over_sqrt_s():
    d, s = 7, 30
    fmap = JLT(s, n_blocks=2, random_state=9).fit(np.ones((1, d)))

    def matrix(j, s_j, params):
        G = stream("normal", 9, j, 0, np.arange(d * s_j)).reshape(d, s_j)
        np.testing.assert_array_equal(params, (G * (1.0 / np.sqrt(s))).ravel())
        return G.T / np.sqrt(s)
    assert_sketch_is(fmap, matrix, d)


@pytest.mark.parametrize("d, s", [(5, 3), (13, 40), (16, 16), (1, 7)])
def test_srht_matches_the_explicit_matrix(d, s):
    fmap = SRHT(s, n_blocks=2 if s > 1 else 1, random_state=4).fit(np.ones((1, d)))
    D = fmap.transform_op_.padded
    H = scipy.linalg.hadamard(D)

    def matrix(j, s_j, params):
        rows = []
        for c in range(-(-s_j // D)):
            B, R = params[2 * D * c:2 * D * (c + 1)].reshape(2, D)
            assert set(np.unique(B)) <= {-1.0, 1.0}
            assert np.array_equal(np.sort(R), np.arange(D))    # sampled without replacement
            rows.append((H @ np.diag(B))[R.astype(int)])
        return np.vstack(rows)[:s_j, :d] / np.sqrt(s)
    assert_sketch_is(fmap, matrix, d)


def test_countsketch_matches_the_explicit_matrix():
    d, s = 11, 9
    fmap = CountSketch(s, n_blocks=2, random_state=3).fit(np.ones((1, d)))

    def matrix(j, s_j, params):
        h = stream("below", 3, j, 0, np.arange(d + 1), s_j).astype(int)[:d]
        g = np.where(stream("below", 3, j, 1, np.arange(d + 1), 2)[:d] > 0, 1.0, -1.0)
        S = np.zeros((s_j, d))
        S[h, np.arange(d)] = g
        return np.sqrt(s_j / s) * S
    assert_sketch_is(fmap, matrix, d)


@given(n=st.integers(1, 300), d=st.integers(1, 200), s=st.integers(1, 64),
       n_blocks=st.integers(1, 3), density=st.floats(0.0, 0.3), seed=st.integers(0, 2**32),
       single=st.booleans())
@settings(max_examples=30, deadline=None)
def test_countsketch_of_csr_equals_countsketch_of_dense(n, d, s, n_blocks, density, seed,
                                                        single):
    """The CSR path hashes only the nonzeros, in column order, as the dense path adds them
    (with exact zeros between): the same numbers, bit for bit."""
    dtype = np.float32 if single else np.float64
    X = sp.random(n, d, density=density, format="csr", dtype=dtype,
                  random_state=seed % 2**32, data_rvs=np.random.default_rng(seed).standard_normal)
    fmap = CountSketch(s, n_blocks=min(n_blocks, s), random_state=seed).fit(X)
    Z = fmap.transform(X)
    assert Z.dtype == dtype
    np.testing.assert_array_equal(Z, fmap.transform(X.toarray()))


@pytest.mark.parametrize("name", ["jlt", "srht"])
def test_csr_and_float32(name):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 40)) * (rng.random((300, 40)) < 0.2)
    fmap = SKETCHES[name](100, n_blocks=3, random_state=1).fit(X)
    Z = fmap.transform(X)
    np.testing.assert_allclose(fmap.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fmap.transform(X.astype(np.float32)), Z, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("method, cls", [("jlt", JLT), ("srht", SRHT),
                                         ("countsketch", CountSketch)])
def test_linear_kernel_methods_and_serialization(method, cls, digits_small):
    X = digits_small[:50]
    fmap = Linear().feature_map(64, n_blocks=2, random_state=5, method=method)
    assert isinstance(fmap, cls) and fmap.n_features == 64
    Z = fmap.fit(X).transform(X)
    assert Z.shape == (50, 64)
    np.testing.assert_array_equal(map_from_dict(fmap.to_dict()).transform(X), Z)
    np.testing.assert_array_equal(np.hstack([fmap.block(X, j) for j in (0, 1)]), Z)


@pytest.mark.parametrize("cls", [JLT, SRHT, CountSketch])
@pytest.mark.parametrize("kwargs, message", [
    (dict(n_features=0), "n_features"), (dict(n_features=2.5), "n_features"),
    (dict(n_features=4, n_blocks=5), "cannot exceed"), (dict(n_blocks=0), "n_blocks")])
def test_impossible_sizes(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        cls(**kwargs).fit(np.ones((2, 3)))


def test_impossible_sizes_of_the_native_layouts():
    with pytest.raises(ValueError, match="SRHT supports at most"):
        SRHT(8).fit(sp.csr_matrix((1, 2**24 + 1)))
    with pytest.raises(ValueError, match="CountSketch blocks hold at most"):
        CountSketch(2**25).fit(np.ones((1, 2)))


# ---- composition ----

def test_composition_is_the_second_map_of_the_sketched_rows(digits_small):
    X = digits_small[:40]
    fmap = ComposedMap(CountSketch(12, n_blocks=2), GaussianRFF(50, sigma=0.8, n_blocks=3),
                       random_state=7).fit(X)
    sketched = CountSketch(12, n_blocks=2, random_state=7).fit(X).transform(X)
    second = GaussianRFF(50, sigma=0.8, n_blocks=3, random_state=second_seed(7)).fit(sketched)
    Z = fmap.transform(X)
    np.testing.assert_allclose(Z, second.transform(sketched), rtol=1e-12, atol=1e-14)
    assert fmap.block_sizes == [17, 17, 16] and fmap.n_features == 50
    np.testing.assert_array_equal(np.hstack([fmap.block(X, j) for j in (2, 0, 1)])
                                  [:, np.r_[16:50, 0:16]], Z)
    np.testing.assert_array_equal(fmap.transform(sp.csr_matrix(X)), Z)
    Z32 = fmap.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, Z, atol=1e-4)
    rebuilt = map_from_dict(fmap.to_dict())
    assert isinstance(rebuilt.sketch, CountSketch)
    np.testing.assert_array_equal(rebuilt.transform(X), Z)


@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_sketch_then_rff_approximates_the_kernel(name, mnist600):
    """Distances survive the sketch within the JL bound, |d_S^2 - d^2| <= eps d^2, so every
    kernel value of the sketched rows is within k (exp(eps d^2 / (2 sigma^2)) - 1) of the
    original's, and the second map approximates the kernel of the sketched rows as random
    Fourier features do: z_2(S x) . z_2(S x') ~ k(S x, S x') ~ k(x, x')."""
    X, sigma, m = mnist600[:40], 10.0, 1024
    sketched = SKETCHES[name](m, random_state=3).fit(X).transform(X)
    K, K_sketched = Gaussian(sigma).gram(X), Gaussian(sigma).gram(sketched)
    a = np.sum((X[:, None] - X[None]) ** 2, axis=2) / (2 * sigma**2)
    eps = jl_epsilon(m, len(X) ** 2)
    assert np.all(np.abs(K_sketched - K) <= K * np.expm1(a * eps) + 1e-12)
    composed = ComposedMap(SKETCHES[name](m), GaussianRFF(4096, sigma=sigma), random_state=3)
    Z = composed.fit(X).transform(X)
    np.testing.assert_allclose(composed.sketch_.transform(X), sketched)
    assert np.linalg.norm(Z @ Z.T - K_sketched) / np.linalg.norm(K_sketched) < 0.06


def test_bad_compositions():
    X = np.ones((2, 3))
    with pytest.raises(ValueError, match="sketch must be a linear sketch"):
        ComposedMap(GaussianRFF(8), GaussianRFF(8)).fit(X)
    with pytest.raises(ValueError, match="feature_map must be a skylite feature map"):
        ComposedMap(CountSketch(8), "rff").fit(X)
    with pytest.raises(ValueError, match="needs inputs x >= 0"):
        ComposedMap(CountSketch(8), RandomLaplace(8)).fit(X)
    with pytest.raises(ValueError, match="n_features"):
        ComposedMap(CountSketch(0), GaussianRFF(8)).fit(X)
    # the identity after a sketch is the sketch itself
    ident = ComposedMap(JLT(5), Identity(n_blocks=2), random_state=3).fit(X)
    np.testing.assert_allclose(ident.transform(X), JLT(5, random_state=3).fit_transform(X))


@pytest.fixture(scope="module")
def reuters():
    """The Reuters sample (tests/data/README.md): the first 1,000 training rows and every
    third test row (60 positives of 1,100), in the set's 8315 columns."""
    X, y = load_svmlight(DATA / "reuters_sample.svm.gz", n_features=8315)[:2]
    X_test, y_test = load_svmlight(DATA / "reuters_sample.t.svm.gz", n_features=8315)[:2]
    return X, y, X_test, y_test


def test_countsketch_then_gaussian_rff_trains_on_sparse_reuters(reuters, tmp_path):
    """CountSketch of the 8315 sparse columns to 1024, then Gaussian random Fourier features,
    end to end in KernelSVC: it beats the majority class by a clear margin, approximates the
    exact kernel of the rows, and the saved model predicts the same."""
    X, y, X_test, y_test = reuters
    fmap = ComposedMap(CountSketch(1024), GaussianRFF(1024, sigma=1.0, n_blocks=2))
    model = KernelSVC(feature_map=fmap, alpha=1e-4, max_iter=20, random_state=0)
    with pytest.warns(Warning):            # 20 iterations: stopped before tol
        model.fit(X, y)
    majority = max(np.mean(y_test == 1), np.mean(y_test != 1))
    assert model.score(X_test, y_test) > majority + 0.01
    rows = X_test[:150]
    Z = model.feature_map_.transform(rows)
    K = Gaussian(1.0).gram(rows)
    assert np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K) < 0.1
    model.save(tmp_path / "m.sky")
    loaded = load(tmp_path / "m.sky")
    assert isinstance(loaded.feature_map, ComposedMap)
    np.testing.assert_array_equal(loaded.decision_function(X_test), model.decision_function(X_test))


def test_composed_map_pickles(digits_small):
    import pickle
    X = digits_small[:10]
    fmap = ComposedMap(SRHT(16), MaternRFF(32, nu=0.7), random_state=2).fit(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fmap)).transform(X),
                                  fmap.transform(X))
