"""BlockADMM: convergence to reference optima, invariances, failure detection."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from skylite.admm import BlockADMM, ConvergenceError, ConvergenceWarning
from skylite.admm.blockadmm import ADMM
from skylite.admm.iteration import preconditioning
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite.sketch import GaussianRFF, Identity


@pytest.fixture(scope="module")
def problem(pendigits):
    """600 pendigits rows in [0, 1], a 256-feature Gaussian map in 4 blocks, explicit Z."""
    X = pendigits[0][:600].astype(np.float64) / 100.0
    y = pendigits[1][:600]
    fmap = GaussianRFF(256, sigma=0.6, n_blocks=4, random_state=0).fit(X)
    return X, y, fmap, fmap.transform(X)


def solve(fmap, X, Y, loss, reg, alpha, **kw):
    kw.setdefault("memory_budget", 10**9)
    kw.setdefault("max_iter", 3000)
    return BlockADMM(fmap, get_loss(loss) if isinstance(loss, str) else loss,
                     get_regularizer(reg), alpha, **kw).fit(X, Y)


# the engine's ways to take fewer iterations; each must reach the same optimum
VARIANTS = {"plain": dict(relaxation=1.0, acceleration=None),
            "relaxed": dict(relaxation=1.8, acceleration=None),
            "anderson": dict(relaxation=1.0, acceleration="anderson"),
            "anderson+relaxed": dict(relaxation=1.8, acceleration="anderson")}


def ridge_solution(Z, Y, alpha):
    n, s = Z.shape
    return np.linalg.solve(Z.T @ Z + n * alpha * np.eye(s), Z.T @ Y)


def relative(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("alpha", [1e-2, 1e-3])
def test_squared_l2_converges_to_the_closed_form(problem, alpha, variant):
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "ovr")
    engine = solve(fmap, X, Y, get_loss("squared", classification=True), "l2", alpha, tol=1e-9,
                   **VARIANTS[variant])
    assert engine.converged_
    assert relative(engine.coef_, ridge_solution(Z, Y, alpha)) <= 1e-6


def test_woodbury_path_when_blocks_are_wider_than_the_rows(problem):
    """n_i < s_j: the factor of I + Z Z^T with the Woodbury identity gives the same optimum."""
    X, y, _, _ = problem
    X, y = X[:90], y[:90]
    fmap = GaussianRFF(256, sigma=0.6, n_blocks=2, random_state=1).fit(X)   # s_j = 128 > 90
    Y, _ = code_labels(y, "ovr")
    engine = solve(fmap, X, Y, get_loss("squared", classification=True), "l2", 1e-2, tol=1e-10)
    reference = ridge_solution(fmap.transform(X), Y, 1e-2)
    assert relative(engine.coef_, reference) <= 1e-6
    single = solve(fmap, X, Y, get_loss("squared", classification=True), "l2", 1e-2, tol=1e-6,
                   precision="float32", **VARIANTS["anderson+relaxed"])
    assert relative(single.coef_, reference) <= 1e-4


@pytest.mark.parametrize("variant", VARIANTS)
def test_hinge_reaches_the_linear_svc_objective(problem, variant):
    from sklearn.svm import LinearSVC
    X, y, fmap, Z = problem
    n, alpha = len(X), 1e-3
    loss, reg = get_loss("hinge"), get_regularizer("l2")
    Y, _ = code_labels(y, loss)
    W_ref = np.array([LinearSVC(C=1 / (n * alpha), loss="hinge", fit_intercept=False,
                                tol=1e-10, max_iter=200_000).fit(Z, Y[:, k]).coef_.ravel()
                      for k in range(Y.shape[1])]).T
    F = lambda W: loss.value(Z @ W, Y) / n + alpha * reg.value(W)
    engine = solve(fmap, X, Y, loss, reg, alpha, tol=1e-6, **VARIANTS[variant])
    assert F(engine.coef_) <= F(W_ref) * (1 + 1e-4)
    assert np.mean(np.argmax(Z @ engine.coef_, 1) == np.argmax(Z @ W_ref, 1)) > 0.99


def test_hinge_at_weak_regularization_reaches_the_linear_svc_objective(problem):
    """C = 100: the piecewise-linear losses' own preconditioning (c^2 = sqrt(C)) reaches the
    same optimum."""
    from sklearn.svm import LinearSVC
    X, y, fmap, Z = problem
    n, C = len(X), 100.0
    alpha = 1 / (n * C)
    loss, reg = get_loss("hinge"), get_regularizer("l2")
    Y, _ = code_labels(y, loss)
    W_ref = np.array([LinearSVC(C=C, loss="hinge", fit_intercept=False, tol=1e-10,
                                max_iter=500_000).fit(Z, Y[:, k]).coef_.ravel()
                      for k in range(Y.shape[1])]).T
    F = lambda W: loss.value(Z @ W, Y) / n + alpha * reg.value(W)
    engine = solve(fmap, X, Y, loss, reg, alpha, tol=1e-7)   # tol stops further out at large C
    assert engine.scale_ == pytest.approx(C ** 0.25)
    assert F(engine.coef_) <= F(W_ref) * (1 + 1e-4)


def test_preconditioning_by_loss_and_c():
    hinge, squared = get_loss("hinge"), get_loss("squared")
    n = 1000
    # C = 1/(alpha n) = 100: sqrt(C) for hinge, C for a smooth loss; kappa2 = (c/c0)^2
    assert preconditioning(1e-5, n, hinge) == pytest.approx((100 ** 0.25, 0.1))
    assert preconditioning(1e-5, n, squared) == pytest.approx((10.0, 1.0))
    # C <= 1: c0 for every loss, the same float as 1/sqrt(alpha n)
    assert preconditioning(1e-2, n, hinge) == (1.0 / np.sqrt(1e-2 * n), 1.0)
    assert preconditioning(0.0, n, hinge) == (1.0, 1.0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_logistic_reaches_the_logistic_regression_objective(problem, variant):
    from sklearn.linear_model import LogisticRegression
    X, y, fmap, Z = problem
    n, alpha = len(X), 1e-3
    loss, reg = get_loss("logistic"), get_regularizer("l2")
    Y, _ = code_labels(y, loss)
    W_ref = LogisticRegression(C=1 / (n * alpha), fit_intercept=False, tol=1e-12,
                               max_iter=100_000).fit(Z, y).coef_.T
    F = lambda W: loss.value(Z @ W, Y) / n + alpha * reg.value(W)
    engine = solve(fmap, X, Y, loss, reg, alpha, tol=1e-6, **VARIANTS[variant])
    assert abs(F(engine.coef_) / F(W_ref) - 1) <= 1e-4
    # the engine's own record of the objective is F at its iterate
    assert abs(engine.history_[-1]["objective"] / F(engine.coef_) - 1) < 1e-3


def test_lad_l1_matches_a_linear_program(problem):
    """min (1/n) sum |z_i.w - y_i| + alpha ||w||_1 is an LP in (w+, w-, e)."""
    X, y, _, _ = problem
    X, target = X[:150], X[:150, 0] * 2.0 - X[:150, 5]          # a real-valued target
    fmap = GaussianRFF(48, sigma=0.6, n_blocks=3, random_state=2).fit(X)
    Z = fmap.transform(X)
    n, s, alpha = Z.shape[0], Z.shape[1], 1e-3
    c = np.r_[alpha * np.ones(2 * s), np.ones(n) / n]
    A = np.block([[Z, -Z, -np.eye(n)], [-Z, Z, -np.eye(n)]])
    lp = linprog(c, A_ub=A, b_ub=np.r_[target, -target], bounds=(0, None), method="highs")
    assert lp.status == 0
    engine = solve(fmap, X, target[:, None], "lad", "l1", alpha, tol=1e-5, max_iter=20_000)
    assert engine.converged_
    F = lambda w: np.abs(Z @ w - target).mean() + alpha * np.abs(w).sum()
    assert F(engine.coef_.ravel()) <= lp.fun * (1 + 1e-4)


def test_l1_gives_the_sparse_lasso_solution(problem):
    from sklearn.linear_model import Lasso
    X, y, fmap, Z = problem
    target = (y == 3).astype(float)[:, None] * 2 - 1
    alpha = 2e-3
    reference = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(
        Z, target.ravel()).coef_
    engine = solve(fmap, X, target, "squared", "l1", alpha, tol=1e-9, max_iter=10_000)
    W = engine.coef_.ravel()
    assert np.count_nonzero(W) < 0.5 * W.size                     # exactly sparse
    np.testing.assert_array_equal(W != 0, reference != 0)
    assert relative(W, reference) < 1e-4


@pytest.mark.parametrize("sweep", ["rows", "columns"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("variant", ["plain", "anderson+relaxed"])
def test_the_thread_count_does_not_change_a_bit(problem, variant, precision, sweep):
    """Blocks are summed in block order whatever thread computed them (5 blocks: waves of
    2 and 3 threads do not divide them evenly), and the row sweep adds the tiles of each
    block in row order."""
    X, y, _, _ = problem
    fmap = GaussianRFF(320, sigma=0.6, n_blocks=5, random_state=0).fit(X)
    Y, _ = code_labels(y, "hinge")
    runs = [solve(fmap, X, Y, "hinge", "l2", 1e-3, tol=1e-4, n_threads=t, precision=precision,
                  sweep=sweep, **VARIANTS[variant]) for t in (1, 2, 3)]
    assert runs[0].row_sweep_ == (sweep == "rows")
    for other in runs[1:]:
        assert other.n_iter_ == runs[0].n_iter_
        np.testing.assert_array_equal(other.coef_, runs[0].coef_)
        assert [r["objective"] for r in other.history_] == \
            [r["objective"] for r in runs[0].history_]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_row_sweep_and_the_column_sweep_take_the_same_steps(problem, variant):
    """The row sweep reorders the arithmetic of step 3 (docs/engine.md): without Anderson the
    two sweeps take the same iterations to rounding, rho changes included (without
    relaxation a rho change makes the row sweep recompute G); with Anderson (whose
    extrapolations carry G along as the same combination of stored images) they reach the
    same optimum."""
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "hinge")
    run = lambda sweep: solve(fmap, X, Y, "hinge", "l2", 1e-3, tol=1e-6, sweep=sweep,
                              rho=50.0, memory_budget=0, **VARIANTS[variant])
    rows, columns = run("rows"), run("columns")
    assert rows.row_sweep_ and not columns.row_sweep_
    assert len({r["rho"] for r in rows.history_}) > 1          # rho changed on the way
    F = lambda W: get_loss("hinge").value(Z @ W, Y) / len(X) + 1e-3 * 0.5 * np.sum(W * W)
    if "anderson" in variant:
        assert any(r.get("acceleration") == "accepted" for r in rows.history_)
        assert abs(F(rows.coef_) / F(columns.coef_) - 1) < 1e-5
    else:
        assert rows.n_iter_ == columns.n_iter_
        assert relative(rows.coef_, columns.coef_) < 1e-8


class CountingColumns:
    """A ColumnBlocks stand-in that counts the passes over Z the row sweep makes to compute
    G = Z^T B directly (`factor_and_project` with project=True)."""

    def __init__(self, columns):
        self.columns, self.projections = columns, 0

    def factor_and_project(self, B, G, project, n_threads):
        self.projections += bool(project)
        return self.columns.factor_and_project(B, G, project, n_threads)

    def __getattr__(self, name):
        return getattr(self.columns, name)


def test_anderson_moves_the_row_sweep_state_without_a_pass_over_z(problem):
    """An extrapolation (or a return to a stored image) sets the carried G = Z^T B by the
    same combination of the stored images' G, so only the first iteration computes G by a
    pass over Z, and the run reaches the column sweep's optimum."""
    X, y, fmap, Z = problem
    loss = get_loss("logistic")
    Y, _ = code_labels(y, loss)

    class CountedADMM(ADMM):
        def setup(self, *args):
            super().setup(*args)
            for data in self.rows_:
                data.columns = CountingColumns(data.columns)

    class Counted(BlockADMM):
        method_class = CountedADMM

    run = lambda cls, sweep: cls(fmap, loss, get_regularizer("l2"), 1e-3, tol=1e-7,
                                 max_iter=3000, sweep=sweep, memory_budget=0,
                                 acceleration="anderson", relaxation=1.8,
                                 adapt_rho=False).fit(X, Y)
    rows = run(Counted, "rows")
    outcomes = [r.get("acceleration") for r in rows.history_]
    assert outcomes.count("accepted") > rows.n_iter_ / 2
    assert rows.rows_[0].columns.projections == 1
    columns = run(BlockADMM, "columns")
    F = lambda W: loss.value(Z @ W, Y) / len(X) + 1e-3 * 0.5 * np.sum(W * W)
    assert abs(F(rows.coef_) / F(columns.coef_) - 1) < 1e-6


@pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")
def test_whiten_measures_u_in_the_inverse_metric_of_each_block(problem):
    """||whiten(V)_j||^2 = V_j^T (Z_j^T Z_j + I)^-1 V_j for every block factored as
    Z_j^T Z_j + I (Z scaled by the engine's c); Woodbury blocks are left as they are."""
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "hinge")
    engine = solve(fmap, X, Y, "hinge", "l2", 1e-3, max_iter=2)
    V = np.random.default_rng(0).standard_normal((256, 3))
    W = V.copy()
    engine.rows_[0].columns.whiten(W, 2)
    Zs = engine.scale_ * Z
    for j in range(4):
        cols = slice(64 * j, 64 * (j + 1))
        M = Zs[:, cols].T @ Zs[:, cols] + np.eye(64)
        expected = np.trace(V[cols].T @ np.linalg.solve(M, V[cols]))
        assert np.sum(W[cols] ** 2) == pytest.approx(expected, rel=1e-10)
    wide = GaussianRFF(256, sigma=0.6, n_blocks=2, random_state=1).fit(X[:90])
    woodbury = solve(wide, X[:90], Y[:90], "hinge", "l2", 1e-3, max_iter=2)
    W = V.copy()
    woodbury.rows_[0].columns.whiten(W, 2)
    np.testing.assert_array_equal(W, V)


