"""KernelGridSearchCV and the regularization path it is built on (`fit_path`): fold models
equal independent fits, the results equal GridSearchCV's, racing, bad input, interruption.
Data: pendigits rows shipped with skylite (16 features, 10 classes)."""
import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.decomposition import PCA
from scipy.stats import loguniform, uniform
from sklearn.model_selection import (GridSearchCV, GroupKFold, RandomizedSearchCV,
                                     StratifiedKFold)
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from skylite import KernelLogisticRegression, KernelRidge, KernelSVC
from skylite.datasets import load_pendigits
from skylite.model_selection import KernelGridSearchCV, KernelRandomizedSearchCV
from skylite.model_selection._racing import RACING_STANDARD_ERRORS, co_correct, surviving

pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


@pytest.fixture(scope="module")
def digits():
    X, y = load_pendigits()[:2]
    return X[:900].astype(np.float64) / 100.0, y[:900]


def svc(**kw):
    kw = {"method": "rff", "n_features": 128, "tol": 1e-4, "max_iter": 3000,
          "early_stopping": False, **kw}
    return KernelSVC(**kw)


def test_each_value_of_a_path_equals_an_independent_fit(digits):
    X, y = digits
    tight = svc(tol=1e-7, max_iter=20000, sigma=0.5)
    models = tight.fit_path(X, y, [0.5, 5.0, 50.0])
    assert [m.C for m in models] == [0.5, 5.0, 50.0] and tight.C == 50.0
    for model in models:
        alone = clone(tight).set_params(C=model.C).fit(X, y)
        a, b = model.objective(X, y), alone.objective(X, y)
        assert abs(a - b) <= 1e-4 * abs(b), (model.C, a, b)
        assert model.alpha_ == pytest.approx(1.0 / (len(y) * model.C))


def test_a_closed_form_path_over_alpha_makes_the_normal_equations_once(digits, monkeypatch):
    """KernelRidge's closed form: Z^T Z and Z^T Y made once for every alpha of the path,
    and each alpha's model bitwise a separate fit's."""
    import skylite._solvers as solvers
    X, y = digits
    target = X[:, 0] + X[:, 1] ** 2
    est = KernelRidge(n_features=64, sigma=1.0)
    passes = []
    made = solvers.feature_normal_equations
    monkeypatch.setattr(solvers, "feature_normal_equations",
                        lambda *a: passes.append(1) or made(*a))
    models = est.fit_path(X, target, [1e-2, 1e-3, 1e-4])
    assert len(passes) == 1 and [m.solver_ for m in models] == ["direct"] * 3
    for model in models:
        alone = clone(est).set_params(alpha=model.alpha).fit(X, target)
        np.testing.assert_array_equal(model.coef_, alone.coef_)
        assert model.alpha_ == model.alpha
    assert len(passes) == 4


def test_an_exact_kernel_path_over_alpha_equals_separate_fits(digits):
    X, y = digits
    target = X[:300, 0] + X[:300, 1] ** 2
    est = KernelRidge(sigma=1.0, solver="exact")
    for model in est.fit_path(X[:300], target, [1e-2, 1e-4]):
        alone = clone(est).set_params(alpha=model.alpha).fit(X[:300], target)
        np.testing.assert_array_equal(model.dual_coef_, alone.dual_coef_)


def test_a_failing_path_leaves_the_estimator_as_it_was(digits):
    X, y = digits
    est = svc(sigma=0.5).fit(X, y)
    coef = est.coef_.copy()
    with pytest.raises(ValueError, match="C"):
        est.fit_path(X, y, [1.0, -1.0])
    with pytest.raises(ValueError, match="non-empty"):
        est.fit_path(X, y, [])

    def stop(model):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        est.fit_path(X, y, [3.0, 30.0], on_model=stop)
    assert est.C == 10.0
    np.testing.assert_array_equal(est.coef_, coef)


GRID = {"sigma": [0.3, 1.0], "C": [1.0, 10.0, 100.0]}


@pytest.mark.parametrize("stack_folds", [True, False])
def test_the_search_equals_grid_search_cv_without_racing(digits, stack_folds):
    X, y = digits
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = KernelGridSearchCV(svc(tol=1e-5), GRID, cv=cv, racing=False,
                              stack_folds=stack_folds).fit(X, y)
    theirs = GridSearchCV(svc(tol=1e-5), GRID, cv=cv).fit(X, y)
    assert sorted(ours.cv_results_) == sorted(theirs.cv_results_)
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               theirs.cv_results_["mean_test_score"], atol=1e-3)
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_index_ == theirs.best_index_ and ours.n_splits_ == 3
    assert abs(ours.score(X, y) - theirs.score(X, y)) <= 1e-3
    assert ours.refit_time_ > 0 and (ours.dropped_after_ == -1).all()
    np.testing.assert_array_equal(ours.predict(X[:50]), ours.best_estimator_.predict(X[:50]))
    for name in ("param_C", "param_sigma"):
        np.testing.assert_array_equal(ours.cv_results_[name], theirs.cv_results_[name])


