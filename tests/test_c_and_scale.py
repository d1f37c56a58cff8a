"""scikit-learn's C on the classifiers, gamma="scale" / sigma="scale", and what a fit records
of them (alpha_, sigma_)."""
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from skylite import KernelLogisticRegression, KernelMachine, KernelRidge, KernelSVC
from skylite._distributed import Distributed
from skylite._global_stats import scale_sigma

pytestmark = pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")


@pytest.fixture(scope="module")
def digits(pendigits):
    X, y = pendigits[0][:600] / 100.0, pendigits[1][:600]
    return X, y


@pytest.mark.parametrize("cls", [KernelSVC, KernelLogisticRegression])
def test_c_and_alpha_give_the_same_model_where_c_is_one_over_n_alpha(digits, cls):
    X, y = digits
    kw = dict(n_features=128, max_iter=30, early_stopping=False)
    by_c = cls(C=10.0, **kw).fit(X, y)
    by_alpha = cls(alpha=1.0 / (len(X) * 10.0), **kw).fit(X, y)
    assert by_c.alpha_ == by_alpha.alpha_ == pytest.approx(1 / 6000)
    assert np.array_equal(by_c.coef_, by_alpha.coef_)
    half = cls(C=10.0, **kw).fit(X[:300], y[:300])           # the same C at another n
    assert half.alpha_ == pytest.approx(1 / 3000)


def test_c_counts_the_rows_the_loss_averages_over(digits):
    """With early stopping the held-out rows are not in the loss: n is the fit rows."""
    X, y = digits
    model = KernelSVC(C=2.0, n_features=64, max_iter=5, early_stopping=True,
                      validation_fraction=0.2).fit(X, y)
    n_fit = len(X) - len(model.validation_indices_)
    assert model.alpha_ == pytest.approx(1.0 / (n_fit * 2.0))


def test_c_or_alpha_not_both_and_c_checked(digits):
    X, y = digits
    with pytest.raises(ValueError, match="give C or alpha, not both"):
        KernelSVC(C=5.0, alpha=1e-3).fit(X, y)
    for bad in (0.0, -1.0, np.inf, "big"):
        with pytest.raises(ValueError, match="C must"):
            KernelSVC(C=bad, n_features=32).fit(X, y)
    assert "C" not in KernelRidge().get_params() and "C" not in KernelMachine().get_params()
    assert KernelSVC().get_params()["C"] == 10.0 and KernelSVC().get_params()["alpha"] is None
    assert KernelLogisticRegression().get_params()["C"] == 1.0
    # alpha with each class's own default C is alpha alone; another C is refused
    assert KernelSVC(alpha=1e-3, n_features=32, max_iter=2).fit(X, y).alpha_ == 1e-3
    klr = KernelLogisticRegression(alpha=1e-3, n_features=32, max_iter=2).fit(X, y)
    assert klr.alpha_ == 1e-3
    with pytest.raises(ValueError, match="give C or alpha, not both"):
        KernelSVC(C=1.0, alpha=1e-3).fit(X, y)


def test_grid_search_over_c(digits):
    X, y = digits
    search = GridSearchCV(KernelSVC(n_features=64, max_iter=20, early_stopping=False),
                          {"C": [1.0, 100.0]}, cv=2).fit(X, y)
    assert search.best_params_["C"] in (1.0, 100.0)
    assert search.best_estimator_.alpha_ == pytest.approx(1.0 / (len(X) * search.best_params_["C"]))


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_scale_equals_the_number_it_resolves_to(digits, kernel):
    X, y = digits
    kw = dict(kernel=kernel, n_features=64, max_iter=10, early_stopping=False)
    by_sigma = KernelSVC(sigma="scale", **kw).fit(X, y)
    by_gamma = KernelSVC(gamma="scale", **kw).fit(X, y)
    default = KernelSVC(**kw).fit(X, y)
    expected = scale_sigma(X, Distributed(None))
    assert by_sigma.sigma_ == by_gamma.sigma_ == default.sigma_ == expected
    numeric = KernelSVC(sigma=expected, **kw).fit(X, y)
    assert np.array_equal(numeric.coef_, by_sigma.coef_)
    if kernel == "gaussian":       # gamma = 1 / (d Var X), scikit-learn's "scale"
        assert 1 / (2 * expected**2) == pytest.approx(1 / (X.shape[1] * X.var()))


def test_polynomial_gamma_scale_is_one_over_d_var(digits):
    X, y = digits
    model = KernelSVC("polynomial", gamma="scale", degree=2, n_features=64, max_iter=5,
                      early_stopping=False).fit(X, y)
    assert model.feature_map_.to_dict() is not None
    assert model.sigma_ is None


def test_default_sigma_is_relative_to_the_data_at_any_scale(digits):
    """The default bandwidth follows the data's scale: rows scaled by 1e-8 train to the same
    model as the original rows (they once fell on an absolute floor and trained at chance)."""
    X, y = digits
    kw = dict(n_features=128, max_iter=30, early_stopping=False)
    plain = KernelSVC(**kw).fit(X, y)
    tiny = KernelSVC(**kw).fit(X * 1e-8, y)
    assert tiny.sigma_ == pytest.approx(plain.sigma_ * 1e-8)
    assert tiny.score(X * 1e-8, y) == pytest.approx(plain.score(X, y), abs=0.01)
    assert scale_sigma(np.ones((5, 3)), Distributed(None)) == pytest.approx(np.sqrt(0.5))
