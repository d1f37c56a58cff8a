"""solver="dcd": dual coordinate descent for the hinge loss (skylite.admm.dual_cd).

The kernel's optimality conditions (hypothesis), the estimators' objective against block
ADMM's on the same problem, thread independence, the path over C, the search, bad input.
Data: pendigits (ships with skylite) and the MNIST sample in tests/data."""
import numpy as np
import pytest
from conftest import interrupted_then_resumed, kept_the_best_validated
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import skylite.admm.driver as driver_module
from skylite import KernelLogisticRegression, KernelSVC
from skylite._solvers import resolve_solver
from skylite.admm._dual_cd import dual_cd_epoch
from skylite.model_selection import KernelGridSearchCV
from skylite.prox import get_loss, get_regularizer


def solve(Z, Y, C, tol, n_threads=1, seed=1, max_epochs=5000):
    """Run dual_cd_epoch to convergence on features Z (n x s) and +/-1 targets Y (n x m);
    returns (W^T, A^T, epochs)."""
    n, s = Z.shape
    m = Y.shape[1]
    WT, AT = np.zeros((m, s)), np.zeros((m, n))
    order = np.tile(np.arange(n, dtype=np.intc), (m, 1))
    active = np.full(m, n, dtype=np.intc)
    bounds = np.tile([np.inf, -np.inf], (m, 1))
    states = np.arange(seed, seed + m, dtype=np.uint64)
    solved = np.zeros(m, dtype=np.uint8)
    q = np.einsum("ij,ij->i", Z, Z)
    YT = np.ascontiguousarray(Y.T)
    for epoch in range(1, max_epochs + 1):
        dual_cd_epoch(Z, YT, q, C, tol, WT, AT, order, active, bounds, states, solved,
                      n_threads)
        if solved.all():
            return WT, AT, epoch
    raise AssertionError("not solved")


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), extra=st.integers(0, 12), m=st.integers(1, 3),
       C=st.floats(0.01, 100.0), seed=st.integers(0, 2**31))
def test_the_solution_meets_the_optimality_conditions(n, extra, m, C, seed):
    """At a tight tol the dual variables meet the KKT conditions of the box-constrained
    dual.  (Coordinate descent converges at a linear rate set by the conditioning of Q:
    with s >= 2 n Gaussian features Q is well conditioned and the run is short.)"""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2 * n + extra))
    Z[rng.random(n) < 0.1] = 0.0                   # zero rows: their a_i go to C
    Y = np.where(rng.random((n, m)) < 0.5, -1.0, 1.0)
    WT, AT, _ = solve(Z, Y, C, 1e-9)
    assert np.allclose(WT, (AT * Y.T) @ Z, atol=1e-8)          # w = sum_i a_i y_i z_i
    assert ((AT >= 0) & (AT <= C)).all()
    g = Y.T * (WT @ Z.T) - 1.0                                 # the dual gradient
    q = np.einsum("ij,ij->i", Z, Z)
    live = q > 0
    assert (AT[:, ~live] == C).all()
    slack = 1e-6     # the span is measured at the visits; later updates move g a little
    assert (g[(AT == 0) & live] >= -slack).all()
    assert (g[(AT == C) & live] <= slack).all()
    inside = (AT > 0) & (AT < C) & live
    assert (np.abs(g[inside]) <= slack).all()


def test_the_epochs_do_not_depend_on_the_number_of_threads():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(200, 400))
    Y = np.where(rng.random((200, 5)) < 0.3, 1.0, -1.0)
    one, two = solve(Z, Y, 3.0, 1e-3, n_threads=1), solve(Z, Y, 3.0, 1e-3, n_threads=2)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
    assert one[2] == two[2]


@pytest.fixture(scope="module")
def digits():
    from skylite.datasets import load_pendigits
    X, y, Xt, yt = load_pendigits()
    return X[:1500] / 100.0, y[:1500], Xt[:1000] / 100.0, yt[:1000]


@pytest.mark.parametrize("method", ["rff", "nystroem"])
def test_reaches_the_admm_optimum(digits, method):
    """The same problem (l2, or the RKHS norm of a Nystroem map of 2 blocks) solved tightly
    by both solvers: dual coordinate descent's objective is at most ADMM's + 1e-4 relative,
    and its duality gap certifies it."""
    X, y = digits[:2]
    kw = dict(method=method, n_features=256, sigma=0.4, C=5.0, random_state=0,
              early_stopping=False)
    if method == "nystroem":
        kw["n_blocks"] = 2
    dcd = KernelSVC(solver="dcd", tol=1e-5, max_iter=20000, **kw).fit(X, y)
    admm = KernelSVC(solver="admm", tol=1e-6, max_iter=20000, **kw).fit(X, y)
    assert dcd.solver_ == "dcd" and dcd.converged_
    assert (dcd.regularizer_.name == "rkhs") == (method == "nystroem")
    a, b = dcd.objective(X, y), admm.objective(X, y)
    assert a <= b * (1 + 1e-4), (a, b)
    assert abs(a - dcd.history_[-1]["objective"]) <= 1e-6 * a     # as recorded
    assert dcd.history_[-1]["gap"] <= 1e-4
    assert np.mean(dcd.predict(X) == admm.predict(X)) > 0.99