def test_each_fold_makes_the_nystroem_precursors_once_for_every_sigma(digits, monkeypatch):
    """Nystroem maps of every sigma on a fold's rows make their features from one precursor
    (the dot products with the shared k-means landmarks): a search over two sigmas computes
    no more precursors than a search over one, and its scores are bitwise those of a search
    that computes every map's features directly."""
    from skylite.sketch import nystroem as nystroem_module
    X, y = digits
    est = KernelSVC(method="nystroem", n_features=64, n_blocks=2, tol=1e-4, max_iter=3000,
                    early_stopping=False)
    cv = StratifiedKFold(2, shuffle=True, random_state=0)
    kept, made = nystroem_module.kept_precursor, []
    monkeypatch.setattr(nystroem_module, "kept_precursor",
                        lambda family, L, offsets, rows, dtype, compute: kept(
                            family, L, offsets, rows, dtype,
                            lambda P: made.append(rows.shape) or compute(P)))
    search = lambda sigmas: KernelGridSearchCV(est, {"sigma": sigmas, "C": [1.0, 10.0]}, cv=cv,
                                               racing=False, refit=False).fit(X, y)
    search([0.3])
    one_sigma, made[:] = list(made), []
    shared = search([0.3, 1.0])
    assert made == one_sigma and (450, 16) in made
    monkeypatch.setattr(nystroem_module, "kept_precursor", lambda *args: None)
    direct = search([0.3, 1.0])
    for k in range(2):
        np.testing.assert_array_equal(shared.cv_results_[f"split{k}_test_score"],
                                      direct.cv_results_[f"split{k}_test_score"])


def test_the_search_takes_other_scorers_and_regressors(digits):
    X, y = digits
    target = X[:, 0] - X[:, 3] * X[:, 2]
    grid = {"alpha": [1e-2, 1e-4], "sigma": [1.0]}
    est = KernelRidge(n_features=64)
    ours = KernelGridSearchCV(est, grid, cv=3, scoring="neg_mean_squared_error").fit(X, target)
    theirs = GridSearchCV(est, grid, cv=3, scoring="neg_mean_squared_error").fit(X, target)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               theirs.cv_results_["mean_test_score"], rtol=1e-9)
    logistic = KernelGridSearchCV(KernelLogisticRegression(n_features=64, tol=1e-4),
                                  {"C": [1.0, 10.0]}, cv=2).fit(X, y)
    assert logistic.best_score_ > 0.8


def test_racing_drops_a_point_clearly_behind_and_keeps_the_choice(digits):
    X, y = digits
    grid = {"sigma": [0.02, 0.5], "C": [1.0, 10.0]}      # sigma = 0.02: far too narrow
    raced = KernelGridSearchCV(svc(), grid, cv=3, stack_folds=False).fit(X, y)
    full = KernelGridSearchCV(svc(), grid, cv=3, racing=False, stack_folds=False).fit(X, y)
    narrow = [i for i, p in enumerate(raced.cv_results_["params"]) if p["sigma"] == 0.02]
    assert all(raced.dropped_after_[i] == 0 for i in narrow)
    assert all(np.isnan(raced.cv_results_["split2_test_score"][i]) for i in narrow)
    assert all(raced.cv_results_["rank_test_score"][i] > 2 for i in narrow)
    assert raced.best_params_ == full.best_params_
    assert raced.cv_results_["mean_fit_time"][narrow].sum() > 0


@pytest.mark.parametrize("stack_folds", [True, False])
def test_each_fold_model_of_the_search_equals_an_independent_fit(digits, stack_folds):
    X, y = digits
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y))
    tight = svc(tol=1e-7, max_iter=20000)
    seen = []

    def scorer(model, X_test, y_test):
        seen.append((model.C, model.sigma, X_test, copy.copy(model)))   # a path moves on
        return model.score(X_test, y_test)
    KernelGridSearchCV(tight, {"sigma": [0.5], "C": [2.0, 20.0]}, cv=folds, scoring=scorer,
                       refit=False, stack_folds=stack_folds).fit(X, y)
    assert len(seen) == 6
    for C, sigma, X_test, model in seen:
        train = next(tr for tr, te in folds if np.array_equal(X[te], X_test))
        alone = clone(tight).set_params(C=C, sigma=sigma).fit(X[train], y[train])
        a, b = model.objective(X[train], y[train]), alone.objective(X[train], y[train])
        assert abs(a - b) <= 1e-4 * abs(b), (C, a, b)


