"""The driver of the iterative methods (skylite.admm.driver), its checkpoint files
(skylite.admm.checkpoint) and record helpers (skylite.admm.run), on a small method of known
behaviour and on the PCG kernel ridge method that it runs beside the ADMM."""
import json

import numpy as np
import pytest
from conftest import Stop, interrupted_then_resumed, kept_the_best_validated

from skylite import KernelRidge
from skylite.admm import checkpoint
from skylite.admm.driver import ConvergenceWarning, Driver, DriverSettings, Method
from skylite.admm.pcg import PCG
from skylite.admm.run import SumsLayout, as_python_numbers, format_record
from skylite.kernels import Gaussian
from skylite.krr import exact_dual_coef, pcg_dual_coef
from skylite.sketch import GaussianRFF


class Halving(Method):
    """x <- x / 2 + b / 2 per row: converges to b; the record is max |x - b|."""
    name = "Halving"
    n_sums = 1

    def __init__(self, tol=1e-6):
        self.tol = tol

    def check_data(self, X, Y):
        return np.asarray(X, dtype=float), np.asarray(Y, dtype=float)

    def plan(self, X, Y, available):
        self.memory_estimate = X.nbytes

    def collective_settings(self):
        return {"tol": self.tol}

    def setup(self, X, Y, n, n_units, dist):
        self.b = Y.copy()
        self.x = np.zeros_like(Y)

    def header(self, dist):
        return f"Halving: n={len(self.x)}"

    def checkpoint_meta(self):
        return {"method": "halving"}

    def step(self, dist):
        self.x = 0.5 * self.x + 0.5 * self.b

    def local_sums(self, info):
        return np.array([np.max(np.abs(self.x - self.b))])

    def record(self, it, sums, info):
        return {"iteration": it, "residual": float(sums[0])}, sums[0] <= self.tol

    def unconverged_message(self, last):
        return f"tol={self.tol:g}"

    @property
    def coef(self):
        return self.x

    def arrays(self):
        return {"x": self.x}

    def load(self, meta, arrays):
        self.x = np.array(arrays["x"])

    def check_start(self, start):
        if np.shape(start) != self.x.shape:
            raise ValueError("bad start shape")

    def warm_start(self, start, dist):
        self.x = np.array(start, dtype=float)


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    return rng.standard_normal((20, 3)), rng.standard_normal((20, 2))


def test_driver_runs_a_method_to_its_convergence_test(rows):
    X, Y = rows
    result = Driver(Halving(1e-6), DriverSettings(100)).run(X, Y)
    scale = np.max(np.abs(Y))
    assert result.converged and result.n_iter == int(np.ceil(np.log2(scale / 1e-6)))
    assert [r["iteration"] for r in result.history] == list(range(1, result.n_iter + 1))
    assert all(abs(r["residual"] - scale / 2 ** r["iteration"]) <= 1e-14 * scale
               for r in result.history)
    assert {"comm_seconds", "seconds", "elapsed"} <= set(result.history[0])
    assert result.memory_estimate == X.nbytes
    assert np.allclose(result.coef, Y, atol=1e-6)


def test_driver_warns_at_max_iter_and_a_callback_stops_the_run(rows):
    X, Y = rows
    with pytest.warns(ConvergenceWarning, match="Halving stopped at max_iter=3"):
        result = Driver(Halving(), DriverSettings(3)).run(X, Y)
    assert result.n_iter == 3 and not result.converged
    seen = []

    def callback(it, record, coef):
        seen.append((it, record["residual"], coef.shape))
        return it == 5
    stopped = Driver(Halving(), DriverSettings(100), callback=callback).run(X, Y)
    assert stopped.n_iter == 5 and [s[0] for s in seen] == [1, 2, 3, 4, 5]
    assert seen[0][2] == Y.shape


def test_driver_scores_validation_every_iteration(rows):
    X, Y = rows
    result = Driver(Halving(1e-3), DriverSettings(50),
                    validation=lambda x: -float(np.max(np.abs(x - Y)))).run(X, Y)
    assert [r["validation"] for r in result.history] == \
        [-r["residual"] for r in result.history]


