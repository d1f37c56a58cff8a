"""Nystroem features: exactness, convergence in the landmarks, the block properties the engine
relies on, the RKHS-norm regularizer, persistence, estimators and bad input."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

import skylite
from skylite import KernelLogisticRegression, KernelRidge, KernelSVC
from skylite.admm import BlockADMM
from skylite.admm.memory import footprint, run_footprint
from skylite.kernels import ExpSemigroup, Gaussian, Laplacian, Matern, Polynomial
from skylite.prox import RKHSNorm, get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite.sketch import Nystroem, map_from_dict
from skylite.sketch import nystroem as nystroem_module

KERNELS = {
    "gaussian": Gaussian(1.0),
    "laplacian": Laplacian(4.0),
    "matern": Matern(1.5, 1.0),
    "matern_rough": Matern(0.7, 2.0),
    "polynomial": Polynomial(2, 0.5, 1.0),
    "exp_semigroup": ExpSemigroup(0.1),
}
pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


def gram_error(fmap, kernel, X):
    Z = fmap.transform(X)
    K = kernel.gram(X)
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_all_rows_as_landmarks_give_the_exact_gram_matrix(name, digits_small):
    X = digits_small[:200]
    kernel = KERNELS[name]
    fmap = Nystroem(kernel, n_features=len(X), landmarks="uniform").fit(X)
    Z = fmap.transform(X)
    K = kernel.gram(X)
    # the Matern kernel of general nu goes through K_nu, evaluated by two libraries
    tolerance = 1e-9 if name == "matern_rough" else 1e-10
    assert np.abs(Z @ Z.T - K).max() <= tolerance * np.abs(K).max()


@pytest.mark.parametrize("name", ["gaussian", "laplacian", "matern"])
@pytest.mark.parametrize("rule", ["uniform", "kmeans"])
def test_gram_error_falls_as_landmarks_grow(name, rule, pendigits):
    X = pendigits[0][:1000] / 100.0
    kernel = KERNELS[name]
    errors = [gram_error(Nystroem(kernel, n_features=s, n_blocks=1, landmarks=rule).fit(X),
                         kernel, X) for s in (25, 100, 400)]
    assert errors[0] > errors[1] > errors[2], errors
    assert errors[2] < 0.5 * errors[0], errors


def test_kmeans_landmarks_beat_uniform_ones_on_mnist(mnist600):
    X = mnist600
    kernel = Gaussian(6.0)
    errors = {rule: np.mean([gram_error(Nystroem(kernel, n_features=64, landmarks=rule,
                                                 random_state=seed).fit(X), kernel, X)
                             for seed in range(3)])
              for rule in ("uniform", "kmeans")}
    assert errors["kmeans"] < 0.9 * errors["uniform"], errors


def test_nystroem_beats_random_features_at_equal_size(mnist600):
    """The Gram error of Nystroem features is a fraction of that of RFF at equal s."""
    X = mnist600
    kernel = Gaussian(6.0)
    nys = gram_error(Nystroem(kernel, n_features=256, n_blocks=2).fit(X), kernel, X)
    rff = np.mean([gram_error(kernel.feature_map(256, n_blocks=2, random_state=seed).fit(X),
                              kernel, X) for seed in range(3)])
    assert nys <= 0.5 * rff, (nys, rff)


@settings(max_examples=15, deadline=None)
@given(n_blocks=st.integers(1, 5), threads=st.integers(1, 3),
       kernel=st.sampled_from(sorted(KERNELS)), single=st.booleans())
def test_block_j_is_the_same_whatever_threads_order_or_input_format(digits_small, n_blocks,
                                                                      threads, kernel,
                                                                      single):
    X = digits_small[:120]
    fmap = Nystroem(KERNELS[kernel], n_features=40, n_blocks=n_blocks).fit(X)
    rows = X.astype(np.float32) if single else X
    Z = fmap.transform(rows, n_threads=threads)
    offsets = fmap.transform_op_.block_offsets
    for j in reversed(range(n_blocks)):            # any order
        assert np.array_equal(fmap.block(rows, j, n_threads=1),
                              Z[:, offsets[j]:offsets[j + 1]])
    # CSR rows give the same features, up to the order of the sums (which the whitening
    # amplifies by at most its norm)
    Zs = fmap.transform(sp.csr_matrix(rows), n_threads=threads)
    assert np.allclose(Zs, Z, rtol=1e-4 if single else 1e-8,
                       atol=1e-5 if single else 1e-10)
    if single:
        assert Z.dtype == np.float32
        assert np.allclose(Z, fmap.transform(X), atol=1e-4)


def test_the_same_seed_gives_the_same_landmarks_and_a_new_seed_others(digits_small):
    X = digits_small
    a = Nystroem(Gaussian(1.0), n_features=30, n_blocks=3, random_state=4).fit(X)
    b = Nystroem(Gaussian(1.0), n_features=30, n_blocks=3, random_state=4).fit(X)
    c = Nystroem(Gaussian(1.0), n_features=30, n_blocks=3, random_state=5).fit(X)
    assert np.array_equal(a.landmarks_, b.landmarks_)
    assert np.array_equal(a.transform(X), b.transform(X))
    assert not np.array_equal(a.landmarks_, c.landmarks_)
    # uniform landmarks are rows of X
    u = Nystroem(Gaussian(1.0), n_features=30, landmarks="uniform").fit(X)
    assert all((X == row).all(axis=1).any() for row in u.landmarks_)


def test_duplicate_landmarks_are_dropped_from_the_whitening():
    X = np.repeat(np.random.default_rng(0).random((10, 3)), 3, axis=0)    # 30 rows, 10 distinct
    kernel = Gaussian(0.5)
    fmap = Nystroem(kernel, n_features=30, landmarks="uniform").fit(X)
    Z = fmap.transform(X)
    assert np.isfinite(Z).all()
    assert np.abs(Z @ Z.T - kernel.gram(X)).max() < 1e-8


def test_rkhs_gram_is_the_norm_of_the_spanned_functions(digits_small):
    """w^T G w = ||f||_H^2 for f = z(.) w = sum_l k(., l) beta_l, i.e. beta^T K_LL beta."""
    X = digits_small
    kernel = Gaussian(1.0)
    fmap = Nystroem(kernel, n_features=60, n_blocks=3).fit(X)
    G = fmap.rkhs_gram()
    assert np.allclose(G, G.T)
    w = np.random.default_rng(1).standard_normal(60)
    # beta: the coefficients of f on the landmarks, block by block
    offsets, beta, start = fmap.transform_op_.block_offsets, [], 0
    for j in range(3):
        a, b = offsets[j], offsets[j + 1]
        M = fmap.whitening_[start:start + (b - a) ** 2].reshape(b - a, b - a)
        beta.append(M @ w[a:b])
        start += (b - a) ** 2
    beta = np.concatenate(beta)
    f_on_X = fmap.transform(X) @ w
    assert np.allclose(f_on_X, kernel.gram(X, fmap.landmarks_) @ beta)
    assert np.isclose(w @ G @ w, beta @ kernel.gram(fmap.landmarks_) @ beta, rtol=1e-8)
    # one block: G = I, the l2 regularizer is already the RKHS norm
    one = Nystroem(kernel, n_features=60, n_blocks=1).fit(X)
    assert np.allclose(one.rkhs_gram(), np.eye(60))


@settings(max_examples=20, deadline=None)
@given(t=st.floats(1e-3, 1e3), seed=st.integers(0, 10))
def test_rkhs_norm_prox_is_optimal(digits_small, t, seed):
    fmap = Nystroem(Gaussian(1.0), n_features=30, n_blocks=3).fit(digits_small)
    reg = RKHSNorm(fmap)
    V = np.random.default_rng(seed).standard_normal((30, 2))
    X = reg.prox(V, t)
    # optimality: t G X + X - V = 0
    assert np.allclose(t * reg.gram @ X + X - V, 0, atol=1e-9 * (1 + t))
    # and no other point does better
    objective = lambda W: t * reg.value(W) + 0.5 * np.sum((W - V) ** 2)
    for _ in range(5):
        other = X + 1e-3 * np.random.default_rng(seed + 100).standard_normal(X.shape)
        assert objective(X) <= objective(other)


@settings(max_examples=15, deadline=None)
@given(s=st.integers(1, 1300), m=st.integers(1, 3), seed=st.integers(0, 5))
def test_the_rkhs_value_reads_the_lower_triangle_and_equals_the_quadratic_form(s, m, seed):
    """r(W) from the lower triangle's chunks (`_quadratic_form`, chunks of CHUNK_ROWS rows,
    so s crosses several chunk boundaries) equals 1/2 tr(W^T G W), with the same bits on one
    thread and two."""
    from skylite.prox.rkhs import _quadratic_form
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((s, s))
    G, W = (A + A.T) / 2, rng.standard_normal((s, m))
    one = _quadratic_form(G, W, 1)
    assert one == pytest.approx(0.5 * np.vdot(W, G @ W), rel=1e-12, abs=1e-12 * s)
    assert one == _quadratic_form(G, W, 2)


def test_the_rkhs_prox_switches_to_an_eigendecomposition_after_many_steps(digits_small):
    """After EIGEN_AFTER Cholesky factorizations (one per new step t) the prox applies G's
    eigendecomposition: still optimal, equal to the factor's result to rounding, and the
    same bits for any thread count."""
    from skylite.prox import rkhs
    fmap = Nystroem(Gaussian(1.0), n_features=120, n_blocks=3).fit(digits_small)
    reg, threads = RKHSNorm(fmap), RKHSNorm(fmap)
    V = np.random.default_rng(0).standard_normal((120, 3))
    steps = np.geomspace(1e-2, 1e2, rkhs.EIGEN_AFTER + 3)
    for t in steps:
        X = reg.prox(V, t, n_threads=1)
        assert np.allclose(t * reg.gram @ X + X - V, 0, atol=1e-9 * (1 + t))
        by_factor = RKHSNorm(fmap).prox(V, t)
        assert np.abs(X - by_factor).max() <= 1e-10 * np.abs(by_factor).max()
        assert np.array_equal(X, threads.prox(V, t, n_threads=2))
    assert reg._eigen is not None and reg._n_factors == rkhs.EIGEN_AFTER


def _objective(Z, Y, W, loss, alpha, G=None):
    value = loss.value(Z @ W, Y) / len(Z)
    reg = 0.5 * np.sum(W * W) if G is None else 0.5 * np.vdot(W, G @ W)
    return value + alpha * reg


@pytest.mark.parametrize("n_blocks", [1, 4])
def test_admm_reaches_linear_svc_optimum_on_explicit_features(pendigits, n_blocks):
    """Hinge loss on Nystroem features, l2 (one block) or the RKHS norm (4 blocks): the ADMM
    objective equals liblinear's optimum on the explicit Z (or Z G^{-1/2}) within 1e-4."""
    X, y = pendigits[0][:400] / 100.0, pendigits[1][:400]
    n, alpha = len(X), 1e-3
    fmap = Nystroem(Gaussian(0.6), n_features=64, n_blocks=n_blocks).fit(X)
    Z = fmap.transform(X)
    hinge = get_loss("hinge")
    Y, classes = code_labels(y, hinge)
    reg = RKHSNorm(fmap) if n_blocks > 1 else get_regularizer("l2")
    engine = BlockADMM(fmap, hinge, reg, alpha, max_iter=4000, tol=1e-7, n_threads=1,
                       memory_budget=10**8).fit(X, Y)
    G = fmap.rkhs_gram() if n_blocks > 1 else None
    ours = _objective(Z, Y, engine.coef_, hinge, alpha, G)
    if G is None:
        features, back = Z, np.eye(64)
    else:
        lam, Q = np.linalg.eigh(G)
        back = (Q / np.sqrt(lam)) @ Q.T            # G^{-1/2}
        features = Z @ back
    svc = LinearSVC(loss="hinge", C=1.0 / (n * alpha), fit_intercept=False, tol=1e-10,
                    max_iter=200000).fit(features, y)
    W_svc = back @ svc.coef_.T
    theirs = _objective(Z, Y, W_svc, hinge, alpha, G)
    assert abs(ours - theirs) <= 1e-4 * abs(theirs), (ours, theirs)