@pytest.mark.parametrize("fraction", ["auto", None])
def test_stacked_folds_hold_out_each_folds_own_early_stopping_rows(digits, fraction):
    X, y = digits
    est = svc(early_stopping=True, n_iter_no_change=5, validation_fraction=fraction)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    alphas = []

    def scorer(model, X_test, y_test):
        alphas.append(model.alpha_ * model.C)
        return model.score(X_test, y_test)
    stacked = KernelGridSearchCV(est, {"sigma": [0.5], "C": [1.0, 10.0]}, cv=folds,
                                 scoring=scorer, refit=False, stack_folds=True).fit(X, y)
    alone = [clone(est).fit(X[train], y[train]) for train, _ in folds]
    # alpha_ C = 1 / (rows fitted): the fold's training rows less its held-out rows, or all
    # of them when early stopping scores training rows (validation_fraction=None)
    held = lambda m: 0 if fraction is None else len(m.validation_indices_)     # noqa: E731
    assert sorted(set(np.round(1 / np.array(alphas)))) == sorted(
        {len(train) - held(m) for (train, _), m in zip(folds, alone)})
    assert all(len(m.validation_indices_) > 0 for m in alone)
    fold_by_fold = KernelGridSearchCV(est, {"sigma": [0.5], "C": [1.0, 10.0]}, cv=folds,
                                      stack_folds=False, refit=False).fit(X, y)
    np.testing.assert_allclose(stacked.cv_results_["mean_test_score"],
                               fold_by_fold.cv_results_["mean_test_score"], atol=0.02)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 8), st.integers(10, 3000), st.floats(0.5, 0.99), st.integers(0, 2**32 - 1))
def test_racing_keeps_the_best_and_every_point_within_the_paired_margin(points, rows, p, seed):
    """surviving() from the co-correct counts equals the paired test on the rows: a point
    stays unless the best's lead over it exceeds four standard errors of the mean of
    c_best - c_i over the rows (McNemar's)."""
    rng = np.random.default_rng(seed)
    base = rng.random(rows) < p                     # points agree on most rows
    correct = np.array([np.where(rng.random(rows) < rng.uniform(0.0, 0.3),
                                 rng.random(rows) < p, base) for _ in range(points)])
    kept = surviving(co_correct(correct), np.ones(points, dtype=bool), rows)
    best = int(np.argmax(correct.sum(axis=1)))
    assert kept[best]
    for i in range(points):
        diff = correct[best].astype(float) - correct[i]
        se = diff.std(ddof=1) / np.sqrt(rows)
        assert kept[i] == (diff.mean() <= RACING_STANDARD_ERRORS * se + 1e-12), i


def test_racing_ignores_points_that_are_out_and_splits_the_counts_over_ranks():
    """Points already dropped neither lead nor stay; counts of two ranks' rows add up to
    the counts of all the rows."""
    rng = np.random.default_rng(0)
    correct = rng.random((4, 400)) < 0.9
    correct[3] = True                                   # the best, but already out
    alive = np.array([True, True, True, False])
    counts = co_correct(correct[:, :150]) + co_correct(correct[:, 150:])
    np.testing.assert_array_equal(counts, co_correct(correct))
    kept = surviving(counts, alive, 400)
    assert not kept[3] and kept[int(np.argmax(correct[:3].sum(axis=1)))]


@pytest.mark.parametrize("grid, cv, message", [
    ({}, 3, "param_grid is empty"),
    ({"C": []}, 3, "non-empty"),
    ({"bogus": [1]}, 3, "unknown parameter 'bogus'"),
    ({"C": [1.0, 0.0]}, 3, "C"),
    ({"C": [1.0, -2.0]}, 3, "C"),
    ({"sigma": [1.0, -1.0]}, 3, "sigma"),
    ({"tol": ["x"]}, 3, "tol"),
    ({"C": [1.0]}, 901, "901 folds need at least 901 rows"),
])
def test_bad_input_is_refused_before_any_fit(digits, monkeypatch, grid, cv, message):
    X, y = digits

    def no_fit(*args, **kwargs):
        raise AssertionError("a fit ran before the input was checked")
    monkeypatch.setattr(KernelSVC, "fit_path", no_fit)
    with pytest.raises(ValueError, match=message):
        KernelGridSearchCV(svc(), grid, cv=cv).fit(X, y)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2", True])
def test_a_bad_n_jobs_is_refused_before_any_fit(digits, monkeypatch, n_jobs):
    X, y = digits
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match="n_jobs must be None or a nonzero int"):
        KernelGridSearchCV(svc(), {"C": [1.0]}, cv=2, n_jobs=n_jobs).fit(X, y)