def test_driver_warm_start_and_its_check(rows):
    X, Y = rows
    at_optimum = Driver(Halving(1e-6), DriverSettings(50)).run(X, Y, start=Y)
    assert at_optimum.n_iter == 1 and at_optimum.converged
    with pytest.raises(ValueError, match="bad start shape"):
        Driver(Halving(), DriverSettings(50)).run(X, Y, start=np.zeros(3))


def test_driver_checkpoint_resumes_to_the_same_run_and_refuses_a_mismatch(rows, tmp_path):
    X, Y = rows
    path = tmp_path / "run.ckpt"
    settings = DriverSettings(100, checkpoint=str(path), checkpoint_every=4)

    def kill(it, record, coef):
        if it == 10:
            raise Stop
    with pytest.raises(Stop):
        Driver(Halving(1e-9), settings, callback=kill).run(X, Y)
    assert path.exists()
    meta = json.loads(str(np.load(path)["meta"]))
    assert meta["iteration"] == 8 and meta["method"] == "halving"
    with pytest.raises(ValueError, match="does not match this run"):
        Driver(Halving(1e-9), settings).run(X, Y + 1.0)       # other data
    resumed = Driver(Halving(1e-9), settings).run(X, Y)
    reference = Driver(Halving(1e-9), DriverSettings(100)).run(X, Y)
    assert not path.exists()
    assert np.array_equal(resumed.coef, reference.coef)
    assert [r["residual"] for r in resumed.history] == \
        [r["residual"] for r in reference.history]


def test_a_damaged_checkpoint_is_refused_with_its_name(tmp_path):
    path = tmp_path / "bad.ckpt"
    path.write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="cannot read checkpoint .*bad.ckpt"):
        checkpoint.load_checkpoint(str(path), {})
    assert checkpoint.checkpoint_file("p", 1, 4) == "p.rank1-of-4"
    assert checkpoint.checkpoint_file("p", 0, 1) == "p"


def test_sums_layout_packs_and_flags_a_failed_rank():
    layout = SumsLayout(3, 2, 1)
    vector = layout.pack([np.arange(3.0), np.array([7.0, 8.0]), np.array([9.0])])
    assert vector.tolist() == [0, 1, 2, 7, 8, 9, 0]
    assert vector[layout.validation].tolist() == [7, 8] and vector[layout.dots].tolist() == [9]
    failed = layout.pack(None)
    assert failed[layout.failed] == 1 and failed.size == layout.size
    record = as_python_numbers({"iteration": np.int64(3), "residual": np.float64(0.5),
                                "seconds": 0.1, "elapsed": 1.0})
    assert type(record["iteration"]) is int and type(record["residual"]) is float
    assert format_record(record).startswith("iter    3  residual 5.00e-01")


# ---- the PCG method ----

@pytest.fixture(scope="module")
def ridge(pendigits):
    X = pendigits[0][:300].astype(np.float64) / 100.0
    y = pendigits[1][:300].astype(np.float64)
    return X, y


def test_pcg_method_reaches_the_exact_kernel_ridge_solution(ridge):
    X, y = ridge
    kernel, alpha = Gaussian(0.6), 1e-3
    fmap = GaussianRFF(64, sigma=0.6, random_state=0).fit(X)
    result = Driver(PCG(kernel, fmap, alpha, 1e-10), DriverSettings(200)).run(
        X, y.reshape(-1, 1))
    exact = exact_dual_coef(kernel, X, y.reshape(-1, 1), alpha)
    assert result.converged
    assert np.linalg.norm(result.coef - exact) <= 1e-7 * np.linalg.norm(exact)
    plain = pcg_dual_coef(kernel, X, y, alpha, fmap, tol=1e-10, preconditioner=False,
                          max_iter=200)
    assert plain.converged and plain.dual_coef.shape == (300,)        # y was 1-D
    assert np.linalg.norm(plain.dual_coef - exact[:, 0]) <= 1e-7 * np.linalg.norm(exact)