def test_admm_reaches_logistic_regression_optimum_with_the_rkhs_norm(pendigits):
    X, y = pendigits[0][:400] / 100.0, pendigits[1][:400]
    n, alpha = len(X), 1e-3
    fmap = Nystroem(Gaussian(0.6), n_features=48, n_blocks=3).fit(X)
    model = KernelLogisticRegression(feature_map=fmap, alpha=alpha, tol=1e-8, max_iter=3000,
                                     n_threads=1).fit(X, y)
    assert model.regularizer_.name == "rkhs"
    Z = model.feature_map_.transform(X)
    G = model.feature_map_.rkhs_gram()
    lam, Q = np.linalg.eigh(G)
    back = (Q / np.sqrt(lam)) @ Q.T
    lr = LogisticRegression(C=1.0 / (n * alpha), fit_intercept=False, tol=1e-12,
                            max_iter=20000).fit(Z @ back, y)
    logistic = get_loss("logistic")
    Y, _ = code_labels(y, logistic)
    ours = _objective(Z, Y, model.coef_, logistic, alpha, G)
    theirs = _objective(Z, Y, back @ lr.coef_.T, logistic, alpha, G)
    assert abs(ours - theirs) <= 1e-4 * abs(theirs), (ours, theirs)
    assert np.isclose(model.objective(X, y), ours, rtol=1e-7)