def test_a_fit_does_not_depend_on_the_number_of_threads(digits):
    X, y = digits[:2]
    kw = dict(method="nystroem", n_features=128, n_blocks=2, C=10.0, random_state=0,
              solver="dcd")
    one = KernelSVC(n_threads=1, **kw).fit(X, y)
    two = KernelSVC(n_threads=2, **kw).fit(X, y)
    assert np.array_equal(one.coef_, two.coef_) and one.n_iter_ == two.n_iter_


def test_the_path_continues_from_the_previous_c(digits):
    """Each C of fit_path matches a cold fit's objective to the tolerance, in fewer epochs
    in all."""
    X, y = digits[:2]
    est = KernelSVC(method="rff", n_features=256, sigma=0.4, random_state=0, solver="dcd",
                    tol=1e-6, max_iter=20000)
    Cs = [1.0, 10.0, 100.0]
    models = est.fit_path(X, y, Cs)
    cold = [clone(est).set_params(C=C).fit(X, y) for C in Cs]
    for warm, alone in zip(models, cold):
        a, b = warm.objective(X, y), alone.objective(X, y)
        assert abs(a - b) <= 1e-3 * b, (warm.C, a, b)
    assert sum(m.n_iter_ for m in models[1:]) < sum(m.n_iter_ for m in cold[1:])
    # a path downwards clips the dual variables into the smaller box
    down = est.fit_path(X, y, [10.0, 1.0])[1]
    assert abs(down.objective(X, y) - cold[0].objective(X, y)) <= 1e-3 * cold[0].objective(X, y)


