"""Kernel ridge solvers (skylite.krr): exact against scikit-learn, PCG against exact, the
random-feature closed form against the ADMM optimum."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

from skylite import _linalg
from skylite.admm import BlockADMM
from skylite.datasets import load_pendigits
from skylite.kernels import Gaussian, Laplacian
from skylite.krr import exact_dual_coef, feature_ridge_coef, kernel_matvec, pcg_dual_coef
from skylite.prox import get_loss, get_regularizer


@pytest.fixture(scope="module")
def pendigits():
    X, y, X_test, _ = load_pendigits()
    return X[:1500].astype(np.float64), y[:1500].astype(np.float64), X_test[:300]


@settings(max_examples=10, deadline=None)
@given(n=st.integers(5, 60), m=st.integers(1, 3), sigma=st.floats(0.3, 3.0),
       alpha=st.floats(1e-4, 1.0), seed=st.integers(0, 2**16))
def test_exact_equals_scikit_learn(n, m, sigma, alpha, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((n, 4)), rng.standard_normal((n, m))
    A = exact_dual_coef(Gaussian(sigma), X, Y, alpha)
    ref = SkKernelRidge(alpha=n * alpha, kernel="rbf", gamma=0.5 / sigma**2).fit(X, Y)
    np.testing.assert_allclose(A, ref.dual_coef_, rtol=1e-8, atol=1e-8)
    X_new = rng.standard_normal((7, 4))
    np.testing.assert_allclose(kernel_matvec(Gaussian(sigma), X, A, X_new),
                               ref.predict(X_new), rtol=1e-8, atol=1e-8)


def test_kernel_matvec_in_row_blocks_equals_gram(monkeypatch):
    monkeypatch.setattr(_linalg, "BLOCK_ELEMENTS", 50)   # several row blocks
    rng = np.random.default_rng(0)
    X, V = rng.standard_normal((37, 3)), rng.standard_normal((37, 2))
    np.testing.assert_allclose(kernel_matvec(Laplacian(1.0), X, V),
                               Laplacian(1.0).gram(X) @ V, rtol=1e-12)


def test_pcg_equals_exact_in_few_iterations(pendigits):
    X, y, _ = pendigits
    kernel, alpha = Gaussian(60.0), 1e-4
    A = exact_dual_coef(kernel, X, y, alpha)
    fmap = kernel.feature_map(512, random_state=0)
    result = pcg_dual_coef(kernel, X, y, alpha, fmap, tol=1e-8)
    plain = pcg_dual_coef(kernel, X, y, alpha, fmap, tol=1e-8, preconditioner=False,
                          max_iter=2000)
    assert result.converged and result.dual_coef.shape == y.shape
    np.testing.assert_allclose(result.dual_coef, A, rtol=0, atol=1e-6 * np.abs(A).max())
    assert result.n_iter < plain.n_iter / 2       # the preconditioner is what makes it fast
    assert all(np.diff(result.residuals[-5:]) < 0) or result.n_iter < 5


def test_feature_ridge_is_the_admm_optimum(pendigits):
    X, y, _ = pendigits
    Y = np.stack([y, -y], axis=1) / 10
    alpha = 1e-3
    fmap = Gaussian(60.0).feature_map(256, n_blocks=2, random_state=1).fit(X)
    W = feature_ridge_coef(fmap, X, Y, alpha)
    Z = fmap.transform(X)
    np.testing.assert_allclose((Z.T @ Z + len(X) * alpha * np.eye(256)) @ W, Z.T @ Y,
                               atol=1e-8)
    engine = BlockADMM(fmap, get_loss("squared"), get_regularizer("l2"), alpha, tol=1e-9,
                       max_iter=3000).fit(X, Y)
    np.testing.assert_allclose(engine.coef_, W, atol=1e-5 * np.abs(W).max())


def test_feature_ridge_chunked_equals_one_chunk(pendigits, monkeypatch):
    X, y, _ = pendigits
    fmap = Gaussian(60.0).feature_map(64, random_state=2).fit(X)
    whole = feature_ridge_coef(fmap, X, y, 1e-3)
    monkeypatch.setattr(_linalg, "BLOCK_ELEMENTS", 64 * 100)          # 15 chunks of 100 rows
    np.testing.assert_allclose(feature_ridge_coef(fmap, X, y, 1e-3), whole, rtol=1e-10)


@pytest.mark.parametrize("solver", ["exact", "pcg", "feature"])
def test_bad_input_is_refused(solver):
    X, y = np.ones((4, 2)), np.arange(4.0)
    kernel = Gaussian(1.0)
    call = {"exact": lambda Y, a: exact_dual_coef(kernel, X, Y, a),
            "pcg": lambda Y, a: pcg_dual_coef(kernel, X, Y, a, kernel.feature_map(8)),
            "feature": lambda Y, a: feature_ridge_coef(kernel.feature_map(8).fit(X), X, Y, a)
            }[solver]
    with pytest.raises(ValueError, match="alpha"):
        call(y, 0.0)
    with pytest.raises(ValueError, match="4 rows"):
        call(y[:3], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        call(np.array([1.0, np.nan, 0, 0]), 1.0)


def test_kernel_ridge_solvers(pendigits):
    """auto picks the closed form for squared + l2; it is the ADMM's optimum without its
    iterations; 'direct' is refused where it does not apply."""
    from skylite import KernelRidge, KernelSVC
    X, y, X_test = pendigits
    X, X_test = X / 100, X_test / 100
    params = dict(sigma=0.6, n_features=256, alpha=1e-4)
    auto = KernelRidge(**params).fit(X, y)
    direct = KernelRidge(solver="direct", **params).fit(X, y)
    admm = KernelRidge(solver="admm", tol=1e-8, max_iter=5000, **params).fit(X, y)
    assert auto.solver_ == "direct" and auto.n_iter_ == 1 and auto.converged_
    assert admm.solver_ == "admm" and admm.n_iter_ > 10
    np.testing.assert_array_equal(auto.coef_, direct.coef_)
    np.testing.assert_allclose(admm.coef_, direct.coef_, atol=1e-4 * np.abs(direct.coef_).max())
    np.testing.assert_allclose(auto.predict(X_test), admm.predict(X_test), atol=1e-3)
    early = KernelRidge(early_stopping=True, **params).fit(X, y)
    assert early.n_iter_ > 0                      # validation asks for the iterations
    with pytest.raises(ValueError, match="solver must be one of"):
        KernelRidge(solver="cholesky", **params).fit(X, y)
    with pytest.raises(ValueError, match="needs the squared loss with the l2 regularizer"):
        KernelSVC(solver="direct", method="rff", **params).fit(X, y > 4)
    with pytest.raises(ValueError, match="needs the squared loss with the l2 regularizer"):
        KernelRidge(solver="direct", regularizer="l1", **params).fit(X, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_ridge_exact_and_pcg(pendigits, tmp_path, sparse):
    """solver='exact' is scikit-learn's KernelRidge; 'pcg' reaches it; both save and load."""
    import scipy.sparse as sp
    import skylite
    from skylite import KernelRidge
    X, y, X_test = pendigits
    X, X_test = X[:600] / 100, X_test / 100
    y = y[:600]
    if sparse:
        X, X_test = sp.csr_matrix(X), sp.csr_matrix(X_test)
    alpha = 1e-4
    exact = KernelRidge(sigma=0.6, alpha=alpha, solver="exact").fit(X, y)
    reference = SkKernelRidge(alpha=600 * alpha, kernel="rbf", gamma=0.5 / 0.36).fit(X, y)
    np.testing.assert_allclose(exact.predict(X_test), reference.predict(X_test), atol=1e-8)
    assert exact.coef_ is None and exact.dual_coef_.shape == (600, 1)    # as coef_: (., m)
    pcg = KernelRidge(sigma=0.6, alpha=alpha, solver="pcg", n_features=512, tol=1e-10,
                      max_iter=300).fit(X, y)
    assert pcg.converged_ and 0 < pcg.n_iter_ < 300
    assert exact.memory_estimate_ >= 8 * 600 * 600          # K
    assert pcg.memory_estimate_ >= 8 * (600 * 512 + 512 * 512)   # Z and its factor
    np.testing.assert_allclose(pcg.predict(X_test), exact.predict(X_test), atol=1e-6)
    for model in (exact, pcg):
        model.save(tmp_path / "m.sky")
        loaded = skylite.load(tmp_path / "m.sky")
        np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    refit = exact.set_params(solver="direct", n_features=64).fit(X, y)   # no stale dual model
    assert refit.coef_.shape == (64, 1) and not hasattr(refit, "dual_coef_")


