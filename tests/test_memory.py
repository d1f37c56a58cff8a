"""The memory a run needs, counted before it allocates; the refusal when it does not fit; the
default block layout, which depends on the problem only."""
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skylite import KernelSVC
from skylite.admm import driver, memory
from skylite.admm.memory import footprint
from skylite.kernels import Gaussian
from skylite.sketch import default_n_blocks
from skylite.sketch import Fastfood, GaussianRFF, Identity, Nystroem


def wide_rows(d, n=2):
    """n sparse rows of d columns (the last one set), labels +/-1."""
    rows = sp.csr_matrix((np.ones(2 * n), (np.repeat(np.arange(n), 2),
                                           np.tile([0, d - 1], n))), shape=(n, d))
    return rows, np.where(np.arange(n) % 2 == 0, 1, -1)


def test_footprint_counts_the_map_parameters_factors_and_threads():
    d, s, n = 5000, 512, 300
    X = np.zeros((1, d))
    op = GaussianRFF(s, n_blocks=2).fit(X).transform_op_
    need = footprint(op, [n], 10, n_threads=3, single=False, relaxed=True)
    s_j = s // 2
    assert need.sweep["map parameters"] == 3 * 8 * (op.n_params(0) + 1)
    assert op.n_params(0) >= d * s_j                       # W_j is d x s_j
    assert need.sweep["feature blocks"] == 3 * 8 * n * s_j
    assert need.persistent["factors"] == 8 * 2 * min(n, s_j) ** 2
    # Fastfood's parameters are O(d), the identity map has none
    fastfood = footprint(Fastfood(s, n_blocks=2).fit(X).transform_op_, [n], 10, n_threads=3,
                         single=False, relaxed=True)
    assert fastfood.sweep["map parameters"] < need.sweep["map parameters"] / 30
    assert footprint(Identity(n_blocks=2).fit(X).transform_op_, [n], 10, n_threads=3,
                     single=False, relaxed=True).sweep["map parameters"] == 3 * 8


def test_the_row_sweep_holds_tiles_not_blocks():
    """The column sweep's feature blocks grow with the rows (n_i x s_j per thread); the row
    sweep's do not (a 128 x s tile, and FACTOR_ROWS x s_j per thread while factoring), and it
    keeps every block's map parameters instead of one block's per thread."""
    op = Fastfood(4096, n_blocks=4).fit(np.zeros((1, 784))).transform_op_
    s_j, params = 1024, sum(op.n_params(j) for j in range(4))
    count = lambda n, rows: footprint(op, [n], 10, n_threads=2, single=True, relaxed=True,
                                      row_sweep=rows)
    for n in (10_000, 1_000_000):
        assert count(n, False).sweep["feature blocks"] == 2 * 4 * n * s_j
        assert count(n, True).sweep["feature blocks"] == 2 * 4 * 2048 * s_j
        assert count(n, True).sweep["map parameters"] == 4 * params
    assert count(10**6, True).total < count(10**6, False).total / 5
    # the carried G = Z^T B (s x 2m) is state
    assert (count(10**4, True).persistent["state"]
            - footprint(op, [10**4], 10, n_threads=2, single=True,
                        relaxed=False).persistent["state"]) == 8 * 4096 * 10


def test_linear_kernel_on_two_wide_rows_needs_little():
    """The paper's estimate counts s^2 / C floats of factors: 14.5 TiB for s = d = 2e6."""
    X, y = wide_rows(2_000_000)
    op = Identity(n_blocks=2).fit(X).transform_op_
    need = footprint(op, [2], 1, n_threads=2, single=False, relaxed=True)
    assert need.persistent["factors"] == 8 * 2 * 2**2              # min(n, s_j)^2 per block
    assert need.total < 2**30
    assert memory.paper_estimate_bytes(2, 2_000_000, 1, 2_000_000, 1, 2, 2) > 2**43


def rows_using_every_column(d, n=2):
    """n sparse rows that store every one of d columns between them (row i: columns i,
    i + n, ...), labels +/-1: a random map needs its d x s_j parameters for them."""
    columns = np.arange(d)
    rows = sp.csr_matrix((np.ones(d), (columns % n, columns)), shape=(n, d))
    return rows, np.where(np.arange(n) % 2 == 0, 1, -1)


def test_a_run_that_does_not_fit_is_refused_before_allocating(monkeypatch):
    X, y = rows_using_every_column(300_000)
    monkeypatch.setattr(driver, "available_memory_bytes", lambda: 100 * 2**20)
    with pytest.raises(MemoryError) as refused:
        KernelSVC(method="rff", n_features=256, max_iter=3, n_threads=2).fit(X, y)
    message = str(refused.value)
    assert "\n" not in message
    assert "map parameters" in message and "100.0 MiB is available" in message
    assert "linear kernel" in message and "linear sketch" in message
    assert "docs/choosing_parameters.md" in message
    # the advice names a block count that fits, and it does
    blocks = int(re.search(r"n_blocks=(\d+)", message).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = KernelSVC(method="rff", n_features=256, n_blocks=blocks, max_iter=2,
                          n_threads=2).fit(X, y)
    assert blocks == 16 and model.memory_estimate_ <= 100 * 2**20
    # the linear kernel fits easily
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert KernelSVC("linear", max_iter=2).fit(X, y).memory_estimate_ < 50 * 2**20


def test_a_refusal_counts_the_columns_the_rows_use(monkeypatch):
    X, y = rows_using_every_column(200_000)
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(2, 300_000))
    monkeypatch.setattr(driver, "available_memory_bytes", lambda: 100 * 2**20)
    with pytest.raises(MemoryError, match=r"a 200000 \(the columns in use of 300000\) x s_j"):
        KernelSVC(method="rff", n_features=256, max_iter=3, n_threads=2).fit(X, y)