def test_the_search_equals_gridsearchcv(digits):
    X, y = digits[:2]
    est = KernelSVC(method="nystroem", n_features=128, random_state=0, solver="dcd")
    grid = {"sigma": [0.3, 0.6], "C": [1.0, 10.0]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = KernelGridSearchCV(est, grid, cv=cv, racing=False).fit(X, y)
    theirs = GridSearchCV(est, grid, cv=cv).fit(X, y)
    assert ours.best_params_ == theirs.best_params_
    assert np.allclose(ours.cv_results_["mean_test_score"],
                       theirs.cv_results_["mean_test_score"], atol=1e-3)


def test_callback_validation_early_stopping_and_checkpoints(digits, tmp_path):
    X, y = digits[:2]
    kw = dict(method="nystroem", n_features=128, n_blocks=2, C=10.0, random_state=0,
              solver="dcd", tol=1e-5, max_iter=2000)
    calls = []
    model = KernelSVC(callback=lambda it, rec, W: calls.append(it), **kw).fit(X, y)
    assert calls == list(range(1, model.n_iter_ + 1)) and model.converged_
    validated = KernelSVC(early_stopping=True, n_iter_no_change=5, **{**kw, "tol": 1e-9}).fit(
        X[:1200], y[:1200], X_val=X[1200:], y_val=y[1200:])
    scores = kept_the_best_validated(validated, X[1200:], y[1200:])
    assert len(scores) == validated.n_iter_ < 2000 and not validated.converged_  # stopped
    assert max(scores[-5:]) <= max(scores[:-5])     # five epochs without a better score
    path = tmp_path / "dcd.ckpt"
    resumed = interrupted_then_resumed(
        lambda **extra: KernelSVC(checkpoint=path, checkpoint_every=3, **kw, **extra),
        X, y, path, at=7)
    assert np.array_equal(resumed.coef_, model.coef_)
    assert resumed.n_iter_ == model.n_iter_


def test_the_command_line_trains_with_it(digits, tmp_path, capsys):
    from skylite.cli import main
    X, y = digits[:2]
    data = tmp_path / "digits.npz"
    np.savez(data, X=X, y=y)
    assert main(["train", str(data), "-m", str(tmp_path / "m.sky"), "--solver", "dcd",
                 "--features", "128", "--sigma", "0.4"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("iter ")]
    assert lines and "dual objective" in lines[0] and "objective" in lines[-1].split("solved")[1]
    assert "epochs of dual coordinate descent (converged), objective" in out


def test_early_stopping_auto_is_off(mnist3000):
    X, y = mnist3000
    m = KernelSVC(n_features=64, random_state=0, solver="dcd").fit(X[:300], y[:300])
    assert m.early_stopping_ is False and m.validation_indices_ is None


def test_bad_uses_are_named(digits):
    X, y = digits[:2]
    with pytest.raises(ValueError, match="solver='dcd' needs the hinge loss"):
        KernelLogisticRegression(n_features=64, solver="dcd").fit(X, y)
    with pytest.raises(ValueError, match="solver='dcd' needs the hinge loss"):
        KernelSVC(n_features=64, solver="dcd", regularizer="l1").fit(X, y)
    with pytest.raises(ValueError, match="runs in one process"):
        resolve_solver("dcd", get_loss("hinge"), get_regularizer("l2"), 1e-3, 64,
                       iterative=False, distributed=True)
    fitted = KernelSVC(n_features=64, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="takes no warm start"):
        KernelSVC(n_features=64, random_state=0, solver="dcd").fit(X, y,
                                                                  warm_start=fitted.coef_)


def test_a_semidefinite_rkhs_gram_matrix_is_whitened_on_its_range(digits, monkeypatch):
    """Where G's Cholesky factorization fails (landmarks close for the bandwidth), the
    features are whitened on G's range: the same problem, the same optimum."""
    import skylite.admm.dual_cd as dual_cd_module
    X, y = digits[:2]
    kw = dict(method="nystroem", n_features=256, n_blocks=2, sigma=0.4, C=5.0,
              random_state=0, solver="dcd", tol=1e-5, max_iter=20000)
    factored = KernelSVC(**kw).fit(X, y)

    def not_definite(A, what, *threads):
        raise ValueError(f"{what} is not positive definite")
    monkeypatch.setattr(dual_cd_module, "cholesky", not_definite)
    ranged = KernelSVC(**kw).fit(X, y)
    a, b = ranged.objective(X, y), factored.objective(X, y)
    assert abs(a - b) <= 1e-4 * b, (a, b)
    assert ranged.history_[-1]["gap"] <= 1e-4
    assert np.mean(ranged.predict(X) == factored.predict(X)) > 0.99


@settings(max_examples=25, deadline=None)
@given(s=st.integers(2, 12), rank=st.integers(0, 12), seed=st.integers(0, 2**32 - 1))
def test_range_whitening_is_the_rkhs_norm_on_the_range(s, rank, seed):
    """V^T G V = I on G's range, and z . (V w~) = (V^T z) . w~ with ||w~||^2 = w^T G w, up
    to rounding: a few hundred eps times the condition number of G on the range kept (a
    full-rank draw of 5 rows had 4.6e8, and the identity held to 1.3e-8)."""
    from skylite.admm.dual_cd import range_whitening
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((s, min(rank, s)))
    G = B @ B.T
    V = range_whitening(G)
    r = V.shape[1]
    assert V.shape == (s, np.linalg.matrix_rank(G))
    values = np.linalg.eigvalsh(G)
    condition = values[-1] / values[-r] if r else 1.0
    tol = max(1e-8, 1e3 * np.finfo(np.float64).eps * condition)
    np.testing.assert_allclose(V.T @ G @ V, np.eye(r), atol=tol)
    w_tilde = rng.standard_normal(r)
    w = V @ w_tilde
    assert w @ G @ w == pytest.approx(w_tilde @ w_tilde, rel=tol, abs=1e-10)


def test_range_whitening_drops_a_null_eigenvalue_that_eigh_rounds_up():
    """G = B B^T of rank 2 with 3 rows, where eigh (with eigenvectors) returned the null
    eigenvalue as 4.9e-15 (5.7 eps max(lambda), above 3 eps max(lambda)); a kept null
    direction is scaled by 1/sqrt(4.9e-15) and breaks V^T G V = I."""
    from skylite.admm.dual_cd import range_whitening
    B = np.random.default_rng(198).standard_normal((3, 2))
    G = B @ B.T
    V = range_whitening(G)
    assert V.shape == (3, 2)
    np.testing.assert_allclose(V.T @ G @ V, np.eye(2), atol=1e-8)


def test_a_zero_rkhs_gram_matrix_is_named(digits):
    from skylite._distributed import Distributed
    from skylite.admm.dual_cd import DualCD
    X, y = digits[:2]
    fmap = KernelSVC(n_features=64, n_blocks=2, method="nystroem", random_state=0).fit(
        X, y).feature_map_

    class Singular:
        name, gram = "rkhs", np.zeros((64, 64))
    method = DualCD(fmap, Singular(), 1e-3, 0.1, 0, 1, 10)
    Y = np.where(y[:, None] == np.unique(y)[None, :], 1.0, -1.0)
    with pytest.raises(ValueError, match="G is zero; use solver='admm'"):
        method.setup(X, Y, len(X), 1, Distributed(None))


def test_refuses_what_does_not_fit_in_memory(digits, monkeypatch):
    X, y = digits[:2]
    monkeypatch.setattr(driver_module, "available_memory_bytes", lambda: 10**6)
    with pytest.raises(MemoryError, match="use solver='admm'"):
        KernelSVC(n_features=256, random_state=0, solver="dcd").fit(X, y)