def test_anderson_pays_off_on_smooth_losses(mnist3000):
    """Anderson's norm: U_j = Z_j^T O'_j measured through (Z_j^T Z_j + I)^-1.  In the
    Euclidean norm U's residual dominates the least squares and, with two column blocks,
    Anderson took more iterations than plain ADMM (188 against 143 here); with it, 67."""
    X, y = mnist3000
    fmap = GaussianRFF(512, sigma=6.0, n_blocks=2, random_state=0).fit(X)
    loss = get_loss("squared", classification=True)
    Y, _ = code_labels(y, loss)
    run = lambda **kw: solve(fmap, X, Y, loss, "l2", 1.0 / (10 * len(X)), tol=1e-3, rho=0.1,
                             adapt_rho=False, **kw)
    plain = run(acceleration=None, relaxation=1.0)
    anderson = run(acceleration="anderson", relaxation=1.0, anderson_memory=10)
    assert plain.converged_ and anderson.converged_
    assert anderson.n_iter_ <= plain.n_iter_ / 2


def test_acceleration_auto_by_the_loss(problem):
    """acceleration="auto": Anderson (without relaxation) for the smooth losses, over-
    relaxation 1.8 without Anderson for hinge and LAD; explicit settings are kept."""
    _, _, fmap, _ = problem
    reg = get_regularizer("l2")
    engine = lambda loss, **kw: BlockADMM(fmap, get_loss(loss), reg, 1e-3, **kw)
    for loss in ("squared", "logistic"):
        assert (engine(loss).acceleration, engine(loss).relaxation) == ("anderson", 1.0)
    for loss in ("hinge", "lad"):
        assert (engine(loss).acceleration, engine(loss).relaxation) == (None, 1.8)
    assert engine("logistic", acceleration=None).relaxation == 1.8
    assert engine("hinge", acceleration="anderson").relaxation == 1.0
    assert engine("hinge", relaxation=1.5).relaxation == 1.5