def test_squared_loss_with_the_rkhs_norm_is_the_full_nystroem_ridge(pendigits):
    """Kernel ridge on 4 blocks of Nystroem features with the RKHS norm predicts as the
    closed form of full Nystroem ridge on the same landmarks: f = k(., L) beta,
    (K_XL^T K_XL + n alpha K_LL) beta = K_XL^T y."""
    X, y = pendigits[0][:300] / 100.0, pendigits[0][:300, 0] / 100.0
    n, alpha = len(X), 1e-3
    kernel = Gaussian(0.6)
    model = KernelRidge(feature_map=Nystroem(kernel, n_features=40, n_blocks=4), alpha=alpha,
                        tol=1e-10, max_iter=5000, n_threads=1).fit(X, y)
    L = model.feature_map_.landmarks_
    K_XL, K_LL = kernel.gram(X, L), kernel.gram(L)
    beta = np.linalg.solve(K_XL.T @ K_XL + n * alpha * K_LL, K_XL.T @ y)
    assert np.allclose(model.predict(X), K_XL @ beta, atol=1e-5)


def test_estimators_take_method_nystroem_with_every_kernel(pendigits):
    """KernelSVC(method="nystroem") with 256 landmarks comes close to the exact kernel SVM
    with the same C on 1,500 pendigits rows, for every kernel."""
    from sklearn.svm import SVC
    X, y, Xt, yt = pendigits
    X, Xt = X[:1500] / 100.0, Xt[:1000] / 100.0
    y, yt = y[:1500], yt[:1000]
    for kernel, params in (("gaussian", {"sigma": 0.6}), ("laplacian", {"sigma": 4.0}),
                           ("matern", {"nu": 1.5, "length_scale": 0.6}),
                           ("polynomial", {"degree": 3, "gamma": 1.0, "coef0": 1.0}),
                           ("exp_semigroup", {"beta": 0.1})):
        model = KernelSVC(kernel, method="nystroem", n_features=256, alpha=1e-4,
                          max_iter=150, **params).fit(X, y)
        assert isinstance(model.feature_map_, Nystroem)
        k = model.feature_map_.kernel
        exact = SVC(kernel="precomputed", C=1.0 / (len(X) * 1e-4)).fit(k.gram(X), y)
        assert model.score(Xt, yt) >= exact.score(k.gram(Xt, X), yt) - 0.07, kernel