def test_the_exact_solver_does_not_depend_on_the_map_and_names_its_problem(pendigits):
    """solver='exact' solves the kernel problem, whatever map the estimator holds (a Nystroem
    map of several blocks included: its RKHS norm is l2 on the functions); where the loss is
    not the squared loss the error says which estimators solve it."""
    from skylite import KernelRidge, KernelSVC
    X, y, _ = pendigits
    X, y = X[:300] / 100, y[:300]
    rff = KernelRidge(sigma=0.6, alpha=1e-4, solver="exact").fit(X, y)
    nystroem = KernelRidge(sigma=0.6, alpha=1e-4, solver="exact", method="nystroem",
                           n_features=128).fit(X, y)
    assert nystroem.feature_map_.n_blocks > 1
    np.testing.assert_array_equal(nystroem.dual_coef_, rff.dual_coef_)
    with pytest.raises(ValueError, match=r"solver='exact' needs the squared loss.*"
                                         r"KernelMachine\(loss='squared', classification=True"
                                         r"\).*loss='hinge', regularizer='l2'"):
        KernelSVC(solver="exact").fit(X, y)
    for solver in ("direct", "pcg"):
        with pytest.raises(ValueError, match=f"solver='{solver}' does not apply to a Nystroem"):
            KernelRidge(solver=solver, method="nystroem", n_features=128).fit(X, y)