def test_row_blocks_and_input_format_do_not_change_the_optimum(problem):
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "hinge")
    run = lambda **kw: solve(fmap, kw.pop("X", X), Y, "hinge", "l2", 1e-3, tol=1e-6, **kw)
    base = run(n_threads=1)
    two_threads = run(n_threads=2)
    csr = run(n_threads=2, X=sp.csr_matrix(X))
    assert relative(csr.coef_, two_threads.coef_) < 1e-9
    row_blocks = run(n_row_blocks=2)
    F = lambda W: get_loss("hinge").value(Z @ W, Y) / len(X) + 1e-3 * 0.5 * np.sum(W * W)
    assert abs(F(row_blocks.coef_) / F(base.coef_) - 1) < 1e-4


def test_memory_budget_and_float32_transform(problem):
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "ovr")
    loss = get_loss("squared", classification=True)
    cached = solve(fmap, X, Y, loss, "l2", 1e-2, tol=1e-9, memory_budget=10**9)
    regenerated = solve(fmap, X, Y, loss, "l2", 1e-2, tol=1e-9, memory_budget=0)
    assert cached.cache_plan.n_z_cached == 4 and regenerated.cache_plan.n_z_cached == 0
    # half the blocks cached: Z for some, map parameters for others
    working = regenerated.memory_footprint_.total        # the budget pays for it first
    partial = solve(fmap, X, Y, loss, "l2", 1e-2, tol=1e-9,
                    memory_budget=working + 2 * 600 * 64 * 8 + (16 + 1) * 64 * 8 + 100)  # 2 Z + (W, b)
    assert partial.cache_plan.n_z_cached == 2 and partial.cache_plan.n_params_cached >= 1
    np.testing.assert_array_equal(regenerated.coef_, cached.coef_)
    np.testing.assert_array_equal(partial.coef_, cached.coef_)
    # float32 blocks: the products round at about 1e-7, so ask for 1e-6
    single = solve(fmap, X, Y, loss, "l2", 1e-2, tol=1e-6, precision="float32")
    assert single.converged_
    assert relative(single.coef_, cached.coef_) < 1e-4
    single_regenerated = solve(fmap, X, Y, loss, "l2", 1e-2, tol=1e-6, precision="float32",
                               memory_budget=0)
    np.testing.assert_array_equal(single_regenerated.coef_, single.coef_)