def test_method_auto_is_recorded_capped_at_the_rows_and_saved(digits_small, tmp_path):
    """method="auto": Nystroem with k-means landmarks for the Gaussian kernel, at most one
    landmark per row (every row then, the exact kernel machine on them), the kernel's first
    map for the others; `method_` records it, a refit reproduces it, a model file keeps it,
    and the stacked folds of a search refuse the map that looks at the rows."""
    from skylite.model_selection._stacked import stackable
    from skylite._distributed import Distributed
    X = digits_small[:240]
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    kw = dict(sigma=0.6, method="auto", n_features=512, max_iter=50)
    model = KernelSVC(**kw).fit(X, y)
    assert model.method_ == "nystroem" and model.feature_map_.n_features == len(X)
    landmarks = model.feature_map_.landmarks_
    assert np.array_equal(np.unique(landmarks, axis=0), np.unique(X, axis=0))
    one_block = KernelSVC(**kw, n_blocks=1).fit(X, y).feature_map_
    Z, K = one_block.transform(X), Gaussian(0.6).gram(X)
    assert np.abs(Z @ Z.T - K).max() <= 1e-10 * np.abs(K).max()
    again = KernelSVC(**kw).fit(X, y)
    assert np.array_equal(again.coef_, model.coef_)
    model.save(tmp_path / "auto.sky")
    assert skylite.load(tmp_path / "auto.sky").method_ == "nystroem"
    other = KernelSVC("laplacian", sigma=4.0, method="auto", n_features=64, max_iter=5)
    assert other.fit(X, y).method_ == "rff"
    # the default: "auto" for KernelSVC, the kernel's first map for the other estimators
    assert KernelSVC(sigma=0.6, n_features=64, max_iter=5).fit(X, y).method_ == "nystroem"
    klr = KernelLogisticRegression(sigma=0.6, n_features=64, max_iter=5).fit(X, y)
    assert klr.method_ == "rff"
    reason = stackable(KernelSVC(sigma=0.6, method="auto"), "C", Distributed(None))
    assert "Nystroem" in reason