def test_kernel_ridge_pcg_gains_callback_validation_early_stopping_and_checkpoints(
        ridge, tmp_path, capsys):
    X, y = ridge
    kw = dict(sigma=0.6, n_features=64, alpha=1e-3, tol=1e-10, max_iter=80, solver="pcg")
    calls = []
    model = KernelRidge(callback=lambda it, rec, A: calls.append(it), verbose=True,
                        **kw).fit(X, y)
    assert calls == list(range(1, model.n_iter_ + 1)) and model.converged_
    assert model.coef_ is None and model.dual_coef_.shape == (300, 1)
    out = capsys.readouterr().out
    assert out.startswith("PCG: n=300") and "residual" in out
    validated = KernelRidge(**kw).fit(X[:250], y[:250], X_val=X[250:], y_val=y[250:])
    scores = kept_the_best_validated(validated, X[250:], y[250:])
    assert validated.early_stopping_ is False and len(scores) == validated.n_iter_
    assert validated.n_iter_ - validated.best_iteration_ <= 10      # n_iter_no_change
    path = tmp_path / "pcg.ckpt"
    resumed = interrupted_then_resumed(
        lambda **extra: KernelRidge(checkpoint=path, checkpoint_every=2, **kw, **extra),
        X, y, path, at=5)
    assert np.array_equal(resumed.dual_coef_, model.dual_coef_)
    warm = KernelRidge(**kw).fit(X, y, warm_start=model.dual_coef_)
    assert warm.n_iter_ == 1


# ---- one setup, many solves ----

@pytest.mark.parametrize("precision, budget", [("float32", None), ("float64", 0)])
def test_a_path_of_alphas_on_one_setup_reaches_each_independent_optimum(
        ridge, precision, budget):
    """BlockADMM.fit_path keeps the rows, plan and cached blocks of its first solve and
    rescales them for each alpha; each solve reaches the optimum of an independent fit."""
    from skylite.admm import BlockADMM
    from skylite.prox import get_loss, get_regularizer
    from skylite.prox.coding import code_labels
    X, y = ridge
    loss = get_loss("logistic")
    Y, _ = code_labels(y.astype(int), loss)
    fmap = GaussianRFF(128, sigma=0.6, n_blocks=4, random_state=0).fit(X)
    kw = dict(tol=1e-6, max_iter=2000, precision=precision, memory_budget=budget)
    engine = BlockADMM(fmap, loss, get_regularizer("l2"), 1e-2, **kw)
    alphas = [1e-2, 1e-3, 1e-4]
    path = engine.fit_path(X, Y, alphas)
    cold = engine.fit_path(X, Y, alphas, warm_start=False)
    assert engine.cache_plan.n_z_cached == (0 if budget == 0 else 4)
    Z = fmap.transform(X)
    for alpha, result in zip(alphas, path):
        alone = BlockADMM(fmap, loss, get_regularizer("l2"), alpha, **kw).fit(X, Y)
        F = lambda W: loss.value(Z @ W, Y) / len(X) + alpha * 0.5 * np.sum(W * W)
        assert result.converged and alone.converged_
        assert abs(F(result.coef) / F(alone.coef_) - 1) < 1e-5
    assert np.array_equal(engine.coef_, cold[-1].coef)
    assert cold[0].n_iter == path[0].n_iter
    with pytest.raises(ValueError, match="alphas must be"):
        engine.fit_path(X, Y, [])