def test_warm_start_callback_and_history(problem, capsys):
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "ovr")
    loss = get_loss("squared", classification=True)
    W_star = ridge_solution(Z, Y, 1e-2)
    warm = solve(fmap, X, Y, loss, "l2", 1e-2, tol=1e-6)
    restarted = BlockADMM(fmap, loss, get_regularizer("l2"), 1e-2, tol=1e-6,
                          memory_budget=10**9).fit(X, Y, W0=W_star)
    assert restarted.n_iter_ < warm.n_iter_ / 3
    seen = []
    stopped = BlockADMM(fmap, loss, get_regularizer("l2"), 1e-2, tol=1e-12, verbose=True,
                        callback=lambda it, rec, W: seen.append(rec) or it == 5).fit(X, Y)
    assert stopped.n_iter_ == 5 and len(seen) == 5 and not stopped.converged_
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        BlockADMM(fmap, loss, get_regularizer("l2"), 1e-2, max_iter=3).fit(X, Y)
    record = stopped.history_[-1]
    for key in ("objective", "primal", "dual", "rho", "seconds"):
        assert np.isfinite(record[key])
    out = capsys.readouterr().out
    assert "; memory " in out and out.count("iter ") == 5
    assert stopped.memory_estimate_ > 0


def test_divergence_is_reported_not_returned(problem):
    X = problem[0][:50] * 1e200                 # Z^T Z overflows for the identity map
    fmap = Identity(n_blocks=2).fit(X)
    with pytest.raises(ConvergenceError, match="non-finite"):
        solve(fmap, X, np.ones((50, 1)), "squared", "l2", 1e-2)


def test_bad_engine_parameters(problem):
    X, y, fmap, _ = problem
    loss, reg = get_loss("hinge"), get_regularizer("l2")
    for kw, message in [({"rho": 0}, "rho"), ({"tol": -1}, "tol"), ({"max_iter": 0}, "max_iter"),
                        ({"relaxation": 2.0}, "relaxation"), ({"relaxation": 0}, "relaxation"),
                        ({"acceleration": "nesterov"}, "acceleration"),
                        ({"anderson_memory": 0}, "anderson_memory"),
                        ({"precision": "half"}, "precision"), ({"memory_budget": -5}, "memory"),
                        ({"n_threads": 0}, "n_threads")]:
        with pytest.raises(ValueError, match=message):
            BlockADMM(fmap, loss, reg, 1e-3, **kw)
    with pytest.raises(ValueError, match="alpha"):
        BlockADMM(fmap, loss, reg, -1.0)
    with pytest.raises(ValueError, match="n_row_blocks"):
        BlockADMM(fmap, loss, reg, 1e-3, n_row_blocks=700).fit(X, np.ones((600, 1)))