def test_early_stopping_and_predictions_of_a_reloaded_model_are_bitwise(pendigits, tmp_path):
    X, y, Xt, _ = pendigits
    model = KernelSVC(sigma=60.0, method="nystroem", n_features=300, n_blocks=3,
                      alpha=1e-5, early_stopping=True, max_iter=60,
                      precision="float32").fit(X, y)
    assert model.validation_indices_ is not None and model.regularizer_.name == "rkhs"
    path = tmp_path / "model.skl"
    model.save(path)
    loaded = skylite.load(path)
    assert np.array_equal(loaded.feature_map_.landmarks_, model.feature_map_.landmarks_)
    assert np.array_equal(loaded.decision_function(Xt), model.decision_function(Xt))
    assert np.array_equal(loaded.predict(Xt), model.predict(Xt))
    assert np.isclose(loaded.objective(X[:500], y[:500]), model.objective(X[:500], y[:500]),
                      rtol=1e-12)
    # a model file holds the landmark rows and nothing random: rebuilt, not re-drawn
    assert path.stat().st_size >= model.feature_map_.landmarks_.nbytes
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.decision_function(Xt), model.decision_function(Xt))


def test_to_dict_and_fitted_arrays_rebuild_the_map(digits_small):
    fmap = Nystroem(Laplacian(2.0), n_features=24, n_blocks=2).fit(digits_small)
    state = fmap.to_dict()
    rebuilt = map_from_dict(state, arrays=fmap.fitted_arrays())
    assert np.array_equal(rebuilt.transform(digits_small), fmap.transform(digits_small))
    assert rebuilt.to_dict() == state
    with pytest.raises(ValueError, match="landmarks"):
        map_from_dict(state)


def test_the_thread_count_does_not_change_the_model(pendigits):
    X, y = pendigits[0][:800], pendigits[1][:800]
    fits = [KernelSVC(sigma=60.0, method="nystroem", n_features=128, n_blocks=4,
                      alpha=1e-4, max_iter=40, n_threads=t).fit(X, y) for t in (1, 2, 3)]
    for other in fits[1:]:
        assert np.array_equal(other.coef_, fits[0].coef_)


def test_cache_state_and_sweep_do_not_change_the_iterates(pendigits):
    """Blocks regenerated every iteration (memory_budget=0) or cached, by the column sweep or
    the row sweep: the same Nystroem features, the same iterates."""
    X, y = pendigits[0][:900] / 100.0, pendigits[1][:900]
    fmap = Nystroem(Gaussian(0.6), n_features=64, n_blocks=4).fit(X)
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    fits = [BlockADMM(fmap, hinge, RKHSNorm(fmap), 1e-3, max_iter=25, tol=1e-14,
                      n_threads=2, memory_budget=budget, sweep=sweep,
                      precision="float64").fit(X, Y)
            for budget, sweep in ((0, "columns"), (10**9, "columns"), (0, "rows"),
                                  (10**9, "rows"))]
    for other in fits[1:]:
        assert np.allclose(other.coef_, fits[0].coef_, rtol=1e-9, atol=1e-12)
    assert np.array_equal(fits[0].coef_, fits[1].coef_)


def test_every_loss_trains_on_nystroem_features(pendigits):
    """Classifiers above 90% on pendigits; the regressors within 0.05 R^2 of exact kernel
    ridge (Cholesky of the kernel matrix) on a smooth target."""
    X, y, Xt, yt = pendigits
    X, Xt, y, yt = X[:1500] / 100.0, Xt[:800] / 100.0, y[:1500], yt[:800]
    target, target_test = X[:, 0] + X[:, 1] ** 2, Xt[:, 0] + Xt[:, 1] ** 2
    exact = KernelRidge(sigma=0.6, alpha=1e-5, solver="exact").fit(X, target)
    exact_r2 = exact.score(Xt, target_test)
    for cls, labels in ((KernelSVC, True), (KernelLogisticRegression, True),
                        (KernelRidge, False), (skylite.KernelLADRegression, False)):
        model = cls(sigma=0.6, method="nystroem", n_features=512, alpha=1e-5,
                    max_iter=200).fit(X, y if labels else target)
        score = model.score(Xt, yt if labels else target_test)
        assert score > (0.9 if labels else exact_r2 - 0.05), (cls.__name__, score, exact_r2)