def test_rows_that_use_few_columns_are_planned_for_those_columns(monkeypatch):
    """The same width as the refusal above, two columns in use: the parameters are drawn
    and counted for those two (skylite.sketch._base.operator_for_rows)."""
    X, y = wide_rows(300_000)
    monkeypatch.setattr(driver, "available_memory_bytes", lambda: 100 * 2**20)
    model = KernelSVC(method="rff", n_features=256, max_iter=3, n_threads=2).fit(X, y)
    assert model.memory_estimate_ < 2**20


def test_wide_rows_warn_when_the_map_parameters_dominate():
    X = np.zeros((1, 200_000))
    op = GaussianRFF(2048, n_blocks=2).fit(X).transform_op_
    need = footprint(op, [2], 1, n_threads=2, single=False, relaxed=True)
    message = memory.wide_input_message(need, GaussianRFF(2048).fit(X))
    assert "3.1 GiB" in message and "200000 x s_j" in message and "linear kernel" in message
    narrow = footprint(GaussianRFF(2048, n_blocks=2).fit(np.zeros((1, 784))).transform_op_,
                       [60000], 10, n_threads=2, single=False, relaxed=True)
    assert memory.wide_input_message(narrow, None) is None


def test_wide_rows_warn_when_nystroem_landmarks_dominate():
    X = sp.random(40, 200_000, density=1e-4, format="csr", random_state=0)
    fmap = Nystroem(Gaussian(1.0), 32, n_blocks=2).fit(X)
    op = fmap.transform_op_
    # at s = 2048 the landmarks would be 2048 x 200000 doubles: 3.1 GiB
    need = footprint(op, [40], 1, n_threads=2, single=False, relaxed=True,
                     map_data=2048 * 200_000 * 8)
    message = memory.wide_input_message(need, fmap)
    assert "Nystroem's landmarks take 3.1 GiB (a dense s x 200000 matrix)" in message
    assert "linear kernel" in message
    small = footprint(op, [40], 1, n_threads=2, single=False, relaxed=True,
                      map_data=sum(a.nbytes for a in fmap.fitted_arrays().values()))
    assert memory.wide_input_message(small, fmap) is None


@pytest.mark.parametrize("s, n, linear, expected", [
    (2048, 7494, False, 2), (512, 7494, False, 2), (1, 5, False, 1), (16384, 60000, False, 4),
    (2048, 1_000_000, False, 8),           # 1e6 x s_j floats per block: blocks of 256
    (8315, 7770, True, 2),                 # the linear kernel: s = d, no 4096-column limit
    (2_000_000, 2, True, 2), (16, 7494, True, 2)])
def test_default_n_blocks(s, n, linear, expected):
    assert default_n_blocks(s, n, **({"max_block": None} if linear else {})) == expected


def test_default_model_is_the_same_for_any_thread_count(pendigits):
    X, y = pendigits[0][:1500] / 100.0, pendigits[1][:1500]
    one, two = (KernelSVC(sigma=0.6, n_features=512, alpha=1e-4, n_threads=t).fit(X, y)
                for t in (1, 2))
    assert one.feature_map_.n_blocks == two.feature_map_.n_blocks == 2
    np.testing.assert_array_equal(one.coef_, two.coef_)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_a_budget_too_small_for_anderson_says_to_turn_it_off(pendigits):
    """Anderson acceleration (the default for the smooth losses) keeps about 2(M + 2) copies
    of the state, 3 n m doubles each: a budget that holds the run without it refuses the run
    with it and names acceleration=None."""
    from skylite import KernelLogisticRegression
    X, y = pendigits[0][:3000] / 100.0, pendigits[1][:3000]
    common = dict(n_features=64, max_iter=2, n_threads=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = KernelLogisticRegression(acceleration=None, memory_budget=0, **common).fit(X, y)
    budget = plain.memory_estimate_ + 2**20           # the working memory: nothing is cached
    with pytest.raises(MemoryError, match=r"acceleration=None: Anderson") as refused:
        KernelLogisticRegression(memory_budget=budget, **common).fit(X, y)
    assert "--" not in str(refused.value)      # the engine names parameters, not flags
    from skylite._commands import one_line
    assert "--acceleration none: Anderson" in one_line(refused.value)   # the CLI's flags
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KernelLogisticRegression(acceleration=None, memory_budget=budget, **common).fit(X, y)