def test_n_jobs_sets_the_threads_of_the_fits_and_not_the_results(digits, monkeypatch):
    """n_jobs, as GridSearchCV's, is accepted (get_params, clone); here it is the threads of
    every fit whose n_threads is None, and the results do not depend on it."""
    import skylite._threads as threads
    X, y = digits
    grid = {"C": [1.0, 10.0], "sigma": [0.5, 1.0]}
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    seen = []
    fit_path = KernelSVC.fit_path

    def recorded(self, *args, **kwargs):
        seen.append(threads.resolve_threads(self.n_threads))
        return fit_path(self, *args, **kwargs)
    monkeypatch.setattr(KernelSVC, "fit_path", recorded)
    one = KernelGridSearchCV(svc(), grid, cv=3, n_jobs=1).fit(X, y)
    assert seen and set(seen) == {1} and one.best_estimator_.n_threads_ == 1
    seen.clear()
    every = clone(one).set_params(n_jobs=-1).fit(X, y)
    assert set(seen) == {2} and every.get_params()["n_jobs"] == -1
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"],
                                  every.cv_results_["mean_test_score"])
    assert one.best_params_ == every.best_params_
    np.testing.assert_array_equal(one.best_estimator_.coef_, every.best_estimator_.coef_)
    assert threads.default_threads() == 2                   # the limits are lifted after


def test_a_group_splitter_gets_the_groups_as_in_grid_search_cv(digits):
    """fit(X, y, groups) hands the groups to the splitter: GroupKFold keeps each writer's
    rows in one fold, and the fold scores are GridSearchCV's with the same groups."""
    X, y = digits
    writers = np.arange(len(y)) // 30                     # 30 groups of 30 rows
    grid = {"sigma": [0.3, 1.0], "C": [1.0, 10.0]}
    ours = KernelGridSearchCV(svc(tol=1e-5), grid, cv=GroupKFold(3), racing=False).fit(
        X, y, groups=writers)
    theirs = GridSearchCV(svc(tol=1e-5), grid, cv=GroupKFold(3)).fit(X, y, groups=writers)
    for k in range(3):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"],
                                   theirs.cv_results_[f"split{k}_test_score"], atol=2e-3)
    assert ours.best_params_ == theirs.best_params_
    stratified = KernelGridSearchCV(svc(tol=1e-5), grid, cv=3, racing=False).fit(X, y)
    assert not np.array_equal(stratified.cv_results_["split0_test_score"],
                              ours.cv_results_["split0_test_score"])
    # a stratified splitter ignores groups, as in scikit-learn
    with pytest.warns(UserWarning, match="groups parameter is ignored"):
        ignored = KernelGridSearchCV(svc(tol=1e-5), grid, cv=3, racing=False).fit(
            X, y, groups=writers)
    np.testing.assert_array_equal(ignored.cv_results_["mean_test_score"],
                                  stratified.cv_results_["mean_test_score"])


@pytest.mark.parametrize("groups, message", [
    (np.arange(10), "one label per row: 900 rows, got groups of shape \\(10,\\)"),
    (np.zeros((900, 2)), "one label per row"),
    (np.r_[np.nan, np.zeros(899)], "NaN"),
    (None, "groups"),
])
def test_groups_that_do_not_fit_the_rows_are_refused_before_any_fit(digits, monkeypatch,
                                                                   groups, message):
    X, y = digits
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match=message):
        KernelGridSearchCV(svc(), {"C": [1.0]}, cv=GroupKFold(3)).fit(X, y, groups=groups)


class CountingScaler(StandardScaler):
    """StandardScaler that counts its fits."""
    fits = 0

    def fit(self, X, y=None, sample_weight=None):
        CountingScaler.fits += 1
        return super().fit(X, y, sample_weight)


def test_a_pipeline_is_searched_as_grid_search_cv_searches_it(digits):
    """A Pipeline ending in a skylite estimator: the same results as GridSearchCV, its other
    steps fitted once per fold and setting of their parameters, the refit a Pipeline."""
    X, y = digits
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"kernelsvc__sigma": [2.0, 5.0], "kernelsvc__C": [1.0, 10.0],
            "countingscaler__with_mean": [True, False]}
    pipe = make_pipeline(CountingScaler(), svc(tol=1e-5))
    CountingScaler.fits = 0
    ours = KernelGridSearchCV(pipe, grid, cv=cv, racing=False).fit(X, y)
    assert CountingScaler.fits == 3 * 2 + 1                   # folds x settings, refit
    theirs = GridSearchCV(pipe, grid, cv=cv).fit(X, y)
    assert sorted(ours.cv_results_) == sorted(theirs.cv_results_)
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               theirs.cv_results_["mean_test_score"], atol=1e-3)
    assert ours.best_params_ == theirs.best_params_
    assert isinstance(ours.best_estimator_, Pipeline)
    assert abs(ours.score(X, y) - theirs.score(X, y)) <= 1e-3