def test_checkpoints_resume_a_nystroem_fit(pendigits, tmp_path):
    X, y = pendigits[0][:800], pendigits[1][:800]
    path = tmp_path / "ckpt"
    kw = dict(sigma=60.0, method="nystroem", n_features=96, n_blocks=3, alpha=1e-4,
              tol=1e-12, n_threads=1)
    reference = KernelSVC(max_iter=30, **kw).fit(X, y)

    def stop(iteration, record, W):
        if iteration == 12:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        KernelSVC(max_iter=30, checkpoint=path, checkpoint_every=5, callback=stop,
                  **kw).fit(X, y)
    resumed = KernelSVC(max_iter=30, checkpoint=path, checkpoint_every=5, **kw).fit(X, y)
    assert np.array_equal(resumed.coef_, reference.coef_)


def test_the_memory_plan_counts_landmarks_and_the_rkhs_gram(digits_small):
    fmap = Nystroem(Gaussian(1.0), n_features=64, n_blocks=4).fit(digits_small)
    engine = BlockADMM(fmap, get_loss("hinge"), RKHSNorm(fmap), 1e-3, n_threads=1)
    need = run_footprint(fmap.transform_op_, [300], 10, feature_map=fmap,
                         regularizer=engine.regularizer, settings=engine.settings, n_threads=1)
    assert need.persistent["map landmarks"] == fmap.landmarks_.nbytes + fmap.whitening_.nbytes
    assert need.persistent["regularizer"] == 3 * 8 * 64 * 64
    plain = footprint(fmap.transform_op_, [300], 10, n_threads=1, single=False,
                      relaxed=False)
    assert need.total > plain.total


def test_bad_input_is_refused_before_any_work(digits_small, monkeypatch):
    X = digits_small[:50]
    with pytest.raises(ValueError, match="at least 64 training rows"):
        Nystroem(Gaussian(1.0), n_features=64).fit(X)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Nystroem(Gaussian(1.0), n_features=16).fit(bad)
    with pytest.raises(ValueError, match="landmarks must be one of"):
        Nystroem(Gaussian(1.0), n_features=16, landmarks="random").fit(X)
    with pytest.raises(ValueError, match="Nystroem supports"):
        Nystroem(object(), n_features=16).fit(X)
    with pytest.raises(ValueError, match="negative"):
        Nystroem(ExpSemigroup(1.0), n_features=16).fit(X - 1.0)
    monkeypatch.setattr("skylite.sketch.nystroem.available_memory_bytes", lambda: 10**4)
    with pytest.raises(MemoryError, match="lower n_features"):
        Nystroem(Gaussian(1.0), n_features=40).fit(X)
    with pytest.raises(MemoryError, match="lower n_features"):
        KernelSVC(method="nystroem", n_features=40, sigma=1.0).fit(X, np.arange(50) % 2)
    # rows so wide that the dense landmarks, not s, exceed the memory: the alternatives
    wide = sp.random(50, 10**6, density=1e-5, format="csr", random_state=0)
    monkeypatch.setattr("skylite.sketch.nystroem.available_memory_bytes", lambda: 10**8)
    with pytest.raises(MemoryError, match="method='rff'.*linear sketch.*wide sparse rows"):
        KernelSVC(n_features=40, sigma=1.0).fit(wide, np.arange(50) % 2)
    # the first alternative named: its frequencies are drawn for the ~500 columns in use
    rff = KernelSVC(method="rff", n_features=40, sigma=1.0, max_iter=500).fit(
        wide, np.arange(50) % 2)
    assert rff.converged_ and rff.memory_estimate_ < 2**24