@pytest.mark.parametrize("memory", ["enough", "too little to keep K"])
def test_an_exact_path_keeps_the_kernel_matrix_and_reports_progress(pendigits, capsys,
                                                                    monkeypatch, memory):
    """fit_path with solver='exact' makes K once (when twice its size fits) and factors it
    for each alpha: every model is bitwise the model of a separate fit, and verbose prints
    a line for K and one per alpha."""
    from skylite import KernelRidge
    import skylite._solvers as solvers
    if memory != "enough":          # K (0.72 MB) fits, a kept K beside its copy does not
        monkeypatch.setattr(solvers, "available_memory_bytes", lambda: 10**6)
    made = []
    monkeypatch.setattr(Gaussian, "gram", lambda self, X, Y=None, _gram=Gaussian.gram:
                        made.append(X.shape) or _gram(self, X, Y))
    X, y, _ = pendigits
    X, y = X[:300] / 100, y[:300].astype(float)
    alphas = [1e-2, 1e-3, 1e-4]
    models = KernelRidge(sigma=0.6, solver="exact", verbose=1).fit_path(X, y, alphas)
    lines = capsys.readouterr().out.splitlines()
    assert len(made) == (1 if memory == "enough" else 3)
    assert sum("exact kernel matrix of 300 rows" in line for line in lines) == len(made)
    assert sum("exact solve at alpha=" in line for line in lines) == 3
    for alpha, model in zip(alphas, models):
        alone = KernelRidge(sigma=0.6, solver="exact", alpha=alpha).fit(X, y)
        np.testing.assert_array_equal(model.dual_coef_, alone.dual_coef_)


@pytest.mark.parametrize("solver, message", [
    ("exact", r"needs .* for the 300 x 300 kernel matrix .* use solver='pcg'"),
    ("direct", r"needs .* for the 64 x 64 normal equations .* use solver='admm'")])
def test_a_closed_form_that_cannot_fit_is_refused_before_its_work(pendigits, monkeypatch,
                                                                  solver, message):
    """A kernel matrix or normal equations larger than the available memory: MemoryError
    naming the solver that fits, before the array is made; the previous model stays."""
    from skylite import KernelRidge
    import skylite._solvers as solvers
    X, y, X_test = pendigits
    X, y, X_test = X[:300] / 100, y[:300].astype(float), X_test[:5] / 100
    model = KernelRidge(sigma=0.6, solver=solver, n_features=64).fit(X, y)
    before = model.predict(X_test)

    def no_work(*args, **kwargs):
        raise AssertionError("the array was made before the refusal")
    monkeypatch.setattr(solvers, "available_memory_bytes", lambda: 10**4)
    monkeypatch.setattr(Gaussian, "gram", no_work)
    monkeypatch.setattr(solvers, "feature_normal_equations", no_work)
    with pytest.raises(MemoryError, match=message):
        model.fit(X, y)
    monkeypatch.undo()
    np.testing.assert_array_equal(model.predict(X_test), before)


def test_objective_of_an_exact_kernel_model_is_minimal():
    """F(A) = (1/n) sum 1/2 (y - K a)^2 + alpha/2 a^T K a is smallest at the exact solution."""
    from skylite import KernelRidge
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 3))
    y = np.sin(3 * X).sum(axis=1)
    model = KernelRidge(sigma=0.5, alpha=1e-3, solver="exact").fit(X, y)
    K, A = Gaussian(0.5).gram(X), model.dual_coef_
    F = lambda A: (0.5 * np.sum((y[:, None] - K @ A) ** 2) / 60
                   + 1e-3 * 0.5 * float(np.vdot(A, K @ A)))
    assert model.objective(X, y) == pytest.approx(F(A), rel=1e-10)
    for _ in range(5):
        assert F(A + 1e-3 * rng.standard_normal(A.shape)) > F(A)