def test_a_pipeline_search_gives_a_callable_scoring_the_fitted_pipeline_and_raw_rows(digits):
    X, y = digits
    seen = []

    def scoring(estimator, X_test, y_test):
        seen.append((type(estimator), float(X_test.min()), float(X_test.max())))
        return float(np.mean(estimator.predict(X_test) == y_test))
    pipe = make_pipeline(StandardScaler(), PCA(8), svc())
    search = KernelGridSearchCV(pipe, {"kernelsvc__C": [1.0, 10.0], "pca__n_components": [4, 8]},
                                cv=2, scoring=scoring, racing=False).fit(X, y)
    assert len(seen) == 8 and all(kind is Pipeline for kind, _, _ in seen)
    assert all(0.0 <= low and high <= 1.0 for _, low, high in seen)    # untransformed rows
    by_accuracy = KernelGridSearchCV(pipe, {"kernelsvc__C": [1.0, 10.0],
                                            "pca__n_components": [4, 8]},
                                     cv=2, racing=False).fit(X, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               by_accuracy.cv_results_["mean_test_score"], atol=1e-12)


@pytest.mark.parametrize("estimator, grid, options, message", [
    (make_pipeline(StandardScaler(), svc()), {"kernelsvc__C": [1.0]},
     {"stack_folds": True}, "stack_folds=True"),
    (make_pipeline(StandardScaler(), svc()), {"kernelsvc": [svc()]}, {},
     "replaces the Pipeline's last step 'kernelsvc'"),
    (make_pipeline(StandardScaler(), PCA()), {"pca__n_components": [2]}, {},
     "or a Pipeline ending in one"),
    (make_pipeline(StandardScaler(), svc()), {"kernelsvc__Cx": [1.0]}, {},
     "unknown parameter 'kernelsvc__Cx'"),
    (make_pipeline(StandardScaler(), svc()), {"kernelsvc__C": [-1.0]}, {}, "C must be"),
])
def test_a_pipeline_search_refuses_what_it_cannot_do_before_any_fit(
        digits, monkeypatch, estimator, grid, options, message):
    X, y = digits
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match=message):
        KernelGridSearchCV(estimator, grid, cv=2, **options).fit(X, y)


def test_the_randomized_search_draws_and_scores_as_randomized_search_cv(digits):
    """The same candidates for the same random_state, the same keys and scores; candidates
    that share a drawn sigma share a path over C."""
    X, y = digits
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    spaces = {"sigma": [0.3, 1.0], "C": loguniform(1.0, 100.0)}
    ours = KernelRandomizedSearchCV(svc(tol=1e-5), spaces, n_iter=6, cv=cv, racing=False,
                                    random_state=3).fit(X, y)
    theirs = RandomizedSearchCV(svc(tol=1e-5), spaces, n_iter=6, cv=cv,
                                random_state=3).fit(X, y)
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    assert sorted(ours.cv_results_) == sorted(theirs.cv_results_)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               theirs.cv_results_["mean_test_score"], atol=1e-3)
    assert ours.best_params_ == theirs.best_params_
    assert abs(ours.score(X, y) - theirs.score(X, y)) <= 1e-3
    again = clone(ours).fit(X, y)
    assert again.cv_results_["params"] == ours.cv_results_["params"]


@pytest.mark.parametrize("options, message", [
    ({"n_iter": 0}, "n_iter must be an int >= 1"),
    ({"n_iter": 2.5}, "n_iter must be an int >= 1"),
    ({"param_distributions": {}}, "param_distributions is empty"),
    ({"param_distributions": {"Cx": [1.0]}}, "unknown parameter 'Cx'"),
    ({"param_distributions": {"C": uniform(-2.0, 1.0)}}, "C must be finite and > 0"),
])
def test_the_randomized_search_refuses_bad_arguments_before_any_fit(digits, monkeypatch,
                                                                    options, message):
    X, y = digits
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    kw = {"param_distributions": {"C": [1.0]}, "n_iter": 1, **options}
    with pytest.raises(ValueError, match=message):
        KernelRandomizedSearchCV(svc(), cv=2, **kw).fit(X, y)