@pytest.mark.parametrize("sweep", ["columns", "rows"])
def test_a_solve_that_keeps_the_state_continues_the_last_one(ridge, sweep):
    """solve(keep_state=True) starts from the last solve's iterates, duals and rho, carried
    to the new alpha's preconditioning (for hinge loss c changes regime at C = 1): from the
    optimum of the same problem it stops at once, and along a path of C it reaches each
    independent optimum (the model is the same function of the state at any c)."""
    from skylite.admm import BlockADMM
    from skylite.prox import get_loss, get_regularizer
    from skylite.prox.coding import code_labels
    X, y = ridge
    n, loss = len(X), get_loss("hinge")
    Y, _ = code_labels(y.astype(int), loss)
    fmap = GaussianRFF(128, sigma=0.6, n_blocks=4, random_state=0).fit(X)
    kw = dict(tol=1e-7, max_iter=5000, sweep=sweep, n_row_blocks=2)
    engine = BlockADMM(fmap, loss, get_regularizer("l2"), 1 / n, **kw).fit(X, Y)
    assert engine.converged_
    engine.solve(keep_state=True)
    assert engine.converged_ and engine.n_iter_ <= 2
    # a fixed point's relations hold in the new c's variables: mu'_ij = Z~_ij^T nu_i,
    # U_ij = Z~_ij^T Z~_ij W~_j, W'_i = W~ (Z~ = c Z, W~ = W / c)
    method = engine.method_
    method.set_problem(1 / (n * 30.0), None, keep_state=True)
    c, state, offsets = method.scale_, method.state_, fmap.transform_op_.block_offsets
    assert c == pytest.approx(30.0 ** 0.25)
    for rb, data in zip(state.blocks, method.rows_):
        Zi = c * fmap.transform(data.X)
        assert np.allclose(rb.mu_p, Zi.T @ rb.nu, atol=1e-5 * abs(rb.mu_p).max())
        assert np.allclose(rb.Wp, state.W, atol=1e-5 * abs(state.W).max())
        for a, b in zip(offsets[:-1], offsets[1:]):
            U = Zi[:, a:b].T @ (Zi[:, a:b] @ rb.Wp[a:b])
            assert np.allclose(rb.U[a:b], U, atol=1e-5 * abs(U).max())
    Z = fmap.transform(X)
    for C in (3.0, 30.0, 300.0):
        alpha = 1 / (n * C)
        engine.solve(alpha=alpha, keep_state=True)
        alone = BlockADMM(fmap, loss, get_regularizer("l2"), alpha, **kw).fit(X, Y)
        F = lambda W: loss.value(Z @ W, Y) / n + alpha * 0.5 * np.sum(W * W)
        assert engine.converged_ and abs(F(engine.coef_) / F(alone.coef_) - 1) < 1e-4
    with pytest.raises(ValueError, match="W0 or keep_state"):
        engine.solve(keep_state=True, W0=engine.coef_)
    with pytest.raises(ValueError, match="needs the same row_blocks"):
        engine.solve(keep_state=True, row_blocks=[0])


@pytest.mark.parametrize("budget", [None])
def test_solves_on_some_row_blocks_reach_the_fit_on_those_rows(ridge, budget):
    """Row blocks set up once serve solves on subsets of them (cross-validation folds set up
    as row blocks): each reaches the optimum of a fit on those rows alone."""
    from skylite.admm import BlockADMM
    from skylite.prox import get_loss, get_regularizer
    from skylite.prox.coding import code_labels
    X, y = ridge
    loss = get_loss("logistic")
    Y, _ = code_labels(y.astype(int), loss)
    fmap = GaussianRFF(128, sigma=0.6, n_blocks=4, random_state=0).fit(X)
    kw = dict(tol=1e-6, max_iter=2000, n_row_blocks=3, memory_budget=budget, sweep="columns")
    engine = BlockADMM(fmap, loss, get_regularizer("l2"), 1e-3, **kw).fit(X, Y)
    assert engine.n_row_blocks_ == 3
    for blocks, rows in (([0, 1], slice(0, 200)), ([1, 2], slice(100, 300))):
        engine.solve(row_blocks=blocks, alpha=2e-3)
        Xs, Ys = X[rows], Y[rows]
        alone = BlockADMM(fmap, loss, get_regularizer("l2"), 2e-3,
                          **dict(kw, n_row_blocks=2)).fit(Xs, Ys)
        Z = fmap.transform(Xs)
        F = lambda W: loss.value(Z @ W, Ys) / len(Xs) + 2e-3 * 0.5 * np.sum(W * W)
        assert engine.converged_ and abs(F(engine.coef_) / F(alone.coef_) - 1) < 1e-5
    with pytest.raises(ValueError, match="row_blocks must be indices of the 3 row blocks"):
        engine.solve(row_blocks=[3])
    with pytest.raises(ValueError, match="solve needs the setup of a fit"):
        BlockADMM(fmap, loss, get_regularizer("l2"), 1e-3).solve(alpha=1e-2)
