"""Random projection maps on sparse rows draw the rows of W_j for the input columns in use
only (skylite.sketch._base.operator_for_rows): the same features and models, bit for bit,
with parameters of u x s_j instead of d x s_j per block."""
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from skylite import KernelSVC
from skylite.io import load_svmlight
from skylite.sketch import (JLT, GaussianRFF, LaplacianRFF, MaternRFF, RandomLaplace,
                            map_from_dict)
from skylite.sketch._base import operator_for_rows

DATA = Path(__file__).resolve().parent / "data"

MAPS = [lambda: GaussianRFF(n_features=40, n_blocks=3, sigma=0.7),
        lambda: GaussianRFF(n_features=33, n_blocks=2, sequence="halton"),
        lambda: LaplacianRFF(n_features=31, n_blocks=2, sequence="sobol"),
        lambda: MaternRFF(n_features=24, n_blocks=2, nu=1.5),
        lambda: RandomLaplace(n_features=20),
        lambda: JLT(n_features=16, n_blocks=2)]


def full_operator_blocks(fmap, X):
    """Every block of X's rows from the map's unrestricted operator (d x s_j parameters)."""
    op, X = fmap.transform_op_, fmap._check_input(X)
    out = np.empty((X.shape[0], op.n_features), dtype=X.dtype)
    op.fill(X, out, np.arange(op.n_blocks, dtype=np.intp), 2)
    return out


@settings(max_examples=40, deadline=None)
@given(which=st.integers(0, len(MAPS) - 1), n=st.integers(1, 20),
       d=st.sampled_from([1, 7, 300, 5000]), density=st.sampled_from([0.0, 0.002, 0.05, 0.5]),
       single=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_the_restricted_operator_gives_the_same_blocks_bit_for_bit(which, n, d, density,
                                                                    single, seed):
    dtype = np.float32 if single else np.float64
    X = sp.random(n, d, density=density, format="csr", dtype=np.float64,
                  random_state=np.random.default_rng(seed)).astype(dtype)
    if isinstance(MAPS[which](), RandomLaplace):
        X.data = np.abs(X.data)                       # the exp-semigroup takes x >= 0
    fmap = MAPS[which]().fit(X)
    np.testing.assert_array_equal(fmap.transform(X), full_operator_blocks(fmap, X))
    op, X_used = operator_for_rows(fmap.transform_op_, fmap._check_input(X))
    assert X_used.shape[1] == len(np.unique(X.indices))


def test_rows_are_renumbered_and_the_parameters_shrink():
    X = sp.csr_matrix(([1.0, 2.0, 3.0], [5, 900, 5], [0, 2, 3]), shape=(2, 1000))
    fmap = GaussianRFF(n_features=8, n_blocks=2).fit(X)
    op, X_used = operator_for_rows(fmap.transform_op_, fmap._check_input(X))
    assert X_used.shape == (2, 2) and X_used.indices.tolist() == [0, 1, 0]
    assert X_used.indptr.dtype == np.int64 and X_used.indices.dtype == np.int32
    assert op.n_features_in == 2 and op.n_params(0) == 2 * 4 + 4     # u s_j + phases
    assert fmap.transform_op_.n_params(0) == 1000 * 4 + 4
    dense = np.zeros((2, 1000))
    same, rows = operator_for_rows(fmap.transform_op_, dense)          # dense: unchanged
    assert same is fmap.transform_op_ and rows is dense


@pytest.mark.parametrize("columns, match", [([3, 1], "sorted distinct"),
                                            ([1, 1], "sorted distinct"),
                                            ([-1, 2], "sorted distinct"),
                                            ([2, 10], "sorted distinct")])
def test_restricting_to_columns_it_does_not_have_is_refused(columns, match):
    op = GaussianRFF(n_features=8).fit(np.zeros((1, 10))).transform_op_
    with pytest.raises(ValueError, match=match):
        op.restricted_to(columns)
    with pytest.raises(ValueError, match="already restricted"):
        op.restricted_to([1, 2]).restricted_to([0])


def test_a_fit_on_hashed_width_rows_is_the_fit_on_the_columns_in_use():
    """Reuters rows (d = 8,314) and the same rows with 2^20 - 8,314 empty columns after them
    (HashingVectorizer's width): the same model bit for bit, the parameters counted and
    drawn for the ~5,000 columns in use (at d = 2^20 every block's W_j alone would be
    2^20 x 512 floats, 2 GiB per block and thread, and a WideInputWarning)."""
    X, y = load_svmlight(DATA / "reuters_sample.svm.gz")[:2]
    X_wide = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], 2**20))
    kw = dict(method="rff", n_features=1024, n_blocks=2, sigma=1.0, C=10.0, max_iter=60,
              random_state=0)
    narrow = KernelSVC(**kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # no WideInputWarning
        wide = KernelSVC(**kw).fit(X_wide, y)
    np.testing.assert_array_equal(wide.coef_, narrow.coef_)
    np.testing.assert_array_equal(wide.decision_function(X_wide[:50]),
                                  narrow.decision_function(X[:50]))
    assert wide.memory_estimate_ < 2**28


def test_the_engine_fit_equals_the_fit_with_unrestricted_operators(monkeypatch):
    """The ADMM run on renumbered rows and restricted operators (both sweeps) against the
    same run with the map's full operators everywhere."""
    import skylite.admm.blockadmm as blockadmm
    import skylite.admm.memory as memory
    import skylite.sketch._base as base
    X, y = load_svmlight(DATA / "reuters_sample.svm.gz")[:2]
    X = X[:400]
    y = y[:400]
    # blocks of s_j = 128 <= 400 rows take the row sweep; of s_j = 512 the column sweep
    for s, sweep in ((256, "rows"), (1024, "columns")):
        kw = dict(method="rff", n_features=s, n_blocks=2, sigma=1.0, C=10.0, max_iter=25,
                  random_state=0)
        restricted = KernelSVC(**kw).fit(X, y)
        assert restricted.sweep_ == sweep
        with monkeypatch.context() as patch:
            for module in (blockadmm, memory, base):
                patch.setattr(module, "operator_for_rows", lambda op, rows: (op, rows))
            full = KernelSVC(**kw).fit(X, y)
        np.testing.assert_array_equal(restricted.coef_, full.coef_)


def test_a_saved_map_restricts_as_the_fitted_one():
    X = sp.random(30, 4000, density=0.003, format="csr", random_state=1)
    fmap = GaussianRFF(n_features=16, n_blocks=2).fit(X)
    again = map_from_dict(fmap.to_dict())
    np.testing.assert_array_equal(again.transform(X), fmap.transform(X))
    np.testing.assert_array_equal(again.transform(X), full_operator_blocks(fmap, X))