@pytest.mark.parametrize("scoring, refit", [
    (["accuracy", "f1_macro"], "f1_macro"),
    ({"acc": "accuracy", "balanced": "balanced_accuracy"}, "acc"),
])
def test_several_scorings_are_reported_as_grid_search_cv_reports_them(digits, scoring,
                                                                      refit):
    X, y = digits
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    grid = {"sigma": [0.3, 1.0], "C": [1.0, 10.0]}
    ours = KernelGridSearchCV(svc(tol=1e-5), grid, cv=cv, scoring=scoring, refit=refit,
                              racing=False).fit(X, y)
    theirs = GridSearchCV(svc(tol=1e-5), grid, cv=cv, scoring=scoring, refit=refit).fit(X, y)
    assert sorted(ours.cv_results_) == sorted(theirs.cv_results_)
    names = scoring if isinstance(scoring, list) else list(scoring)
    for name in names:
        np.testing.assert_allclose(ours.cv_results_[f"mean_test_{name}"],
                                   theirs.cv_results_[f"mean_test_{name}"], atol=2e-3)
    assert ours.multimetric_ and sorted(ours.scorer_) == sorted(names)
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_score_ == pytest.approx(theirs.best_score_, abs=2e-3)
    assert ours.score(X, y) == pytest.approx(theirs.score(X, y), abs=2e-3)  # refit's scorer
    unranked = KernelGridSearchCV(svc(), grid, cv=2, scoring=scoring, refit=False).fit(X, y)
    assert not hasattr(unranked, "best_params_") and not hasattr(unranked, "best_estimator_")
    assert f"rank_test_{names[0]}" in unranked.cv_results_


@pytest.mark.parametrize("scoring, refit, message", [
    (["accuracy", "f1_macro"], True, "refit must be the name of one of them"),
    (["accuracy", "f1_macro"], "f1", "refit must be the name of one of them"),
    ([], False, "scoring is empty"),
    (["accuracy", "accuracy"], "accuracy", "names a scorer twice"),
    ("accuracy", "accuracy", "refit must be True, False or a callable"),
    (["accuracy", "no_such_scorer"], "accuracy", "no_such_scorer"),
])
def test_bad_scorings_are_refused_before_any_fit(digits, monkeypatch, scoring, refit,
                                                 message):
    X, y = digits
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match=message):
        KernelGridSearchCV(svc(), {"C": [1.0]}, cv=2, scoring=scoring, refit=refit).fit(X, y)


@pytest.mark.parametrize("kind", ["estimator", "stacked", "pipeline"])
def test_train_scores_are_reported_as_grid_search_cv_reports_them(digits, kind):
    X, y = digits
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    estimator, grid = svc(tol=1e-5), {"sigma": [0.3, 1.0], "C": [1.0, 10.0]}
    if kind == "pipeline":
        estimator = make_pipeline(StandardScaler(), estimator)
        grid = {"kernelsvc__sigma": [2.0, 5.0], "kernelsvc__C": [1.0, 10.0]}
    ours = KernelGridSearchCV(estimator, grid, cv=cv, racing=False, return_train_score=True,
                              stack_folds=kind == "stacked").fit(X, y)
    theirs = GridSearchCV(estimator, grid, cv=cv, return_train_score=True).fit(X, y)
    assert sorted(ours.cv_results_) == sorted(theirs.cv_results_)
    for k in range(3):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_train_score"],
                                   theirs.cv_results_[f"split{k}_train_score"], atol=2e-3)
    assert (ours.cv_results_["mean_train_score"] >= ours.cv_results_["mean_test_score"]).all()
    with pytest.raises(ValueError, match="return_train_score must be True or False"):
        KernelGridSearchCV(estimator, grid, cv=cv, return_train_score="yes").fit(X, y)


def test_a_class_missing_from_a_fold_is_refused_before_any_fit(digits, monkeypatch):
    X, y = digits
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    folds = [(np.flatnonzero(y != 0), np.flatnonzero(y == 0)),
             (np.flatnonzero(y != 1), np.flatnonzero(y == 1))]
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match="fold 0's training rows hold no row of class 0"):
        KernelGridSearchCV(svc(), {"C": [1.0]}, cv=folds).fit(X, y)


def test_an_interrupted_search_leaves_the_search_as_it_was(digits):
    X, y = digits
    search = KernelGridSearchCV(svc(), {"C": [1.0, 10.0], "sigma": [0.5]}, cv=2).fit(X, y)
    results, best = search.cv_results_, search.best_estimator_
    calls = []

    def scorer(model, X, y):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return model.score(X, y)
    search.set_params(scoring=scorer)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert search.cv_results_ is results and search.best_estimator_ is best
    fresh = KernelGridSearchCV(svc(), {"C": [1.0]}, cv=2, scoring=scorer)
    calls.clear()
    calls.extend([1, 1])
    with pytest.raises(KeyboardInterrupt):
        fresh.fit(X, y)
    assert not hasattr(fresh, "cv_results_") and not hasattr(fresh, "best_estimator_")


def test_verbose_prints_a_line_per_grid_point_and_fold(digits, capsys):
    X, y = digits
    KernelGridSearchCV(svc(), {"C": [1.0, 10.0], "sigma": [0.5]}, cv=2, verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("[fold ") for line in lines) == 4
    assert "iterations" in lines[0] and lines[-1].startswith("refit")


