"""Feature maps: kernel approximation, block structure, determinism, input handling."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.kernel_approximation import RBFSampler

from skylite._native._random import stream
from skylite.kernels import ExpSemigroup, Gaussian, Laplacian, Linear, Matern
from skylite.sketch import (JLT, SRHT, ComposedMap, CountSketch, Fastfood, GaussianRFF,
                            Identity, LaplacianRFF, MaternFastfood, MaternRFF, RandomLaplace,
                            map_from_dict)
from skylite.sketch._transform import BlockTransform

# (kernel, map class, kernel parameters as the map names them), on pendigits scaled to [0, 1]
RANDOM_MAPS = {
    "gaussian": (Gaussian(1.0), GaussianRFF, {"sigma": 1.0}),
    "laplacian": (Laplacian(4.0), LaplacianRFF, {"sigma": 4.0}),
    "matern": (Matern(1.5, 1.0), MaternRFF, {"nu": 1.5, "length_scale": 1.0}),
    "matern_rough": (Matern(0.7, 2.0), MaternRFF, {"nu": 0.7, "length_scale": 2.0}),
    "random_laplace": (ExpSemigroup(0.1), RandomLaplace, {"beta": 0.1}),
}


def make_map(name, n_features, n_blocks=1, random_state=0):
    kernel, cls, params = RANDOM_MAPS[name]
    return cls(n_features=n_features, n_blocks=n_blocks, random_state=random_state, **params)


def relative_gram_error(fmap, kernel, X):
    Z = fmap.fit(X).transform(X)
    K = kernel.gram(X)
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_gram_error_falls_like_inverse_sqrt_s(name, digits_small):
    X = digits_small[:150]
    kernel = RANDOM_MAPS[name][0]
    # median over seeds: random Laplace features are heavy-tailed (Levy), so a mean would
    # be dominated by the occasional outlier at small s
    errors = {s: np.median([relative_gram_error(make_map(name, s, n_blocks=2, random_state=r),
                                                kernel, X) for r in range(6)])
              for s in (256, 4096)}
    ratio = errors[4096] / errors[256]   # 1/sqrt(16) = 0.25 expected
    assert 0.15 < ratio < 0.4, errors
    assert errors[4096] < 0.08, errors


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_features_are_unbiased(name, digits_small):
    """The mean over seeds of z(x).z(x') tends to k(x, x')."""
    X = digits_small[:20]
    kernel = RANDOM_MAPS[name][0]
    estimates = []
    for seed in range(40):
        Z = make_map(name, 256, n_blocks=3, random_state=seed).fit(X).transform(X)
        estimates.append(Z @ Z.T)
    estimates = np.array(estimates)
    mean, stderr = estimates.mean(axis=0), estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(mean - kernel.gram(X)) <= 5 * stderr + 1e-12)


@pytest.mark.parametrize("name, sigma_or_none, limit", [
    ("gaussian", 6.0, 0.05), ("laplacian", 60.0, 0.08)])
def test_mnist_accuracy_targets(name, sigma_or_none, limit, mnist600):
    """Issue targets: Frobenius error at s = 16384 on 600 MNIST rows."""
    kernel = {"gaussian": Gaussian, "laplacian": Laplacian}[name](sigma_or_none)
    fmap = kernel.feature_map(16384, n_blocks=4, random_state=1)
    assert relative_gram_error(fmap, kernel, mnist600) < limit


@given(name=st.sampled_from(sorted(RANDOM_MAPS)), n_features=st.integers(1, 300),
       n_blocks=st.integers(1, 7), seed=st.integers(0, 2**64 - 1))
@settings(max_examples=40, deadline=None)
def test_transform_equals_stacked_blocks(name, n_features, n_blocks, seed, digits_small):
    n_blocks = min(n_blocks, n_features)
    X = digits_small[:37]
    fmap = make_map(name, n_features, n_blocks, seed).fit(X)
    Z = fmap.transform(X)
    assert Z.shape == (37, n_features)
    assert sum(fmap.block_sizes) == n_features and len(fmap.block_sizes) == n_blocks
    blocks = [fmap.block(X, j) for j in range(n_blocks)]
    assert [b.shape[1] for b in blocks] == fmap.block_sizes
    np.testing.assert_array_equal(np.hstack(blocks), Z)
    # a block of a subset of rows is that subset of the block
    np.testing.assert_array_equal(fmap.block(X[5:9], n_blocks - 1), blocks[-1][5:9])


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_seed_determines_the_features(name, digits_small):
    X = digits_small[:50]
    a = make_map(name, 200, 3, random_state=11).fit(X).transform(X)
    b = make_map(name, 200, 3, random_state=11).fit(X).transform(X)
    c = make_map(name, 200, 3, random_state=12).fit(X).transform(X)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.01
    # block j depends on (seed, j) only, not on how many blocks follow (up to the
    # sqrt(s_j / s) scaling), nor on the number of threads
    first = make_map(name, 300, 3, random_state=11).fit(X)
    other = make_map(name, 200, 2, random_state=11).fit(X)
    np.testing.assert_allclose(first.block(X, 0) * np.sqrt(300), other.block(X, 0) * np.sqrt(200),
                               rtol=1e-12, atol=1e-300)  # exp(-.) features can be subnormal
    np.testing.assert_array_equal(first.transform(X, n_threads=1), first.transform(X, n_threads=2))


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_csr_equals_dense(name, digits_small):
    X = digits_small[:300].copy()
    X[X < 0.5] = 0.0   # about half the entries become structural zeros
    fmap = make_map(name, 500, 3).fit(X)
    np.testing.assert_allclose(fmap.transform(sp.csr_matrix(X)), fmap.transform(X),
                               rtol=1e-10, atol=1e-13)
    # non-canonical CSR (unsorted, duplicate entries) means the same matrix
    coo = sp.coo_matrix(X)
    half = coo.data / 2
    dup = sp.csr_matrix((np.r_[half, half], (np.r_[coo.row, coo.row], np.r_[coo.col, coo.col])),
                        shape=X.shape)
    np.testing.assert_allclose(fmap.transform(dup), fmap.transform(X), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_float32_in_float32_out(name, digits_small):
    X = digits_small[:200]
    fmap = make_map(name, 1000, 2).fit(X)
    Z64 = fmap.transform(X)
    Z32 = fmap.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    assert fmap.transform(sp.csr_matrix(X, dtype=np.float32)).dtype == np.float32
    G64, G32 = Z64 @ Z64.T, Z32.astype(np.float64) @ Z32.T.astype(np.float64)
    assert np.linalg.norm(G32 - G64) / np.linalg.norm(G64) < 1e-4


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_serialization_round_trip(name, digits_small):
    X = digits_small[:40]
    fmap = make_map(name, 123, 4, random_state=2**63 + 5).fit(X)
    state = json.loads(json.dumps(fmap.to_dict()))
    assert len(json.dumps(state)) < 400          # sizes, parameters and seed only
    again = map_from_dict(state)
    assert type(again) is type(fmap) and again.get_params() == fmap.get_params()
    np.testing.assert_array_equal(again.transform(X), fmap.transform(X))
    np.testing.assert_array_equal(type(fmap).from_dict(state).transform(X), fmap.transform(X))


def test_serialization_rejects_foreign_input():
    with pytest.raises(ValueError, match="not a skylite feature-map"):
        map_from_dict({"type": "Nope", "params": {}, "seed": 0, "n_features_in": 3})
    with pytest.raises(ValueError, match="not a skylite feature-map"):
        map_from_dict({"hello": 1})
    state = GaussianRFF(8).fit(np.ones((2, 3))).to_dict()
    with pytest.raises(ValueError, match="not a LaplacianRFF"):
        LaplacianRFF.from_dict(state)


def test_random_state_none_is_recorded(digits_small):
    fmap = GaussianRFF(50, random_state=None).fit(digits_small)
    again = map_from_dict(fmap.to_dict())
    np.testing.assert_array_equal(again.transform(digits_small), fmap.transform(digits_small))


@pytest.mark.parametrize("make, message", [
    (lambda: GaussianRFF(10, sigma=0), "sigma"),
    (lambda: GaussianRFF(10, sigma=-2.0), "sigma"),
    (lambda: LaplacianRFF(10, sigma=float("inf")), "sigma"),
    (lambda: MaternRFF(10, nu=-1), "nu"),
    (lambda: MaternRFF(10, length_scale=0), "length_scale"),
    (lambda: RandomLaplace(10, beta=0), "beta"),
    (lambda: GaussianRFF(0), "n_features"),
    (lambda: GaussianRFF(10.5), "n_features"),
    (lambda: GaussianRFF(10, n_blocks=11), "n_blocks"),
    (lambda: GaussianRFF(10, n_blocks=0), "n_blocks"),
    (lambda: GaussianRFF(10, random_state=-1), "random_state"),
    (lambda: GaussianRFF(10, random_state="x"), "random_state"),
    (lambda: Identity(n_blocks=17), "n_blocks"),
])
def test_bad_parameters_raise_at_fit(make, message, digits_small):
    with pytest.raises(ValueError, match=message):
        make().fit(digits_small)


def test_bad_input(digits_small):
    X = digits_small[:30]
    fmap = GaussianRFF(20).fit(X)
    with pytest.raises(ValueError, match="16 features"):
        fmap.transform(X[:, :10])
    bad = X.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fmap.transform(bad)
    with pytest.raises(ValueError, match="NaN"):
        fmap.transform(sp.csr_matrix(bad))
    with pytest.raises(ValueError, match="NaN"):
        GaussianRFF(20).fit(bad)
    with pytest.raises(ValueError, match="2D array"):
        fmap.transform(X[0])
    with pytest.raises(ValueError, match="Complex data not supported"):
        fmap.transform(X.astype(complex))
    with pytest.raises(ValueError, match="not fitted"):
        GaussianRFF(20).transform(X)
    with pytest.raises(IndexError, match="block index"):
        fmap.block(X, 1)
    with pytest.raises(ValueError, match="negative"):
        RandomLaplace(20).fit(X - 0.5)
    with pytest.raises(ValueError, match="negative"):
        RandomLaplace(20).fit(X).transform(X - 0.5)
    with pytest.raises(ValueError, match="n_threads"):
        fmap.transform(X, n_threads=0)
    with pytest.raises(ValueError, match="Invalid parameter"):
        fmap.set_params(gamma=2)


def test_empty_and_integer_input(digits_small):
    fmap = GaussianRFF(20).fit(digits_small)
    assert fmap.transform(digits_small[:0]).shape == (0, 20)
    ints = (digits_small * 100).astype(np.int64)
    np.testing.assert_allclose(fmap.transform(ints), fmap.transform(ints.astype(float)))


def test_identity_blocks_are_column_slices(digits_small):
    X = digits_small[:25]
    fmap = Linear().feature_map(None, n_blocks=3).fit(X)
    assert fmap.block_sizes == [6, 5, 5] and fmap.n_features == 16
    np.testing.assert_array_equal(fmap.transform(X), X)
    np.testing.assert_array_equal(fmap.block(sp.csr_matrix(X), 1), X[:, 6:11])
    assert map_from_dict(fmap.to_dict()).block_sizes == [6, 5, 5]


def test_gaussian_rff_matches_scikit_learn_statistics(digits_small):
    """Same kernel as RBFSampler(gamma): errors of the same size at the same s."""
    X = digits_small[:150]
    K = Gaussian(1.0).gram(X)
    ours = np.mean([relative_gram_error(GaussianRFF(512, sigma=1.0, random_state=r), Gaussian(1.0), X)
                    for r in range(5)])
    theirs = []
    for r in range(5):
        Z = RBFSampler(gamma=0.5, n_components=512, random_state=r).fit_transform(X)
        theirs.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
    assert 0.7 < ours / np.mean(theirs) < 1.4


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
def test_features_follow_the_documented_formula(name, digits_small):
    """Block j is a * f(X W_j + b_j) with the parameters the native code generates
    (W_j: d x s_j row-major, then b_j for the cosine maps)."""
    X = digits_small[:60]
    fmap = make_map(name, 300, 3, random_state=4).fit(X)
    d, s = X.shape[1], 300
    for j, s_j in enumerate(fmap.block_sizes):
        p = fmap.transform_op_.block_params(j)
        W = p[:d * s_j].reshape(d, s_j)
        if name == "random_laplace":
            assert np.all(W > 0)      # Levy variates
            expected = np.sqrt(1.0 / s) * np.exp(-X @ W)
        else:
            b = p[d * s_j:]
            assert b.shape == (s_j,) and np.all((0 <= b) & (b < 2 * np.pi))
            expected = np.sqrt(2.0 / s) * np.cos(X @ W + b)
        np.testing.assert_allclose(fmap.block(X, j), expected, rtol=1e-12, atol=1e-15)


# ---- parameters: the documented streams, bit for bit; outputs: the documented formula ----

def _projection_params(name, fmap, j, dtype):
    """block_params(j) rebuilt in numpy from the documented streams of _projection.pyx."""
    _, _, kparams = RANDOM_MAPS[name]
    d, s_j, seed = fmap.n_features_in_, fmap.block_sizes[j], fmap.seed_
    idx = np.arange(d * s_j)
    if name == "random_laplace":
        W = stream("levy", seed, j, 0, idx, 1.0) * (kparams["beta"] ** 2 / 2.0)
        return W.astype(dtype)
    kind = "cauchy" if name == "laplacian" else "normal"
    scale = 1.0 / kparams.get("sigma", kparams.get("length_scale"))
    column_scale = np.full(s_j, scale)
    if name.startswith("matern"):
        nu = kparams["nu"]
        column_scale = scale * np.sqrt(nu / stream("gamma", seed, j, 2, np.arange(s_j), nu))
    W = stream(kind, seed, j, 0, idx).reshape(d, s_j) * column_scale
    phases = 2 * np.pi * stream("uniform", seed, j, 1, np.arange(s_j))
    return np.concatenate([W.ravel(), phases]).astype(dtype)


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
@given(d=st.integers(1, 9), s=st.integers(1, 700), n_blocks=st.integers(1, 3),
       seed=st.integers(0, 2**63 - 1), single=st.booleans())
@settings(max_examples=8, deadline=None)
def test_params_are_the_documented_streams(name, d, s, n_blocks, seed, single):
    """Parameters are generated in column chunks on the stack: still the same numbers."""
    n_blocks = min(n_blocks, s)
    fmap = make_map(name, s, n_blocks, random_state=seed).fit(np.ones((1, d)))
    dtype = np.float32 if single else np.float64
    for j in range(n_blocks):
        np.testing.assert_array_equal(fmap.transform_op_.block_params(j, dtype),
                                      _projection_params(name, fmap, j, dtype))


@pytest.mark.parametrize("name", sorted(RANDOM_MAPS))
@given(n=st.integers(1, 300), d=st.integers(1, 12), s=st.integers(1, 400),
       seed=st.integers(0, 2**32), single=st.booleans(), sparse=st.booleans())
@settings(max_examples=6, deadline=None)
def test_blocks_follow_the_formula_dense_and_csr(name, n, d, s, seed, single, sparse):
    """a f(X W_j + b_j) from the map's own parameters, for dense and CSR rows, float32 and
    float64 (float32 runs the whole map in float32: compared to float64 maths)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[rng.random((n, d)) < 0.5] = 0.0
    dtype = np.float32 if single else np.float64
    X = X.astype(dtype)
    fmap = make_map(name, s, 2 if s > 1 else 1, random_state=seed).fit(X)
    for j, s_j in enumerate(fmap.block_sizes):
        p = fmap.transform_op_.block_params(j, dtype).astype(np.float64)
        arg = X.astype(np.float64) @ p[:d * s_j].reshape(d, s_j)
        if name == "random_laplace":
            expected = np.sqrt(1.0 / s) * np.exp(-arg)
        else:
            arg += p[d * s_j:]
            expected = np.sqrt(2.0 / s) * np.cos(arg)
        Z = fmap.block(sp.csr_matrix(X) if sparse else X, j)
        assert Z.dtype == dtype
        # float32: rounding of the argument, relative to its size
        atol = np.sqrt(2.0 / s) * (1e-5 if single else 1e-12) * (1 + np.abs(arg).max())
        np.testing.assert_allclose(Z, expected, rtol=1e-5 if single else 1e-10, atol=atol)