@pytest.mark.parametrize("sweep, budget", [("rows", 10**9), ("rows", 0), ("columns", 10**9)])
@pytest.mark.parametrize("loss_name, relaxation", [("hinge", 1.8), ("squared", 1.0)])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_a_warm_start_sets_the_fixed_point_its_model_implies(problem, monkeypatch, sweep,
                                                             budget, loss_name, relaxation,
                                                             precision):
    """Right after a start at W0, every variable is where `start_at_model` defines it, from
    the explicit Z in float64: O_i = Z_i W0, U_ij = Z~_ij^T Z~_ij W~0_j, nu_i = -g(O_i)/rho,
    mu'_ij = Z~_ij^T nu_i, mu = -sum_i mu'_i (Z~ = c Z, W~0 = W0/c), over 2 row blocks, by
    the row sweep's passes (Z cached or regenerated) and by the column sweep's blocks; the
    row sweep's carried G is Z~_i^T [nu_i | 0], valid."""
    import skylite.admm.blockadmm as blockadmm
    import skylite.admm.starts as starts
    X, y, fmap, Z = problem
    Y, _ = code_labels(y, "ovr")
    loss = (get_loss("squared", classification=True) if loss_name == "squared"
            else get_loss(loss_name))
    W0 = np.random.default_rng(1).normal(scale=0.3, size=(Z.shape[1], Y.shape[1]))
    seen = {}
    made = blockadmm.start_at_model

    def recorded(W0, state, rows, feature_map, loss, c, rho, n_threads, dist):
        made(W0, state, rows, feature_map, loss, c, rho, n_threads, dist)
        seen.update(state={k: v.copy() for k, v in state.arrays().items()}, c=c, rho=rho,
                    rows=[data.Y.shape[0] for data in rows])
    monkeypatch.setattr(blockadmm, "start_at_model", recorded)
    by_passes = []
    passes = starts._start_by_passes
    monkeypatch.setattr(starts, "_start_by_passes",
                        lambda *a: by_passes.append(1) or passes(*a))
    engine = BlockADMM(fmap, loss, get_regularizer("l2"), 1e-3, max_iter=1, sweep=sweep,
                       n_row_blocks=2, memory_budget=budget, precision=precision,
                       relaxation=relaxation, acceleration=None)
    with pytest.warns(ConvergenceWarning):
        engine.fit(X, Y, W0=W0)
    assert engine.method_.row_sweep_ == (sweep == "rows")
    assert len(by_passes) == (2 if sweep == "rows" else 0)      # one per row block
    state, c, rho = seen["state"], seen["c"], seen["rho"]
    bounds = np.cumsum([0] + seen["rows"])
    assert len(seen["rows"]) == 2
    offsets = fmap.transform_op_.block_offsets
    tol = 1e-4 if precision == "float32" else 1e-10
    close = lambda a, b: np.linalg.norm(a - b) <= tol * np.linalg.norm(b)  # noqa: E731
    mu = np.zeros_like(W0)
    for i in range(2):
        Zi = Z[bounds[i]:bounds[i + 1]]
        O = Zi @ W0
        nu = -loss.subgradient(O, Y[bounds[i]:bounds[i + 1]]) / rho
        U = np.vstack([c * Zi[:, a:b].T @ (Zi[:, a:b] @ W0[a:b])
                       for a, b in zip(offsets[:-1], offsets[1:])])
        mu_p = c * Zi.T @ nu
        mu -= mu_p
        assert close(state[f"O_{i}"], O) and close(state[f"Obar_{i}"], O)
        assert close(state[f"U_{i}"], U) and close(state[f"mu_p_{i}"], mu_p)
        np.testing.assert_array_equal(state[f"nu_{i}"],
                                      -loss.subgradient(state[f"O_{i}"],
                                                        Y[bounds[i]:bounds[i + 1]]) / rho)
        assert not state[f"Dbar_{i}"].any()
        np.testing.assert_allclose(state[f"Wp_{i}"], W0 / c, rtol=1e-15)
        if sweep == "rows":
            G = state[f"G_{i}"]
            assert state[f"G_valid_{i}"][0] == 1.0 and close(G[:, :W0.shape[1]], mu_p)
            assert not G[:, W0.shape[1]:].any()
    assert close(state["mu"], mu)
    np.testing.assert_allclose(state["Wbar"], W0 / c, rtol=1e-15)