def test_kmeans_on_sparse_rows_keeps_them_sparse_and_finds_the_dense_centres(monkeypatch):
    """The pool of CSR rows is gathered and clustered as CSR (an iteration costs nnz s, not
    P d s): the centres of the densified pool, and a landmark set whose densified pool
    would not fit in the memory passes the check."""
    from pathlib import Path
    from skylite.io import load_svmlight
    X = load_svmlight(Path(__file__).resolve().parent / "data" / "reuters_sample.svm.gz")[0]
    init = X[:60].toarray()
    sparse = nystroem_module.kmeans_centres(X, init, 3)
    np.testing.assert_allclose(sparse, nystroem_module.kmeans_centres(X.toarray(), init, 3),
                               rtol=1e-6, atol=1e-12)
    ids = np.random.default_rng(0).permutation(X.shape[0])[:100]
    from skylite._distributed import Distributed
    pool = nystroem_module._gather_rows(X, ids, [X.shape[0]], Distributed(None))
    assert sp.issparse(pool) and pool.has_canonical_format
    np.testing.assert_array_equal(pool.toarray(), X[ids].toarray())
    # d = 200,000: the dense pool of 50 rows (80 MB) and the landmarks (64 MB) exceed
    # 100 MB; the sparse pool and the landmarks do not
    wide = sp.random(50, 200_000, density=5e-5, format="csr", random_state=0)
    monkeypatch.setattr("skylite.sketch.nystroem.available_memory_bytes", lambda: 10**8)
    fmap = Nystroem(Gaussian(1.0), n_features=40).fit(wide)
    assert fmap.landmarks_.shape == (40, 200_000)
    with pytest.raises(MemoryError):
        nystroem_module._check_memory(40, 200_000, 50, [40], 8 * 200_000)  # rows dense


def test_kmeans_keeps_a_centre_that_loses_its_rows():
    rows = np.array([[0.0], [0.1], [10.0], [10.1]])
    init = np.array([[0.0], [10.0], [100.0]])     # the third centre never wins a row
    centres = nystroem_module.kmeans_centres(rows, init, 3)
    assert np.allclose(centres, [[0.05], [10.05], [100.0]])


def test_shared_across_bandwidths_computes_the_kmeans_centres_once_per_pool(digits_small,
                                                                          monkeypatch):
    """Inside shared_across_bandwidths(), maps of different bandwidths on the same rows get
    the same k-means landmarks, bit for bit, from one run of Lloyd's algorithm; other rows,
    or a fit outside the block, run it again."""
    from skylite.sketch import _landmarks
    runs = []
    lloyd = _landmarks._lloyd
    monkeypatch.setattr(_landmarks, "_lloyd", lambda *a: runs.append(1) or lloyd(*a))
    fit = lambda sigma, X: Nystroem(Gaussian(sigma), n_features=40, n_blocks=2,
                                    landmarks="kmeans").fit(X)
    alone = fit(1.0, digits_small)
    with _landmarks.shared_across_bandwidths():
        first, second = fit(1.0, digits_small), fit(3.0, digits_small)
        other = fit(1.0, digits_small[::-1].copy())
    assert len(runs) == 3                       # alone, the first of the shared pair, other
    assert np.array_equal(first.landmarks_, alone.landmarks_)
    assert np.array_equal(second.landmarks_, first.landmarks_)
    assert not np.array_equal(second.whitening_, first.whitening_)
    assert not np.array_equal(other.landmarks_, first.landmarks_)
    fit(3.0, digits_small)
    assert len(runs) == 4 and _landmarks._shared is None