# ---- a native map must implement apply_* ----

def test_base_block_transform_is_loud():
    """BlockTransform's own apply_* writes NaN and `fill` / `check_apply` raise."""
    op = BlockTransform(3, np.array([0, 2, 5], dtype=np.intp))
    with pytest.raises(NotImplementedError, match="BlockTransform does not implement"):
        op.check_apply()
    X = np.ones((300, 3))
    for dtype in (np.float64, np.float32):
        csr = sp.csr_matrix(X.astype(dtype))
        csr.indptr = csr.indptr.astype(np.int64)   # the canonical layout `fill` takes
        for rows in (X.astype(dtype), csr):
            out = np.zeros((300, 5), dtype=dtype)
            with pytest.raises(NotImplementedError, match="apply_f64 and apply_f32"):
                op.fill(rows, out, np.array([0, 1]), 2)
            assert np.isnan(out).all()


def test_feature_map_without_native_apply_fails_at_fit():
    class Unfinished(GaussianRFF):
        def _make_transform_op(self, d, offsets, seed):
            return BlockTransform(d, offsets, seed)

    with pytest.raises(NotImplementedError):
        Unfinished(8).fit(np.ones((2, 3)))


@pytest.mark.parametrize("fmap", [GaussianRFF(9, n_blocks=2), Identity(n_blocks=2),
                                  RandomLaplace(5), MaternRFF(7, nu=0.7),
                                  GaussianRFF(9, n_blocks=2, sequence="sobol"),
                                  LaplacianRFF(5, sequence="halton"), JLT(6, n_blocks=2),
                                  SRHT(6, n_blocks=2), CountSketch(6, n_blocks=2),
                                  MaternFastfood(9, n_blocks=2),
                                  ComposedMap(CountSketch(3), GaussianRFF(5, n_blocks=2))])
