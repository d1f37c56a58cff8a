"""Block ADMM on whitened Nystroem features (skylite.admm.whitening): the same problem as the
RKHS norm's prox, when it applies, what it holds, and that its model does not depend on the
thread count."""
import numpy as np
import pytest
from types import SimpleNamespace

from sklearn.svm import LinearSVC

from skylite import KernelRidge, KernelSVC
from skylite.admm import BlockADMM
from skylite.admm.settings import EngineSettings
from skylite._outputs import CachedOutputs
from skylite.admm.whitening import (WHITEN_MAX_ROWS, WhitenedBlockADMM, WhitenedOutputs,
                                    inverse_transpose, whitened_features, whitening_factor)
from skylite.kernels import Gaussian
from skylite.prox import RKHSNorm, get_loss
from skylite.prox.coding import code_labels
from skylite.sketch import Nystroem

pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


@pytest.fixture(scope="module")
def problem(pendigits):
    X, y = pendigits[0][:600].astype(np.float64) / 100.0, pendigits[1][:600]
    fmap = Nystroem(Gaussian(0.6), n_features=96, n_blocks=4).fit(X)
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    return X, y, Y, fmap, hinge


def _factor(fmap, **settings):
    return whitening_factor(fmap, RKHSNorm(fmap), EngineSettings(**settings), 600, 2**34)


def test_whitened_features_turn_the_rkhs_norm_into_l2(problem):
    """Z~ = Z L^-T with G = L L^T: Z~ w~ = Z w and ||w~||^2 = w^T G w for w~ = L^T w."""
    X, _, _, fmap, _ = problem
    L = _factor(fmap)
    U = inverse_transpose(L)
    assert np.allclose(U.T @ L, np.eye(len(L)), atol=1e-8) and np.array_equal(U, np.triu(U))
    Zw = whitened_features(fmap, X, U, np.float64, 2)
    W = np.random.default_rng(0).standard_normal((fmap.n_features, 3))
    assert np.allclose(Zw @ (L.T @ W), fmap.transform(X) @ W, rtol=1e-9, atol=1e-9)
    assert np.isclose(np.sum((L.T @ W) ** 2), np.vdot(W, fmap.rkhs_gram() @ W), rtol=1e-10)
    assert np.array_equal(Zw, whitened_features(fmap, X, U, np.float64, 1))


def test_whitened_admm_reaches_the_rkhs_problems_optimum(problem):
    """The whitened engine solves the RKHS-norm problem: its objective equals liblinear's
    optimum on Z G^-1/2 within 1e-6, and the RKHS norm's prox, given as many iterations,
    gets no lower."""
    X, y, Y, fmap, hinge = problem
    n, alpha = len(X), 1e-3
    kw = dict(max_iter=5000, tol=1e-8, n_threads=2)
    white = WhitenedBlockADMM(fmap, hinge, RKHSNorm(fmap), alpha, factor=_factor(fmap),
                              **kw).fit(X, Y)
    plain = BlockADMM(fmap, hinge, RKHSNorm(fmap), alpha, **kw).fit(X, Y)
    Z, G = fmap.transform(X), fmap.rkhs_gram()

    def objective(W):
        return hinge.value(Z @ W, Y) / n + alpha * 0.5 * np.vdot(W, G @ W)
    lam, Q = np.linalg.eigh(G)
    back = (Q / np.sqrt(lam)) @ Q.T                                   # G^-1/2
    svc = LinearSVC(loss="hinge", C=1.0 / (n * alpha), fit_intercept=False, tol=1e-10,
                    max_iter=200000).fit(Z @ back, y)
    optimum = objective(back @ svc.coef_.T)
    assert white.converged_
    assert abs(objective(white.coef_) - optimum) <= 1e-6 * optimum
    assert objective(plain.coef_) >= optimum * (1 - 1e-6)
    assert "whitening" in white.phase_seconds_ and "whitening" not in plain.phase_seconds_


def test_estimators_whiten_when_the_features_fit_and_the_model_ignores_threads(pendigits):
    X, y = pendigits[0][:800], pendigits[1][:800]
    kw = dict(sigma=60.0, method="nystroem", n_features=128, n_blocks=4, C=10.0, max_iter=40,
              precision="float64")
    fits = [KernelSVC(n_threads=t, **kw).fit(X, y) for t in (1, 2)]
    assert "whitening" in fits[0].phase_seconds_
    assert fits[0].regularizer_.name == "rkhs"         # the problem, and its objective
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    # a budget that Z~ would take more than a quarter of: the RKHS norm's prox
    small = KernelSVC(memory_budget=4 * 800 * 128 * 8 - 1, **kw).fit(X, y)
    assert "whitening" not in small.phase_seconds_
    budgeted = KernelSVC(memory_budget=2**26, **kw).fit(X, y)
    assert "whitening" in budgeted.phase_seconds_
    assert budgeted.memory_estimate_ <= 2**26


