"""bfloat16 feature caches: the rounding, the bitwise invariances, the memory plan's choice,
the model it gives on real data."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skylite import KernelSVC
from skylite.admm import BlockADMM, EngineSettings, _column_blocks
from skylite.admm._column_blocks import bfloat16_round
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite.sketch import Fastfood, GaussianRFF

pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


@pytest.fixture(scope="module")
def problem(pendigits):
    """600 pendigits rows in [0, 1], a 320-feature Gaussian map in 5 blocks of 64."""
    X = pendigits[0][:600].astype(np.float64) / 100.0
    fmap = GaussianRFF(320, sigma=0.6, n_blocks=5, random_state=0).fit(X)
    return X, pendigits[1][:600], fmap


def solve(fmap, X, Y, loss="hinge", alpha=1e-3, **kw):
    kw.setdefault("memory_budget", 10**9)
    kw.setdefault("max_iter", 3000)
    kw.setdefault("precision", "float32")
    return BlockADMM(fmap, get_loss(loss) if isinstance(loss, str) else loss,
                     get_regularizer("l2"), alpha, **kw).fit(X, Y)


def nearest_bfloat16_bits(bits):
    """The float32 bits of the bfloat16 nearest to the float32 with these bits, ties to the
    even bfloat16, by exact float64 distances to the two neighbours."""
    x = np.array([bits], dtype=np.uint32).view(np.float32)[0]
    low = bits & 0xFFFF0000                     # toward zero
    exponent = (bits >> 23) & 0xFF
    ulp = 2.0 ** ((exponent if exponent else 1) - 127 - 7)
    low_value = abs(float(np.array([low], dtype=np.uint32).view(np.float32)[0]))
    below, above = abs(float(x)) - low_value, low_value + ulp - abs(float(x))
    if below < above or (below == above and not (low >> 16) & 1):
        return low
    return low + 0x10000                        # away from zero (may reach inf)


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_bfloat16_rounding_is_to_nearest_with_ties_to_even(bits):
    a = np.array([[bits]], dtype=np.uint32).view(np.float32).copy()
    bfloat16_round(a)
    got = int(a.view(np.uint32)[0, 0])
    if np.isnan(np.array([bits], dtype=np.uint32).view(np.float32)[0]):
        assert np.isnan(a[0, 0]) and got & 0xFFFF == 0
    else:
        assert got == nearest_bfloat16_bits(bits)


def test_rounding_keeps_the_boundaries():
    top = np.float32(3.3895314e38)                # the largest finite bfloat16
    a = np.array([[1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -0.0, np.inf, np.finfo(np.float32).max,
                   1e-40, top]], dtype=np.float32)
    bfloat16_round(a)
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to the even one, 1; 1 + 3 * 2^-8 to
    # 1 + 2^-6 (even); the largest float32 rounds to inf, the largest bfloat16 stays;
    # denormals stay denormal
    assert a[0, 0] == a[0, 1] == 1.0 and a[0, 2] == 1.0 + 2**-6
    assert np.signbit(a[0, 3]) and a[0, 4] == np.inf and a[0, 5] == np.inf
    assert 0 < a[0, 6] < np.finfo(np.float32).tiny and a[0, 7] == top


@pytest.mark.parametrize("sweep", ["rows", "columns"])
def test_cached_or_regenerated_blocks_and_any_thread_count_give_the_same_bits(problem,
                                                                               sweep):
    """A cached bfloat16 block is the regenerated block rounded: the model is bitwise the
    same whatever is cached, on any number of threads."""
    X, y, fmap = problem
    Y, _ = code_labels(y, "hinge")
    runs = [solve(fmap, X, Y, cache_precision="bfloat16", sweep=sweep, tol=1e-4,
                  n_threads=t, memory_budget=b) for t, b in ((2, 10**9), (1, 10**9), (2, 0))]
    assert [r.cache_plan.n_z_cached for r in runs] == [5, 5, 0]
    assert {r.cache_precision_ for r in runs} == {"bfloat16"}
    assert runs[0].row_sweep_ == (sweep == "rows")
    for other in runs[1:]:
        assert other.n_iter_ == runs[0].n_iter_
        np.testing.assert_array_equal(other.coef_, runs[0].coef_)
    single = solve(fmap, X, Y, cache_precision="float32", sweep=sweep, tol=1e-4)
    difference = np.linalg.norm(runs[0].coef_ - single.coef_) / np.linalg.norm(single.coef_)
    assert 0 < difference < 1e-2


@pytest.mark.parametrize("narrow", [True, False])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("method", ["rff", "fastfood"])
def test_the_row_sweep_gives_the_same_bits_with_cached_or_regenerated_blocks(problem,
                                                                           precision,
                                                                           narrow, method):
    """The row sweep takes tiles of 512 rows when it regenerates blocks of a map computed
    by matrix products (the transform's tile) and of 256 when every block is cached or the
    map computes row by row (Fastfood); on 600 rows (tiles 512 + 88 against 256 + 256 + 88)
    its products are the same calls either way, with the narrow kernels and with BLAS, so
    the model is bitwise the same."""
    X, y, fmap = problem
    if method == "fastfood":
        fmap = Fastfood(320, sigma=0.6, n_blocks=5, random_state=0).fit(X)
    Y, _ = code_labels(y, "hinge")
    try:
        _column_blocks.use_narrow_kernels(narrow)
        runs = [solve(fmap, X, Y, precision=precision, cache_precision="auto", tol=1e-4,
                      sweep="rows", memory_budget=b) for b in (10**9, 0)]
    finally:
        _column_blocks.use_narrow_kernels(True)
    assert [r.cache_plan.n_z_cached for r in runs] == [5, 0]
    assert runs[0].row_sweep_ and runs[1].row_sweep_
    assert runs[0].n_iter_ == runs[1].n_iter_
    np.testing.assert_array_equal(runs[0].coef_, runs[1].coef_)


def test_the_model_solves_the_problem_of_the_rounded_features(problem):
    """Ridge on bfloat16 features reaches the closed form of the rounded Z (the factors come
    from the stored values), not that of the float32 Z."""
    X, y, fmap = problem
    Y, _ = code_labels(y, "ovr")
    alpha = 1e-4
    engine = solve(fmap, X, Y, get_loss("squared", classification=True), alpha, tol=1e-9,
                   cache_precision="bfloat16")
    c = engine.scale_
    Z = (c * fmap.transform(X.astype(np.float32))).astype(np.float32)
    rounded = Z.copy()
    bfloat16_round(rounded)

    def ridge(Z):
        Z = Z.astype(np.float64) / c
        return np.linalg.solve(Z.T @ Z + len(Z) * alpha * np.eye(Z.shape[1]), Z.T @ Y)

    to_rounded = np.linalg.norm(engine.coef_ - ridge(rounded)) / np.linalg.norm(ridge(rounded))
    to_float32 = np.linalg.norm(engine.coef_ - ridge(Z)) / np.linalg.norm(ridge(Z))
    assert to_rounded < 1e-4 < to_float32


def test_a_path_over_alpha_rescales_bfloat16_caches(problem):
    """set_problem multiplies cached blocks by c_new / c_old and rounds again: the next solve
    agrees with regenerated blocks up to that rounding."""
    X, y, fmap = problem
    Y, _ = code_labels(y, "hinge")
    paths = [BlockADMM(fmap, get_loss("hinge"), get_regularizer("l2"), 1e-3, tol=1e-5,
                       precision="float32", cache_precision="bfloat16", memory_budget=b)
             for b in (10**9, 0)]
    results = [engine.fit_path(X, Y, [1e-2, 1e-3]) for engine in paths]
    np.testing.assert_array_equal(results[0][0].coef, results[1][0].coef)
    last = [r[1].coef for r in results]
    assert np.linalg.norm(last[0] - last[1]) / np.linalg.norm(last[1]) < 1e-2


def test_auto_takes_bfloat16_when_it_caches_more_blocks(problem):
    X, y, fmap = problem
    Y, _ = code_labels(y, "hinge")
    run = lambda **kw: solve(fmap, X, Y, max_iter=2, **kw)
    working = run(memory_budget=0).memory_footprint_.total
    block = 600 * 64                                    # values of one Z block
    tight = working + 5 * block * 2 + 100               # 5 blocks in bfloat16, 2 in float32
    assert run(memory_budget=tight).cache_precision_ == "bfloat16"
    assert run(memory_budget=tight).cache_plan.n_z_cached == 5
    forced = run(memory_budget=tight, cache_precision="float32")
    assert (forced.cache_precision_, forced.cache_plan.n_z_cached) == ("float32", 2)
    assert run(memory_budget=10**9).cache_precision_ == "float32"     # all fit: exact
    assert run(memory_budget=0).cache_precision_ == "float32"         # nothing cached
    assert run(memory_budget=tight, precision="float64").cache_precision_ == "float64"


def test_impossible_cache_precisions_are_refused(pendigits):
    with pytest.raises(ValueError, match="cache_precision='bfloat16' needs "
                                         "precision='float32'"):
        EngineSettings(cache_precision="bfloat16", precision="float64")
    with pytest.raises(ValueError, match="cache_precision='float64' needs "
                                         "precision='float64'"):
        EngineSettings(cache_precision="float64", precision="float32")
    with pytest.raises(ValueError, match="cache_precision must be one of"):
        EngineSettings(cache_precision="float16")
    X, y = pendigits[0][:200], pendigits[1][:200]
    for precision in ("auto", "float64"):    # "auto" computes float64 rows in float64
        with pytest.raises(ValueError, match="needs precision='float32'"):
            KernelSVC(cache_precision="bfloat16", n_features=64,
                      precision=precision).fit(X.astype(np.float64), y)
    assert X.dtype == np.float32                # float32 rows: "auto" is float32
    fitted = KernelSVC(cache_precision="bfloat16", n_features=64).fit(X, y)
    assert fitted.precision_ == "float32" and fitted.cache_precision_ == "bfloat16"


def test_bfloat16_caches_keep_the_accuracy_on_pendigits(pendigits):
    X, y, Xt, yt = pendigits
    kw = dict(method="rff", n_features=1024, sigma=40.0, C=10.0, precision="float32",
              early_stopping=False, tol=1e-3)
    single = KernelSVC(cache_precision="float32", **kw).fit(X, y)
    half = KernelSVC(cache_precision="bfloat16", **kw).fit(X, y)
    assert half.cache_precision_ == "bfloat16" and single.cache_precision_ == "float32"
    assert abs(half.score(Xt, yt) - single.score(Xt, yt)) <= 0.003
    assert half.score(Xt, yt) > 0.97


def test_cache_precision_is_a_parameter_a_search_can_tune(pendigits):
    X, y = pendigits[0][:600], pendigits[1][:600]
    model = KernelSVC(method="rff", n_features=128, precision="float32", max_iter=20)
    assert clone(model.set_params(cache_precision="bfloat16")).cache_precision == "bfloat16"
    search = GridSearchCV(model, {"cache_precision": ["float32", "bfloat16"]}, cv=2).fit(X, y)
    assert search.best_estimator_.cache_precision_ == search.best_params_["cache_precision"]
