"""The estimators end to end on real data (pendigits, shipped with skylite)."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

import skylite

from skylite import (KernelLADRegression, KernelLogisticRegression, KernelMachine, KernelRidge,
                     KernelSVC)
from skylite.kernels import Gaussian, Laplacian
from skylite.sketch import Fastfood


@pytest.fixture(scope="module")
def digits(pendigits):
    X_train, y_train, X_test, y_test = pendigits
    return (X_train[:2500] / 100.0, y_train[:2500], X_test[:1000] / 100.0, y_test[:1000])


@pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")  # the linear model
def test_kernel_svc_beats_the_linear_model(digits):
    X, y, Xt, yt = digits
    svc = KernelSVC(sigma=0.6, n_features=1024, alpha=1e-5, n_iter_no_change=None).fit(
        X, y, X_val=Xt, y_val=yt)                # n_iter_no_change=None: scores recorded only
    linear = KernelSVC("linear", alpha=1e-5).fit(X, y)
    assert svc.score(Xt, yt) > 0.96
    assert svc.score(Xt, yt) > linear.score(Xt, yt) + 0.08
    assert svc.coef_.shape == (1024, 10) and list(svc.classes_) == list(range(10))
    assert svc.n_iter_ == len(svc.history_) and svc.converged_
    assert svc.history_[-1]["validation"] == pytest.approx(svc.score(Xt, yt))
    assert svc.feature_map_.n_features == 1024


def test_labels_of_any_type_and_two_classes(digits):
    X, y, Xt, yt = digits
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                      "nine"])
    svc = KernelSVC(sigma=0.6, n_features=512, alpha=1e-5).fit(X, names[y])
    assert set(svc.predict(Xt)) <= set(names)
    assert svc.score(Xt, names[yt]) > 0.95
    odd = KernelSVC(sigma=0.6, n_features=512, alpha=1e-5).fit(X, y % 2 == 1)
    assert odd.coef_.shape[1] == 1 and odd.decision_function(Xt).shape == (1000,)
    assert odd.score(Xt, yt % 2 == 1) > 0.95


def test_logistic_probabilities(digits):
    X, y, Xt, yt = digits
    model = KernelLogisticRegression(sigma=0.6, n_features=512, alpha=1e-5).fit(X, y)
    P = model.predict_proba(Xt)
    assert P.shape == (1000, 10)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(model.classes_[P.argmax(axis=1)], model.predict(Xt))
    assert model.score(Xt, yt) > 0.95


def test_regression_presets(digits):
    X, y, Xt, yt = digits
    target = X[:, 0] * 3 - X[:, 1] ** 2           # a smooth function of two inputs
    target_test = Xt[:, 0] * 3 - Xt[:, 1] ** 2
    ridge = KernelRidge(sigma=1.0, n_features=512, alpha=1e-6).fit(X, target)
    assert ridge.predict(Xt).shape == (1000,)
    assert ridge.score(Xt, target_test) > 0.99
    corrupted = target.copy()
    corrupted[::10] += 50.0                        # gross outliers in 10% of the rows
    lad = KernelLADRegression(sigma=1.0, n_features=512, alpha=1e-6, max_iter=2000).fit(
        X, corrupted)
    ridge_bad = KernelRidge(sigma=1.0, n_features=512, alpha=1e-6).fit(X, corrupted)
    assert lad.score(Xt, target_test) > 0.95
    assert lad.score(Xt, target_test) > ridge_bad.score(Xt, target_test) + 0.3
    two = KernelRidge(sigma=1.0, n_features=256, alpha=1e-5).fit(X, np.c_[target, -target])
    assert two.predict(Xt).shape == (1000, 2)
    # refitting a classifier as a regressor forgets its classes
    model = KernelMachine(loss="squared", sigma=1.0, n_features=256, alpha=1e-5,
                          classification=True).fit(X, y)
    assert hasattr(model, "classes_")
    model.set_params(classification=False).fit(X, target)
    assert not hasattr(model, "classes_") and model.predict(Xt).dtype == np.float64
    # a preset keeps its kind: a regressor is no classifier and vice versa
    with pytest.raises(ValueError, match=r"KernelRidge is a regressor.*KernelMachine\(loss="):
        KernelRidge(classification=True).fit(X, y)
    with pytest.raises(ValueError, match="KernelSVC is a classifier"):
        KernelSVC(loss="lad").fit(X, target)


def test_objective_matches_the_engine_record(digits):
    X, y, _, _ = digits
    model = KernelSVC(method="rff", sigma=0.6, n_features=256, alpha=1e-4, tol=1e-4).fit(X, y)
    assert model.converged_
    assert model.objective(X, y) == pytest.approx(model.history_[-1]["objective"], rel=1e-3)


def test_kernels_by_name_object_gamma_and_map(digits):
    X, y, Xt, yt = digits
    rff = dict(method="rff", n_features=256)
    by_sigma = KernelSVC(sigma=0.5, **rff).fit(X[:500], y[:500])
    by_gamma = KernelSVC(gamma=2.0, **rff).fit(X[:500], y[:500])
    by_object = KernelSVC(kernel=Gaussian(0.5), **rff).fit(X[:500], y[:500])
    np.testing.assert_allclose(by_gamma.coef_, by_sigma.coef_)
    np.testing.assert_allclose(by_object.coef_, by_sigma.coef_)
    scaled = KernelSVC(**rff).fit(X[:500], y[:500])   # sigma from the data
    assert scaled.feature_map_.sigma == pytest.approx(np.sqrt(16 * X[:500].var() / 2))
    assert KernelSVC(Laplacian(4.0), n_features=512).fit(X, y).score(Xt, yt) > 0.9
    fastfood = KernelSVC(feature_map=Fastfood(512, sigma=0.6, n_blocks=2)).fit(X, y)
    assert type(fastfood.feature_map_) is Fastfood and fastfood.score(Xt, yt) > 0.95


def test_sparse_input_gives_the_dense_model(digits):
    X, y, Xt, yt = digits
    X = np.where(X < 0.3, 0.0, X)
    kw = dict(sigma=0.6, n_features=256, alpha=1e-4, precision="float64")
    dense = KernelSVC(**kw).fit(X[:800], y[:800])
    sparse = KernelSVC(**kw).fit(sp.csr_matrix(X[:800]), y[:800])
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(Xt)), dense.predict(Xt))


def test_bad_input_is_named(digits):
    X, y, Xt, _ = digits
    with pytest.raises(ValueError, match="unknown kernel"):
        KernelSVC("cosine").fit(X, y)
    with pytest.raises(ValueError, match="unknown loss"):
        KernelMachine(loss="huber").fit(X, y)
    with pytest.raises(ValueError, match="unknown regularizer"):
        KernelSVC(regularizer="elastic").fit(X, y)
    with pytest.raises(ValueError, match="sigma or gamma"):
        KernelSVC(sigma=1.0, gamma=1.0).fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        KernelSVC().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        KernelSVC().fit(X, y[:-1])
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        KernelSVC().fit(bad, y)
    with pytest.raises(ValueError, match="Input y contains NaN"):
        KernelRidge().fit(X, np.full(len(X), np.nan))
    with pytest.raises(ValueError, match="not fitted"):
        KernelSVC().predict(Xt)
    with pytest.warns(UserWarning, match="max_iter=5"):
        model = KernelSVC(n_features=64, max_iter=5).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="16 features"):
        model.predict(Xt[:, :3])
    with pytest.raises(ValueError, match="alpha"):
        KernelSVC(alpha=-1).fit(X, y)
    with pytest.raises(ValueError, match="n_features"):
        KernelSVC(n_features=0).fit(X, y)


@pytest.mark.parametrize("name, sk_kernel", [("gaussian", "rbf"), ("laplacian", "laplacian")])
def test_gamma_means_what_scikit_learn_means(name, sk_kernel):
    """gamma gives the kernel scikit-learn's pairwise kernels give for the same gamma."""
    X = np.random.default_rng(0).uniform(size=(20, 3))
    model = KernelSVC(name, gamma=0.7)
    kernel = model._kernel_object(X)
    np.testing.assert_allclose(kernel.gram(X), pairwise_kernels(X, metric=sk_kernel, gamma=0.7),
                               rtol=1e-12)