def _too_many_landmarks():
    """A grid whose second n_features exceeds a fold's 600 training rows (900 rows, cv=3):
    Nystroem refuses it at fit time, on every fold."""
    return svc(method="nystroem", tol=1e-5), {"n_features": [64, 700], "C": [1.0, 10.0]}


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_failed_fits_score_error_score_as_in_grid_search_cv(digits):
    """A grid point whose fits raise gets error_score (NaN) on those folds, a
    FitFailedWarning naming the error, and the last rank; the others are scored as
    GridSearchCV scores them."""
    from sklearn.exceptions import FitFailedWarning
    X, y = digits
    est, grid = _too_many_landmarks()
    with pytest.warns(FitFailedWarning, match="needs at least 700 training rows"):
        ours = KernelGridSearchCV(est, grid, cv=3, racing=False).fit(X, y)
    with pytest.warns(FitFailedWarning):
        theirs = GridSearchCV(est, grid, cv=3).fit(X, y)
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(np.isnan(ours.cv_results_[key]),
                                      np.isnan(theirs.cv_results_[key]))
        np.testing.assert_allclose(ours.cv_results_[key], theirs.cv_results_[key],
                                   atol=1e-3)
    assert np.isnan(ours.cv_results_["mean_test_score"]).sum() == 2
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"],
                                  theirs.cv_results_["rank_test_score"])
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_estimator_.feature_map_.n_features == 64
    assert (ours.cv_results_["mean_fit_time"] > 0).all()      # failed fits are timed too


def test_racing_drops_a_point_whose_fit_failed(digits):
    X, y = digits
    est, grid = _too_many_landmarks()
    with pytest.warns(Warning) as caught:
        search = KernelGridSearchCV(est, grid, cv=3).fit(X, y)
    assert [type(w.message).__name__ for w in caught] == ["FitFailedWarning", "UserWarning"]
    assert "test scores are non-finite" in str(caught[1].message)      # as GridSearchCV
    failed = search.cv_results_["param_n_features"] == 700
    assert (search.dropped_after_[failed] == 0).all()        # after the first fold
    assert (search.dropped_after_[~failed] != 0).all()
    dropped = search.dropped_after_
    fits = int(np.where(dropped < 0, 3, dropped + 1).sum())     # the folds each point ran
    assert f"2 of the {fits} fits failed" in str(caught[0].message)
    assert (search.cv_results_["rank_test_score"][failed] == 3).all()


def test_error_score_a_number_or_raise(digits):
    X, y = digits
    est, grid = _too_many_landmarks()
    with pytest.warns(Warning):
        zero = KernelGridSearchCV(est, grid, cv=3, racing=False, error_score=0.0,
                                  return_train_score=True).fit(X, y)
    failed = zero.cv_results_["param_n_features"] == 700
    for key in ("mean_test_score", "split1_test_score", "mean_train_score"):
        np.testing.assert_array_equal(zero.cv_results_[key][failed], 0.0)
    assert (zero.cv_results_["mean_test_score"][~failed] > 0.9).all()
    np.testing.assert_array_equal(zero.cv_results_["rank_test_score"][failed], 3)
    search = KernelGridSearchCV(est, grid, cv=3, error_score="raise")
    with pytest.raises(ValueError, match="needs at least 700 training rows"):
        search.fit(X, y)
    assert not hasattr(search, "cv_results_")


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_a_failure_inside_a_path_costs_only_its_own_grid_point(digits):
    """C = 10's scoring raises in the middle of the path over C: C = 100 is still fitted
    (by a new path) and scored as GridSearchCV scores it."""
    X, y = digits

    def scorer(model, X, y):
        if model.C == 10.0:
            raise RuntimeError("no score for C = 10")
        return model.score(X, y)
    grid = {"C": [1.0, 10.0, 100.0], "sigma": [0.5]}
    with pytest.warns(Warning, match="no score for C = 10"):
        ours = KernelGridSearchCV(svc(tol=1e-5), grid, cv=3, scoring=scorer,
                                  racing=False).fit(X, y)
    with pytest.warns(Warning):
        theirs = GridSearchCV(svc(tol=1e-5), grid, cv=3, scoring=scorer).fit(X, y)
    mean = ours.cv_results_["mean_test_score"]
    assert np.isnan(mean[1]) and np.isfinite(mean[[0, 2]]).all()
    np.testing.assert_allclose(mean, theirs.cv_results_["mean_test_score"], atol=1e-3)
    assert ours.best_params_ == theirs.best_params_


def test_a_search_whose_every_fit_fails_raises_and_leaves_the_search_unfitted(digits):
    X, y = digits
    search = KernelGridSearchCV(svc(method="nystroem"), {"n_features": [700]}, cv=3)
    with pytest.raises(ValueError, match="All the 3 fits failed"):
        search.fit(X, y)
    assert not hasattr(search, "cv_results_")