def test_native_maps_implement_apply(fmap):
    fmap.fit(np.ones((1, 4))).transform_op_.check_apply()


ROW_BY_ROW = {"fastfood": lambda: Fastfood(70, sigma=1.0, n_blocks=2),
              "matern_fastfood": lambda: MaternFastfood(70, nu=1.5, n_blocks=2),
              "srht": lambda: SRHT(20, n_blocks=2),
              "identity": lambda: Identity(n_blocks=3),
              "srht_then_fastfood": lambda: ComposedMap(SRHT(12), Fastfood(40, n_blocks=2))}


@pytest.mark.parametrize("name", sorted(ROW_BY_ROW))
@given(cuts=st.lists(st.integers(1, 36), max_size=6), single=st.booleans(),
       sparse=st.booleans())
@settings(max_examples=10, deadline=None)
def test_maps_computed_row_by_row_give_a_row_the_same_bits_in_any_call(name, cuts, single,
                                                                        sparse, digits_small):
    """The maps that say so (`row_by_row`, which lets the row sweep choose its own tiles)
    give every row the same features whatever rows are transformed with it."""
    X = digits_small[:37].astype(np.float32 if single else np.float64)
    fmap = ROW_BY_ROW[name]().fit(X)
    assert fmap.transform_op_.row_by_row
    rows = sp.csr_matrix(X) if sparse else X
    whole = fmap.transform(rows)
    edges = [0, *sorted(set(cuts)), 37]
    parts = [fmap.transform(rows[a:b]) for a, b in zip(edges, edges[1:]) if b > a]
    np.testing.assert_array_equal(np.vstack(parts), whole)


@pytest.mark.parametrize("fmap", [GaussianRFF(9), MaternRFF(9), RandomLaplace(9), JLT(9)])
def test_maps_by_matrix_products_do_not_claim_to_work_row_by_row(fmap, digits_small):
    """A GEMM may round a row differently with the rows in the call."""
    assert not fmap.fit(digits_small[:20]).transform_op_.row_by_row