def test_a_bfloat16_cache_whitens_and_keeps_the_float32_model(pendigits):
    """cache_precision="bfloat16" runs on whitened features too, Z~'s cached blocks in 16
    bits: the same iterations' model as float32 caches within bfloat16 rounding (objective
    within 1e-3 relative, predictions on at least 99% of the rows)."""
    X, y = pendigits[0][:1500].astype(np.float32), pendigits[1][:1500]
    kw = dict(sigma=60.0, method="nystroem", n_features=256, n_blocks=4, C=10.0, max_iter=60,
              tol=1e-12, precision="float32", early_stopping=False)
    exact, rounded = (KernelSVC(cache_precision=c, **kw).fit(X, y)
                      for c in ("float32", "bfloat16"))
    for fit in (exact, rounded):
        assert "whitening" in fit.phase_seconds_
    assert (exact.cache_precision_, rounded.cache_precision_) == ("float32", "bfloat16")
    assert rounded.n_iter_ == exact.n_iter_ == 60
    objectives = [fit.objective(X, y) for fit in (exact, rounded)]
    assert abs(objectives[1] - objectives[0]) <= 1e-3 * objectives[0]
    assert np.mean(rounded.predict(X) == exact.predict(X)) >= 0.99


def test_early_stopping_reads_the_whitened_model(pendigits, monkeypatch):
    """Early stopping on whitened features scores z~(X_val) W~ and keeps the best W~: the
    same scores, the same kept iteration and the same model as reading W = U W~ every
    iteration; the user's callback is given W."""
    X, y = pendigits[0][:1500].astype(np.float64), pendigits[1][:1500]
    kw = dict(sigma=60.0, method="nystroem", n_features=128, n_blocks=4, C=10.0,
              early_stopping=True, validation_fraction=0.2, n_iter_no_change=5,
              max_iter=300)
    scored, given = [], []
    score = WhitenedOutputs.__call__
    monkeypatch.setattr(WhitenedOutputs, "__call__",
                        lambda self, W, X=None: scored.append(W.shape) or score(self, W, X))
    # a path over several C whitens; a single early-stopped fit does not (not long enough)
    assert "whitening" not in KernelSVC(**kw).fit(X, y).phase_seconds_
    whitened, weaker = KernelSVC(callback=lambda it, record, W: given.append(W.copy()),
                                 **kw).fit_path(X, y, [10.0, 30.0])
    assert "whitening" in whitened.phase_seconds_
    assert len(scored) == len(given) == whitened.n_iter_ + weaker.n_iter_
    assert 5 < whitened.best_iteration_ <= whitened.n_iter_ < 300
    assert np.array_equal(given[whitened.best_iteration_ - 1], whitened.coef_)
    monkeypatch.setattr(CachedOutputs, "cached", property(lambda self: False))  # reads W
    scored.clear()
    plain = KernelSVC(**kw).fit_path(X, y, [10.0, 30.0])[0]
    assert not scored and "whitening" in plain.phase_seconds_
    assert (plain.n_iter_, plain.best_iteration_) == (whitened.n_iter_, whitened.best_iteration_)
    for key in ("validation", "validation_loss"):
        assert np.allclose([r[key] for r in plain.history_],
                           [r[key] for r in whitened.history_], rtol=1e-12, atol=0)
    assert np.allclose(plain.coef_, whitened.coef_, rtol=1e-12, atol=1e-14)


def test_a_warm_start_at_the_optimum_stops_at_once(pendigits):
    """A model W0 starts the whitened run at W~0 = L^T W0 (squared loss: the fixed point at
    the optimum is unique)."""
    X, y = pendigits[0][:800] / 100.0, pendigits[0][:800, 0] / 100.0
    kw = dict(sigma=0.6, method="nystroem", n_features=64, n_blocks=4, alpha=1e-3,
              solver="admm", early_stopping=False, precision="float64")
    optimum = KernelRidge(tol=1e-10, max_iter=5000, **kw).fit(X, y)
    again = KernelRidge(tol=1e-6, **kw).fit(X, y, warm_start=optimum.coef_)
    assert "whitening" in again.phase_seconds_
    assert optimum.converged_ and again.n_iter_ <= 2
    assert np.allclose(again.coef_, optimum.coef_, rtol=1e-5, atol=1e-8)


def test_a_path_on_whitened_features_equals_separate_fits(pendigits):
    X, y = pendigits[0][:800] / 100.0, pendigits[0][:800, 0] / 100.0
    kw = dict(sigma=0.6, method="nystroem", n_features=64, n_blocks=4, tol=1e-9,
              max_iter=5000, solver="admm")
    path = KernelRidge(**kw).fit_path(X, y, [1e-2, 1e-3])
    for model in path:
        alone = KernelRidge(alpha=model.alpha, **kw).fit(X, y)
        assert "whitening" in alone.phase_seconds_
        assert np.allclose(model.predict(X), alone.predict(X), atol=1e-5)


def test_whitening_is_not_used_where_it_cannot_be(problem):
    _, _, _, fmap, _ = problem
    reg = RKHSNorm(fmap)
    s = EngineSettings()
    streaming = EngineSettings(memory_budget=0)
    assert whitening_factor(fmap, reg, streaming, 600, 2**34) is None
    users_cache = EngineSettings(cache_precision="bfloat16", precision="float32")
    assert whitening_factor(fmap, reg, users_cache, 600, 2**34) is not None  # caches Z~
    assert whitening_factor(fmap, reg, s, 10**9, 2**34) is None               # too big
    assert whitening_factor(fmap, reg, s, WHITEN_MAX_ROWS + 1, 2**40) is None  # too slow
    assert whitening_factor(fmap, reg, s, WHITEN_MAX_ROWS, 2**40) is not None
    singular = SimpleNamespace(name="rkhs", gram=np.ones((96, 96)))
    assert whitening_factor(fmap, singular, s, 600, 2**34) is None            # G only PSD
    assert whitening_factor(fmap, SimpleNamespace(name="l2"), s, 600, 2**34) is None
    assert whitening_factor(fmap, reg, s, 600, 2**34, long_run=False) is None   # pays nothing