@pytest.mark.parametrize("option, value, message", [
    ("error_score", "ignore", "error_score must be 'raise' or a number"),
    ("error_score", None, "error_score must be 'raise' or a number"),
    ("error_score", True, "error_score must be 'raise' or a number"),
    ("pre_dispatch", 0, "pre_dispatch must be None, an int >= 1 or a str"),
    ("pre_dispatch", 1.5, "pre_dispatch must be None, an int >= 1 or a str")])
def test_a_bad_error_score_or_pre_dispatch_is_refused_before_any_fit(digits, monkeypatch,
                                                                     option, value, message):
    X, y = digits
    monkeypatch.setattr(KernelSVC, "fit_path", lambda *a, **k: pytest.fail("fitted"))
    for search in (KernelGridSearchCV(svc(), {"C": [1.0]}, cv=2),
                   KernelRandomizedSearchCV(svc(), {"C": [1.0]}, cv=2, n_iter=1)):
        with pytest.raises(ValueError, match=message):
            search.set_params(**{option: value}).fit(X, y)


def test_grid_search_cv_code_runs_unchanged_with_its_every_option(digits):
    """GridSearchCV's keyword arguments, as a user passes them, are taken (pre_dispatch
    changes nothing: the fits run one after another in this process)."""
    X, y = digits
    options = dict(scoring="accuracy", n_jobs=1, refit=True, cv=2, verbose=0,
                   pre_dispatch="2*n_jobs", error_score="raise", return_train_score=False)
    ours = KernelGridSearchCV(svc(), {"C": [1.0, 10.0]}, **options).fit(X, y)
    again = KernelGridSearchCV(svc(), {"C": [1.0, 10.0]},
                               **{**options, "pre_dispatch": 1}).fit(X, y)
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"],
                                  again.cv_results_["mean_test_score"])
    assert set(GridSearchCV(svc(), {"C": [1.0]}).get_params()) <= set(ours.get_params())
    assert (set(RandomizedSearchCV(svc(), {"C": [1.0]}).get_params())
            <= set(KernelRandomizedSearchCV(svc(), {"C": [1.0]}).get_params()))


def _one_standard_error(results):
    """The smallest C whose mean test score is within one standard deviation of the best
    (a callable refit)."""
    mean, std = results["mean_test_score"], results["std_test_score"]
    best = int(np.nanargmax(mean))
    near = np.flatnonzero(mean >= mean[best] - std[best])
    return int(near[np.argmin(np.asarray(results["param_C"], dtype=float)[near])])


def test_a_callable_refit_chooses_as_in_grid_search_cv(digits):
    X, y = digits
    grid = {"C": [0.1, 1.0, 10.0, 100.0], "sigma": [0.5]}
    ours = KernelGridSearchCV(svc(tol=1e-5), grid, cv=3, refit=_one_standard_error).fit(X, y)
    theirs = GridSearchCV(svc(tol=1e-5), grid, cv=3, refit=_one_standard_error).fit(X, y)
    assert ours.best_index_ == theirs.best_index_
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_estimator_.C == theirs.best_params_["C"]
    assert not hasattr(ours, "best_score_") and not hasattr(theirs, "best_score_")
    assert (ours.dropped_after_ == -1).all()        # racing: accuracy does not choose
    several = KernelGridSearchCV(svc(), grid, cv=3, scoring=["accuracy", "f1_macro"],
                                 refit=lambda results: 0).fit(X, y)
    assert several.best_index_ == 0 and several.best_estimator_.C == 0.1


@pytest.mark.parametrize("returned, error", [(1.0, TypeError), (True, TypeError),
                                             (4, IndexError), (-1, IndexError)])
def test_a_callable_refit_that_returns_no_grid_point_is_refused(digits, returned, error):
    X, y = digits
    search = KernelGridSearchCV(svc(), {"C": [1.0, 10.0], "sigma": [0.5]}, cv=2,
                                refit=lambda results: returned)
    with pytest.raises(error, match="returned"):
        search.fit(X, y)
    assert not hasattr(search, "cv_results_")


def test_a_dataframe_gives_its_column_names_as_in_grid_search_cv(digits):
    import pandas as pd
    X, y = digits
    frame = pd.DataFrame(X, columns=[f"pixel{i}" for i in range(X.shape[1])])
    ours = KernelGridSearchCV(svc(), {"C": [1.0, 10.0]}, cv=2).fit(frame, y)
    theirs = GridSearchCV(svc(), {"C": [1.0, 10.0]}, cv=2).fit(frame, y)
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    assert ours.n_features_in_ == theirs.n_features_in_ == X.shape[1]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no "fitted without feature names"
        np.testing.assert_array_equal(ours.predict(frame[:20]), theirs.predict(frame[:20]))