@pytest.mark.parametrize("kernels", [(Gaussian(1.0), Gaussian(3.0), Polynomial()),
                                     (Laplacian(1.0), Laplacian(2.0)),
                                     (Matern(1.5, 1.0), Matern(0.7, 2.0))],
                         ids=["dot products", "l1 distances", "squared distances"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_shared_across_bandwidths_makes_the_precursor_once_with_the_same_bits(
        digits_small, kernels, dtype, sparse, monkeypatch):
    """Inside shared_across_bandwidths(), maps of one kernel family on the same landmarks
    and rows compute the bandwidth-free part of their kernel blocks once and make every
    block from it, bit for bit the features computed outside; other rows, other landmarks
    or another precision compute their own."""
    from skylite.sketch import _landmarks
    made = []

    def counted(family, landmarks, offsets, X, dtype, compute):
        return _landmarks.kept_precursor(family, landmarks, offsets, X, dtype,
                                         lambda P: made.append(X.shape) or compute(P))
    monkeypatch.setattr(nystroem_module, "kept_precursor", counted)
    X = digits_small.astype(dtype)
    X = sp.csr_matrix(X) if sparse else X
    first = Nystroem(kernels[0], n_features=40, n_blocks=3, random_state=0).fit(X)
    maps = [first] + [Nystroem(k, n_features=40, n_blocks=3)._set_landmarks(first.landmarks_, 0)
                      for k in kernels[1:]]
    alone = [m.transform(X) for m in maps] + [maps[1].block(X, 2)]
    assert not made
    with _landmarks.shared_across_bandwidths():
        shared = [m.transform(X, n_threads=t) for m, t in zip(maps, [1, 2, 3])]
        shared.append(maps[1].block(X, 2))
        assert made == [X.shape]
        maps[0].transform(X[:10])                                   # other rows
        maps[0].transform(X.astype(np.float64 if dtype == np.float32 else np.float32))
        other = Nystroem(kernels[0], n_features=40, n_blocks=3, random_state=1).fit(X)
        other.transform(X)                                          # other landmarks
        assert len(made) == 4
    for a, b in zip(alone, shared):
        assert a.dtype == b.dtype == dtype and np.array_equal(a, b)
    assert _landmarks._shared is None


def test_the_kept_precursors_stay_within_their_budget(digits_small, monkeypatch):
    """Precursors beyond the budget are not kept (the features are made directly, the same
    bits), and the oldest are dropped to make room for a new one."""
    from skylite.sketch import _landmarks
    fmap = Nystroem(Gaussian(1.0), n_features=40, n_blocks=2).fit(digits_small)
    one = digits_small.shape[0] * 40 * digits_small.dtype.itemsize
    monkeypatch.setattr(_landmarks, "PRECURSOR_BYTES", one + one // 2)
    halves = [digits_small[:len(digits_small) // 2].copy(),
              digits_small[len(digits_small) // 2:].copy()]
    alone = fmap.transform(digits_small)
    with _landmarks.shared_across_bandwidths():
        assert np.array_equal(fmap.transform(digits_small), alone)
        kept = _landmarks._shared["precursors"]
        assert [P.shape[0] for P in kept.values()] == [len(digits_small)]
        fmap.transform(halves[0])
        assert [P.shape[0] for P in kept.values()] == [len(digits_small), len(halves[0])]
        fmap.transform(halves[1])                                      # the oldest dropped
        assert [P.shape[0] for P in kept.values()] == [len(h) for h in halves]
        monkeypatch.setitem(_landmarks._shared, "budget", one // 4)
        before = list(kept)
        assert np.array_equal(fmap.transform(digits_small), alone)    # beyond the budget
        assert list(kept) == before


def test_a_map_description_is_read_with_skylite_sketch_alone(digits_small, tmp_path):
    """The kernel classes register with skylite.sketch as skylite.kernels loads; a program
    that imported skylite.sketch alone still rebuilds a Nystroem map from its dict."""
    import json
    import subprocess
    import sys
    fmap = Nystroem(Matern(0.7, 2.0), n_features=12, n_blocks=2).fit(digits_small)
    np.savez(tmp_path / "arrays.npz", X=digits_small, **fmap.fitted_arrays())
    (tmp_path / "state.json").write_text(json.dumps(fmap.to_dict()))
    script = f"""
import json, sys
import numpy as np
import skylite.sketch
assert "skylite.kernels" not in sys.modules
data = np.load({str(tmp_path / "arrays.npz")!r})
state = json.load(open({str(tmp_path / "state.json")!r}))
fmap = skylite.sketch.map_from_dict(state, arrays=dict(landmarks=data["landmarks"],
                                                       whitening=data["whitening"]))
np.save({str(tmp_path / "Z.npy")!r}, fmap.transform(data["X"]))
print(type(fmap.kernel).__module__)
"""
    # outside the checkout: `python -c` there would import the uncompiled source tree
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "skylite.kernels._kernels"
    assert np.array_equal(np.load(tmp_path / "Z.npy"), fmap.transform(digits_small))


def test_the_landmark_rule_is_a_parameter_of_the_estimators(pendigits):
    X, y = pendigits[0][:300], pendigits[1][:300]
    model = KernelSVC(sigma=60.0, method="nystroem", landmarks="uniform", n_features=32,
                      max_iter=5).fit(X, y)
    assert model.feature_map_.landmarks == "uniform"
    assert KernelSVC(sigma=60.0, method="nystroem", n_features=32,
                     max_iter=5).fit(X, y).feature_map_.landmarks == "kmeans"
    with pytest.raises(ValueError, match="applies only to method='nystroem', not 'rff'"):
        KernelSVC(sigma=60.0, method="rff", landmarks="kmeans", n_features=32,
                  max_iter=5).fit(X, y)
